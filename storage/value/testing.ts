// Transformers for storage tests: kube's provider layout (`k8s:enc:aesgcm:v1:<key>:`) built by
// hand, without the configuration file code of server/encryption.

import { aesGcmTransformer } from './aes.js';
import {
  identityTransformer,
  KeyPrefixTable,
  PrefixTransformers,
  type PrefixedTransformer,
  type TransformerLookup,
} from './transformer.js';

export function aesGcmProvider(keys: Array<{ name: string; key: Buffer }>): PrefixedTransformer {
  return {
    prefix: Buffer.from('k8s:enc:aesgcm:v1:'),
    transformer: new PrefixTransformers(
      keys.map((k) => ({ prefix: Buffer.from(`${k.name}:`), transformer: aesGcmTransformer(k.key) })),
      'no matching key was found for the provided AES transformer',
    ),
  };
}

export const identityProvider: PrefixedTransformer = { prefix: Buffer.alloc(0), transformer: identityTransformer };

/** one resource prefix (e.g. `/pods/`) read and written through `providers`, in order */
export function lookupForPrefix(prefix: string, providers: PrefixedTransformer[]): TransformerLookup {
  return new KeyPrefixTable(new Map([[prefix, new PrefixTransformers(providers, 'no matching prefix found')]]));
}
