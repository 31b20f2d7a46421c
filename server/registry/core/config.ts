// ConfigMaps and Secrets: key format, the 1 MiB size limit, `immutable`, Secret types and
// their required keys, base64 of Secret data, and stringData folded into data.

import type { KubeObject } from '../../../storage/interface.js';
import { errors } from '../../machinery/status.js';
import { asObject, isObject, reorder, semanticEqual } from '../object.js';
import { defineStrategy, type ResourceStrategy } from '../strategy.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { isConfigMapKey } from '../../machinery/validation/names.js';
import { validateObjectMetaUpdate } from '../validation/object-meta.js';

/** total size of data (and binaryData) a ConfigMap or Secret may hold */
export const maxConfigSizeBytes = 1024 * 1024;

function validateKeys(map: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const members = asObject(map);
  // for-in: a ConfigMap may hold 100k keys, and an array of them per pass is garbage
  for (const k in members) {
    for (const m of isConfigMapKey(k)) errs.push(fieldErrors.invalid(`${path}[${k}]`, k, m));
  }
  return errs;
}

/** an `immutable` ConfigMap or Secret keeps `immutable` and its data (kube's order) */
function validateImmutable(obj: KubeObject, old: KubeObject, fields: string[]): FieldError[] {
  if (old.immutable !== true) return [];
  const errs: FieldError[] = [];
  if (obj.immutable !== true) errs.push(fieldErrors.forbidden('immutable', 'field is immutable when `immutable` is set'));
  for (const f of fields) {
    if (!semanticEqual(obj[f] ?? null, old[f] ?? null)) errs.push(fieldErrors.forbidden(f, 'field is immutable when `immutable` is set'));
  }
  return errs;
}

function validateConfigMap(obj: KubeObject): FieldError[] {
  const errs = [...validateKeys(obj.data, 'data'), ...validateKeys(obj.binaryData, 'binaryData')];
  const data = asObject(obj.data);
  const binary = asObject(obj.binaryData);
  let total = 0;
  for (const k in data) {
    const v = data[k];
    total += typeof v === 'string' ? Buffer.byteLength(v, 'utf8') : 0;
    // own members only: a data key `constructor` is no binaryData key
    if (Object.hasOwn(binary, k)) errs.push(fieldErrors.invalid(`data[${k}]`, k, 'duplicate of key present in binaryData'));
  }
  for (const k in binary) {
    const v = binary[k];
    total += typeof v === 'string' ? Buffer.from(v, 'base64').length : 0;
  }
  if (total > maxConfigSizeBytes) errs.push(fieldErrors.tooLong('', maxConfigSizeBytes));
  return errs;
}

export function configMapStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    validateSpec: (obj) => validateConfigMap(obj),
    validateUpdate: (obj, old) => [
      ...validateObjectMetaUpdate(obj.metadata, old.metadata),
      ...validateImmutable(obj, old, ['data', 'binaryData']),
      ...validateConfigMap(obj),
    ],
  });
}

// ---- Secrets ----

const base64Char = /[A-Za-z0-9+/]/;

/** the byte offset where Go's strict base64 decoder gives up, or -1 when `s` is valid
 *  (line breaks are skipped, as Go does) */
export function base64ErrorOffset(s: string): number {
  let data = 0;
  let pad = 0;
  let firstPad = -1;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === '\r' || ch === '\n') continue;
    if (ch === '=') {
      if (firstPad < 0) firstPad = i;
      pad++;
      continue;
    }
    // data after padding, or a character outside the alphabet
    if (pad > 0 || !base64Char.test(ch)) return i;
    data++;
  }
  if (pad === 0) return data % 4 === 0 ? -1 : s.length - (data % 4);
  const ok = (data % 4 === 2 && pad === 2) || (data % 4 === 3 && pad === 1);
  return ok ? -1 : firstPad;
}

const secretTypeRequiredKeys: Record<string, string[]> = {
  'kubernetes.io/dockercfg': ['.dockercfg'],
  'kubernetes.io/dockerconfigjson': ['.dockerconfigjson'],
  'kubernetes.io/ssh-auth': ['ssh-privatekey'],
  'kubernetes.io/tls': ['tls.crt', 'tls.key'],
};

function validateSecret(obj: KubeObject): FieldError[] {
  const errs = validateKeys(obj.data, 'data');
  const data = asObject(obj.data);
  let total = 0;
  for (const v of Object.values(data)) total += typeof v === 'string' ? Buffer.from(v, 'base64').length : 0;
  if (total > maxConfigSizeBytes) errs.push(fieldErrors.tooLong('data', maxConfigSizeBytes));
  const type = typeof obj.type === 'string' ? obj.type : '';
  for (const k of secretTypeRequiredKeys[type] ?? []) {
    // an ssh key must also be non-empty
    const missing = type === 'kubernetes.io/ssh-auth' ? !data[k] : !(k in data);
    if (missing) errs.push(fieldErrors.required(`data[${k}]`));
  }
  if (type === 'kubernetes.io/service-account-token') {
    const ann = obj.metadata.annotations ?? {};
    if (!ann['kubernetes.io/service-account.name']) {
      errs.push(fieldErrors.required('metadata.annotations[kubernetes.io/service-account.name]'));
    }
  }
  if (type === 'kubernetes.io/basic-auth' && !('username' in data) && !('password' in data)) {
    errs.push(fieldErrors.required('data[username]'));
    errs.push(fieldErrors.required('data[password]'));
  }
  return errs;
}

function validateSecretUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  if ((obj.type ?? '') !== (old.type ?? '')) errs.push(fieldErrors.invalid('type', String(obj.type ?? ''), 'field is immutable'));
  errs.push(...validateImmutable(obj, old, ['data']));
  return errs;
}

const secretOrder = ['kind', 'apiVersion', 'metadata', 'immutable', 'data', 'stringData', 'type'];

/** 400 for data that is not base64 (kube fails to decode such a body) */
function checkSecretData(obj: KubeObject, version: string): void {
  for (const v of Object.values(asObject(obj.data))) {
    if (typeof v !== 'string') continue;
    const at = base64ErrorOffset(v);
    if (at >= 0) {
      throw errors.badRequest(`Secret in version "${version}" cannot be handled as a Secret: illegal base64 data at input byte ${at}`);
    }
  }
}

export function secretStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    applyDefaults(obj, c) {
      checkSecretData(obj, c.info.version);
      if (isObject(obj.stringData)) {
        const data = isObject(obj.data) ? obj.data : (obj.data = {});
        for (const [k, v] of Object.entries(obj.stringData)) {
          if (typeof v === 'string') data[k] = Buffer.from(v, 'utf8').toString('base64');
        }
      }
      delete obj.stringData;
      if (!obj.type) obj.type = 'Opaque';
      // in place: the object is the caller's (reorder hands back the object itself when in order)
      const ordered = reorder(obj as Record<string, unknown>, secretOrder);
      if (ordered !== obj) {
        for (const k of Object.keys(obj)) delete obj[k];
        Object.assign(obj, ordered);
      }
    },
    validateSpec: (obj) => validateSecret(obj),
    validateUpdate: (obj, old) => [
      ...validateObjectMetaUpdate(obj.metadata, old.metadata),
      ...validateSecretUpdate(obj, old),
      ...validateSecret(obj),
    ],
  });
}
