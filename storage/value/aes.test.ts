import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aesCbcTransformer, aesGcmTransformer } from './aes.js';

const KEY = Buffer.from('52fd15bc2ebbd883684119b8de1312a83940384a672476d2d1ecd551e0247170', 'hex');
const PLAIN = Buffer.from('{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s1","namespace":"default"},"data":{"k":"dmFsdWU="}}');
const AD = Buffer.from('/registry/secrets/default/s1');
// written by Python's `cryptography` (OpenSSL-independent of node's use of it) in kube's
// layouts: nonce(0..11) | ciphertext | tag with the etcd key as AAD; iv(0..15) | PKCS#7 CBC
const GCM_VECTOR =
  '000102030405060708090a0b5ddeee4ed55392632d07b88306696ada27f8d62e5be9708344a7d9f613aa226f792d3eaa2671d913a7d4102d6d1e616363b400c34a4aa0e1909bdf90796eed7d0b0f365c56b055ffc9d5e887c9c7b3a9cb2cda364ecd69617cf25dde7f72123d402458a239f4fd555337517666bd8d5f2b9faa9ce40a8f956ec0';
const CBC128_VECTOR =
  '000102030405060708090a0b0c0d0e0f6bbae79cda692d5153dba0c58068df99c41de0b7845ce4e375d69ae8d3b3b8de7b2adc18fc85b937bcba496a227455afcb2c21c147bb360821a19a4d23541d416253c98d076fd08af47ce2ae3063705c41b5b0799eb3ff849f12226bfc0cd2a850ab21e2ecfaff39b2fbc05a9941bb75';

test('aesgcm reads the wire format kube writes (nonce | ciphertext | tag, etcd key as AAD)', () => {
  const out = aesGcmTransformer(KEY).fromStorage(Buffer.from(GCM_VECTOR, 'hex'), AD);
  assert.deepEqual(out, { data: PLAIN, stale: false });
});

test('aesgcm: round trip for every key size, a fresh nonce each write, the length kube writes', () => {
  for (const size of [16, 24, 32]) {
    const t = aesGcmTransformer(KEY.subarray(0, size));
    const a = t.toStorage(PLAIN, AD);
    const b = t.toStorage(PLAIN, AD);
    assert.equal(a.length, 12 + PLAIN.length + 16);
    assert.notDeepEqual(a, b);
    assert.deepEqual(t.fromStorage(a, AD).data, PLAIN);
    assert.equal(a.includes(Buffer.from('dmFsdWU=')), false);
  }
});

test('aesgcm refuses a wrong key, tampered data, another key as AAD and short data', () => {
  const t = aesGcmTransformer(KEY);
  const sealed = t.toStorage(PLAIN, AD);
  const other = Buffer.from(KEY);
  other[0]! ^= 1;
  assert.throws(() => aesGcmTransformer(other).fromStorage(sealed, AD), /cipher: message authentication failed/);
  for (const i of [0, 12, sealed.length - 1]) {
    const tampered = Buffer.from(sealed);
    tampered[i]! ^= 1;
    assert.throws(() => t.fromStorage(tampered, AD), /message authentication failed/, `byte ${i}`);
  }
  assert.throws(() => t.fromStorage(sealed, Buffer.from('/registry/secrets/default/s2')), /message authentication failed/);
  assert.throws(() => t.fromStorage(sealed.subarray(0, 11), AD), /shorter than the required size/);
});

test('aescbc reads the wire format kube writes (iv | CBC of the PKCS#7-padded plaintext)', () => {
  const out = aesCbcTransformer(KEY.subarray(0, 16)).fromStorage(Buffer.from(CBC128_VECTOR, 'hex'), AD);
  assert.deepEqual(out, { data: PLAIN, stale: false });
});

test('aescbc: round trip (a whole padding block when the plaintext fills its blocks)', () => {
  for (const size of [16, 24, 32]) {
    const t = aesCbcTransformer(KEY.subarray(0, size));
    for (const plain of [PLAIN, Buffer.alloc(32, 7), Buffer.alloc(0)]) {
      const sealed = t.toStorage(plain, AD);
      assert.equal(sealed.length, 16 + (Math.floor(plain.length / 16) + 1) * 16);
      assert.deepEqual(t.fromStorage(sealed, AD).data, plain);
    }
  }
});

test('aescbc refuses a wrong key (bad padding), a broken length and short data with kube messages', () => {
  const t = aesCbcTransformer(KEY);
  const sealed = t.toStorage(PLAIN, AD);
  const other = Buffer.from(KEY);
  other[5]! ^= 1;
  // a wrong key decrypts to noise whose last byte makes valid padding about once in 256
  // sealings (a fresh IV each): of several, none gives the plaintext and some fail on padding
  const wrong = aesCbcTransformer(other);
  const outcomes = Array.from({ length: 16 }, () => {
    try {
      return wrong.fromStorage(t.toStorage(PLAIN, AD), AD).data;
    } catch (err) {
      return (err as Error).message;
    }
  });
  assert.ok(!outcomes.some((o) => Buffer.isBuffer(o) && o.equals(PLAIN)));
  assert.ok(
    outcomes.some((o) => typeof o === 'string' && /invalid (PKCS7 data|padding on input)/.test(o)),
    String(outcomes),
  );
  assert.throws(() => t.fromStorage(sealed.subarray(0, sealed.length - 1), AD), /the stored data is not a multiple of the block size/);
  assert.throws(() => t.fromStorage(sealed.subarray(0, 15), AD), /shorter than the required size/);
  // a flipped byte in the last IV/ciphertext block garbles the padding
  const tampered = Buffer.from(sealed);
  tampered[tampered.length - 17]! ^= 0xff;
  assert.throws(() => t.fromStorage(tampered, AD), /invalid (PKCS7 data|padding on input)/);
});

test('AES keys must be 16, 24 or 32 bytes', () => {
  assert.throws(() => aesGcmTransformer(Buffer.alloc(20)), /invalid key size 20/);
  assert.throws(() => aesCbcTransformer(Buffer.alloc(8)), /invalid key size 8/);
});
