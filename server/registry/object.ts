// Small helpers over decoded API objects: copying, kube-apiserver's field order (clients
// compare bytes: `kind, apiVersion, metadata, spec, status`, and ObjectMeta in its Go
// struct order), timestamps and uids.

import { randomUUID } from 'node:crypto';
import { OBJECT_META_ORDER, type KubeObject, type ObjectMeta } from '../../storage/interface.js';

export type JsonObject = Record<string, unknown>;

/** A deep copy. Decoded objects are plain JSON (objects, arrays, primitives), which a direct
 *  walk copies several times faster than structuredClone (a list of 10k pods converts each
 *  one); anything else (Dates, buffers, class instances, functions) is left to
 *  structuredClone, so the result is what structuredClone gives. */
export function clone<T>(v: T): T {
  return copyJson(v) as T;
}

function copyJson(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) {
    return typeof v === 'function' || typeof v === 'symbol' ? structuredClone(v) : v;
  }
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) out[i] = copyJson(v[i]);
    return out;
  }
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return structuredClone(v);
  const src = v as JsonObject;
  const out: JsonObject = {};
  for (const k of Object.keys(src)) {
    // a JSON key "__proto__" is an own property, not the prototype
    if (k === '__proto__') Object.defineProperty(out, k, { value: copyJson(src[k]), enumerable: true, writable: true, configurable: true });
    else out[k] = copyJson(src[k]);
  }
  return out;
}

/** freezes an object graph that is shared and only read (a change to it then fails loudly) */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as object)) deepFreeze(v);
  }
  return value;
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** the object at `obj[key]`, created (as `{}`) when absent or not an object */
export function ensureObject(obj: JsonObject, key: string): JsonObject {
  const v = obj[key];
  if (isObject(v)) return v;
  const fresh: JsonObject = {};
  obj[key] = fresh;
  return fresh;
}

export function asObject(v: unknown): JsonObject {
  return isObject(v) ? v : {};
}

export function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

let lastSecond = NaN;
let lastSecondText = '';

/** RFC 3339 in UTC with second precision, as metav1.Time serializes (every write stamps the
 *  time, most in the same second as the one before) */
export function rfc3339(d: Date): string {
  const second = Math.floor(d.getTime() / 1000);
  if (second !== lastSecond) {
    lastSecondText = d.toISOString().replace(/\.\d{3}Z$/, 'Z');
    lastSecond = second;
  }
  return lastSecondText;
}

/** RFC 3339 with microseconds, as metav1.MicroTime serializes */
export function rfc3339Micro(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export function newUid(): string {
  return randomUUID();
}

const metaOrder = OBJECT_META_ORDER;

/** true when reorder would give `obj`'s members in the order they already have */
function inOrder(obj: JsonObject, order: readonly string[], last: readonly string[]): boolean {
  // 0: among the `order` keys, 1: among the others, 2: among the `last` keys
  let phase = 0;
  let rank = -1;
  // for-in, not Object.keys: this runs many times per write, and an array of keys per call is
  // garbage (JSON objects have no inherited enumerable members)
  for (const k in obj) {
    if (obj[k] === undefined) return false;
    const first = order.indexOf(k);
    if (first >= 0) {
      if (phase !== 0 || first <= rank) return false;
      rank = first;
      continue;
    }
    const end = last.indexOf(k);
    if (end >= 0) {
      if (phase === 2 && end <= rank) return false;
      phase = 2;
      rank = end;
      continue;
    }
    if (phase === 2) return false;
    phase = 1;
  }
  return true;
}

/** `obj` with `order` keys first (in that order), the rest after in their order, `last` keys
 *  at the end; `obj` itself when its members are in that order already (most objects are on
 *  a write's second and later passes, and a copy per pass is garbage) */
export function reorder<T extends JsonObject>(obj: T, order: readonly string[], last: readonly string[] = []): T {
  if (inOrder(obj, order, last)) return obj;
  const out: JsonObject = {};
  for (const k of order) if (k in obj && obj[k] !== undefined) out[k] = obj[k];
  for (const k of Object.keys(obj)) if (!(k in out) && !last.includes(k) && obj[k] !== undefined) out[k] = obj[k];
  for (const k of last) if (k in obj && obj[k] !== undefined && !(k in out)) out[k] = obj[k];
  return out as T;
}

/** ObjectMeta in kube's member order. A null member is dropped, as Go decodes it to the zero
 *  value and omits that (`"labels": null` is no labels); but creationTimestamp, a struct, is
 *  written even when zero, as `null`. */
export function orderMeta(meta: ObjectMeta): ObjectMeta {
  const out = reorder(meta as JsonObject, metaOrder);
  let nulls = false;
  for (const k in out) if (out[k] === null && k !== 'creationTimestamp') nulls = true;
  if (!nulls) return out as ObjectMeta;
  // reorder may hand back `meta` itself: drop the nulls from a copy, never from the caller's
  const copy: JsonObject = { ...out };
  for (const k in copy) if (copy[k] === null && k !== 'creationTimestamp') delete copy[k];
  return copy as ObjectMeta;
}

/** kind, apiVersion, metadata, spec first; status last (the order of every built-in kind);
 *  `obj` itself, and its metadata, where they are in that order already */
export function orderObject(obj: KubeObject): KubeObject {
  const out = reorder(obj as JsonObject, ['kind', 'apiVersion', 'metadata', 'spec'], ['status']) as KubeObject;
  if (isObject(out.metadata)) {
    const meta = orderMeta(out.metadata);
    if (meta !== out.metadata) out.metadata = meta;
  }
  return out;
}

export function apiVersionOf(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

/** deep equality of JSON values, ignoring key order and undefined members */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/** kube-apiserver's semantic equality treats a missing map/list like an empty one */
export function semanticEqual(a: unknown, b: unknown): boolean {
  const empty = (v: unknown) =>
    v === undefined || v === null || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);
  if (empty(a) && empty(b)) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => semanticEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!semanticEqual(a[k], b[k])) return false;
    return true;
  }
  return jsonEqual(a, b);
}

/** the top-level fields that are neither type/object metadata nor status ("the spec") */
export function specPart(obj: KubeObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'kind' || k === 'apiVersion' || k === 'metadata' || k === 'status') continue;
    out[k] = v;
  }
  return out;
}
