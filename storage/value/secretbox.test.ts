import { test } from 'node:test';
import assert from 'node:assert/strict';
import { secretboxTransformer } from './secretbox.js';
import { secretboxSeal } from './xsalsa20poly1305.js';

const KEY = Buffer.from('YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXoxMjM0NTY=', 'base64');
const PLAIN = Buffer.from('{"kind":"Secret","data":{"password":"aHVudGVyMg=="}}');
const AD = Buffer.from('/registry/secrets/ns/s');

test('secretbox stores nonce(24) | tag(16) | ciphertext and reads it back', () => {
  const t = secretboxTransformer(KEY);
  const sealed = t.toStorage(PLAIN, AD);
  assert.equal(sealed.length, 24 + 16 + PLAIN.length);
  assert.deepEqual(sealed.subarray(24), secretboxSeal(PLAIN, sealed.subarray(0, 24), KEY));
  assert.deepEqual(t.fromStorage(sealed, AD), { data: PLAIN, stale: false });
  assert.notDeepEqual(t.toStorage(PLAIN, AD), sealed);
  // no AAD: the etcd key is not bound (as in kube)
  assert.deepEqual(t.fromStorage(sealed, Buffer.from('/elsewhere')).data, PLAIN);
});

test('secretbox refuses a wrong key, tampered data and short data', () => {
  const t = secretboxTransformer(KEY);
  const sealed = t.toStorage(PLAIN, AD);
  const other = Buffer.from(KEY);
  other[0]! ^= 1;
  assert.throws(() => secretboxTransformer(other).fromStorage(sealed, AD), /output array was not large enough for encryption/);
  for (const i of [0, 24, sealed.length - 1]) {
    const tampered = Buffer.from(sealed);
    tampered[i]! ^= 1;
    assert.throws(() => t.fromStorage(tampered, AD), /output array was not large enough/, `byte ${i}`);
  }
  assert.throws(() => t.fromStorage(sealed.subarray(0, 39), AD), /shorter than the required size/);
  assert.throws(() => secretboxTransformer(Buffer.alloc(16)), /expected key size 32 for secretbox provider, got 16/);
});
