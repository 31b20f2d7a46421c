// kube-apiserver's AES providers, byte for byte (k8s.io/apiserver pkg/storage/value/encrypt/aes),
// so that etcd data written by either server reads in the other:
//   aesgcm: 12-byte random nonce | ciphertext | 16-byte tag; the etcd key is the additional
//           authenticated data (a value copied to another key does not open)
//   aescbc: 16-byte random IV | ciphertext of the PKCS#7-padded plaintext; no authentication
// The provider and key-name prefixes (`k8s:enc:aesgcm:v1:<name>:`) are added by
// PrefixTransformers around these.

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { ReadResult, ValueTransformer } from './transformer.js';

const GCM_NONCE = 12;
const GCM_TAG = 16;
const BLOCK = 16;

/** AES-128, -192 or -256 by the key's length */
function keyBits(key: Buffer): 128 | 192 | 256 {
  if (key.length === 16 || key.length === 24 || key.length === 32) return (key.length * 8) as 128 | 192 | 256;
  // Go's aes.NewCipher error
  throw new Error(`crypto/aes: invalid key size ${key.length}`);
}

export function aesGcmTransformer(key: Buffer): ValueTransformer {
  const algorithm = `aes-${keyBits(key)}-gcm` as const;
  const k = Buffer.from(key);
  return {
    fromStorage(data: Buffer, authenticatedData: Buffer): ReadResult {
      if (data.length < GCM_NONCE) throw new Error('the stored data was shorter than the required size');
      if (data.length < GCM_NONCE + GCM_TAG) throw new Error('cipher: message authentication failed');
      const decipher = createDecipheriv(algorithm, k, data.subarray(0, GCM_NONCE), { authTagLength: GCM_TAG });
      decipher.setAAD(authenticatedData);
      decipher.setAuthTag(data.subarray(data.length - GCM_TAG));
      try {
        const out = Buffer.concat([decipher.update(data.subarray(GCM_NONCE, data.length - GCM_TAG)), decipher.final()]);
        return { data: out, stale: false };
      } catch {
        throw new Error('cipher: message authentication failed');
      }
    },
    toStorage(data: Buffer, authenticatedData: Buffer): Buffer {
      const nonce = randomBytes(GCM_NONCE);
      const cipher = createCipheriv(algorithm, k, nonce, { authTagLength: GCM_TAG });
      cipher.setAAD(authenticatedData);
      const body = Buffer.concat([cipher.update(data), cipher.final()]);
      return Buffer.concat([nonce, body, cipher.getAuthTag()]);
    },
  };
}

export function aesCbcTransformer(key: Buffer): ValueTransformer {
  const algorithm = `aes-${keyBits(key)}-cbc`;
  const k = Buffer.from(key);
  return {
    fromStorage(data: Buffer): ReadResult {
      if (data.length < BLOCK) throw new Error('the stored data was shorter than the required size');
      const body = data.subarray(BLOCK);
      if (body.length % BLOCK !== 0) throw new Error('the stored data is not a multiple of the block size');
      // padding is checked here, with kube's messages, rather than by OpenSSL
      const decipher = createDecipheriv(algorithm, k, data.subarray(0, BLOCK)).setAutoPadding(false);
      const plain = Buffer.concat([decipher.update(body), decipher.final()]);
      const pad = plain.length > 0 ? plain[plain.length - 1]! : 0;
      if (pad === 0 || pad > plain.length) throw new Error('invalid PKCS7 data (empty or not padded)');
      for (let i = plain.length - pad; i < plain.length; i++) {
        if (plain[i] !== pad) throw new Error('invalid padding on input');
      }
      return { data: plain.subarray(0, plain.length - pad), stale: false };
    },
    toStorage(data: Buffer): Buffer {
      const iv = randomBytes(BLOCK);
      const cipher = createCipheriv(algorithm, k, iv); // PKCS#7 padding, as kube pads
      return Buffer.concat([iv, cipher.update(data), cipher.final()]);
    },
  };
}
