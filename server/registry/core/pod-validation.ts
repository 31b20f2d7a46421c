// PodSpec validation in kube-apiserver's order (pkg/apis/core/validation ValidatePodSpec):
// volumes, containers (names, images, ports, env, mounts, resources, probes, lifecycle),
// init containers, the pod-level policies, scheduling fields. Shared by Pods and every pod
// template. Objects are in their v1 form; Go's zero values stand for absent fields.

import { asArray, asObject, isObject, type JsonObject } from '../object.js';
import { quantityOf, validateResourceRequirements } from './resources-validation.js';
import { quantitySign } from '../../machinery/quantity.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { validateAnnotations, validateLabels } from '../validation/object-meta.js';
import { isConfigMapKey, isDNS1123Subdomain } from '../../machinery/validation/names.js';
import { validateLabelSelectorObject, type LabelSelectorObject } from '../../selectors/labels.js';
import {
  dnsLabel,
  dnsSubdomain,
  inclusiveRangeError,
  isHTTPHeaderName,
  isRelaxedEnvVarName,
  isValidPortName,
  isValidPortNum,
  labelValue,
  nonNegative,
  num,
  optNum,
  qualifiedName,
  str,
  validateLocalDescendingPath,
  validateLocalNonReservedPath,
  validatePathNoBacksteps,
  validIP,
} from '../validation/values.js';

export interface PodSpecValidationOptions {
  /** the spec belongs to a Pod (not a template): stricter host port and image checks */
  resourceIsPod?: boolean;
  /** the pod's name, for generic ephemeral volume claim names */
  podName?: string;
}

const fileModeErrorMsg = 'must be a number between 0 and 0777 (octal), both inclusive';
const maxInt32 = 2147483647;

function fileMode(v: unknown, path: string): FieldError[] {
  const m = optNum(v);
  return m !== undefined && (m > 0o777 || m < 0) ? [fieldErrors.invalid(path, m, fileModeErrorMsg)] : [];
}

function keyToPaths(items: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  asArray(items).forEach((raw, i) => {
    const kp = asObject(raw);
    const p = `${path}[${i}]`;
    if (!str(kp.key)) errs.push(fieldErrors.required(`${p}.key`));
    if (!str(kp.path)) errs.push(fieldErrors.required(`${p}.path`));
    errs.push(...validateLocalNonReservedPath(str(kp.path), `${p}.path`));
    errs.push(...fileMode(kp.mode, `${p}.mode`));
  });
  return errs;
}

const hostPathTypes = ['', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket'];

// ---- volumes ----

type VolumeCheck = (source: JsonObject, path: string) => FieldError[];

const volumeChecks: [string, string, VolumeCheck][] = [
  // [json field, path used for "more than 1 volume type", check]
  [
    'emptyDir',
    'emptyDir',
    (s, p) => {
      const q = quantityOf(s.sizeLimit);
      return q && quantitySign(q) < 0 ? [fieldErrors.forbidden(`${p}.sizeLimit`, 'SizeLimit field must be a valid resource quantity')] : [];
    },
  ],
  [
    'hostPath',
    'hostPath',
    (s, p) => {
      if (!str(s.path)) return [fieldErrors.required(`${p}.path`)];
      const errs = validatePathNoBacksteps(str(s.path), `${p}.path`);
      if (typeof s.type === 'string' && !hostPathTypes.includes(s.type))
        errs.push(fieldErrors.notSupported(`${p}.type`, s.type, hostPathTypes));
      return errs;
    },
  ],
  [
    'gitRepo',
    'gitRepo',
    (s, p) => [
      ...(str(s.repository) ? [] : [fieldErrors.required(`${p}.repository`)]),
      ...validateLocalDescendingPath(str(s.directory), `${p}.directory`),
    ],
  ],
  // kube validates this source under the name `persistentDisk`
  [
    'gcePersistentDisk',
    'gcePersistentDisk',
    (s, p) => (str(s.pdName) ? [] : [fieldErrors.required(`${p.replace(/gcePersistentDisk$/, 'persistentDisk')}.pdName`)]),
  ],
  ['awsElasticBlockStore', 'awsElasticBlockStore', (s, p) => (str(s.volumeID) ? [] : [fieldErrors.required(`${p}.volumeID`)])],
  [
    'secret',
    'secret',
    (s, p) => [
      ...(str(s.secretName) ? [] : [fieldErrors.required(`${p}.secretName`)]),
      ...fileMode(s.defaultMode, `${p}.defaultMode`),
      ...keyToPaths(s.items, `${p}.items`),
    ],
  ],
  [
    'nfs',
    'nfs',
    (s, p) => {
      const errs: FieldError[] = [];
      if (!str(s.server)) errs.push(fieldErrors.required(`${p}.server`));
      if (!str(s.path)) errs.push(fieldErrors.required(`${p}.path`));
      if (!str(s.path).startsWith('/')) errs.push(fieldErrors.invalid(`${p}.path`, str(s.path), 'must be an absolute path'));
      return errs;
    },
  ],
  [
    'iscsi',
    'iscsi',
    (s, p) => [
      ...(str(s.targetPortal) ? [] : [fieldErrors.required(`${p}.targetPortal`)]),
      ...(str(s.iqn) ? [] : [fieldErrors.required(`${p}.iqn`)]),
    ],
  ],
  [
    'glusterfs',
    'glusterfs',
    (s, p) => [
      ...(str(s.endpoints) ? [] : [fieldErrors.required(`${p}.endpoints`)]),
      ...(str(s.path) ? [] : [fieldErrors.required(`${p}.path`)]),
    ],
  ],
  ['flocker', 'flocker', () => []],
  ['persistentVolumeClaim', 'persistentVolumeClaim', (s, p) => (str(s.claimName) ? [] : [fieldErrors.required(`${p}.claimName`)])],
  [
    'rbd',
    'rbd',
    (s, p) => [
      ...(asArray(s.monitors).length ? [] : [fieldErrors.required(`${p}.monitors`)]),
      ...(str(s.image) ? [] : [fieldErrors.required(`${p}.image`)]),
    ],
  ],
  ['cinder', 'cinder', (s, p) => (str(s.volumeID) ? [] : [fieldErrors.required(`${p}.volumeID`)])],
  ['cephfs', 'cephFS', (s, p) => (asArray(s.monitors).length ? [] : [fieldErrors.required(`${p.replace(/cephFS$/, 'cephfs')}.monitors`)])],
  ['quobyte', 'quobyte', () => []],
  [
    'downwardAPI',
    'downwarAPI',
    (s, p) => {
      const errs = fileMode(s.defaultMode, `${p}.defaultMode`);
      // kube reports item errors at the volume source, without the item index
      for (const raw of asArray(s.items)) errs.push(...downwardAPIFile(asObject(raw), p));
      return errs;
    },
  ],
  ['fc', 'fc', () => []],
  ['flexVolume', 'flexVolume', (s, p) => (str(s.driver) ? [] : [fieldErrors.required(`${p}.driver`)])],
  [
    'configMap',
    'configMap',
    (s, p) => [
      ...(str(s.name) ? [] : [fieldErrors.required(`${p}.name`)]),
      ...fileMode(s.defaultMode, `${p}.defaultMode`),
      ...keyToPaths(s.items, `${p}.items`),
    ],
  ],
  [
    'azureFile',
    'azureFile',
    (s, p) => [
      ...(str(s.secretName) ? [] : [fieldErrors.required(`${p}.secretName`)]),
      ...(str(s.shareName) ? [] : [fieldErrors.required(`${p}.shareName`)]),
    ],
  ],
  ['vsphereVolume', 'vsphereVolume', (s, p) => (str(s.volumePath) ? [] : [fieldErrors.required(`${p}.volumePath`)])],
  ['photonPersistentDisk', 'photonPersistentDisk', (s, p) => (str(s.pdID) ? [] : [fieldErrors.required(`${p}.pdID`)])],
  ['portworxVolume', 'portworxVolume', (s, p) => (str(s.volumeID) ? [] : [fieldErrors.required(`${p}.volumeID`)])],
  [
    'azureDisk',
    'azureDisk',
    (s, p) => [
      ...(str(s.diskName) ? [] : [fieldErrors.required(`${p}.diskName`)]),
      ...(str(s.diskURI) ? [] : [fieldErrors.required(`${p}.diskURI`)]),
    ],
  ],
  ['storageos', 'storageos', (s, p) => (str(s.volumeName) ? [] : [fieldErrors.required(`${p}.volumeName`)])],
  ['projected', 'projected', (s, p) => validateProjected(s, p)],
  [
    'scaleIO',
    'scaleIO',
    (s, p) => [
      ...(str(s.gateway) ? [] : [fieldErrors.required(`${p}.gateway`)]),
      ...(str(s.system) ? [] : [fieldErrors.required(`${p}.system`)]),
    ],
  ],
  ['csi', 'csi', (s, p) => (str(s.driver) ? [] : [fieldErrors.required(`${p}.driver`)])],
  ['ephemeral', 'ephemeral', (s, p) => (isObject(s.volumeClaimTemplate) ? [] : [fieldErrors.required(`${p}.volumeClaimTemplate`)])],
  ['image', 'image', () => []],
];

const downwardVolumeFieldPaths = ['metadata.annotations', 'metadata.labels', 'metadata.name', 'metadata.namespace', 'metadata.uid'];
const downwardEnvFieldPaths = [
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
];
const resourceFieldPaths = [
  'limits.cpu',
  'limits.ephemeral-storage',
  'limits.memory',
  'requests.cpu',
  'requests.ephemeral-storage',
  'requests.memory',
];

function downwardAPIFile(file: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!str(file.path)) errs.push(fieldErrors.required(`${path}.path`));
  errs.push(...validateLocalNonReservedPath(str(file.path), `${path}.path`));
  if (isObject(file.fieldRef)) {
    errs.push(...objectFieldSelector(file.fieldRef, downwardVolumeFieldPaths, `${path}.fieldRef`));
    if (isObject(file.resourceFieldRef))
      errs.push(fieldErrors.invalid(path, 'resource', 'fieldRef and resourceFieldRef can not be specified simultaneously'));
  } else if (isObject(file.resourceFieldRef)) {
    errs.push(...resourceFieldSelector(file.resourceFieldRef, `${path}.resourceFieldRef`, true));
  } else {
    errs.push(fieldErrors.required(path, 'one of fieldRef and resourceFieldRef is required'));
  }
  errs.push(...fileMode(file.mode, `${path}.mode`));
  return errs;
}

function validateProjected(s: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  asArray(s.sources).forEach((raw, i) => {
    const src = asObject(raw);
    const sp = `${path}.sources[${i}]`;
    let n = 0;
    for (const kind of ['secret', 'configMap'] as const) {
      if (!isObject(src[kind])) continue;
      n++;
      const ref = src[kind] as JsonObject;
      if (!str(ref.name)) errs.push(fieldErrors.required(`${sp}.${kind}.name`));
      asArray(ref.items).forEach((it, j) => {
        const kp = asObject(it);
        errs.push(
          ...keyToPaths([kp], `${sp}.${kind}.items`).map((e) => ({
            ...e,
            field: e.field.replace(`${sp}.${kind}.items[0]`, `${sp}.${kind}.items[${j}]`),
          })),
        );
        const p = str(kp.path);
        if (p) {
          if (seen.has(p)) errs.push(fieldErrors.invalid(path, str(ref.name), 'conflicting duplicate paths'));
          seen.add(p);
        }
      });
    }
    if (isObject(src.downwardAPI)) {
      n++;
      for (const it of asArray(src.downwardAPI.items)) errs.push(...downwardAPIFile(asObject(it), `${sp}.downwardAPI`));
    }
    if (isObject(src.serviceAccountToken)) {
      n++;
      const t = src.serviceAccountToken;
      const exp = optNum(t.expirationSeconds);
      const tp = `${sp}.serviceAccountToken`;
      if (exp !== undefined && exp < 600)
        errs.push(fieldErrors.invalid(`${tp}.expirationSeconds`, exp, 'may not specify a duration less than 10 minutes'));
      if (exp !== undefined && exp > 4294967296)
        errs.push(fieldErrors.invalid(`${tp}.expirationSeconds`, exp, 'may not specify a duration larger than 2^32 seconds'));
      if (!str(t.path)) errs.push(fieldErrors.required(`${tp}.path`));
    }
    if (isObject(src.clusterTrustBundle)) n++;
    if (n > 1) errs.push(fieldErrors.forbidden(sp, 'may not specify more than 1 volume type per source'));
  });
  errs.push(...fileMode(s.defaultMode, `${path}.defaultMode`));
  return errs;
}

function validateVolumeSource(vol: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  let count = 0;
  for (const [key, errPath, check] of volumeChecks) {
    if (!isObject(vol[key])) continue;
    if (count > 0) {
      errs.push(fieldErrors.forbidden(`${path}.${errPath}`, 'may not specify more than 1 volume type'));
      continue;
    }
    count++;
    errs.push(...check(vol[key] as JsonObject, `${path}.${key}`));
  }
  if (count === 0) errs.push(fieldErrors.required(path, 'must specify a volume type'));
  return errs;
}

/** validates spec.volumes; returns the volumes that passed, by name */
export function validateVolumes(volumes: unknown, path: string, podName?: string): { valid: Map<string, JsonObject>; errs: FieldError[] } {
  const errs: FieldError[] = [];
  const valid = new Map<string, JsonObject>();
  const names = new Set<string>();
  asArray(volumes).forEach((raw, i) => {
    const vol = asObject(raw);
    const p = `${path}[${i}]`;
    const name = str(vol.name);
    const el = validateVolumeSource(vol, p);
    if (isObject(vol.ephemeral) && podName && name) {
      for (const m of isDNS1123Subdomain(`${podName}-${name}`)) {
        el.push(fieldErrors.invalid(`${p}.name`, name, `PVC name "${podName}-${name}": ${m}`));
      }
    }
    if (!name) el.push(fieldErrors.required(`${p}.name`));
    else el.push(...dnsLabel(name, `${p}.name`));
    if (names.has(name)) el.push(fieldErrors.duplicate(`${p}.name`, name));
    if (el.length === 0) {
      names.add(name);
      valid.set(name, vol);
    } else {
      errs.push(...el);
    }
  });
  return { valid, errs };
}

// ---- containers ----

const portProtocols = ['SCTP', 'TCP', 'UDP'];

function validateContainerPorts(ports: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  asArray(ports).forEach((raw, i) => {
    const port = asObject(raw);
    const p = `${path}[${i}]`;
    const name = str(port.name);
    if (name) {
      const msgs = isValidPortName(name);
      if (msgs.length) for (const m of msgs) errs.push(fieldErrors.invalid(`${p}.name`, name, m));
      else if (names.has(name)) errs.push(fieldErrors.duplicate(`${p}.name`, name));
      else names.add(name);
    }
    const cp = num(port.containerPort);
    if (cp === 0) errs.push(fieldErrors.required(`${p}.containerPort`));
    else for (const m of isValidPortNum(cp)) errs.push(fieldErrors.invalid(`${p}.containerPort`, cp, m));
    const hp = num(port.hostPort);
    if (hp !== 0) for (const m of isValidPortNum(hp)) errs.push(fieldErrors.invalid(`${p}.hostPort`, hp, m));
    const proto = str(port.protocol);
    if (!proto) errs.push(fieldErrors.required(`${p}.protocol`));
    else if (!portProtocols.includes(proto)) errs.push(fieldErrors.notSupported(`${p}.protocol`, proto, portProtocols));
  });
  return errs;
}

function objectFieldSelector(fs: JsonObject, allowed: string[], path: string): FieldError[] {
  if (!str(fs.apiVersion)) return [fieldErrors.required(`${path}.apiVersion`)];
  const fieldPath = str(fs.fieldPath);
  if (!fieldPath) return [fieldErrors.required(`${path}.fieldPath`)];
  if (fs.apiVersion !== 'v1') {
    return [fieldErrors.invalid(`${path}.fieldPath`, fieldPath, `error converting fieldPath: field label not supported: ${fieldPath}`)];
  }
  const sub = /^(metadata\.(?:annotations|labels))\['(.*)'\]$/.exec(fieldPath) ?? /^([^[]+)\[(.*)\]$/.exec(fieldPath);
  if (sub) {
    const [, base, key] = sub as unknown as [string, string, string];
    if (base === 'metadata.annotations') return qualifiedName(key.toLowerCase(), path);
    if (base === 'metadata.labels') return qualifiedName(key, path);
    return [fieldErrors.invalid(path, base, 'does not support subscript')];
  }
  if (!allowed.includes(fieldPath)) return [fieldErrors.notSupported(`${path}.fieldPath`, fieldPath, allowed)];
  return [];
}

function resourceFieldSelector(fs: JsonObject, path: string, volume: boolean): FieldError[] {
  const resource = str(fs.resource);
  if (volume && !str(fs.containerName)) return [fieldErrors.required(`${path}.containerName`)];
  if (!resource) return [fieldErrors.required(`${path}.resource`)];
  if (!resourceFieldPaths.includes(resource) && !resource.startsWith('limits.hugepages-') && !resource.startsWith('requests.hugepages-')) {
    return [fieldErrors.notSupported(`${path}.resource`, resource, resourceFieldPaths)];
  }
  return [];
}

function keySelector(s: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(s.name);
  for (const m of isDNS1123Subdomain(name)) errs.push(fieldErrors.invalid(`${path}.name`, name, m));
  const key = str(s.key);
  if (!key) errs.push(fieldErrors.required(`${path}.key`));
  else for (const m of isConfigMapKey(key)) errs.push(fieldErrors.invalid(`${path}.key`, key, m));
  return errs;
}

function validateEnv(env: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  asArray(env).forEach((raw, i) => {
    const ev = asObject(raw);
    const p = `${path}[${i}]`;
    const name = str(ev.name);
    if (!name) errs.push(fieldErrors.required(`${p}.name`));
    else for (const m of isRelaxedEnvVarName(name)) errs.push(fieldErrors.invalid(`${p}.name`, name, m));
    if (!isObject(ev.valueFrom)) return;
    const vf = ev.valueFrom;
    const vp = `${p}.valueFrom`;
    let n = 0;
    if (isObject(vf.fieldRef)) {
      n++;
      errs.push(...objectFieldSelector(vf.fieldRef, downwardEnvFieldPaths, `${vp}.fieldRef`));
    }
    if (isObject(vf.resourceFieldRef)) {
      n++;
      errs.push(...resourceFieldSelector(vf.resourceFieldRef, `${vp}.resourceFieldRef`, false));
    }
    if (isObject(vf.configMapKeyRef)) {
      n++;
      errs.push(...keySelector(vf.configMapKeyRef, `${vp}.configMapKeyRef`));
    }
    if (isObject(vf.secretKeyRef)) {
      n++;
      errs.push(...keySelector(vf.secretKeyRef, `${vp}.secretKeyRef`));
    }
    if (n === 0)
      errs.push(fieldErrors.invalid(vp, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'));
    else if (str(ev.value)) errs.push(fieldErrors.invalid(vp, '', 'may not be specified when `value` is not empty'));
    else if (n > 1) errs.push(fieldErrors.invalid(vp, '', 'may not have more than one field specified at a time'));
  });
  return errs;
}

function validateEnvFrom(envFrom: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  asArray(envFrom).forEach((raw, i) => {
    const ev = asObject(raw);
    const p = `${path}[${i}]`;
    const prefix = str(ev.prefix);
    if (prefix) for (const m of isRelaxedEnvVarName(prefix)) errs.push(fieldErrors.invalid(`${p}.prefix`, prefix, m));
    let n = 0;
    for (const kind of ['configMapRef', 'secretRef']) {
      if (!isObject(ev[kind])) continue;
      n++;
      const name = str((ev[kind] as JsonObject).name);
      if (!name) errs.push(fieldErrors.required(`${p}.${kind}.name`));
      else
        for (const m of isDNS1123Subdomain(name.length > 1 && name.endsWith('-') ? name.slice(0, -2) + 'a' : name))
          errs.push(fieldErrors.invalid(`${p}.${kind}.name`, name, m));
    }
    if (n === 0) errs.push(fieldErrors.invalid(path, '', 'must specify one of: `configMapRef` or `secretRef`'));
    else if (n > 1) errs.push(fieldErrors.invalid(path, '', 'may not have more than one field specified at a time'));
  });
  return errs;
}

const mountPropagationModes = ['Bidirectional', 'HostToContainer', 'None'];
const recursiveReadOnlyModes = ['Disabled', 'Enabled', 'IfPossible'];

function validateVolumeMounts(
  mounts: unknown,
  devices: Map<string, string>,
  volumes: Map<string, JsonObject>,
  container: JsonObject,
  path: string,
): FieldError[] {
  const errs: FieldError[] = [];
  const mountPoints = new Set<string>();
  const privileged = asObject(container.securityContext).privileged === true;
  asArray(mounts).forEach((raw, i) => {
    const m = asObject(raw);
    const p = `${path}[${i}]`;
    const name = str(m.name);
    const mountPath = str(m.mountPath);
    if (!name) errs.push(fieldErrors.required(`${p}.name`));
    if (!volumes.has(name)) errs.push(fieldErrors.notFound(`${p}.name`, name));
    if (!mountPath) errs.push(fieldErrors.required(`${p}.mountPath`));
    if (mountPoints.has(mountPath)) errs.push(fieldErrors.invalid(`${p}.mountPath`, mountPath, 'must be unique'));
    mountPoints.add(mountPath);
    if (devices.has(name)) errs.push(fieldErrors.invalid(`${p}.name`, name, 'must not already exist in volumeDevices'));
    if ([...devices.values()].includes(mountPath))
      errs.push(fieldErrors.invalid(`${p}.mountPath`, mountPath, 'must not already exist as a path in volumeDevices'));
    const subPath = str(m.subPath);
    const subPathExpr = str(m.subPathExpr);
    if (isObject(volumes.get(name)?.image)) {
      if (subPath) errs.push(fieldErrors.invalid(`${p}.subPath`, subPath, 'not allowed in image volume sources'));
      if (subPathExpr) errs.push(fieldErrors.invalid(`${p}.subPathExpr`, subPathExpr, 'not allowed in image volume sources'));
    }
    // kube reports sub-path problems at the list path, without the index
    if (subPath) errs.push(...validateLocalDescendingPath(subPath, `${path}.subPath`));
    if (subPathExpr) {
      if (subPath) errs.push(fieldErrors.invalid(`${p}.subPathExpr`, subPathExpr, 'subPathExpr and subPath are mutually exclusive'));
      errs.push(...validateLocalDescendingPath(subPathExpr, `${path}.subPathExpr`));
    }
    if (typeof m.mountPropagation === 'string') {
      const mode = m.mountPropagation;
      if (!mountPropagationModes.includes(mode))
        errs.push(fieldErrors.notSupported(`${path}.mountPropagation`, mode, mountPropagationModes));
      else if (mode === 'Bidirectional' && !privileged) {
        errs.push(
          fieldErrors.forbidden(`${path}.mountPropagation`, 'Bidirectional mount propagation is available only to privileged containers'),
        );
      }
    }
    if (typeof m.recursiveReadOnly === 'string') {
      const rro = m.recursiveReadOnly;
      const rp = `${path}.recursiveReadOnly`;
      if (!recursiveReadOnlyModes.includes(rro)) errs.push(fieldErrors.notSupported(rp, rro, recursiveReadOnlyModes));
      else if (rro !== 'Disabled') {
        if (m.readOnly !== true) errs.push(fieldErrors.forbidden(rp, 'may only be specified when readOnly is true'));
        const prop = str(m.mountPropagation);
        if (prop && prop !== 'None')
          errs.push(fieldErrors.forbidden(rp, 'may only be specified when mountPropagation is None or not specified'));
      }
    }
  });
  return errs;
}

function validateVolumeDevices(
  devices: unknown,
  mounts: Map<string, string>,
  volumes: Map<string, JsonObject>,
  path: string,
): FieldError[] {
  const errs: FieldError[] = [];
  const paths = new Set<string>();
  const names = new Set<string>();
  asArray(devices).forEach((raw, i) => {
    const d = asObject(raw);
    const p = `${path}[${i}]`;
    const name = str(d.name);
    const devicePath = str(d.devicePath);
    const vol = volumes.get(name);
    const isPVC = !!vol && (isObject(vol.persistentVolumeClaim) || isObject(vol.ephemeral));
    if (!name) errs.push(fieldErrors.required(`${p}.name`));
    if (names.has(name)) errs.push(fieldErrors.invalid(`${p}.name`, name, 'must be unique'));
    if (vol && !isPVC)
      errs.push(
        fieldErrors.invalid(`${p}.name`, name, 'can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode'),
      );
    if (!vol) errs.push(fieldErrors.notFound(`${p}.name`, name));
    if (!devicePath) errs.push(fieldErrors.required(`${p}.devicePath`));
    if (paths.has(devicePath)) errs.push(fieldErrors.invalid(`${p}.devicePath`, devicePath, 'must be unique'));
    if (devicePath && devicePath.split('/').includes('..'))
      errs.push(fieldErrors.invalid(`${p}.devicePath`, devicePath, "can not contain backsteps ('..')"));
    else paths.add(devicePath);
    if (mounts.has(name)) errs.push(fieldErrors.invalid(`${p}.name`, name, 'must not already exist in volumeMounts'));
    if ([...mounts.values()].includes(devicePath))
      errs.push(fieldErrors.invalid(`${p}.devicePath`, devicePath, 'must not already exist as a path in volumeMounts'));
    if (name) names.add(name);
  });
  return errs;
}

const pullPolicies = ['Always', 'IfNotPresent', 'Never'];
const terminationMessagePolicies = ['File', 'FallbackToLogsOnError'];
const resizeResources = ['cpu', 'memory'];
const resizePolicies = ['NotRequired', 'RestartContainer'];
const procMountTypes = ['Default', 'Unmasked'];

function idRange(v: unknown, path: string): FieldError[] {
  const n = optNum(v);
  return n !== undefined && (n < 0 || n > maxInt32) ? [fieldErrors.invalid(path, n, inclusiveRangeError(0, maxInt32))] : [];
}

function seccompProfile(v: unknown, path: string): FieldError[] {
  if (!isObject(v)) return [];
  const type = str(v.type);
  const lp = v.localhostProfile;
  const errs: FieldError[] = [];
  if (type === 'Localhost') {
    if (typeof lp !== 'string') errs.push(fieldErrors.required(`${path}.localhostProfile`, 'must be set when seccomp type is Localhost'));
    else errs.push(...validateLocalDescendingPath(lp, `${path}.localhostProfile`));
  } else if (lp !== undefined && lp !== null) {
    errs.push(fieldErrors.invalid(`${path}.localhostProfile`, str(lp), 'can only be set when seccomp type is Localhost'));
  }
  if (type && !['Localhost', 'RuntimeDefault', 'Unconfined'].includes(type)) {
    errs.push(fieldErrors.notSupported(`${path}.type`, type, ['Localhost', 'RuntimeDefault', 'Unconfined']));
  }
  if (!type) errs.push(fieldErrors.required(`${path}.type`));
  return errs;
}

function validateSecurityContext(sc: unknown, path: string): FieldError[] {
  if (!isObject(sc)) return [];
  const errs: FieldError[] = [];
  errs.push(...idRange(sc.runAsUser, `${path}.runAsUser`));
  errs.push(...idRange(sc.runAsGroup, `${path}.runAsGroup`));
  if (typeof sc.procMount === 'string' && !procMountTypes.includes(sc.procMount)) {
    errs.push(fieldErrors.notSupported(`${path}.procMount`, sc.procMount, procMountTypes));
  }
  errs.push(...seccompProfile(sc.seccompProfile, `${path}.seccompProfile`));
  if (sc.allowPrivilegeEscalation === false) {
    if (sc.privileged === true)
      errs.push(
        fieldErrors.invalid(
          path,
          { rendered: 'core.SecurityContext{...}' },
          'cannot set `allowPrivilegeEscalation` to false and `privileged` to true',
        ),
      );
    for (const cap of asArray(asObject(sc.capabilities).add)) {
      if (cap === 'CAP_SYS_ADMIN') {
        errs.push(
          fieldErrors.invalid(
            path,
            { rendered: 'core.SecurityContext{...}' },
            'cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN',
          ),
        );
      }
    }
  }
  return errs;
}

function validateHandler(h: JsonObject, lifecycle: boolean, gracePeriod: number | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  let n = 0;
  const kinds = lifecycle ? ['exec', 'httpGet', 'tcpSocket', 'sleep'] : ['exec', 'httpGet', 'tcpSocket', 'grpc'];
  for (const kind of kinds) {
    if (!isObject(h[kind])) continue;
    const p = `${path}.${kind}`;
    if (n > 0) {
      errs.push(fieldErrors.forbidden(p, 'may not specify more than 1 handler type'));
      continue;
    }
    n++;
    const a = h[kind] as JsonObject;
    if (kind === 'exec' && asArray(a.command).length === 0) errs.push(fieldErrors.required(`${p}.command`));
    if (kind === 'httpGet') {
      if (!str(a.path)) errs.push(fieldErrors.required(`${p}.path`));
      errs.push(...portNumOrName(a.port, `${p}.port`));
      if (!['HTTP', 'HTTPS'].includes(str(a.scheme))) errs.push(fieldErrors.notSupported(`${p}.scheme`, str(a.scheme), ['HTTP', 'HTTPS']));
      for (const hd of asArray(a.httpHeaders)) {
        const name = str(asObject(hd).name);
        for (const m of isHTTPHeaderName(name)) errs.push(fieldErrors.invalid(`${p}.httpHeaders`, name, m));
      }
    }
    if (kind === 'tcpSocket') errs.push(...portNumOrName(a.port, `${p}.port`));
    if (kind === 'grpc') errs.push(...portNumOrName(num(a.port), `${p}.port`));
    if (kind === 'sleep') {
      const s = num(a.seconds);
      if (gracePeriod !== undefined && (s < 0 || s > gracePeriod)) {
        errs.push(fieldErrors.invalid(p, s, `must be non-negative and less than terminationGracePeriodSeconds (${gracePeriod})`));
      }
    }
  }
  if (n === 0) errs.push(fieldErrors.required(path, 'must specify a handler type'));
  return errs;
}

export function portNumOrName(port: unknown, path: string): FieldError[] {
  if (typeof port === 'string') return isValidPortName(port).map((m) => fieldErrors.invalid(path, port, m));
  const n = num(port);
  return isValidPortNum(n).map((m) => fieldErrors.invalid(path, n, m));
}

function validateProbe(
  probe: unknown,
  kind: 'liveness' | 'readiness' | 'startup',
  gracePeriod: number | undefined,
  path: string,
): FieldError[] {
  if (!isObject(probe)) return [];
  const errs = validateHandler(probe, false, gracePeriod, path);
  for (const f of ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold']) {
    errs.push(...nonNegative(probe[f], `${path}.${f}`));
  }
  const tgps = optNum(probe.terminationGracePeriodSeconds);
  if (tgps !== undefined && tgps <= 0)
    errs.push(fieldErrors.invalid(`${path}.terminationGracePeriodSeconds`, tgps, 'must be greater than 0'));
  if (kind !== 'readiness' && num(probe.successThreshold) !== 1) {
    errs.push(fieldErrors.invalid(`${path}.successThreshold`, num(probe.successThreshold), 'must be 1'));
  }
  if (kind === 'readiness' && tgps !== undefined) {
    errs.push(fieldErrors.invalid(`${path}.terminationGracePeriodSeconds`, tgps, 'must not be set for readinessProbes'));
  }
  return errs;
}

function validateLifecycle(lc: JsonObject, gracePeriod: number | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (isObject(lc.postStart)) errs.push(...validateHandler(lc.postStart, true, gracePeriod, `${path}.postStart`));
  if (isObject(lc.preStop)) errs.push(...validateHandler(lc.preStop, true, gracePeriod, `${path}.preStop`));
  return errs;
}

function validateResizePolicy(list: unknown, podRestartPolicy: string, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  asArray(list).forEach((raw, i) => {
    const p = asObject(raw);
    const name = str(p.resourceName);
    const policy = str(p.restartPolicy);
    if (seen.has(name)) errs.push(fieldErrors.duplicate(`${path}[${i}]`, name));
    seen.add(name);
    if (!name) errs.push(fieldErrors.required(path));
    else if (!resizeResources.includes(name)) errs.push(fieldErrors.notSupported(path, name, resizeResources));
    if (!policy) errs.push(fieldErrors.required(path));
    else if (!resizePolicies.includes(policy)) errs.push(fieldErrors.notSupported(path, policy, resizePolicies));
    if (podRestartPolicy === 'Never' && policy !== 'NotRequired')
      errs.push(fieldErrors.invalid(path, policy, "must be 'NotRequired' when `restartPolicy` is 'Never'"));
  });
  return errs;
}

function validateContainerCommon(c: JsonObject, volumes: Map<string, JsonObject>, podRestartPolicy: string, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(c.name);
  if (!name) errs.push(fieldErrors.required(`${path}.name`));
  else errs.push(...dnsLabel(name, `${path}.name`));
  if (!str(c.image)) errs.push(fieldErrors.required(`${path}.image`));
  const tmp = str(c.terminationMessagePolicy);
  if (!tmp) errs.push(fieldErrors.required(`${path}.terminationMessagePolicy`));
  else if (!terminationMessagePolicies.includes(tmp))
    errs.push(fieldErrors.notSupported(`${path}.terminationMessagePolicy`, tmp, terminationMessagePolicies));
  const mounts = new Map<string, string>();
  for (const m of asArray(c.volumeMounts)) mounts.set(str(asObject(m).name), str(asObject(m).mountPath));
  const devices = new Map<string, string>();
  for (const d of asArray(c.volumeDevices)) devices.set(str(asObject(d).name), str(asObject(d).devicePath));
  errs.push(...validateContainerPorts(c.ports, `${path}.ports`));
  errs.push(...validateEnv(c.env, `${path}.env`));
  errs.push(...validateEnvFrom(c.envFrom, `${path}.envFrom`));
  errs.push(...validateVolumeMounts(c.volumeMounts, devices, volumes, c, `${path}.volumeMounts`));
  errs.push(...validateVolumeDevices(c.volumeDevices, mounts, volumes, `${path}.volumeDevices`));
  const pull = str(c.imagePullPolicy);
  if (!pull) errs.push(fieldErrors.required(`${path}.imagePullPolicy`));
  else if (!pullPolicies.includes(pull)) errs.push(fieldErrors.notSupported(`${path}.imagePullPolicy`, pull, pullPolicies));
  errs.push(...validateResourceRequirements(c.resources, `${path}.resources`));
  errs.push(...validateResizePolicy(c.resizePolicy, podRestartPolicy, `${path}.resizePolicy`));
  errs.push(...validateSecurityContext(c.securityContext, `${path}.securityContext`));
  return errs;
}

function hostPortConflicts(containers: unknown[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  containers.forEach((raw, ci) => {
    asArray(asObject(raw).ports).forEach((pr, pi) => {
      const port = asObject(pr);
      const hp = num(port.hostPort);
      if (hp === 0) return;
      const key = `${str(port.protocol)}/${str(port.hostIP)}/${hp}`;
      if (seen.has(key)) errs.push(fieldErrors.duplicate(`${path}[${ci}].ports[${pi}].hostPort`, key));
      else seen.add(key);
    });
  });
  return errs;
}

function validateContainers(
  containers: unknown,
  volumes: Map<string, JsonObject>,
  gracePeriod: number | undefined,
  podRestartPolicy: string,
  path: string,
): FieldError[] {
  const list = asArray(containers);
  if (list.length === 0) return [fieldErrors.required(path)];
  const errs: FieldError[] = [];
  const names = new Set<string>();
  list.forEach((raw, i) => {
    const c = asObject(raw);
    const p = `${path}[${i}]`;
    errs.push(...validateContainerCommon(c, volumes, podRestartPolicy, p));
    const name = str(c.name);
    if (names.has(name)) errs.push(fieldErrors.duplicate(`${p}.name`, name));
    else names.add(name);
    if (isObject(c.lifecycle)) errs.push(...validateLifecycle(c.lifecycle, gracePeriod, `${p}.lifecycle`));
    errs.push(...validateProbe(c.livenessProbe, 'liveness', gracePeriod, `${p}.livenessProbe`));
    errs.push(...validateProbe(c.readinessProbe, 'readiness', gracePeriod, `${p}.readinessProbe`));
    errs.push(...validateProbe(c.startupProbe, 'startup', gracePeriod, `${p}.startupProbe`));
    if (c.restartPolicy !== undefined && c.restartPolicy !== null)
      errs.push(fieldErrors.forbidden(`${p}.restartPolicy`, 'may not be set for non-init containers'));
  });
  errs.push(...hostPortConflicts(list, path));
  return errs;
}

function validateInitContainers(
  inits: unknown,
  regular: unknown,
  volumes: Map<string, JsonObject>,
  gracePeriod: number | undefined,
  podRestartPolicy: string,
  path: string,
): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set(asArray(regular).map((c) => str(asObject(c).name)));
  asArray(inits).forEach((raw, i) => {
    const c = asObject(raw);
    const p = `${path}[${i}]`;
    errs.push(...validateContainerCommon(c, volumes, podRestartPolicy, p));
    let restartAlways = false;
    if (typeof c.restartPolicy === 'string') {
      if (c.restartPolicy !== 'Always') errs.push(fieldErrors.notSupported(`${p}.restartPolicy`, c.restartPolicy, ['Always']));
      restartAlways = c.restartPolicy === 'Always';
    }
    const name = str(c.name);
    if (names.has(name)) errs.push(fieldErrors.duplicate(`${p}.name`, name));
    else if (name) names.add(name);
    errs.push(...hostPortConflicts([c], path));
    if (restartAlways) {
      if (isObject(c.lifecycle)) errs.push(...validateLifecycle(c.lifecycle, gracePeriod, `${p}.lifecycle`));
      errs.push(...validateProbe(c.livenessProbe, 'liveness', gracePeriod, `${p}.livenessProbe`));
      errs.push(...validateProbe(c.readinessProbe, 'readiness', gracePeriod, `${p}.readinessProbe`));
      errs.push(...validateProbe(c.startupProbe, 'startup', gracePeriod, `${p}.startupProbe`));
    } else {
      for (const f of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe']) {
        if (isObject(c[f]))
          errs.push(fieldErrors.forbidden(`${p}.${f}`, 'may not be set for init containers without restartPolicy=Always'));
      }
    }
  });
  return errs;
}

// in the order of kube's EphemeralContainerCommon fields, which is the order of its errors
const ephemeralForbidden = [
  'ports',
  'resources',
  'resizePolicy',
  'restartPolicy',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
];

function validateEphemeralContainers(
  eph: unknown,
  spec: JsonObject,
  volumes: Map<string, JsonObject>,
  podRestartPolicy: string,
  path: string,
): FieldError[] {
  const errs: FieldError[] = [];
  const others = new Set([...asArray(spec.containers), ...asArray(spec.initContainers)].map((c) => str(asObject(c).name)));
  const all = new Set(others);
  asArray(eph).forEach((raw, i) => {
    const c = asObject(raw);
    const p = `${path}[${i}]`;
    errs.push(...validateContainerCommon(c, volumes, podRestartPolicy, p));
    const image = str(c.image);
    if (image !== image.trim()) errs.push(fieldErrors.invalid(`${p}.image`, image, 'must not have leading or trailing whitespace'));
    const name = str(c.name);
    if (all.has(name)) errs.push(fieldErrors.duplicate(`${p}.name`, name));
    else all.add(name);
    const target = str(c.targetContainerName);
    if (target && !others.has(target)) errs.push(fieldErrors.notFound(`${p}.targetContainerName`, target));
    for (const f of ephemeralForbidden) {
      const v = c[f];
      const set = Array.isArray(v) ? v.length > 0 : isObject(v) ? Object.keys(v).length > 0 : v !== undefined && v !== null && v !== '';
      if (set) errs.push(fieldErrors.forbidden(`${p}.${f}`, 'cannot be set for an Ephemeral Container'));
    }
    asArray(c.volumeMounts).forEach((vm, j) => {
      for (const f of ['subPath', 'subPathExpr']) {
        if (str(asObject(vm)[f]))
          errs.push(fieldErrors.forbidden(`${p}.volumeMounts[${j}].${f}`, 'cannot be set for an Ephemeral Container'));
      }
    });
  });
  return errs;
}

// ---- pod-level fields ----

const restartPolicies = ['Always', 'OnFailure', 'Never'];
const dnsPolicies = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const taintEffects = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

function oneOf(value: string, allowed: string[], path: string): FieldError[] {
  if (!value) return [fieldErrors.required(path)];
  return allowed.includes(value) ? [] : [fieldErrors.notSupported(path, value, allowed)];
}

export function validateTolerations(tolerations: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  asArray(tolerations).forEach((raw, i) => {
    const t = asObject(raw);
    const p = `${path}[${i}]`;
    const key = str(t.key);
    const op = str(t.operator);
    const effect = str(t.effect);
    const value = str(t.value);
    if (key) errs.push(...qualifiedName(key, `${p}.key`));
    if (!key && op !== 'Exists') {
      errs.push(
        fieldErrors.invalid(
          `${p}.operator`,
          op,
          'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        ),
      );
    }
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null && effect !== 'NoExecute') {
      errs.push(fieldErrors.invalid(`${p}.effect`, effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    if (op === 'Equal' || op === '') {
      const msgs = labelValue(value, '').map((e) => e.detail ?? '');
      if (msgs.length) errs.push(fieldErrors.invalid(`${p}.operator`, value, msgs.join(';')));
    } else if (op === 'Exists') {
      if (value) errs.push(fieldErrors.invalid(`${p}.operator`, value, "value must be empty when `operator` is 'Exists'"));
    } else {
      errs.push(fieldErrors.notSupported(`${p}.operator`, op, ['Equal', 'Exists']));
    }
    if (effect && !taintEffects.includes(effect)) errs.push(fieldErrors.notSupported(`${p}.effect`, effect, taintEffects));
  });
  return errs;
}

function nodeSelectorRequirement(rq: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const values = asArray(rq.values);
  const op = str(rq.operator);
  switch (op) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) errs.push(fieldErrors.required(`${path}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0)
        errs.push(fieldErrors.forbidden(`${path}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      break;
    case 'Gt':
    case 'Lt':
      if (values.length !== 1)
        errs.push(fieldErrors.required(`${path}.values`, "must be specified single value when `operator` is 'Lt' or 'Gt'"));
      break;
    default:
      errs.push(fieldErrors.invalid(`${path}.operator`, op, 'not a valid selector operator'));
  }
  errs.push(...qualifiedName(str(rq.key), `${path}.key`));
  values.forEach((v, i) => errs.push(...labelValue(str(v), `${path}.values[${i}]`)));
  return errs;
}

function nodeSelectorTerm(term: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  asArray(term.matchExpressions).forEach((r, j) => errs.push(...nodeSelectorRequirement(asObject(r), `${path}.matchExpressions[${j}]`)));
  asArray(term.matchFields).forEach((r, j) => {
    const req = asObject(r);
    const p = `${path}.matchFields[${j}]`;
    const op = str(req.operator);
    if (op === 'In' || op === 'NotIn') {
      if (asArray(req.values).length !== 1)
        errs.push(fieldErrors.required(`${p}.values`, "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"));
    } else {
      errs.push(fieldErrors.invalid(`${p}.operator`, op, 'not a valid selector operator'));
    }
    if (str(req.key) !== 'metadata.name') errs.push(fieldErrors.invalid(`${p}.key`, str(req.key), 'not a valid field selector key'));
    else asArray(req.values).forEach((v, i) => errs.push(...dnsSubdomain(str(v), `${p}.values[${i}]`)));
  });
  return errs;
}

function weight(v: unknown, path: string): FieldError[] {
  const w = num(v);
  return w <= 0 || w > 100 ? [fieldErrors.invalid(path, w, 'must be in the range 1-100')] : [];
}

function podAffinityTerm(term: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  errs.push(...validateLabelSelectorObject(term.labelSelector as LabelSelectorObject, `${path}.labelSelector`));
  errs.push(...validateLabelSelectorObject(term.namespaceSelector as LabelSelectorObject, `${path}.namespaceSelector`));
  const key = str(term.topologyKey);
  if (!key) errs.push(fieldErrors.required(`${path}.topologyKey`, 'can not be empty'));
  else errs.push(...qualifiedName(key, `${path}.topologyKey`));
  return errs;
}

function validateAffinity(aff: unknown, path: string): FieldError[] {
  if (!isObject(aff)) return [];
  const errs: FieldError[] = [];
  if (isObject(aff.nodeAffinity)) {
    const na = aff.nodeAffinity;
    const np = `${path}.nodeAffinity`;
    if (isObject(na.requiredDuringSchedulingIgnoredDuringExecution)) {
      const rp = `${np}.requiredDuringSchedulingIgnoredDuringExecution`;
      const terms = asArray(na.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms);
      if (terms.length === 0) errs.push(fieldErrors.required(`${rp}.nodeSelectorTerms`, 'must have at least one node selector term'));
      terms.forEach((t, i) => errs.push(...nodeSelectorTerm(asObject(t), `${rp}.nodeSelectorTerms[${i}]`)));
    }
    asArray(na.preferredDuringSchedulingIgnoredDuringExecution).forEach((raw, i) => {
      const t = asObject(raw);
      const p = `${np}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
      errs.push(...weight(t.weight, `${p}.weight`));
      errs.push(...nodeSelectorTerm(asObject(t.preference), `${p}.preference`));
    });
  }
  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    if (!isObject(aff[kind])) continue;
    const pa = aff[kind] as JsonObject;
    const kp = `${path}.${kind}`;
    asArray(pa.requiredDuringSchedulingIgnoredDuringExecution).forEach((t, i) =>
      errs.push(...podAffinityTerm(asObject(t), `${kp}.requiredDuringSchedulingIgnoredDuringExecution[${i}]`)),
    );
    asArray(pa.preferredDuringSchedulingIgnoredDuringExecution).forEach((raw, i) => {
      const t = asObject(raw);
      const p = `${kp}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
      errs.push(...weight(t.weight, `${p}.weight`));
      errs.push(...podAffinityTerm(asObject(t.podAffinityTerm), `${p}.podAffinityTerm`));
    });
  }
  return errs;
}

function validateDNSConfig(cfg: unknown, dnsPolicy: string, path: string): FieldError[] {
  if (dnsPolicy === 'None') {
    if (!isObject(cfg)) return [fieldErrors.required(path, 'must provide `dnsConfig` when `dnsPolicy` is None')];
    if (asArray(cfg.nameservers).length === 0)
      return [fieldErrors.required(`${path}.nameservers`, 'must provide at least one DNS nameserver when `dnsPolicy` is None')];
  }
  if (!isObject(cfg)) return [];
  const errs: FieldError[] = [];
  const ns = asArray(cfg.nameservers).map(str);
  if (ns.length > 3) errs.push(fieldErrors.invalid(`${path}.nameservers`, ns, 'must not have more than 3 nameservers'));
  ns.forEach((n, i) => errs.push(...validIP(n, `${path}.nameservers[${i}]`)));
  const searches = asArray(cfg.searches).map(str);
  if (searches.length > 32) errs.push(fieldErrors.invalid(`${path}.searches`, searches, 'must not have more than 32 search paths'));
  if (searches.join(' ').length > 2048)
    errs.push(
      fieldErrors.invalid(`${path}.searches`, searches, 'must not have more than 2048 characters (including spaces) in the search list'),
    );
  searches.forEach((s, i) => {
    if (s === '.') return;
    const trimmed = s.endsWith('.') ? s.slice(0, -1) : s;
    // the relaxed rule (1.32+): underscores are allowed
    const re = /^[a-z0-9_]([-a-z0-9_]*[a-z0-9_])?(\.[a-z0-9_]([-a-z0-9_]*[a-z0-9_])?)*$/;
    if (trimmed.length > 253) errs.push(fieldErrors.invalid(`${path}.searches[${i}]`, trimmed, 'must be no more than 253 characters'));
    if (!re.test(trimmed)) {
      errs.push(
        fieldErrors.invalid(
          `${path}.searches[${i}]`,
          trimmed,
          "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9_]([-a-z0-9_]*[a-z0-9_])?(\\.[a-z0-9_]([-a-z0-9_]*[a-z0-9_])?)*')",
        ),
      );
    }
  });
  asArray(cfg.options).forEach((o, i) => {
    if (!str(asObject(o).name)) errs.push(fieldErrors.required(`${path}.options[${i}]`, 'must not be empty'));
  });
  return errs;
}

const unsatisfiableActions = ['DoNotSchedule', 'ScheduleAnyway'];

function validateTopologySpread(list: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  asArray(list).forEach((raw, i) => {
    const c = asObject(raw);
    const p = `${path}[${i}]`;
    const skew = num(c.maxSkew);
    if (skew <= 0) errs.push(fieldErrors.invalid(`${p}.maxSkew`, skew, isNotPositiveErrorMsgLocal));
    const key = str(c.topologyKey);
    if (!key) errs.push(fieldErrors.required(`${p}.topologyKey`, 'can not be empty'));
    else errs.push(...qualifiedName(key, `${p}.topologyKey`));
    const action = str(c.whenUnsatisfiable);
    if (!unsatisfiableActions.includes(action)) errs.push(fieldErrors.notSupported(`${p}.whenUnsatisfiable`, action, unsatisfiableActions));
    const pair = `{${key}, ${action}}`;
    if (seen.has(pair)) errs.push(fieldErrors.duplicate(p, { rendered: pair }));
    seen.add(pair);
    const minDomains = optNum(c.minDomains);
    if (minDomains !== undefined) {
      if (minDomains <= 0) errs.push(fieldErrors.invalid(`${p}.minDomains`, minDomains, isNotPositiveErrorMsgLocal));
      if (action !== 'DoNotSchedule') {
        errs.push(
          fieldErrors.invalid(`${p}.minDomains`, minDomains, `can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ${action}`),
        );
      }
    }
    errs.push(...validateLabelSelectorObject(c.labelSelector as LabelSelectorObject, `${p}.labelSelector`));
  });
  return errs;
}

const isNotPositiveErrorMsgLocal = 'must be greater than zero';

function validatePodSecurityContext(spec: JsonObject, path: string): FieldError[] {
  const sc = spec.securityContext;
  if (!isObject(sc)) return [];
  const p = `${path}.securityContext`;
  const errs: FieldError[] = [];
  errs.push(...idRange(sc.fsGroup, `${p}.fsGroup`));
  errs.push(...idRange(sc.runAsUser, `${p}.runAsUser`));
  errs.push(...idRange(sc.runAsGroup, `${p}.runAsGroup`));
  asArray(sc.supplementalGroups).forEach((g, i) => errs.push(...idRange(g, `${p}.supplementalGroups[${i}]`)));
  if (typeof sc.fsGroupChangePolicy === 'string' && !['Always', 'OnRootMismatch'].includes(sc.fsGroupChangePolicy)) {
    errs.push(fieldErrors.notSupported(`${p}.fsGroupChangePolicy`, sc.fsGroupChangePolicy, ['Always', 'OnRootMismatch']));
  }
  errs.push(...seccompProfile(sc.seccompProfile, `${p}.seccompProfile`));
  if (typeof sc.supplementalGroupsPolicy === 'string' && !['Merge', 'Strict'].includes(sc.supplementalGroupsPolicy)) {
    errs.push(fieldErrors.notSupported(`${p}.supplementalGroupsPolicy`, sc.supplementalGroupsPolicy, ['Merge', 'Strict']));
  }
  if (sc.shareProcessNamespace === true && spec.hostPID === true) {
    errs.push(fieldErrors.invalid(`${path}.shareProcessNamespace`, true, 'ShareProcessNamespace and HostPID cannot both be enabled'));
  }
  return errs;
}

/** kube's ValidatePodSpec for a v1 PodSpec at `path` */
export function validatePodSpecFull(specRaw: unknown, path: string, opts: PodSpecValidationOptions = {}): FieldError[] {
  const spec = asObject(specRaw);
  const errs: FieldError[] = [];
  const grace = optNum(spec.terminationGracePeriodSeconds);
  if (grace === undefined) errs.push(fieldErrors.required(`${path}.terminationGracePeriodSeconds`));
  const restartPolicy = str(spec.restartPolicy);
  const vols = validateVolumes(spec.volumes, `${path}.volumes`, opts.podName);
  errs.push(...vols.errs);
  errs.push(...validateContainers(spec.containers, vols.valid, grace, restartPolicy, `${path}.containers`));
  errs.push(...validateInitContainers(spec.initContainers, spec.containers, vols.valid, grace, restartPolicy, `${path}.initContainers`));
  errs.push(...validateEphemeralContainers(spec.ephemeralContainers, spec, vols.valid, restartPolicy, `${path}.ephemeralContainers`));
  if (spec.hostNetwork === true) {
    asArray(spec.containers).forEach((c, i) => {
      asArray(asObject(c).ports).forEach((pr, j) => {
        const port = asObject(pr);
        const hp = num(port.hostPort);
        const cp = num(port.containerPort);
        if ((opts.resourceIsPod || hp !== 0) && hp !== cp) {
          errs.push(
            fieldErrors.invalid(
              `${path}.containers[${i}].ports[${j}].hostPort`,
              hp,
              'must match `containerPort` when `hostNetwork` is true',
            ),
          );
        }
      });
    });
  }
  errs.push(...oneOf(restartPolicy, restartPolicies, `${path}.restartPolicy`));
  errs.push(...oneOf(str(spec.dnsPolicy), dnsPolicies, `${path}.dnsPolicy`));
  errs.push(...validateLabels(spec.nodeSelector as Record<string, string> | undefined, `${path}.nodeSelector`));
  errs.push(...validatePodSecurityContext(spec, path));
  asArray(spec.imagePullSecrets).forEach((s, i) => {
    const o = asObject(s);
    if (Object.keys(o).some((k) => k !== 'name'))
      errs.push(
        fieldErrors.invalid(
          `${path}.imagePullSecrets[${i}]`,
          { rendered: `core.LocalObjectReference{Name:"${str(o.name)}"}` },
          'only name may be set',
        ),
      );
  });
  errs.push(...validateAffinity(spec.affinity, `${path}.affinity`));
  errs.push(...validateDNSConfig(spec.dnsConfig, str(spec.dnsPolicy), `${path}.dnsConfig`));
  asArray(spec.readinessGates).forEach((g, i) =>
    errs.push(...qualifiedName(str(asObject(g).conditionType), `${path}.readinessGates[${i}].conditionType`)),
  );
  const gates = new Set<string>();
  asArray(spec.schedulingGates).forEach((g, i) => {
    const name = str(asObject(g).name);
    errs.push(...qualifiedName(name, `${path}.schedulingGates[${i}]`));
    if (gates.has(name)) errs.push(fieldErrors.duplicate(`${path}.schedulingGates[${i}]`, name));
    gates.add(name);
  });
  errs.push(...validateTopologySpread(spec.topologySpreadConstraints, `${path}.topologySpreadConstraints`));
  const sa = str(spec.serviceAccountName);
  if (sa) errs.push(...dnsSubdomain(sa, `${path}.serviceAccountName`));
  const nodeName = str(spec.nodeName);
  if (nodeName) errs.push(...dnsSubdomain(nodeName, `${path}.nodeName`));
  const ads = optNum(spec.activeDeadlineSeconds);
  if (ads !== undefined && (ads < 1 || ads > maxInt32))
    errs.push(fieldErrors.invalid(`${path}.activeDeadlineSeconds`, ads, inclusiveRangeError(1, maxInt32)));
  if (str(spec.hostname)) errs.push(...dnsLabel(str(spec.hostname), `${path}.hostname`));
  if (str(spec.subdomain)) errs.push(...dnsLabel(str(spec.subdomain), `${path}.subdomain`));
  errs.push(...validateTolerations(spec.tolerations, `${path}.tolerations`));
  asArray(spec.hostAliases).forEach((raw, i) => {
    const ha = asObject(raw);
    errs.push(...validIP(str(ha.ip), `${path}.hostAliases[${i}].ip`));
    asArray(ha.hostnames).forEach((h, j) => errs.push(...dnsSubdomain(str(h), `${path}.hostAliases[${i}].hostnames[${j}]`)));
  });
  const pcn = str(spec.priorityClassName);
  if (pcn) errs.push(...dnsSubdomain(pcn, `${path}.priorityClassName`));
  if (typeof spec.runtimeClassName === 'string') errs.push(...dnsSubdomain(spec.runtimeClassName, `${path}.runtimeClassName`));
  if (typeof spec.preemptionPolicy === 'string')
    errs.push(...oneOf(spec.preemptionPolicy, ['PreemptLowerPriority', 'Never'], `${path}.preemptionPolicy`));
  if (isObject(spec.overhead)) errs.push(...validateResourceRequirements({ limits: spec.overhead }, `${path}.overhead`));
  if (isObject(spec.os)) {
    const os = str(spec.os.name);
    if (!os) errs.push(fieldErrors.required(`${path}.os.name`));
    else if (!['linux', 'windows'].includes(os)) errs.push(fieldErrors.notSupported(`${path}.os.name`, os, ['linux', 'windows']));
  }
  return errs;
}

/** Pod-only checks beyond the spec (validatePodMetadataAndSpec) */
export function validatePodOnly(specRaw: unknown, path: string): FieldError[] {
  const spec = asObject(specRaw);
  const errs: FieldError[] = [];
  if (!str(spec.serviceAccountName)) {
    asArray(spec.volumes).forEach((v, vi) => {
      asArray(asObject(asObject(v).projected).sources).forEach((s, si) => {
        if (isObject(asObject(s).serviceAccountToken)) {
          errs.push(
            fieldErrors.forbidden(
              `${path}.volumes[${vi}].projected.sources[${si}].serviceAccountToken`,
              'must not be specified when serviceAccountName is not set',
            ),
          );
        }
      });
    });
  }
  for (const key of ['containers', 'initContainers']) {
    asArray(spec[key]).forEach((c, i) => {
      const image = str(asObject(c).image);
      if (image !== image.trim())
        errs.push(fieldErrors.invalid(`${path}.${key}[${i}].image`, image, 'must not have leading or trailing whitespace'));
    });
  }
  return errs;
}

/** a PodTemplateSpec: its labels and annotations, then the spec (ValidatePodTemplateSpec) */
export function validatePodTemplateSpec(templateRaw: unknown, path: string): FieldError[] {
  const t = asObject(templateRaw);
  const meta = asObject(t.metadata);
  const errs: FieldError[] = [];
  errs.push(...validateLabels(meta.labels as Record<string, string> | undefined, `${path}.labels`));
  errs.push(...validateAnnotations(meta.annotations as Record<string, string> | undefined, `${path}.annotations`));
  errs.push(...validatePodSpecFull(t.spec, `${path}.spec`));
  if (asArray(asObject(t.spec).ephemeralContainers).length > 0) {
    errs.push(fieldErrors.forbidden(`${path}.spec.ephemeralContainers`, 'ephemeral containers not allowed in pod template'));
  }
  return errs;
}
