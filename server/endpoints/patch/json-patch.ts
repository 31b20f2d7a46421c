// JSON Patch (RFC 6902) with the behaviour of the library kube-apiserver uses
// (evanphx/json-patch v4): negative array indices count from the end, `replace` of a missing
// object member adds it, `test` of a missing member against null passes.

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
  return Object.prototype.hasOwnProperty.call(c, key) ? c[key] : undefined;
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
  else c[key] = value;
}

function containerRemove(c: Container, key: string): Json {
  if (Array.isArray(c)) return arrayRemove(c, key);
  if (!Object.prototype.hasOwnProperty.call(c, key)) {
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
  if (a === undefined || a === null) return b === undefined || b === null;
  if (b === undefined || b === null) return false;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  }
  if (typeof a === 'object') {
    if (typeof b !== 'object' || Array.isArray(b)) return false;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k]));
  }
  return a === b;
}

function clone<T extends Json>(v: T): T {
  return structuredClone(v);
}

/** Applies the operations to a copy of `doc`; throws JsonPatchError when one does not apply. */
export function applyJsonPatch(doc: Json, ops: readonly JsonPatchOperation[]): Json {
  let root = clone(doc);
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
          found.parent[found.key] = clone(value);
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
        wrap('error while adding value during copy', () => containerAdd(dst.parent, dst.key, clone(copied)));
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
  return root;
}

function wrap<T>(context: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw new JsonPatchError(`${context}: ${(err as Error).message}`);
  }
}
