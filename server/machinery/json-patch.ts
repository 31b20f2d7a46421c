// JSON Patch (RFC 6902) with the behaviour of the library kube-apiserver uses
// (evanphx/json-patch v4): negative array indices count from the end, `replace` of a missing
// object member adds it, `test` of a missing member against null passes.
//
// Bounded as kube-apiserver bounds it: the `copy` operations of one patch may add at most
// MAX_JSON_PATCH_COPY_BYTES (as compact JSON), so a few operations cannot double a document
// into gigabytes. Nothing here recurses (copies and comparisons keep their own stacks), so a
// document made deep by the operations is safe to build, and is refused once at the end.

import { MAX_JSON_PATCH_COPY_BYTES, MAX_NESTING_DEPTH, valueTooDeep } from '../limits/decode-limits.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface JsonPatchOperation {
  op?: unknown;
  path?: unknown;
  from?: unknown;
  value?: Json;
  /** whether the operation carried a `value` member (absent and null differ for `add`) */
  hasValue: boolean;
}

export class JsonPatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonPatchError';
  }
}

/** Decodes a patch document: an array of operation objects (Go's decoder messages). */
export function decodeJsonPatch(doc: unknown): JsonPatchOperation[] {
  if (!Array.isArray(doc)) {
    throw new JsonPatchError(`json: cannot unmarshal ${jsonType(doc)} into Go value of type jsonpatch.Patch`);
  }
  return doc.map((op) => {
    if (op === null) return { hasValue: false };
    if (typeof op !== 'object' || Array.isArray(op)) {
      throw new JsonPatchError(`json: cannot unmarshal ${jsonType(op)} into Go value of type jsonpatch.Operation`);
    }
    const o = op as Record<string, unknown>;
    return { op: o.op, path: o.path, from: o.from, value: o.value as Json, hasValue: 'value' in o };
  });
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  return typeof v;
}

type Container = Json[] | { [key: string]: Json };

function decodeKey(k: string): string {
  return k.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** the container holding the pointer's last token, and that token; undefined if missing */
function findParent(root: Json, pointer: string): { parent: Container; key: string } | undefined {
  const split = pointer.split('/');
  if (split.length < 2) return undefined;
  let cur: Json = root;
  if (!isContainer(cur)) return undefined;
  for (const raw of split.slice(1, -1)) {
    const next = getChild(cur as Container, decodeKey(raw));
    if (next === undefined || next === null || !isContainer(next)) return undefined;
    cur = next;
  }
  return { parent: cur as Container, key: decodeKey(split[split.length - 1]) };
}

function isContainer(v: Json | undefined): boolean {
  return v !== null && v !== undefined && typeof v === 'object';
}

/** Go's strconv.Atoi */
function atoi(key: string): number | undefined {
  if (!/^[+-]?\d+$/.test(key)) return undefined;
  const n = Number(key);
  return Number.isSafeInteger(n) ? n : undefined;
}

function getChild(c: Container, key: string): Json | undefined {
  if (Array.isArray(c)) {
    let idx = atoi(key);
    if (idx === undefined) return undefined;
    if (idx < 0) {
      if (idx < -c.length) return undefined;
      idx += c.length;
    }
    return idx < c.length ? c[idx] : undefined;
  }
  return Object.hasOwn(c, key) ? c[key] : undefined;
}

function invalidIndex(idx: number | string): JsonPatchError {
  return new JsonPatchError(`Unable to access invalid index: ${idx}: invalid index referenced`);
}

function arrayGet(a: Json[], key: string): Json {
  let idx = atoi(key);
  if (idx === undefined) throw new JsonPatchError(`strconv.Atoi: parsing ${JSON.stringify(key)}: invalid syntax`);
  if (idx < 0) {
    if (idx < -a.length) throw invalidIndex(idx);
    idx += a.length;
  }
  if (idx >= a.length) throw invalidIndex(idx);
  return a[idx];
}

function arrayAdd(a: Json[], key: string, value: Json): void {
  if (key === '-') {
    a.push(value);
    return;
  }
  let idx = atoi(key);
  if (idx === undefined) {
    throw new JsonPatchError(`value was not a proper array index: '${key}': strconv.Atoi: parsing ${JSON.stringify(key)}: invalid syntax`);
  }
  const size = a.length + 1;
  if (idx >= size) throw invalidIndex(idx);
  if (idx < 0) {
    if (idx < -size) throw invalidIndex(idx);
    idx += size;
  }
  a.splice(idx, 0, value);
}

function arrayRemove(a: Json[], key: string): Json {
  let idx = atoi(key);
  if (idx === undefined) throw new JsonPatchError(`strconv.Atoi: parsing ${JSON.stringify(key)}: invalid syntax`);
  if (idx >= a.length) throw invalidIndex(idx);
  if (idx < 0) {
    if (idx < -a.length) throw invalidIndex(idx);
    idx += a.length;
  }
  return a.splice(idx, 1)[0];
}

function containerAdd(c: Container, key: string, value: Json): void {
  if (Array.isArray(c)) arrayAdd(c, key, value);
  else setMember(c, key, value);
}

function containerRemove(c: Container, key: string): Json {
  if (Array.isArray(c)) return arrayRemove(c, key);
  if (!Object.hasOwn(c, key)) {
    throw new JsonPatchError(`Unable to remove nonexistent key: ${key}: missing value`);
  }
  const v = c[key];
  delete c[key];
  return v;
}

function pathOf(op: JsonPatchOperation, kind: string, field: 'path' | 'from'): string {
  const v = op[field];
  if (v === undefined || v === null) {
    throw new JsonPatchError(`${kind} operation failed to decode ${field}: missing value`);
  }
  if (typeof v !== 'string') {
    throw new JsonPatchError(`json: cannot unmarshal ${jsonType(v)} into Go value of type string`);
  }
  return v;
}

/** deep equality of JSON values (null and absent are alike, as in the reference library) */
export function jsonEqual(a: Json | undefined, b: Json | undefined): boolean {
  const pairs: [Json | undefined, Json | undefined][] = [[a, b]];
  while (pairs.length > 0) {
    const [x, y] = pairs.pop() as [Json | undefined, Json | undefined];
    if (x === undefined || x === null) {
      if (y === undefined || y === null) continue;
      return false;
    }
    if (y === undefined || y === null) return false;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) pairs.push([x[i], y[i]]);
      continue;
    }
    if (typeof x === 'object') {
      if (typeof y !== 'object' || Array.isArray(y)) return false;
      const keys = Object.keys(x);
      if (keys.length !== Object.keys(y).length) return false;
      for (const k of keys) {
        if (!Object.hasOwn(y, k)) return false;
        pairs.push([x[k], y[k]]);
      }
      continue;
    }
    if (x !== y) return false;
  }
  return true;
}

/** sets a member without ever touching the prototype (a `__proto__` member is plain data) */
function setMember(o: { [key: string]: Json }, key: string, value: Json): void {
  if (key === '__proto__') Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
  else o[key] = value;
}

const NO_BUDGET = Number.POSITIVE_INFINITY;

/** Go's encoding of one string, in bytes: `<`, `>`, `&`, U+2028 and U+2029 are escaped there too */
function encodedStringBytes(s: string): number {
  let bytes = Buffer.byteLength(JSON.stringify(s));
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x3c || c === 0x3e || c === 0x26) bytes += 5;
    else if (c === 0x2028 || c === 0x2029) bytes += 3;
  }
  return bytes;
}

function scalarBytes(v: Json): number {
  if (v === null) return 4;
  if (typeof v === 'string') return encodedStringBytes(v);
  return String(v).length;
}

/**
 * A deep copy of `v` and its size as compact JSON. Stops (returning undefined) as soon as the
 * size passes `budget`, so a copy refused for its size costs no more than the budget.
 */
function copyWithin(v: Json, budget: number): { copy: Json; bytes: number } | undefined {
  if (v === null || typeof v !== 'object') {
    const bytes = scalarBytes(v);
    return bytes > budget ? undefined : { copy: v, bytes };
  }
  let bytes = 0;
  const copyOf = (src: Json[] | { [key: string]: Json }): Json[] | { [key: string]: Json } => (Array.isArray(src) ? [] : {});
  const root = copyOf(v);
  const work: [Json[] | { [key: string]: Json }, Json[] | { [key: string]: Json }][] = [[v, root]];
  while (work.length > 0) {
    const [src, dst] = work.pop() as [Json[] | { [key: string]: Json }, Json[] | { [key: string]: Json }];
    if (Array.isArray(src)) {
      const out = dst as Json[];
      bytes += 2 + Math.max(src.length - 1, 0);
      for (const item of src) {
        if (item !== null && typeof item === 'object') {
          const child = copyOf(item);
          out.push(child);
          work.push([item, child]);
        } else {
          bytes += scalarBytes(item);
          out.push(item);
        }
      }
    } else {
      const out = dst as { [key: string]: Json };
      const keys = Object.keys(src);
      bytes += 2 + Math.max(keys.length - 1, 0);
      for (const k of keys) {
        const item = src[k];
        bytes += encodedStringBytes(k) + 1;
        if (item !== null && typeof item === 'object') {
          const child = copyOf(item);
          setMember(out, k, child);
          work.push([item, child]);
        } else {
          bytes += scalarBytes(item);
          setMember(out, k, item);
        }
      }
    }
    if (bytes > budget) return undefined;
  }
  return { copy: root, bytes };
}

function clone<T extends Json>(v: T): T {
  return (copyWithin(v, NO_BUDGET) as { copy: Json }).copy as T;
}

export interface JsonPatchLimits {
  /** the most bytes all `copy` operations together may add */
  maxCopyBytes: number;
  /** the deepest the patched document may nest */
  maxDepth: number;
}

const DEFAULT_LIMITS: JsonPatchLimits = { maxCopyBytes: MAX_JSON_PATCH_COPY_BYTES, maxDepth: MAX_NESTING_DEPTH };

/** Applies the operations to a copy of `doc`; throws JsonPatchError when one does not apply,
 *  when the copies pass the copy budget, or when the result nests deeper than allowed. */
export function applyJsonPatch(doc: Json, ops: readonly JsonPatchOperation[], limits: JsonPatchLimits = DEFAULT_LIMITS): Json {
  let root = clone(doc);
  let copiedBytes = 0;
  for (const op of ops) {
    const kind = typeof op.op === 'string' ? op.op : 'unknown';
    const value = op.hasValue ? (op.value ?? null) : null;
    switch (kind) {
      case 'add': {
        const path = pathOf(op, 'add', 'path');
        const found = findParent(root, path);
        if (!found) throw new JsonPatchError(`add operation does not apply: doc is missing path: "${path}": missing value`);
        wrap(`error in add for path: '${path}'`, () => containerAdd(found.parent, found.key, clone(value)));
        break;
      }
      case 'remove': {
        const path = pathOf(op, 'remove', 'path');
        const found = findParent(root, path);
        if (!found) throw new JsonPatchError(`remove operation does not apply: doc is missing path: "${path}": missing value`);
        wrap(`error in remove for path: '${path}'`, () => containerRemove(found.parent, found.key));
        break;
      }
      case 'replace': {
        const path = pathOf(op, 'replace', 'path');
        if (path === '') {
          if (!isContainer(value)) throw new JsonPatchError('replace operation value must be object or array');
          root = clone(value);
          break;
        }
        const found = findParent(root, path);
        if (!found) throw new JsonPatchError(`replace operation does not apply: doc is missing path: ${path}: missing value`);
        if (Array.isArray(found.parent)) {
          const arr = found.parent;
          wrap(`replace operation does not apply: doc is missing key: ${path}`, () => arrayGet(arr, found.key));
          let idx = atoi(found.key) as number;
          if (idx < 0) idx += arr.length;
          arr[idx] = clone(value);
        } else {
          setMember(found.parent, found.key, clone(value));
        }
        break;
      }
      case 'move': {
        const from = pathOf(op, 'move', 'from');
        const src = findParent(root, from);
        if (!src) throw new JsonPatchError(`move operation does not apply: doc is missing from path: ${from}: missing value`);
        const moved = wrap(`error in move for path: '${src.key}'`, () => containerRemove(src.parent, src.key));
        const path = pathOf(op, 'move', 'path');
        const dst = findParent(root, path);
        if (!dst) throw new JsonPatchError(`move operation does not apply: doc is missing destination path: ${path}: missing value`);
        wrap(`error in move for path: '${path}'`, () => containerAdd(dst.parent, dst.key, moved));
        break;
      }
      case 'copy': {
        const from = pathOf(op, 'copy', 'from');
        const src = findParent(root, from);
        if (!src) throw new JsonPatchError(`copy operation does not apply: doc is missing from path: ${from}: missing value`);
        const copied = wrap(`error in copy for from: '${from}'`, () => {
          const v = Array.isArray(src.parent) ? arrayGet(src.parent, src.key) : src.parent[src.key];
          if (v === undefined) throw new JsonPatchError('missing value');
          return v;
        });
        const path = pathOf(op, 'copy', 'path');
        const dst = findParent(root, path);
        if (!dst) throw new JsonPatchError(`copy operation does not apply: doc is missing destination path: ${path}: missing value`);
        const result = copyWithin(copied, limits.maxCopyBytes - copiedBytes);
        if (!result) {
          throw new JsonPatchError(
            `Unable to complete the copy, the accumulated size increase of copy exceeds the limit ${limits.maxCopyBytes}`,
          );
        }
        copiedBytes += result.bytes;
        wrap('error while adding value during copy', () => containerAdd(dst.parent, dst.key, result.copy));
        break;
      }
      case 'test': {
        const path = pathOf(op, 'test', 'path');
        const expected = op.hasValue ? op.value : undefined;
        if (path === '') {
          if (!jsonEqual(root, expected)) throw new JsonPatchError(`testing value ${path} failed: test failed`);
          break;
        }
        const found = findParent(root, path);
        if (!found) throw new JsonPatchError(`test operation does not apply: is missing path: ${path}: missing value`);
        const actual = wrap(`error in test for path: '${path}'`, () =>
          Array.isArray(found.parent) ? arrayGet(found.parent, found.key) : found.parent[found.key],
        );
        if (!jsonEqual(actual, expected)) throw new JsonPatchError(`testing value ${path} failed: test failed`);
        break;
      }
      default:
        throw new JsonPatchError(`Unexpected kind: ${kind}`);
    }
  }
  if (valueTooDeep(root, limits.maxDepth)) throw new JsonPatchError(`the patched document exceeded max depth of ${limits.maxDepth}`);
  return root;
}

function wrap<T>(context: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw new JsonPatchError(`${context}: ${(err as Error).message}`);
  }
}
