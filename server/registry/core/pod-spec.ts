// PodSpec defaulting and the basic PodSpec validation, shared by Pods and every pod template
// (Deployments, ReplicaSets, Jobs, ...). Defaults are core/v1's SetDefaults_* for the fields
// clients commonly see; field order follows the Go structs so output reads like kube's.

import { asArray, asObject, isObject, reorder, type JsonObject } from '../object.js';
import type { FieldError } from '../../machinery/validation/field-error.js';
import { validatePodSpecFull, type PodSpecValidationOptions } from './pod-validation.js';
import { quantityOf } from './resources-validation.js';

export const podSpecOrder = [
  'volumes',
  'initContainers',
  'containers',
  'ephemeralContainers',
  'restartPolicy',
  'terminationGracePeriodSeconds',
  'activeDeadlineSeconds',
  'dnsPolicy',
  'nodeSelector',
  'serviceAccountName',
  'serviceAccount',
  'automountServiceAccountToken',
  'nodeName',
  'hostNetwork',
  'hostPID',
  'hostIPC',
  'shareProcessNamespace',
  'securityContext',
  'imagePullSecrets',
  'hostname',
  'subdomain',
  'affinity',
  'schedulerName',
  'tolerations',
  'hostAliases',
  'priorityClassName',
  'priority',
  'dnsConfig',
  'readinessGates',
  'runtimeClassName',
  'enableServiceLinks',
  'preemptionPolicy',
  'overhead',
  'topologySpreadConstraints',
  'setHostnameAsFQDN',
  'os',
  'hostUsers',
  'schedulingGates',
  'resourceClaims',
  'resources',
];

export const containerOrder = [
  'name',
  'image',
  'command',
  'args',
  'workingDir',
  'ports',
  'envFrom',
  'env',
  'resources',
  'resizePolicy',
  'restartPolicy',
  'volumeMounts',
  'volumeDevices',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
  'terminationMessagePath',
  'terminationMessagePolicy',
  'imagePullPolicy',
  'securityContext',
  'stdin',
  'stdinOnce',
  'tty',
];

const referenceComponent = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const referenceTag = /^[\w][\w.-]{0,127}$/;
const referenceDomain =
  /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:.]+\])(?::[0-9]+)?$/;

/** the tag of an image reference as docker's parser reads it: `latest` when neither tag nor
 *  digest is given, '' when the reference does not parse (kube then assumes IfNotPresent) */
function imageTag(image: string): string {
  let rest = image;
  let digest = '';
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!/^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$/.test(digest)) return '';
  }
  let tag = '';
  const lastSlash = rest.lastIndexOf('/');
  const colon = rest.indexOf(':', lastSlash + 1);
  if (colon >= 0) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!referenceTag.test(tag)) return '';
  }
  const parts = rest.split('/');
  const first = parts[0] ?? '';
  if (parts.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost' || first !== first.toLowerCase())) {
    if (!referenceDomain.test(first)) return '';
    parts.shift();
  }
  if (parts.length === 0 || !parts.every((c) => referenceComponent.test(c))) return '';
  if (!tag && !digest) return 'latest';
  return tag;
}

/** `Always` for `:latest` or untagged images, `IfNotPresent` otherwise (digests too) */
export function defaultPullPolicy(image: string): string {
  return imageTag(image) === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultHTTPGet(action: unknown): void {
  if (!isObject(action)) return;
  if (!action.path) action.path = '/';
  if (!action.scheme) action.scheme = 'HTTP';
}

function defaultProbe(p: unknown): void {
  if (!isObject(p)) return;
  if (!p.timeoutSeconds) p.timeoutSeconds = 1;
  if (!p.periodSeconds) p.periodSeconds = 10;
  if (!p.successThreshold) p.successThreshold = 1;
  if (!p.failureThreshold) p.failureThreshold = 3;
  defaultHTTPGet(p.httpGet);
  if (isObject(p.grpc)) p.grpc.service ??= '';
}

function defaultFieldRef(ref: unknown): void {
  if (isObject(ref) && !ref.apiVersion) ref.apiVersion = 'v1';
}

function defaultContainer(c: JsonObject): JsonObject {
  if (!c.imagePullPolicy) c.imagePullPolicy = defaultPullPolicy(typeof c.image === 'string' ? c.image : '');
  if (!c.terminationMessagePath) c.terminationMessagePath = '/dev/termination-log';
  if (!c.terminationMessagePolicy) c.terminationMessagePolicy = 'File';
  if (c.resources === undefined || c.resources === null) c.resources = {};
  for (const p of asArray(c.ports)) {
    if (isObject(p) && !p.protocol) p.protocol = 'TCP';
  }
  for (const e of asArray(c.env)) defaultFieldRef(asObject(asObject(e).valueFrom).fieldRef);
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
  if (isObject(c.lifecycle)) {
    defaultHTTPGet(asObject(c.lifecycle.postStart).httpGet);
    defaultHTTPGet(asObject(c.lifecycle.preStop).httpGet);
  }
  return reorder(c, containerOrder);
}

const defaultModeVolumes = ['secret', 'configMap', 'downwardAPI', 'projected'];
const volumeSourceKeys = [
  'hostPath',
  'emptyDir',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'persistentVolumeClaim',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'configMap',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
  'image',
];

/** v1 SetDefaults for one volume (a volume without a source is an emptyDir) */
function defaultVolume(v: JsonObject): void {
  if (!volumeSourceKeys.some((k) => v[k] !== undefined && v[k] !== null)) v.emptyDir = {};
  for (const kind of defaultModeVolumes) {
    const src = v[kind];
    if (isObject(src) && (src.defaultMode === undefined || src.defaultMode === null)) src.defaultMode = 420;
  }
  if (isObject(v.hostPath)) v.hostPath.type ??= '';
  if (isObject(v.downwardAPI)) for (const it of asArray(v.downwardAPI.items)) defaultFieldRef(asObject(it).fieldRef);
  if (isObject(v.projected)) {
    for (const src of asArray(v.projected.sources)) {
      const s = asObject(src);
      if (isObject(s.downwardAPI)) for (const it of asArray(s.downwardAPI.items)) defaultFieldRef(asObject(it).fieldRef);
      if (isObject(s.serviceAccountToken)) s.serviceAccountToken.expirationSeconds ??= 3600;
    }
  }
  if (isObject(v.iscsi) && !v.iscsi.iscsiInterface) v.iscsi.iscsiInterface = 'default';
  if (isObject(v.rbd)) {
    if (!v.rbd.pool) v.rbd.pool = 'rbd';
    if (!v.rbd.user) v.rbd.user = 'admin';
    if (!v.rbd.keyring) v.rbd.keyring = '/etc/ceph/keyring';
  }
  if (isObject(v.scaleIO)) {
    if (!v.scaleIO.storageMode) v.scaleIO.storageMode = 'ThinProvisioned';
    if (!v.scaleIO.fsType) v.scaleIO.fsType = 'xfs';
  }
  if (isObject(v.azureDisk)) {
    v.azureDisk.cachingMode ??= 'ReadWrite';
    v.azureDisk.kind ??= 'Shared';
    v.azureDisk.fsType ??= 'ext4';
    v.azureDisk.readOnly ??= false;
  }
  if (isObject(v.ephemeral) && isObject(v.ephemeral.volumeClaimTemplate)) {
    const spec = asObject(v.ephemeral.volumeClaimTemplate.spec);
    if (isObject(v.ephemeral.volumeClaimTemplate.spec)) spec.volumeMode ??= 'Filesystem';
  }
  if (isObject(v.image) && !v.image.pullPolicy)
    v.image.pullPolicy = defaultPullPolicy(typeof v.image.reference === 'string' ? v.image.reference : '');
}

/** core/v1 SetDefaults for a PodSpec, in place; returns the spec in struct order */
export function defaultPodSpec(spec: JsonObject): JsonObject {
  if (!spec.dnsPolicy) spec.dnsPolicy = 'ClusterFirst';
  if (!spec.restartPolicy) spec.restartPolicy = 'Always';
  if (spec.securityContext === undefined || spec.securityContext === null) spec.securityContext = {};
  spec.terminationGracePeriodSeconds ??= 30;
  if (!spec.schedulerName) spec.schedulerName = 'default-scheduler';
  for (const key of ['initContainers', 'containers', 'ephemeralContainers']) {
    if (Array.isArray(spec[key])) spec[key] = (spec[key] as unknown[]).map((c) => (isObject(c) ? defaultContainer(c) : c));
  }
  for (const v of asArray(spec.volumes)) if (isObject(v)) defaultVolume(v);
  return reorder(spec, podSpecOrder);
}

/** Defaults only a Pod gets (kube's SetDefaults_Pod), on top of defaultPodSpec: requests
 *  default to limits, enableServiceLinks, host ports under hostNetwork. */
export function defaultPodOnly(spec: JsonObject): JsonObject {
  const hostNetwork = spec.hostNetwork === true;
  for (const key of ['containers', 'initContainers']) {
    for (const c of asArray(spec[key])) {
      if (!isObject(c)) continue;
      const res = isObject(c.resources) ? c.resources : undefined;
      if (res && isObject(res.limits)) {
        const requests = isObject(res.requests) ? res.requests : {};
        for (const [k, v] of Object.entries(res.limits)) if (requests[k] === undefined) requests[k] = v;
        // Go omits an empty map
        if (Object.keys(requests).length) {
          res.requests = requests;
          c.resources = reorder(res, ['limits', 'requests', 'claims']);
        }
      }
    }
  }
  spec.enableServiceLinks ??= true;
  if (hostNetwork) {
    for (const key of ['containers', 'initContainers']) {
      for (const c of asArray(spec[key])) {
        for (const p of asArray(asObject(c).ports)) {
          if (isObject(p) && !p.hostPort && typeof p.containerPort === 'number') p.hostPort = p.containerPort;
        }
      }
    }
  }
  return reorder(spec, podSpecOrder);
}

/** defaults a pod template in place: its spec, and metadata.creationTimestamp as null (Go
 *  serializes the zero time of an embedded ObjectMeta) */
export function defaultPodTemplate(template: JsonObject): void {
  const meta = isObject(template.metadata) ? template.metadata : (template.metadata = {});
  if (!('creationTimestamp' in meta)) {
    template.metadata = { creationTimestamp: null, ...meta };
  }
  if (isObject(template.spec)) template.spec = defaultPodSpec(template.spec);
  else if (template.spec === undefined || template.spec === null) template.spec = defaultPodSpec({});
}

/** The PodSpec checks (kube's ValidatePodSpec); `allowedRestartPolicies` narrows the restart
 *  policy for controllers (reported after the spec's own errors, as kube does). */
export function validatePodSpec(spec: unknown, path: string, opts: PodSpecValidationOptions = {}): FieldError[] {
  return validatePodSpecFull(spec, path, opts);
}

function quantityMillis(q: unknown): number | undefined {
  const parsed = quantityOf(q);
  return parsed === undefined ? undefined : Number(parsed.unscaled) * 10 ** (parsed.exp10 + 3);
}

/** The QoS class of a pod: Guaranteed when every container limits and requests cpu and memory
 *  equally, BestEffort when none asks for anything, Burstable otherwise. */
export function podQOSClass(spec: unknown): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const s = asObject(spec);
  const containers = [...asArray(s.initContainers), ...asArray(s.containers)].map(asObject);
  const tracked = ['cpu', 'memory'];
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const res = asObject(c.resources);
    const requests = { ...asObject(res.requests) };
    const limits = asObject(res.limits);
    // a limit without a request requests the limit
    for (const [k, v] of Object.entries(limits)) if (requests[k] === undefined) requests[k] = v;
    for (const r of tracked) {
      const req = quantityMillis(requests[r]);
      const lim = quantityMillis(limits[r]);
      if ((req ?? 0) > 0 || (lim ?? 0) > 0) any = true;
      if (lim === undefined || req === undefined || lim !== req || lim === 0) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
