// The value transformer seam: what happens to an object's bytes between the codec and etcd.
// kube-apiserver's encryption at rest lives here (k8s.io/apiserver pkg/storage/value): a
// transformer per resource turns plaintext into what etcd stores and back. Without
// --encryption-provider-config there is no transformer at all and the store and the watch
// cache keep their direct path.
//
// Transformers are synchronous: every provider kapi supports (identity, aescbc, aesgcm,
// secretbox) is plain local crypto, and the watch-cache feed decodes events in line.

import { StorageError } from '../errors.js';

export interface ReadResult {
  /** the plaintext */
  data: Buffer;
  /** true when the value was not written by the first (writing) provider and key: a write of
   *  the same object must store it again, so that a rotation re-encrypts what is rewritten */
  stale: boolean;
}

export interface ValueTransformer {
  /** stored bytes to plaintext; throws when they cannot be read. `authenticatedData` is the
   *  full etcd key, as kube-apiserver passes it */
  fromStorage(data: Buffer, authenticatedData: Buffer): ReadResult;
  /** plaintext to the bytes etcd stores */
  toStorage(data: Buffer, authenticatedData: Buffer): Buffer;
}

/** Finds the transformer of a key (relative to the etcd prefix, e.g. `/secrets/ns/name`).
 *  undefined: the key's values are stored as they are (not an API resource's key). The
 *  answer may change over time (automatic reload of the encryption configuration). */
export interface TransformerLookup {
  forKey(relativeKey: string): ValueTransformer | undefined;
}

/** a transformer behind a fixed prefix of the stored value (`k8s:enc:aescbc:v1:`, `key1:`) */
export interface PrefixedTransformer {
  prefix: Buffer;
  transformer: ValueTransformer;
}

const ENCRYPTED_PREFIX = Buffer.from('k8s:enc:');

/** kube's identity provider: stores plaintext, and refuses to pass encrypted bytes on as if
 *  they were an object */
export const identityTransformer: ValueTransformer = {
  fromStorage(data: Buffer): ReadResult {
    if (hasPrefix(data, ENCRYPTED_PREFIX)) throw new Error('identity transformer tried to read encrypted data');
    return { data, stale: false };
  },
  toStorage(data: Buffer): Buffer {
    return data;
  },
};

function hasPrefix(data: Buffer, prefix: Buffer): boolean {
  return data.length >= prefix.length && data.compare(prefix, 0, prefix.length, 0, prefix.length) === 0;
}

/**
 * Writes with the first transformer (its prefix, then its output); reads with the first one
 * whose prefix the value carries. An empty prefix (identity) that fails is skipped so that a
 * later prefixed one can still answer; a prefixed one that fails is remembered and the next is
 * tried. `noMatch` is the error when nothing matched.
 */
export class PrefixTransformers implements ValueTransformer {
  constructor(
    private readonly transformers: PrefixedTransformer[],
    private readonly noMatch: string,
  ) {
    if (transformers.length === 0) throw new Error('PrefixTransformers needs at least one transformer');
  }

  fromStorage(data: Buffer, authenticatedData: Buffer): ReadResult {
    const errors: string[] = [];
    for (let i = 0; i < this.transformers.length; i++) {
      const { prefix, transformer } = this.transformers[i]!;
      if (!hasPrefix(data, prefix)) continue;
      try {
        const out = transformer.fromStorage(data.subarray(prefix.length), authenticatedData);
        return { data: out.data, stale: out.stale || i !== 0 };
      } catch (err) {
        if (prefix.length === 0) continue;
        errors.push((err as Error).message);
      }
    }
    if (errors.length === 1) throw new Error(errors[0]);
    if (errors.length > 1) throw new Error(`[${errors.join(', ')}]`);
    throw new Error(this.noMatch);
  }

  toStorage(data: Buffer, authenticatedData: Buffer): Buffer {
    const { prefix, transformer } = this.transformers[0]!;
    return Buffer.concat([prefix, transformer.toStorage(data, authenticatedData)]);
  }
}

/** Reads a stored value through `t`; a value that cannot be read becomes an InvalidObject
 *  StorageError (500 InternalError) that names the etcd key, as kube-apiserver's message does */
export function readStored(t: ValueTransformer, value: Buffer, etcdKey: string, relativeKey: string): ReadResult {
  try {
    return t.fromStorage(value, Buffer.from(etcdKey));
  } catch (err) {
    throw new StorageError('InvalidObject', relativeKey, `unable to transform key ${JSON.stringify(etcdKey)}: ${(err as Error).message}`);
  }
}

/** Finds transformers by the resource key prefix (`/secrets/`, `/apps/deployments/`) of a key.
 *  Prefixes never nest (one per resource), so the first one found is the only one. */
export class KeyPrefixTable implements TransformerLookup {
  constructor(private readonly byPrefix: ReadonlyMap<string, ValueTransformer>) {}

  forKey(relativeKey: string): ValueTransformer | undefined {
    // `/apps/deployments/ns/name`: try `/apps/`, `/apps/deployments/`, ...
    for (let i = relativeKey.indexOf('/', 1); i > 0; i = relativeKey.indexOf('/', i + 1)) {
      const t = this.byPrefix.get(relativeKey.slice(0, i + 1));
      if (t) return t;
    }
    return undefined;
  }
}
