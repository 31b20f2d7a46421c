// How objects are stored: the JSON of the object without `metadata.resourceVersion` (etcd's
// mod_revision is the resourceVersion; storing it would be stale at once). On read the
// resourceVersion is put back where kube-apiserver's ObjectMeta has it, after `uid`, so that
// decoded objects keep ObjectMeta's field order.

import { randomBytes } from 'node:crypto';
import { OBJECT_META_ORDER, type KubeObject, type ObjectMeta } from '../interface.js';
import { StorageError } from '../errors.js';
import { decodeStoredCbor, encodeCborKeepingOrder, startsWithSelfDescribedTag } from '../../server/cbor/index.js';

/** the JSON text of a stored value, JSON or CBOR (the CBORServingAndStorage gate writes CBOR;
 *  whatever the gate, both are read) */
export function storedText(value: Buffer): string {
  if (!startsWithSelfDescribedTag(value)) return value.toString('utf8');
  try {
    return JSON.stringify(decodeStoredCbor(value));
  } catch (err) {
    return `invalid CBOR: ${(err as Error).message}`;
  }
}

/** the stored JSON of a value: the value itself when it is JSON, the text of a CBOR one */
export function storedJson(value: Buffer): Buffer | string {
  return startsWithSelfDescribedTag(value) ? storedText(value) : value;
}

/** stands for the resourceVersion in the text encodeAnswering makes: random per process, so no
 *  value a client writes can be it (a NUL keeps it apart from any real resource version) */
const RV_SLOT = `\u0000kapi-rv-${randomBytes(12).toString('hex')}`;
const RV_SLOT_MEMBER = `"resourceVersion":${JSON.stringify(RV_SLOT)}`;

/** what a JSON write stores, and the JSON of the object it answers with at a revision */
export interface AnsweringEncoding {
  plain: Buffer;
  /** JSON.stringify(setResourceVersion(obj, revision)), without encoding it again */
  answer(revision: number): string;
}

/**
 * encodeObject for JSON, from one JSON.stringify that also gives the write's answer: the object
 * is encoded with a resourceVersion slot where setResourceVersion puts it; the stored bytes are
 * that text without the slot's member (and one comma), written straight from the two pieces
 * around it; the answer is the text with the slot filled in. Undefined when the slot is not
 * found exactly once (never, for objects of JSON values).
 */
export function encodeAnswering(obj: KubeObject): AnsweringEncoding | undefined {
  if (obj.metadata === undefined) return undefined;
  const slotted = JSON.stringify({ ...obj, metadata: withResourceVersion(obj.metadata, RV_SLOT) });
  const at = slotted.indexOf(RV_SLOT_MEMBER);
  if (at < 0 || slotted.indexOf(RV_SLOT_MEMBER, at + RV_SLOT_MEMBER.length) >= 0) return undefined;
  const end = at + RV_SLOT_MEMBER.length;
  // `,"resourceVersion":…` when a member comes before it, else `"resourceVersion":…,` or alone
  const cutFrom = slotted.charCodeAt(at - 1) === COMMA ? at - 1 : at;
  const cutTo = cutFrom === at && slotted.charCodeAt(end) === COMMA ? end + 1 : end;
  const head = slotted.slice(0, cutFrom);
  const tail = slotted.slice(cutTo);
  // one buffer, no joined string in between (the cut is ASCII: its bytes are its characters)
  const plain = Buffer.allocUnsafe(Buffer.byteLength(slotted) - (cutTo - cutFrom));
  plain.write(tail, plain.write(head));
  const before = slotted.slice(0, at);
  const after = slotted.slice(end);
  return { plain, answer: (revision) => `${before}"resourceVersion":"${revision}"${after}` };
}

const COMMA = 0x2c;

/** ObjectMeta fields that come after resourceVersion, in kube-apiserver's order */
const FIELDS_AFTER_RESOURCE_VERSION = new Set(OBJECT_META_ORDER.slice(OBJECT_META_ORDER.indexOf('resourceVersion') + 1));

export function encodeObject(obj: KubeObject, format: 'json' | 'cbor' = 'json'): Buffer {
  const meta = obj.metadata;
  // spreading keeps `metadata` at its position among the object's keys
  const stored = meta && 'resourceVersion' in meta ? { ...obj, metadata: (({ resourceVersion: _dropped, ...rest }) => rest)(meta) } : obj;
  return format === 'cbor' ? encodeCborKeepingOrder(stored) : Buffer.from(JSON.stringify(stored));
}

/** `meta` with resourceVersion set to `rv` at its ObjectMeta position (a new object) */
export function withResourceVersion(meta: ObjectMeta, rv: string): ObjectMeta {
  const out: ObjectMeta = {};
  let placed = false;
  // for-in: every decoded object passes here, and Object.entries makes an array per member
  for (const k in meta) {
    if (k === 'resourceVersion') continue;
    if (!placed && FIELDS_AFTER_RESOURCE_VERSION.has(k)) {
      out.resourceVersion = rv;
      placed = true;
    }
    out[k] = meta[k];
  }
  if (!placed) out.resourceVersion = rv;
  return out;
}

/** an object with its resourceVersion set to `revision` (a shallow copy) */
export function setResourceVersion(obj: KubeObject, revision: number): KubeObject {
  return { ...obj, metadata: withResourceVersion(obj.metadata ?? {}, String(revision)) };
}

/** decodes stored bytes; the object gets resourceVersion = `revision` */
export function decodeObject(value: Buffer, revision: number, key: string): KubeObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(storedText(value));
  } catch (err) {
    throw new StorageError('InvalidObject', key, `stored object at ${key} is not valid JSON: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new StorageError('InvalidObject', key, `stored object at ${key} is not a JSON object`);
  }
  const obj = parsed as KubeObject;
  const meta = obj.metadata;
  if (meta !== undefined && (meta === null || typeof meta !== 'object' || Array.isArray(meta))) {
    throw new StorageError('InvalidObject', key, `stored object at ${key} has invalid metadata`);
  }
  obj.metadata = withResourceVersion(meta ?? {}, String(revision));
  return obj;
}

/** a copy of `obj` without metadata.resourceVersion (what a dry-run create answers) */
export function withoutResourceVersion(obj: KubeObject): KubeObject {
  const { resourceVersion: _dropped, ...rest } = obj.metadata ?? {};
  return { ...obj, metadata: rest };
}
