// Namespace lifecycle over real etcd: creation defaults, termination on delete, no new
// content while terminating, finalize, removal, immortal namespaces.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../storage/interface.js';
import { ctx, startRegistry, statusOf, type RegistryHarness } from '../testing/harness.js';
import type { RESTResource } from '../rest.js';

let h: RegistryHarness;
let namespaces: RESTResource;
let finalize: RESTResource;
let configmaps: RESTResource;

before(async () => {
  h = await startRegistry();
  namespaces = h.rest('', 'v1', 'namespaces');
  finalize = h.rest('', 'v1', 'namespaces', 'finalize');
  configmaps = h.rest('', 'v1', 'configmaps');
});

after(async () => {
  await h.close();
});

const ns = (name: string, extra: Partial<KubeObject> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name },
  ...extra,
});

test('a new namespace is Active, carries the kubernetes finalizer and its name label', async () => {
  const created = await namespaces.create(ctx(), ns('fresh', { status: { phase: 'Terminating' } }));
  assert.deepEqual(Object.keys(created), ['kind', 'apiVersion', 'metadata', 'spec', 'status']);
  assert.deepEqual(created.spec, { finalizers: ['kubernetes'] });
  assert.deepEqual(created.status, { phase: 'Active' });
  assert.deepEqual(created.metadata.labels, { 'kubernetes.io/metadata.name': 'fresh' });
  assert.equal(created.metadata.namespace, undefined);
  const generated = await namespaces.create(ctx(), { apiVersion: 'v1', kind: 'Namespace', metadata: { generateName: 'gen-' } });
  assert.equal(generated.metadata.labels?.['kubernetes.io/metadata.name'], generated.metadata.name);
  const bad = await statusOf(namespaces.create(ctx(), ns('has.dot')));
  assert.equal(bad.code, 422);
  assert.equal(bad.details?.causes?.[0]?.message, 'Invalid value: "has.dot": must not contain dots');
});

test('updates cannot change spec.finalizers or status; finalize can', async () => {
  const created = await namespaces.create(ctx(), ns('keep'));
  const upd = await namespaces.update(ctx(), 'keep', () => ({ ...created, spec: { finalizers: [] }, status: { phase: 'Terminating' } }), {
    allowCreate: false,
  });
  assert.deepEqual(upd.object.spec, { finalizers: ['kubernetes'] });
  assert.deepEqual(upd.object.status, { phase: 'Active' });
  const bad = await statusOf(
    finalize.update(ctx(), 'keep', (cur) => ({ ...cur!, spec: { finalizers: ['nope'] } }), { allowCreate: false }),
  );
  assert.equal(bad.code, 422);
  assert.equal(bad.details?.causes?.[0]?.field, 'spec.finalizers[0]');
  const fin = await finalize.update(ctx(), 'keep', (cur) => ({ ...cur!, spec: { finalizers: ['example.com/x'] } }), { allowCreate: false });
  assert.deepEqual(fin.object.spec, { finalizers: ['example.com/x'] });
  // not being deleted: emptying the finalizers keeps the namespace
  await finalize.update(ctx(), 'keep', (cur) => ({ ...cur!, spec: { finalizers: [] } }), { allowCreate: false });
  assert.ok(await namespaces.get(ctx(), 'keep', {}));
});

test('deleting a namespace starts termination; finalize then removes it', async () => {
  await namespaces.create(ctx(), ns('doomed'));
  await configmaps.create(ctx('doomed'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'before' } });
  const del = await namespaces.delete(ctx(), 'doomed', { propagationPolicy: 'Background' });
  assert.equal(del.deleted, false);
  assert.equal(del.object.kind, 'Namespace');
  assert.ok(del.object.metadata.deletionTimestamp);
  assert.deepEqual(del.object.status, { phase: 'Terminating' });
  assert.equal(del.object.metadata.finalizers, undefined);

  const refused = await statusOf(configmaps.create(ctx('doomed'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late' } }));
  assert.equal(refused.code, 403);
  assert.equal(refused.reason, 'Forbidden');
  assert.equal(
    refused.message,
    'configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated',
  );
  assert.deepEqual(refused.details?.causes, [
    { reason: 'NamespaceTerminating', message: 'namespace doomed is being terminated', field: 'metadata.namespace' },
  ]);
  // updates of existing content still work
  await configmaps.update(ctx('doomed'), 'before', (cur) => ({ ...cur!, data: { a: 'b' } }), { allowCreate: false });

  // a repeated delete keeps waiting for the namespace controller
  const again = await namespaces.delete(ctx(), 'doomed', {});
  assert.equal(again.deleted, false);
  assert.deepEqual(again.object.spec, { finalizers: ['kubernetes'] });

  const done = await finalize.update(ctx(), 'doomed', (cur) => ({ ...cur!, spec: { finalizers: [] } }), { allowCreate: false });
  assert.deepEqual(done.object.spec, { finalizers: [] });
  const gone = await statusOf(namespaces.get(ctx(), 'doomed', {}));
  assert.equal(gone.code, 404);
  assert.equal(gone.message, 'namespaces "doomed" not found');
});

test('metadata finalizers hold a finalized namespace until they are gone', async () => {
  await namespaces.create(ctx(), ns('held', { metadata: { name: 'held', finalizers: ['example.com/hold'] } }));
  const del = await namespaces.delete(ctx(), 'held', { propagationPolicy: 'Foreground' });
  assert.deepEqual(del.object.metadata.finalizers, ['example.com/hold', 'foregroundDeletion']);
  await finalize.update(ctx(), 'held', (cur) => ({ ...cur!, spec: { finalizers: [] } }), { allowCreate: false });
  assert.ok(await namespaces.get(ctx(), 'held', {}));
  await namespaces.update(ctx(), 'held', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, finalizers: [] } }), { allowCreate: false });
  assert.equal((await statusOf(namespaces.get(ctx(), 'held', {}))).code, 404);
});

test('immortal namespaces cannot be deleted', async () => {
  await namespaces.create(ctx(), ns('kube-system'));
  const err = await statusOf(namespaces.delete(ctx(), 'kube-system', {}));
  assert.equal(err.code, 403);
  assert.equal(err.message, 'namespaces "kube-system" is forbidden: this namespace may not be deleted');
});

test('field selectors on namespaces', async () => {
  const active = await namespaces.list(ctx(), { fieldSelector: 'status.phase=Active' });
  assert.ok(active.items.length > 0);
  assert.ok(active.items.every((n) => (n.status as Record<string, string>).phase === 'Active'));
  const bad = await statusOf(namespaces.list(ctx(), { fieldSelector: 'metadata.namespace=x' }));
  assert.equal(bad.message, 'field label not supported: metadata.namespace');
});
