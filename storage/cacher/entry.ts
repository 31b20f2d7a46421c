// What the cache keeps per object: the stored JSON as UTF-8 bytes in a backing store of its
// own, outside the JS heap, and the revision; nothing decoded. The text is made from the bytes
// when a request reads it, and objects are decoded when a request needs them. Bytes outside the
// heap cost what they weigh: a string on the heap is paid again by the room the garbage
// collector leaves for the heap to grow into. The format is the etcd3 store's
// (etcd3/codec.ts): JSON without resourceVersion, which is put back at its ObjectMeta position
// on decode.

import type { KubeObject, StoredObjectText } from '../interface.js';
import { StorageError } from '../errors.js';
import { withResourceVersion } from '../etcd3/codec.js';

export interface StoredEntry extends StoredObjectText {
  /** the key relative to the etcd prefix, e.g. `/pods/default/web-1` */
  readonly key: string;
  /** the stored JSON text, made from the bytes on every read */
  readonly data: string;
  readonly modRevision: number;
  /** set when the stored value could not be read (encryption at rest: no provider or key
   *  opens it); `data` is then empty and decoding the entry fails with this message */
  readonly error?: string;
  /** with `error`: reads the stored value again (the transformers may have been reloaded
   *  since); returns the JSON text or throws */
  readonly reread?: () => string;
}

/** a readable stored object */
class BytesEntry implements StoredEntry {
  constructor(
    readonly key: string,
    readonly bytes: Buffer,
    readonly modRevision: number,
  ) {}

  get data(): string {
    return this.bytes.toString('utf8');
  }

  get size(): number {
    return this.bytes.length;
  }
}

/** an entry of the stored JSON `json` (its bytes are copied: `json` may be a view of a larger
 *  message the entry must not keep alive) */
export function storedEntry(key: string, json: string | Uint8Array, modRevision: number): StoredEntry {
  let bytes: Buffer;
  if (typeof json === 'string') {
    bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(json));
    bytes.write(json);
  } else {
    bytes = Buffer.allocUnsafeSlow(json.length);
    bytes.set(json);
  }
  return new BytesEntry(key, bytes, modRevision);
}

/** an entry whose stored value could not be read; `reread` may read it later */
export function unreadableEntry(key: string, modRevision: number, error: string, reread?: () => string): StoredEntry {
  return { key, data: '', size: 0, modRevision, error, ...(reread ? { reread } : {}) };
}

/** a fresh, mutable object with metadata.resourceVersion set to `resourceVersion` */
export function decodeEntry(entry: StoredEntry, resourceVersion: number = entry.modRevision): KubeObject {
  const data = entry.error === undefined ? entry.data : reread(entry);
  let obj: unknown;
  try {
    obj = JSON.parse(data);
  } catch (err) {
    throw new StorageError('InvalidObject', entry.key, `cannot decode ${entry.key}: ${(err as Error).message}`);
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
    throw new StorageError('InvalidObject', entry.key, `cannot decode ${entry.key}: not a JSON object`);
  }
  const o = obj as KubeObject;
  const meta = typeof o.metadata === 'object' && o.metadata !== null && !Array.isArray(o.metadata) ? o.metadata : {};
  o.metadata = withResourceVersion(meta, String(resourceVersion));
  return o;
}

/**
 * A fresh object of the entry's kind, apiVersion and metadata only (resourceVersion set to
 * `resourceVersion`), parsed from the start of its text without the rest: what a reader of
 * metadata needs of a change. `metadata.managedFields` is left out too: no reader of metadata
 * inside the server reads it, and a Pod's is as large as its spec. A text whose metadata is not
 * among its first three members (the store writes kind, apiVersion, metadata first) is decoded
 * whole and cut down.
 */
export function decodeEntryMetadata(entry: StoredEntry, resourceVersion: number = entry.modRevision): KubeObject {
  const bytes = entry.error === undefined ? (entry.bytes ?? Buffer.from(entry.data)) : undefined;
  const head = bytes ? metadataHead(bytes) : undefined;
  if (!head) return metadataOf(decodeEntry(entry, resourceVersion));
  let obj: KubeObject;
  try {
    // only the head becomes text: the rest of the object is never copied out of the bytes
    obj = JSON.parse(head) as KubeObject;
  } catch {
    return metadataOf(decodeEntry(entry, resourceVersion));
  }
  const meta = obj.metadata as unknown;
  const metadata = typeof meta === 'object' && meta !== null && !Array.isArray(meta) ? obj.metadata : {};
  obj.metadata = withResourceVersion(metadata, String(resourceVersion));
  return obj;
}

/** an object's kind, apiVersion and metadata (the metadata shared, not copied) */
export function metadataOf(obj: KubeObject): KubeObject {
  const out = {} as KubeObject;
  if (obj.kind !== undefined) out.kind = obj.kind;
  if (obj.apiVersion !== undefined) out.apiVersion = obj.apiVersion;
  out.metadata = obj.metadata;
  return out;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const KIND = Buffer.from('"kind"');
const API_VERSION = Buffer.from('"apiVersion"');
const METADATA = Buffer.from('"metadata"');
const MANAGED_FIELDS = Buffer.from('"managedFields"');

/** the index after the JSON string opening at `i`, or -1 (UTF-8: no byte of a multi-byte
 *  character is a quote or a backslash) */
function afterString(b: Uint8Array, i: number): number {
  for (i++; i < b.length; i++) {
    const c = b[i];
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i + 1;
  }
  return -1;
}

/** the index after the value at `i` of compact JSON, or -1 */
function afterValue(b: Uint8Array, i: number): number {
  const first = b[i];
  if (first === QUOTE) return afterString(b, i);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    // a number, true, false or null
    while (i < b.length && b[i] !== COMMA && b[i] !== CLOSE_BRACE && b[i] !== CLOSE_BRACKET) i++;
    return i < b.length ? i : -1;
  }
  let depth = 0;
  while (i < b.length) {
    const c = b[i];
    if (c === QUOTE) {
      i = afterString(b, i);
      if (i < 0) return -1;
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
  return -1;
}

/** byte by byte: keys are short, and a subarray per comparison costs more than the loop */
function keyIs(b: Uint8Array, start: number, end: number, key: Buffer): boolean {
  if (end - start !== key.length) return false;
  for (let j = 0; j < key.length; j++) if (b[start + j] !== key[j]) return false;
  return true;
}

/** the range of `metadata.managedFields` to leave out of the head: [from, to) */
interface Cut {
  from: number;
  to: number;
}

/** where the members of the object opening at `open` end (its closing brace), and the cut
 *  that removes its `managedFields` member with one comma; undefined when it is not compact
 *  JSON */
function metadataMembers(b: Uint8Array, open: number): { close: number; cut?: Cut } | undefined {
  if (b[open] !== OPEN_BRACE) return undefined;
  let i = open + 1;
  if (b[i] === CLOSE_BRACE) return { close: i };
  let cut: Cut | undefined;
  for (;;) {
    if (b[i] !== QUOTE) return undefined;
    const keyEnd = afterString(b, i);
    if (keyEnd < 0 || b[keyEnd] !== COLON) return undefined;
    const valueEnd = afterValue(b, keyEnd + 1);
    if (valueEnd < 0) return undefined;
    if (keyIs(b, i, keyEnd, MANAGED_FIELDS)) {
      // the comma before it goes with it; the first member takes the comma after it
      cut = i > open + 1 ? { from: i - 1, to: valueEnd } : { from: i, to: b[valueEnd] === COMMA ? valueEnd + 1 : valueEnd };
    }
    if (b[valueEnd] === CLOSE_BRACE) return { close: valueEnd, cut };
    if (b[valueEnd] !== COMMA) return undefined;
    i = valueEnd + 1;
  }
}

/** `{"kind":…,"apiVersion":…,"metadata":{…}}` from the start of a stored text, without
 *  metadata.managedFields; undefined when the text does not start that way (metadata after
 *  nothing but kind and apiVersion) */
function metadataHead(b: Uint8Array): string | undefined {
  if (b[0] !== OPEN_BRACE) return undefined;
  const buf = Buffer.from(b.buffer, b.byteOffset, b.length);
  let i = 1;
  for (let member = 0; member < 3; member++) {
    if (b[i] !== QUOTE) return undefined;
    const keyEnd = afterString(b, i);
    if (keyEnd < 0 || b[keyEnd] !== COLON) return undefined;
    if (keyIs(b, i, keyEnd, METADATA)) {
      const meta = metadataMembers(b, keyEnd + 1);
      if (!meta) return undefined;
      const end = meta.close + 1;
      if (!meta.cut) return `${buf.toString('utf8', 0, end)}}`;
      return `${buf.toString('utf8', 0, meta.cut.from)}${buf.toString('utf8', meta.cut.to, end)}}`;
    }
    const valueEnd = afterValue(b, keyEnd + 1);
    if (valueEnd < 0) return undefined;
    if (!(keyIs(b, i, keyEnd, KIND) || keyIs(b, i, keyEnd, API_VERSION)) || b[valueEnd] !== COMMA) return undefined;
    i = valueEnd + 1;
  }
  return undefined;
}

function reread(entry: StoredEntry): string {
  if (!entry.reread) throw new StorageError('InvalidObject', entry.key, entry.error!);
  return entry.reread();
}

/** freezes an object graph: watch events share one decoded object among all watchers */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    // without Object.values: no array per object of every decoded change
    if (Array.isArray(value)) for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
    else for (const key in value) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
