// What the cache keeps per object: the serialized bytes (as the JSON text etcd holds) and the
// revision, nothing decoded. Objects are decoded when a request needs them, so memory stays
// close to the size of the data in etcd. The format is the etcd3 store's (etcd3/codec.ts):
// JSON without resourceVersion, which is put back at its ObjectMeta position on decode.

import type { KubeObject, StoredObjectText } from '../interface.js';
import { StorageError } from '../errors.js';
import { withResourceVersion } from '../etcd3/codec.js';

export interface StoredEntry extends StoredObjectText {
  /** the key relative to the etcd prefix, e.g. `/pods/default/web-1` */
  readonly key: string;
  /** the stored JSON text */
  readonly data: string;
  readonly modRevision: number;
  /** set when the stored value could not be read (encryption at rest: no provider or key
   *  opens it); `data` is then empty and decoding the entry fails with this message */
  readonly error?: string;
  /** with `error`: reads the stored value again (the transformers may have been reloaded
   *  since); returns the JSON text or throws */
  readonly reread?: () => string;
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

function reread(entry: StoredEntry): string {
  if (!entry.reread) throw new StorageError('InvalidObject', entry.key, entry.error!);
  return entry.reread();
}

/** freezes an object graph: watch events share one decoded object among all watchers */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as object)) deepFreeze(v);
  }
  return value;
}
