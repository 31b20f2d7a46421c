// Registry options from kube-apiserver flags. --enable-garbage-collector=false: no garbage
// collector runs, so a delete must not leave the `orphan` or `foregroundDeletion` finalizer
// behind for one (kube-apiserver's EnableGarbageCollection); finalizers of others still hold
// the object. --delete-collection-workers: deletecollection deletes several at a time.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../storage/interface.js';
import { ctx, startRegistry, statusOf, type RegistryHarness } from './testing/harness.js';
import type { RESTResource } from './rest.js';

let h: RegistryHarness;
let configmaps: RESTResource;

before(async () => {
  h = await startRegistry({ garbageCollection: false, deleteCollectionWorkers: 4 });
  await h.rest('', 'v1', 'namespaces').create(ctx(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'nogc' } });
  configmaps = h.rest('', 'v1', 'configmaps');
});

after(async () => {
  await h.close();
});

const cm = (name: string, finalizers?: string[]): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(finalizers ? { finalizers } : {}) },
  data: { a: '1' },
});

test('without a garbage collector, Orphan and Foreground deletes remove the object at once', async () => {
  for (const propagationPolicy of ['Orphan', 'Foreground'] as const) {
    const name = `gone-${propagationPolicy.toLowerCase()}`;
    await configmaps.create(ctx('nogc'), cm(name));
    const res = await configmaps.delete(ctx('nogc'), name, { propagationPolicy });
    assert.equal(res.deleted, true, `${propagationPolicy}: deleted at once`);
    assert.equal((await statusOf(configmaps.get(ctx('nogc'), name, {}))).code, 404);
  }
});

test('without a garbage collector, other finalizers still hold the object, and none is added', async () => {
  await configmaps.create(ctx('nogc'), cm('held', ['example.com/keep']));
  const res = await configmaps.delete(ctx('nogc'), 'held', { propagationPolicy: 'Foreground' });
  assert.equal(res.deleted, false);
  assert.deepEqual(res.object.metadata.finalizers, ['example.com/keep']);
  assert.ok(res.object.metadata.deletionTimestamp);
});

test('deletecollection with several workers deletes every selected object, and only those', async () => {
  for (let i = 0; i < 25; i++)
    await configmaps.create(ctx('nogc'), {
      ...cm(`many-${i}`),
      metadata: { name: `many-${i}`, labels: { batch: i % 5 === 0 ? 'keep' : 'drop' } },
    });
  const res = await configmaps.deleteCollection(ctx('nogc'), {}, { labelSelector: 'batch=drop' });
  assert.equal(res.items.length, 20);
  const left = await configmaps.list(ctx('nogc'), { labelSelector: 'batch' });
  assert.deepEqual(left.items.map((o) => o.metadata.name).sort(), ['many-0', 'many-10', 'many-15', 'many-20', 'many-5']);
});
