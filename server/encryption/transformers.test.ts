import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseEncryptionConfiguration } from './config.js';
import { buildTransformerOverrides, lookupFor, transformerFor } from './transformers.js';
import { identityTransformer } from '../../storage/value/transformer.js';

const K1 = Buffer.alloc(32, 1).toString('base64');
const K2 = Buffer.alloc(32, 2).toString('base64');
const AD = Buffer.from('/registry/secrets/ns/s');
const PLAIN = Buffer.from('{"kind":"Secret"}');

const config = (resources: string) =>
  parseEncryptionConfiguration(`apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n${resources}`, false);

const RESOURCES = [
  { group: '', resource: 'secrets', keyPrefix: '/secrets' },
  { group: '', resource: 'configmaps', keyPrefix: '/configmaps' },
  { group: '', resource: 'events', keyPrefix: '/events' },
  { group: 'apps', resource: 'deployments', keyPrefix: '/apps/deployments' },
  { group: 'batch', resource: 'jobs', keyPrefix: '/batch/jobs' },
];

test("each provider writes kube's prefix with the first key's name", () => {
  for (const [provider, prefix] of [
    ['aescbc', 'k8s:enc:aescbc:v1:key1:'],
    ['aesgcm', 'k8s:enc:aesgcm:v1:key1:'],
    ['secretbox', 'k8s:enc:secretbox:v1:key1:'],
  ]) {
    const o = buildTransformerOverrides(
      config(
        `  - resources: [secrets]\n    providers:\n      - ${provider}:\n          keys: [{name: key1, secret: ${K1}}, {name: key2, secret: ${K2}}]`,
      ),
    );
    const t = transformerFor(o, '', 'secrets');
    const stored = t.toStorage(PLAIN, AD);
    assert.ok(stored.toString('latin1').startsWith(prefix), `${provider}: ${stored.toString('latin1').slice(0, 30)}`);
    assert.equal(stored.includes(PLAIN), false);
    assert.deepEqual(t.fromStorage(stored, AD), { data: PLAIN, stale: false });
  }
});

test('rotation: data of the second key or provider reads, and is stale', () => {
  const before = transformerFor(
    buildTransformerOverrides(config(`  - resources: [secrets]\n    providers:\n      - aescbc: {keys: [{name: old, secret: ${K1}}]}`)),
    '',
    'secrets',
  );
  const oldData = before.toStorage(PLAIN, AD);
  const after = transformerFor(
    buildTransformerOverrides(
      config(
        `  - resources: [secrets]\n    providers:\n      - aesgcm: {keys: [{name: new, secret: ${K2}}]}\n      - aescbc: {keys: [{name: other, secret: ${K2}}, {name: old, secret: ${K1}}]}`,
      ),
    ),
    '',
    'secrets',
  );
  assert.deepEqual(after.fromStorage(oldData, AD), { data: PLAIN, stale: true });
  assert.ok(after.toStorage(PLAIN, AD).toString('latin1').startsWith('k8s:enc:aesgcm:v1:new:'));
});

test('plaintext reads only with identity among the providers; encrypted data with identity alone does not', () => {
  const withIdentity = transformerFor(
    buildTransformerOverrides(
      config(`  - resources: [secrets]\n    providers:\n      - aescbc: {keys: [{name: k, secret: ${K1}}]}\n      - identity: {}`),
    ),
    '',
    'secrets',
  );
  assert.deepEqual(withIdentity.fromStorage(PLAIN, AD), { data: PLAIN, stale: true });
  const without = transformerFor(
    buildTransformerOverrides(config(`  - resources: [secrets]\n    providers:\n      - aescbc: {keys: [{name: k, secret: ${K1}}]}`)),
    '',
    'secrets',
  );
  assert.throws(() => without.fromStorage(PLAIN, AD), /^Error: no matching prefix found$/);
  const identityOnly = transformerFor(
    buildTransformerOverrides(config('  - resources: [secrets]\n    providers: [{identity: {}}]')),
    '',
    'secrets',
  );
  assert.throws(() => identityOnly.fromStorage(withIdentity.toStorage(PLAIN, AD), AD), /no matching prefix found/);
  // an unknown key name under a known provider
  const other = transformerFor(
    buildTransformerOverrides(config(`  - resources: [secrets]\n    providers:\n      - aescbc: {keys: [{name: z, secret: ${K1}}]}`)),
    '',
    'secrets',
  );
  assert.throws(() => other.fromStorage(without.toStorage(PLAIN, AD), AD), /no matching key was found for the provided AES transformer/);
});

test('matching: exact, then *.<group>, then *.*; unnamed resources get identity', () => {
  const o = buildTransformerOverrides(
    config(
      `  - resources: [events]\n    providers: [{identity: {}}]\n  - resources: [secrets]\n    providers: [{aescbc: {keys: [{name: s, secret: ${K1}}]}}]\n` +
        `  - resources: ['*.apps']\n    providers: [{aesgcm: {keys: [{name: a, secret: ${K1}}]}}]\n  - resources: ['*.*']\n    providers: [{secretbox: {keys: [{name: x, secret: ${K1}}]}}]`,
    ),
  );
  const lookup = lookupFor(o, RESOURCES);
  const prefixOf = (key: string) => lookup.forKey(key)!.toStorage(PLAIN, AD).toString('latin1').slice(0, 30);
  assert.ok(prefixOf('/secrets/ns/a').startsWith('k8s:enc:aescbc:v1:s:'));
  assert.ok(prefixOf('/apps/deployments/ns/d').startsWith('k8s:enc:aesgcm:v1:a:'));
  assert.ok(prefixOf('/configmaps/ns/c').startsWith('k8s:enc:secretbox:v1:x:'));
  assert.ok(prefixOf('/batch/jobs/ns/j').startsWith('k8s:enc:secretbox:v1:x:'));
  assert.equal(prefixOf('/events/ns/e'), PLAIN.toString());
  assert.equal(lookup.forKey('/kapi/progress-marker'), undefined);
  const onlySecrets = lookupFor(
    buildTransformerOverrides(config(`  - resources: [secrets]\n    providers: [{aescbc: {keys: [{name: s, secret: ${K1}}]}}]`)),
    RESOURCES,
  );
  assert.equal(onlySecrets.forKey('/configmaps/ns/c'), identityTransformer);
});

test('a rule masked by an earlier wildcard is an error; kms is refused', () => {
  assert.throws(
    () =>
      buildTransformerOverrides(
        config(`  - resources: ['*.*']\n    providers: [{identity: {}}]\n  - resources: [secrets]\n    providers: [{identity: {}}]`),
      ),
    /resource "secrets" is masked by earlier rule "\*\.\*"/,
  );
  assert.throws(
    () =>
      buildTransformerOverrides(
        config(
          `  - resources: ['*.apps']\n    providers: [{identity: {}}]\n  - resources: [deployments.apps]\n    providers: [{identity: {}}]`,
        ),
      ),
    /resource "deployments.apps" is masked by earlier rule "\*\.apps"/,
  );
  assert.throws(
    () =>
      buildTransformerOverrides(
        config('  - resources: [secrets]\n    providers: [{kms: {apiVersion: v2, name: p, endpoint: "unix:///tmp/p.sock"}}]'),
      ),
    /KMS \(v1 and v2\) encryption providers are not supported by kapi/,
  );
});
