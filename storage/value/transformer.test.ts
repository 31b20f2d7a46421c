import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageError } from '../errors.js';
import { identityTransformer, KeyPrefixTable, PrefixTransformers, readStored, type ValueTransformer } from './transformer.js';

/** a toy cipher that marks what it wrote, to follow which transformer ran */
function tagged(tag: string): ValueTransformer {
  return {
    fromStorage(data) {
      const s = data.toString();
      if (!s.startsWith(`<${tag}>`)) throw new Error(`not ${tag}`);
      return { data: Buffer.from(s.slice(tag.length + 2)), stale: false };
    },
    toStorage(data) {
      return Buffer.from(`<${tag}>${data.toString()}`);
    },
  };
}

const AD = Buffer.from('/registry/secrets/ns/x');

test('writes with the first transformer and its prefix; reads by prefix; non-first reads are stale', () => {
  const t = new PrefixTransformers(
    [
      { prefix: Buffer.from('k8s:enc:a:v1:'), transformer: tagged('a') },
      { prefix: Buffer.from('k8s:enc:b:v1:'), transformer: tagged('b') },
      { prefix: Buffer.alloc(0), transformer: identityTransformer },
    ],
    'no matching prefix found',
  );
  const stored = t.toStorage(Buffer.from('{}'), AD);
  assert.equal(stored.toString(), 'k8s:enc:a:v1:<a>{}');
  assert.deepEqual(t.fromStorage(stored, AD), { data: Buffer.from('{}'), stale: false });
  assert.deepEqual(t.fromStorage(Buffer.from('k8s:enc:b:v1:<b>{"x":1}'), AD), { data: Buffer.from('{"x":1}'), stale: true });
  // plaintext is read by identity (stale: it is not what the first provider writes)
  assert.deepEqual(t.fromStorage(Buffer.from('{"plain":true}'), AD), { data: Buffer.from('{"plain":true}'), stale: true });
  // a prefix that matches but does not open: its error, not identity's
  assert.throws(() => t.fromStorage(Buffer.from('k8s:enc:b:v1:garbage'), AD), /^Error: not b$/);
  // encrypted by something unknown: identity refuses it, nothing else matches
  assert.throws(() => t.fromStorage(Buffer.from('k8s:enc:c:v1:zzz'), AD), /no matching prefix found/);
});

test('without identity, plaintext matches no provider', () => {
  const t = new PrefixTransformers([{ prefix: Buffer.from('k8s:enc:a:v1:'), transformer: tagged('a') }], 'no matching prefix found');
  assert.throws(() => t.fromStorage(Buffer.from('{"plain":true}'), AD), /no matching prefix found/);
});

test('identity refuses encrypted data and passes everything else', () => {
  assert.throws(
    () => identityTransformer.fromStorage(Buffer.from('k8s:enc:aescbc:v1:k:xx'), AD),
    /identity transformer tried to read encrypted data/,
  );
  assert.deepEqual(identityTransformer.fromStorage(Buffer.from('{}'), AD), { data: Buffer.from('{}'), stale: false });
  assert.deepEqual(identityTransformer.toStorage(Buffer.from('{}'), AD), Buffer.from('{}'));
});

test('readStored names the etcd key in an InvalidObject error', () => {
  const t = new PrefixTransformers([{ prefix: Buffer.from('k8s:enc:a:v1:'), transformer: tagged('a') }], 'no matching prefix found');
  assert.throws(
    () => readStored(t, Buffer.from('{}'), '/registry/secrets/ns/x', '/secrets/ns/x'),
    (err: unknown) =>
      err instanceof StorageError &&
      err.code === 'InvalidObject' &&
      err.key === '/secrets/ns/x' &&
      err.message === 'unable to transform key "/registry/secrets/ns/x": no matching prefix found',
  );
});

test('KeyPrefixTable finds a resource by the prefix of its keys', () => {
  const secrets = tagged('s');
  const deployments = tagged('d');
  const table = new KeyPrefixTable(
    new Map([
      ['/secrets/', secrets],
      ['/apps/deployments/', deployments],
    ]),
  );
  assert.equal(table.forKey('/secrets/ns/name'), secrets);
  assert.equal(table.forKey('/apps/deployments/ns/web'), deployments);
  assert.equal(table.forKey('/apps/replicasets/ns/web'), undefined);
  assert.equal(table.forKey('/kapi/progress-marker'), undefined);
  assert.equal(table.forKey('/secrets'), undefined);
});
