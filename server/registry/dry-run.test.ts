// dryRun=All on delete and deletecollection over real etcd: the answer is that of the real
// request and nothing changes in storage (no deletion, no deletion marks, no finalizers).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ctx, startRegistry, statusOf, type RegistryHarness } from './testing/harness.js';

let h: RegistryHarness;

before(async () => {
  h = await startRegistry();
  await h.rest('', 'v1', 'namespaces').create(ctx(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'd' } });
});

after(async () => {
  await h.close();
});

const dry = () => ctx('d', { dryRun: true });

test('dry-run delete of a ConfigMap answers Success and keeps it', async () => {
  const cms = h.rest('', 'v1', 'configmaps');
  const created = await cms.create(ctx('d'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } });
  const res = await cms.delete(dry(), 'c', {});
  assert.equal(res.deleted, true);
  assert.equal((res.object as Record<string, unknown>).status, 'Success');
  const still = await cms.get(ctx('d'), 'c', {});
  assert.equal(still.metadata.resourceVersion, created.metadata.resourceVersion);
  // preconditions are checked as in the real request
  const conflict = await statusOf(cms.delete(dry(), 'c', { preconditions: { uid: 'other' } }));
  assert.equal(conflict.code, 409);
  assert.equal((await statusOf(cms.delete(dry(), 'missing', {}))).code, 404);
});

test('dry-run delete of an object with finalizers answers the marked object, stores nothing', async () => {
  const cms = h.rest('', 'v1', 'configmaps');
  const created = await cms.create(ctx('d'), {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'f', finalizers: ['example.com/keep'] },
  });
  const res = await cms.delete(dry(), 'f', {});
  assert.equal(res.deleted, false);
  assert.ok(res.object.metadata.deletionTimestamp);
  const still = await cms.get(ctx('d'), 'f', {});
  assert.equal(still.metadata.deletionTimestamp, undefined);
  assert.equal(still.metadata.resourceVersion, created.metadata.resourceVersion);
  // a dry-run orphaning delete adds no orphan finalizer either
  const orphan = await cms.delete(dry(), 'f', { propagationPolicy: 'Orphan' });
  assert.deepEqual(orphan.object.metadata.finalizers, ['example.com/keep', 'orphan']);
  assert.deepEqual((await cms.get(ctx('d'), 'f', {})).metadata.finalizers, ['example.com/keep']);
});

test('dry-run delete of a bound pod keeps it running (no graceful deletion recorded)', async () => {
  const pods = h.rest('', 'v1', 'pods');
  await pods.create(ctx('d'), {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p' },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] },
  });
  const res = await pods.delete(dry(), 'p', {});
  assert.equal(res.deleted, false);
  assert.equal(res.object.metadata.deletionGracePeriodSeconds, 30);
  const still = await pods.get(ctx('d'), 'p', {});
  assert.equal(still.metadata.deletionTimestamp, undefined);
  // an immediate dry-run delete answers the pod as stored
  const now = await pods.delete(dry(), 'p', { gracePeriodSeconds: 0 });
  assert.equal(now.deleted, true);
  assert.equal(now.object.metadata.name, 'p');
  assert.ok(await pods.get(ctx('d'), 'p', {}));
});

test('dry-run deletecollection lists what it would delete and deletes nothing', async () => {
  const secrets = h.rest('', 'v1', 'secrets');
  for (const name of ['s1', 's2'])
    await secrets.create(ctx('d'), { apiVersion: 'v1', kind: 'Secret', metadata: { name, labels: { set: 'x' } } });
  const list = await secrets.deleteCollection(dry(), {}, { labelSelector: 'set=x' });
  assert.deepEqual(
    list.items.map((i) => i.metadata.name),
    ['s1', 's2'],
  );
  const after = await secrets.list(ctx('d'), { labelSelector: 'set=x' });
  assert.deepEqual(
    after.items.map((i) => i.metadata.name),
    ['s1', 's2'],
  );
});

test('dry-run delete of a namespace does not start terminating it', async () => {
  const namespaces = h.rest('', 'v1', 'namespaces');
  const res = await namespaces.delete(ctx('', { dryRun: true }), 'd', {});
  assert.equal((res.object.status as Record<string, unknown>).phase, 'Terminating');
  const still = await namespaces.get(ctx(), 'd', {});
  assert.equal((still.status as Record<string, unknown>).phase, 'Active');
  assert.equal(still.metadata.deletionTimestamp, undefined);
});
