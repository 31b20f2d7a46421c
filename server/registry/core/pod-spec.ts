// PodSpec defaulting and the basic PodSpec validation, shared by Pods and every pod template
// (Deployments, ReplicaSets, Jobs, ...). Defaults are core/v1's SetDefaults_* for the fields
// clients commonly see; field order follows the Go structs so output reads like kube's.

import { asArray, asObject, isObject, reorder, type JsonObject } from '../object.js';
import { fieldErrors, type FieldError } from '../validation/field-error.js';
import { isDNS1123Label } from '../validation/names.js';

const podSpecOrder = [
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

const containerOrder = [
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

/** `Always` for `:latest` or untagged images, `IfNotPresent` otherwise (digests too) */
export function defaultPullPolicy(image: string): string {
  if (image.includes('@')) return 'IfNotPresent';
  const lastSlash = image.lastIndexOf('/');
  const tagAt = image.indexOf(':', lastSlash + 1);
  if (tagAt < 0) return 'Always';
  return image.slice(tagAt + 1) === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultProbe(p: unknown): void {
  if (!isObject(p)) return;
  p.timeoutSeconds ??= 1;
  p.periodSeconds ??= 10;
  p.successThreshold ??= 1;
  p.failureThreshold ??= 3;
  if (isObject(p.httpGet)) p.httpGet.scheme ??= 'HTTP';
}

function defaultContainer(c: JsonObject): JsonObject {
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  if (c.imagePullPolicy === undefined && typeof c.image === 'string') c.imagePullPolicy = defaultPullPolicy(c.image);
  if (c.resources === undefined) c.resources = {};
  for (const p of asArray(c.ports)) {
    if (isObject(p)) p.protocol ??= 'TCP';
  }
  for (const e of asArray(c.env)) {
    const ref = asObject(asObject(asObject(e).valueFrom).fieldRef);
    if (isObject(asObject(asObject(e).valueFrom).fieldRef)) ref.apiVersion ??= 'v1';
  }
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
  return reorder(c, containerOrder);
}

const defaultModeVolumes = ['secret', 'configMap', 'downwardAPI', 'projected'];

/** core/v1 SetDefaults for a PodSpec, in place; returns the spec in struct order */
export function defaultPodSpec(spec: JsonObject): JsonObject {
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.securityContext ??= {};
  spec.schedulerName ??= 'default-scheduler';
  for (const key of ['initContainers', 'containers', 'ephemeralContainers']) {
    if (Array.isArray(spec[key])) spec[key] = (spec[key] as unknown[]).map((c) => (isObject(c) ? defaultContainer(c) : c));
  }
  for (const v of asArray(spec.volumes)) {
    if (!isObject(v)) continue;
    for (const kind of defaultModeVolumes) {
      if (isObject(v[kind])) (v[kind] as JsonObject).defaultMode ??= 420;
    }
    if (isObject(v.hostPath)) (v.hostPath as JsonObject).type ??= '';
  }
  return reorder(spec, podSpecOrder);
}

/** Defaults only a Pod gets (kube's SetDefaults_Pod), on top of defaultPodSpec: requests
 *  default to limits, enableServiceLinks, host ports under hostNetwork. */
export function defaultPodOnly(spec: JsonObject): JsonObject {
  const hostNetwork = spec.hostNetwork === true;
  for (const key of ['initContainers', 'containers']) {
    for (const c of asArray(spec[key])) {
      if (!isObject(c)) continue;
      const res = isObject(c.resources) ? c.resources : undefined;
      if (res && isObject(res.limits)) {
        const requests = isObject(res.requests) ? res.requests : {};
        for (const [k, v] of Object.entries(res.limits)) if (requests[k] === undefined) requests[k] = v;
        if (Object.keys(requests).length) {
          res.requests = requests;
          c.resources = reorder(res, ['limits', 'requests', 'claims']);
        }
      }
      if (hostNetwork) {
        for (const p of asArray(c.ports)) {
          if (isObject(p) && p.hostPort === undefined && typeof p.containerPort === 'number') p.hostPort = p.containerPort;
        }
      }
    }
  }
  spec.enableServiceLinks ??= true;
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
}

const restartPolicies = ['Always', 'OnFailure', 'Never'];

/** The basic PodSpec checks (containers present and named, images set, restart policy). */
export function validatePodSpec(spec: unknown, path: string, allowedRestartPolicies = restartPolicies): FieldError[] {
  const errs: FieldError[] = [];
  const s = asObject(spec);
  const containers = asArray(s.containers);
  if (containers.length === 0) errs.push(fieldErrors.required(`${path}.containers`));
  const seen = new Set<string>();
  for (const key of ['initContainers', 'containers']) {
    asArray(s[key]).forEach((raw, i) => {
      const c = asObject(raw);
      const p = `${path}.${key}[${i}]`;
      const name = typeof c.name === 'string' ? c.name : '';
      if (!name) errs.push(fieldErrors.required(`${p}.name`));
      else {
        for (const m of isDNS1123Label(name)) errs.push(fieldErrors.invalid(`${p}.name`, name, m));
        if (seen.has(name)) errs.push(fieldErrors.duplicate(`${p}.name`, name));
        seen.add(name);
      }
      if (typeof c.image !== 'string' || c.image.length === 0) errs.push(fieldErrors.required(`${p}.image`));
    });
  }
  const rp = s.restartPolicy;
  if (typeof rp === 'string' && !allowedRestartPolicies.includes(rp)) {
    errs.push(fieldErrors.notSupported(`${path}.restartPolicy`, rp, allowedRestartPolicies));
  }
  return errs;
}

function quantityMillis(q: unknown): number | undefined {
  if (typeof q === 'number') return q * 1000;
  if (typeof q !== 'string') return undefined;
  const m = /^([0-9.]+)([a-zA-Z]*)$/.exec(q.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  const unit: Record<string, number> = {
    '': 1,
    m: 1e-3,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
    P: 1e15,
    E: 1e18,
    Ki: 1024,
    Mi: 1024 ** 2,
    Gi: 1024 ** 3,
    Ti: 1024 ** 4,
    Pi: 1024 ** 5,
    Ei: 1024 ** 6,
  };
  const f = unit[m[2]];
  return f === undefined ? undefined : n * f * 1000;
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
