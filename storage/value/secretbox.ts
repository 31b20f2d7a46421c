// kube-apiserver's secretbox provider (pkg/storage/value/encrypt/secretbox): a 24-byte random
// nonce, then Go's secretbox.Seal output (tag, ciphertext). No authenticated data: the etcd
// key is not bound, as in kube.

import { randomBytes } from 'node:crypto';
import type { ReadResult, ValueTransformer } from './transformer.js';
import { SECRETBOX_KEY_BYTES, SECRETBOX_NONCE_BYTES, SECRETBOX_OVERHEAD, secretboxOpen, secretboxSeal } from './xsalsa20poly1305.js';

export function secretboxTransformer(key: Buffer): ValueTransformer {
  if (key.length !== SECRETBOX_KEY_BYTES) throw new Error(`expected key size 32 for secretbox provider, got ${key.length}`);
  const k = Buffer.from(key);
  return {
    fromStorage(data: Buffer): ReadResult {
      if (data.length < SECRETBOX_OVERHEAD + SECRETBOX_NONCE_BYTES) throw new Error('the stored data was shorter than the required size');
      const out = secretboxOpen(data.subarray(SECRETBOX_NONCE_BYTES), data.subarray(0, SECRETBOX_NONCE_BYTES), k);
      // kube's message for a box that does not open
      if (!out) throw new Error('output array was not large enough for encryption');
      return { data: out, stale: false };
    },
    toStorage(data: Buffer): Buffer {
      const nonce = randomBytes(SECRETBOX_NONCE_BYTES);
      return Buffer.concat([nonce, secretboxSeal(data, nonce, k)]);
    },
  };
}
