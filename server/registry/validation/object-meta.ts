// Validation of `metadata`, common to every kind: name/generateName per the kind's rule,
// namespace presence, labels, annotations (size limit), owner references, finalizers,
// managedFields; and the immutability rules of an update.

import type { ObjectMeta } from '../../../storage/interface.js';
import { child, fieldErrors, index, isGoPrintable, isPrintableAscii, type FieldError } from '../../machinery/validation/field-error.js';
import { isQualifiedName, isValidLabelValue, nameIsDNSLabel, type NameValidator } from '../../machinery/validation/names.js';
import { isObject } from '../object.js';

export const totalAnnotationSizeLimitBytes = 256 * 1024;
export const fieldManagerMaxLength = 128;
export const maxSubresourceNameLength = 256;

export const finalizerOrphanDependents = 'orphan';
export const finalizerDeleteDependents = 'foregroundDeletion';

export function validateLabelName(key: string, path: string): FieldError[] {
  return isQualifiedName(key).map((m) => fieldErrors.invalid(path, key, m));
}

function listOf(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

export function validateLabels(labels: Record<string, string> | undefined, path: string): FieldError[] {
  const out: FieldError[] = [];
  if (!isObject(labels)) return out;
  // for-in: no array of pairs per object written
  for (const k in labels) {
    const v: unknown = labels[k];
    out.push(...validateLabelName(k, path));
    if (typeof v !== 'string') {
      out.push(fieldErrors.invalid(path, String(v), 'label values must be strings'));
      continue;
    }
    for (const m of isValidLabelValue(v)) out.push(fieldErrors.invalid(path, v, m));
  }
  return out;
}

export function validateAnnotations(annotations: Record<string, string> | undefined, path: string): FieldError[] {
  const out: FieldError[] = [];
  let total = 0;
  if (!isObject(annotations)) return out;
  for (const k in annotations) {
    const v: unknown = annotations[k];
    // case does not matter in annotation keys
    for (const m of isQualifiedName(k.toLowerCase())) out.push(fieldErrors.invalid(path, k, m));
    total += Buffer.byteLength(k, 'utf8') + Buffer.byteLength(typeof v === 'string' ? v : String(v), 'utf8');
  }
  if (total > totalAnnotationSizeLimitBytes) out.push(fieldErrors.tooLong(path, totalAnnotationSizeLimitBytes));
  return out;
}

interface OwnerReference {
  apiVersion?: unknown;
  kind?: unknown;
  name?: unknown;
  uid?: unknown;
  controller?: unknown;
}

/** the version part of `group/version` or `version`; '' when malformed (kube's ParseGroupVersion) */
function versionOf(apiVersion: string): string {
  const parts = apiVersion.split('/');
  if (parts.length === 1) return parts[0];
  if (parts.length === 2) return parts[1];
  return '';
}

export function validateOwnerReferences(refs: unknown[] | undefined, path: string): FieldError[] {
  const out: FieldError[] = [];
  let firstController = '';
  for (const raw of listOf(refs)) {
    // kube-apiserver 1.33 reports these without the list index
    const ref = (typeof raw === 'object' && raw !== null ? raw : {}) as OwnerReference;
    const apiVersion = typeof ref.apiVersion === 'string' ? ref.apiVersion : '';
    const kind = typeof ref.kind === 'string' ? ref.kind : '';
    const name = typeof ref.name === 'string' ? ref.name : '';
    const uid = typeof ref.uid === 'string' ? ref.uid : '';
    if (!versionOf(apiVersion)) out.push(fieldErrors.invalid(child(path, 'apiVersion'), apiVersion, 'version must not be empty'));
    if (!kind) out.push(fieldErrors.invalid(child(path, 'kind'), kind, 'kind must not be empty'));
    if (!name) out.push(fieldErrors.invalid(child(path, 'name'), name, 'name must not be empty'));
    if (!uid) out.push(fieldErrors.invalid(child(path, 'uid'), uid, 'uid must not be empty'));
    if (apiVersion === 'v1' && kind === 'Event') {
      out.push(fieldErrors.invalid(path, ref as object, '/v1, Kind=Event is disallowed from being an owner'));
    }
    if (ref.controller === true) {
      const current = `${kind}/${name}`;
      if (firstController) {
        out.push(
          fieldErrors.invalid(
            path,
            refs as unknown[],
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
      } else {
        firstController = current;
      }
    }
  }
  return out;
}

export function validateFinalizers(finalizers: string[] | undefined, path: string): FieldError[] {
  const out: FieldError[] = [];
  let orphan = false;
  let foreground = false;
  for (const raw of listOf(finalizers)) {
    const f = typeof raw === 'string' ? raw : String(raw);
    for (const m of isQualifiedName(f)) out.push(fieldErrors.invalid(path, f, m));
    if (f === finalizerOrphanDependents) orphan = true;
    if (f === finalizerDeleteDependents) foreground = true;
  }
  if (orphan && foreground) {
    out.push(
      fieldErrors.invalid(
        path,
        finalizers ?? [],
        `finalizer ${finalizerOrphanDependents} and ${finalizerDeleteDependents} cannot be both set`,
      ),
    );
  }
  return out;
}

export function validateFieldManager(manager: string, path: string): FieldError[] {
  // every write's managedFields pass here: the common name needs no per-character look
  if (manager.length <= fieldManagerMaxLength && isPrintableAscii(manager)) return [];
  const out: FieldError[] = [];
  // the limit counts UTF-8 bytes, as Go's len does
  if (Buffer.byteLength(manager, 'utf8') > fieldManagerMaxLength) out.push(fieldErrors.tooLong(path, fieldManagerMaxLength));
  let pos = 0;
  for (const ch of manager) {
    if (!isGoPrintable(ch)) {
      const cp = ch.codePointAt(0) ?? 0;
      const hex = 'U+' + cp.toString(16).toUpperCase().padStart(4, '0');
      out.push(fieldErrors.invalid(path, manager, `invalid character ${hex} (at position ${pos})`));
    }
    pos += Buffer.byteLength(ch, 'utf8');
  }
  return out;
}

export function validateManagedFields(entries: unknown[] | undefined, path: string): FieldError[] {
  const out: FieldError[] = [];
  listOf(entries).forEach((raw, i) => {
    const p = index(path, i);
    const e = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    const operation = typeof e.operation === 'string' ? e.operation : '';
    if (operation !== 'Apply' && operation !== 'Update') {
      out.push(fieldErrors.invalid(child(p, 'operation'), operation, 'must be `Apply` or `Update`'));
    }
    const fieldsType = typeof e.fieldsType === 'string' ? e.fieldsType : '';
    if (fieldsType && fieldsType !== 'FieldsV1') {
      out.push(fieldErrors.invalid(child(p, 'fieldsType'), fieldsType, 'must be `FieldsV1`'));
    }
    out.push(...validateFieldManager(typeof e.manager === 'string' ? e.manager : '', child(p, 'manager')));
    const sub = typeof e.subresource === 'string' ? e.subresource : '';
    if (sub.length > maxSubresourceNameLength) out.push(fieldErrors.tooLong(child(p, 'subresource'), maxSubresourceNameLength));
  });
  return out;
}

function nonNegative(value: number | undefined, path: string): FieldError[] {
  if (typeof value === 'number' && value < 0) return [fieldErrors.invalid(path, value, 'must be greater than or equal to 0')];
  return [];
}

/** The metadata checks every create runs (ValidateObjectMetaAccessor). */
export function validateObjectMeta(meta: ObjectMeta, namespaced: boolean, nameFn: NameValidator, path = 'metadata'): FieldError[] {
  const out: FieldError[] = [];
  const generateName = typeof meta.generateName === 'string' ? meta.generateName : '';
  const name = typeof meta.name === 'string' ? meta.name : '';
  if (generateName) {
    for (const m of nameFn(generateName, true)) out.push(fieldErrors.invalid(child(path, 'generateName'), generateName, m));
  }
  if (!name) out.push(fieldErrors.required(child(path, 'name'), 'name or generateName is required'));
  else for (const m of nameFn(name, false)) out.push(fieldErrors.invalid(child(path, 'name'), name, m));
  out.push(...validateObjectMetaCommon(meta, namespaced, path));
  return out;
}

function validateObjectMetaCommon(meta: ObjectMeta, namespaced: boolean, path: string): FieldError[] {
  const out: FieldError[] = [];
  if (namespaced) {
    if (!meta.namespace) out.push(fieldErrors.required(child(path, 'namespace')));
    else for (const m of nameIsDNSLabel(meta.namespace, false)) out.push(fieldErrors.invalid(child(path, 'namespace'), meta.namespace, m));
  } else if (meta.namespace) {
    out.push(fieldErrors.forbidden(child(path, 'namespace'), 'not allowed on this type'));
  }
  out.push(...nonNegative(meta.generation, child(path, 'generation')));
  out.push(...validateLabels(meta.labels, child(path, 'labels')));
  out.push(...validateAnnotations(meta.annotations, child(path, 'annotations')));
  out.push(...validateOwnerReferences(meta.ownerReferences, child(path, 'ownerReferences')));
  out.push(...validateFinalizers(meta.finalizers, child(path, 'finalizers')));
  out.push(...validateManagedFields(meta.managedFields, child(path, 'managedFields')));
  return out;
}

function sameJson(a: unknown, b: unknown): boolean {
  // most compared members are strings that did not change: no encoding for those
  if (a === b) return true;
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

function immutable(newVal: unknown, oldVal: unknown, path: string): FieldError[] {
  if (sameJson(newVal, oldVal)) return [];
  const shown = newVal === undefined || newVal === null ? '' : (newVal as string | number);
  return [fieldErrors.invalid(path, shown, 'field is immutable')];
}

/** The metadata checks every update runs (ValidateObjectMetaAccessorUpdate). */
export function validateObjectMetaUpdate(meta: ObjectMeta, old: ObjectMeta, path = 'metadata'): FieldError[] {
  const out: FieldError[] = [];
  if (old.deletionTimestamp) {
    const before = new Set(listOf(old.finalizers));
    const extra = [...new Set(listOf(meta.finalizers).filter((f) => !before.has(f)))].map(String).sort();
    if (extra.length) {
      out.push(
        fieldErrors.forbidden(
          child(path, 'finalizers'),
          `no new finalizers can be added if the object is being deleted, found new finalizers []string{${extra.map((f) => JSON.stringify(f)).join(', ')}}`,
        ),
      );
    }
  }
  if (!meta.resourceVersion) out.push(fieldErrors.invalid(child(path, 'resourceVersion'), '', 'must be specified for an update'));
  out.push(...nonNegative(meta.generation, child(path, 'generation')));
  if ((meta.generation ?? 0) < (old.generation ?? 0)) {
    out.push(fieldErrors.invalid(child(path, 'generation'), meta.generation ?? 0, 'must not be decremented'));
  }
  out.push(...immutable(meta.name, old.name, child(path, 'name')));
  out.push(...immutable(meta.namespace, old.namespace, child(path, 'namespace')));
  out.push(...immutable(meta.uid, old.uid, child(path, 'uid')));
  out.push(...immutable(meta.creationTimestamp, old.creationTimestamp, child(path, 'creationTimestamp')));
  out.push(...immutable(meta.deletionTimestamp, old.deletionTimestamp, child(path, 'deletionTimestamp')));
  out.push(...immutable(meta.deletionGracePeriodSeconds, old.deletionGracePeriodSeconds, child(path, 'deletionGracePeriodSeconds')));
  out.push(...validateLabels(meta.labels, child(path, 'labels')));
  out.push(...validateAnnotations(meta.annotations, child(path, 'annotations')));
  out.push(...validateOwnerReferences(meta.ownerReferences, child(path, 'ownerReferences')));
  out.push(...validateManagedFields(meta.managedFields, child(path, 'managedFields')));
  return out;
}
