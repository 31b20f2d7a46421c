// PersistentVolumes and PersistentVolumeClaims: v1 defaults (phase Pending, volumeMode
// Filesystem, reclaim policy Retain), validation of access modes, capacity, storage requests
// and volume sources, and what a claim's update may change (only its storage request, and
// volumeName once). DELETE answers with the object.

import type { KubeObject } from '../../../storage/interface.js';
import { asArray, asObject, clone, ensureObject, isObject, semanticEqual, type JsonObject } from '../object.js';
import { compareQuantities, formatQuantity, quantitySign } from '../../machinery/quantity.js';
import { defineStrategy, type ResourceStrategy } from '../strategy.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { fieldImmutableErrorMsg, isNotPositiveErrorMsg, dnsSubdomain, str } from '../validation/values.js';
import { validateLabelSelector } from './workload-validation.js';
import { quantityOf, validateResourceQuantityValue } from './resources-validation.js';
import { validateVolumes } from './pod-validation.js';

const accessModes = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
const volumeModes = ['Block', 'Filesystem'];
const reclaimPolicies = ['Delete', 'Recycle', 'Retain'];

function validateAccessModes(modes: unknown, path: string, requiredDetail: string): FieldError[] {
  const list = asArray(modes).map(str);
  const errs: FieldError[] = [];
  if (list.length === 0) errs.push(fieldErrors.required(path, requiredDetail));
  for (const m of list) if (!accessModes.includes(m)) errs.push(fieldErrors.notSupported(path, m, accessModes));
  if (list.includes('ReadWriteOncePod') && list.length > 1)
    errs.push(fieldErrors.forbidden(path, 'may not use ReadWriteOncePod with other access modes'));
  return errs;
}

/** ValidatePersistentVolumeClaimSpec */
export function validatePersistentVolumeClaimSpec(specRaw: unknown, path: string): FieldError[] {
  const spec = asObject(specRaw);
  const errs = validateAccessModes(spec.accessModes, `${path}.accessModes`, 'at least 1 access mode is required');
  errs.push(...validateLabelSelector(spec.selector, `${path}.selector`));
  const storagePath = `${path}.resources[storage]`;
  const requests = asObject(asObject(spec.resources).requests);
  if (!('storage' in requests)) {
    errs.push(fieldErrors.required(storagePath));
  } else {
    const q = quantityOf(requests.storage);
    if (q && quantitySign(q) <= 0) errs.push(fieldErrors.invalid(storagePath, formatQuantity(q), isNotPositiveErrorMsg));
    else if (q) errs.push(...validateResourceQuantityValue('storage', q, storagePath));
  }
  if (typeof spec.storageClassName === 'string' && spec.storageClassName)
    errs.push(...dnsSubdomain(spec.storageClassName, `${path}.storageClassName`));
  if (typeof spec.volumeMode === 'string' && !volumeModes.includes(spec.volumeMode)) {
    errs.push(fieldErrors.notSupported(`${path}.volumeMode`, spec.volumeMode, volumeModes));
  }
  if (isObject(spec.dataSource)) {
    const ds = spec.dataSource;
    if (!str(ds.name)) errs.push(fieldErrors.required(`${path}.dataSource.name`));
    if (!str(ds.kind)) errs.push(fieldErrors.required(`${path}.dataSource.kind`));
    const group = str(ds.apiGroup);
    if (!group && str(ds.kind) !== 'PersistentVolumeClaim') {
      errs.push(
        fieldErrors.invalid(`${path}.dataSource`, str(ds.kind), "must be 'PersistentVolumeClaim' when referencing the default apiGroup"),
      );
    }
  }
  return errs;
}

function validatePersistentVolumeClaim(obj: KubeObject): FieldError[] {
  return validatePersistentVolumeClaimSpec(obj.spec, 'spec');
}

function validatePersistentVolumeClaimUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const now = clone(asObject(obj.spec));
  const before = clone(asObject(old.spec));
  // the volume binder fills in volumeName once
  if (!str(before.volumeName)) before.volumeName = now.volumeName;
  const bound = str(asObject(obj.status).phase) === 'Bound';
  if (bound) {
    const nowRes = asObject(now.resources);
    if (isObject(nowRes.requests)) {
      const oldReq = asObject(asObject(before.resources).requests);
      const requests: JsonObject = { ...nowRes.requests, storage: oldReq.storage };
      if (requests.storage === undefined) delete requests.storage;
      nowRes.requests = requests;
    }
    if (now.volumeAttributesClassName !== undefined) now.volumeAttributesClassName = before.volumeAttributesClassName;
  }
  if (!semanticEqual(now, before)) {
    errs.push(
      fieldErrors.forbidden(
        'spec',
        'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n  core.PersistentVolumeClaimSpec{...}\n',
      ),
    );
  }
  const newSize = quantityOf(asObject(asObject(asObject(obj.spec).resources).requests).storage);
  const oldSize = quantityOf(asObject(asObject(asObject(old.spec).resources).requests).storage);
  const statusSize = quantityOf(asObject(asObject(old.status).capacity).storage);
  if (newSize && oldSize && compareQuantities(newSize, oldSize) < 0) {
    // with recovery from expansion failures a claim may shrink down to (not below) its capacity
    if (!statusSize || compareQuantities(newSize, statusSize) <= 0) {
      errs.push(fieldErrors.forbidden('spec.resources.requests.storage', 'field can not be less than status.capacity'));
    }
  }
  if ((asObject(obj.spec).volumeMode ?? null) !== (asObject(old.spec).volumeMode ?? null)) {
    errs.push(fieldErrors.invalid('volumeMode', str(asObject(obj.spec).volumeMode), fieldImmutableErrorMsg));
  }
  return errs;
}

/** v1 SetDefaults_PersistentVolumeClaimSpec */
export function defaultPersistentVolumeClaimSpec(spec: JsonObject): void {
  spec.volumeMode ??= 'Filesystem';
}

/** a PVC template embedded in a StatefulSet: spec defaults and the Pending phase */
export function defaultPersistentVolumeClaimTemplate(t: JsonObject): void {
  if (!isObject(t.metadata)) t.metadata = { creationTimestamp: null };
  else if (!('creationTimestamp' in t.metadata)) t.metadata = { creationTimestamp: null, ...t.metadata };
  defaultPersistentVolumeClaimSpec(ensureObject(t, 'spec'));
  const status = ensureObject(t, 'status');
  if (!status.phase) status.phase = 'Pending';
}

// ---- PersistentVolumes ----

const pvSourceKeys = [
  'hostPath',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'glusterfs',
  'nfs',
  'rbd',
  'quobyte',
  'iscsi',
  'cephfs',
  'cinder',
  'fc',
  'flocker',
  'flexVolume',
  'azureFile',
  'vsphereVolume',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'local',
  'storageos',
  'csi',
];

function validatePersistentVolume(obj: KubeObject): FieldError[] {
  const spec = asObject(obj.spec);
  const errs = validateAccessModes(spec.accessModes, 'spec.accessModes', '');
  const capacity = asObject(spec.capacity);
  const keys = Object.keys(capacity);
  if (keys.length === 0) errs.push(fieldErrors.required('spec.capacity'));
  if (!('storage' in capacity) || keys.length > 1) {
    errs.push(
      fieldErrors.notSupported(
        'spec.capacity',
        { rendered: `core.ResourceList{${keys.map((k) => `"${k}":resource.Quantity{...}`).join(', ')}}` },
        ['storage'],
      ),
    );
  }
  for (const [k, v] of Object.entries(capacity)) {
    const q = quantityOf(v);
    if (!q) continue;
    if (quantitySign(q) < 0) errs.push(fieldErrors.invalid(`spec.capacity[${k}]`, Number(q.unscaled), 'must be a valid resource quantity'));
    if (quantitySign(q) <= 0) errs.push(fieldErrors.invalid(`spec.capacity[${k}]`, formatQuantity(q), isNotPositiveErrorMsg));
  }
  if (str(spec.storageClassName)) errs.push(...dnsSubdomain(str(spec.storageClassName), 'spec.storageClassName'));
  if (typeof spec.volumeMode === 'string' && !volumeModes.includes(spec.volumeMode)) {
    errs.push(fieldErrors.notSupported('spec.volumeMode', spec.volumeMode, volumeModes));
  }
  const policy = str(spec.persistentVolumeReclaimPolicy);
  if (policy && !reclaimPolicies.includes(policy))
    errs.push(fieldErrors.notSupported('spec.persistentVolumeReclaimPolicy', policy, reclaimPolicies));
  const sources = pvSourceKeys.filter((k) => isObject(spec[k]));
  if (sources.length === 0) errs.push(fieldErrors.required('spec', 'must specify a volume type'));
  for (const k of sources.slice(1)) errs.push(fieldErrors.forbidden(`spec.${k}`, 'may not specify more than 1 volume type'));
  if (sources[0] === 'hostPath' && !str(asObject(spec.hostPath).path)) errs.push(fieldErrors.required('spec.hostPath.path'));
  if (sources[0] === 'local') {
    const p = str(asObject(spec.local).path);
    if (!p) errs.push(fieldErrors.required('spec.local.path'));
    if (!isObject(spec.nodeAffinity)) errs.push(fieldErrors.required('spec.nodeAffinity', 'Local volume requires node affinity'));
  }
  if (sources[0] === 'nfs') {
    // the pod-volume rules apply to a PV's NFS source too
    errs.push(
      ...validateVolumes([{ name: 'pv', nfs: spec.nfs }], 'spec').errs.map((e) => ({ ...e, field: e.field.replace('spec[0].', 'spec.') })),
    );
  }
  if (sources[0] === 'csi') {
    if (!str(asObject(spec.csi).driver)) errs.push(fieldErrors.required('spec.csi.driver'));
    if (!str(asObject(spec.csi).volumeHandle)) errs.push(fieldErrors.required('spec.csi.volumeHandle'));
  }
  return errs;
}

function validatePersistentVolumeUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const now = asObject(obj.spec);
  const before = asObject(old.spec);
  for (const k of pvSourceKeys) {
    if (k === 'csi' || !isObject(before[k])) continue;
    if (!semanticEqual(now[k], before[k]))
      errs.push(fieldErrors.forbidden('spec.persistentvolumesource', 'spec.persistentvolumesource is immutable after creation\n'));
  }
  if ((now.volumeMode ?? null) !== (before.volumeMode ?? null)) {
    errs.push(fieldErrors.invalid('volumeMode', str(now.volumeMode), fieldImmutableErrorMsg));
  }
  if (isObject(before.nodeAffinity) && !semanticEqual(now.nodeAffinity, before.nodeAffinity)) {
    errs.push(fieldErrors.invalid('nodeAffinity', { rendered: 'core.VolumeNodeAffinity{...}' }, fieldImmutableErrorMsg));
  }
  return errs;
}

export function persistentVolumeStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: false,
    hasStatusSubresource: true,
    returnDeletedObject: true,
    initialStatus: () => ({ phase: 'Pending' }),
    applyDefaults(obj) {
      if (!isObject(obj.spec)) return;
      if (!obj.spec.persistentVolumeReclaimPolicy) obj.spec.persistentVolumeReclaimPolicy = 'Retain';
      obj.spec.volumeMode ??= 'Filesystem';
    },
    validateSpec: validatePersistentVolume,
    validateSpecUpdate: validatePersistentVolumeUpdate,
  });
}

export function persistentVolumeClaimStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    hasStatusSubresource: true,
    returnDeletedObject: true,
    initialStatus: () => ({ phase: 'Pending' }),
    applyDefaults(obj) {
      defaultPersistentVolumeClaimSpec(ensureObject(obj, 'spec'));
    },
    validateSpec: validatePersistentVolumeClaim,
    validateSpecUpdate: validatePersistentVolumeClaimUpdate,
  });
}
