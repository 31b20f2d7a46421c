import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { KubeObject } from '../../../storage/interface.js';
import type { DeleteRequestOptions } from '../../registry/rest.js';
import { runBootstrap } from '../bootstrap.js';
import { eventually, startHarness, testContext, type Harness } from '../testing/harness.js';
import { isNotFound } from '../util.js';
import { garbageCollectorController } from './index.js';
import type { OwnerReference } from './types.js';

let h: Harness;
let stopGC = new AbortController();
let gcDone: Promise<void> = Promise.resolve();

function startGC(): void {
  stopGC = new AbortController();
  gcDone = garbageCollectorController(h.main.deps(), { leaseDurationSeconds: 6, retryPeriodMs: 200, resourceSyncPeriodMs: 1_000 }).start(
    stopGC.signal,
  );
}

async function stopGarbageCollector(): Promise<void> {
  stopGC.abort();
  await gcDone;
}

before(async () => {
  h = await startHarness();
  await runBootstrap(h.main.deps());
  startGC();
});

after(async () => {
  await stopGarbageCollector();
  await h.close();
});

// ---- objects ----------------------------------------------------------------------------

type Ref = OwnerReference;

const podSpec = { containers: [{ name: 'c', image: 'busybox' }] };

function controllerRef(owner: KubeObject, apiVersion: string, kind: string): Ref {
  return { apiVersion, kind, name: owner.metadata.name!, uid: owner.metadata.uid!, controller: true, blockOwnerDeletion: true };
}

async function createNamespace(name: string): Promise<void> {
  await h.main.rest('', 'v1', 'namespaces').create(testContext(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

function deployment(ns: string, name: string): Promise<KubeObject> {
  return h.main.rest('apps', 'v1', 'deployments').create(testContext(ns), {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns },
    spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: podSpec } },
  });
}

function replicaSet(ns: string, name: string, owners: Ref[]): Promise<KubeObject> {
  return h.main.rest('apps', 'v1', 'replicasets').create(testContext(ns), {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, namespace: ns, ownerReferences: owners as unknown as KubeObject['metadata']['ownerReferences'] },
    spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: podSpec } },
  });
}

function pod(ns: string, name: string, owners: Ref[], extra: { finalizers?: string[] } = {}): Promise<KubeObject> {
  return h.main.rest('', 'v1', 'pods').create(testContext(ns), {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, ownerReferences: owners as unknown as KubeObject['metadata']['ownerReferences'], ...extra },
    spec: podSpec,
  });
}

function configMap(ns: string, name: string, owners: Ref[] = []): Promise<KubeObject> {
  return h.main.rest('', 'v1', 'configmaps').create(testContext(ns), {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace: ns,
      ...(owners.length ? { ownerReferences: owners as unknown as KubeObject['metadata']['ownerReferences'] } : {}),
    },
  });
}

function refTo(obj: KubeObject, apiVersion: string, kind: string, extra: Partial<Ref> = {}): Ref {
  return { apiVersion, kind, name: obj.metadata.name!, uid: obj.metadata.uid!, ...extra };
}

type Coordinates = [group: string, version: string, resource: string];
const DEPLOYMENTS: Coordinates = ['apps', 'v1', 'deployments'];
const REPLICASETS: Coordinates = ['apps', 'v1', 'replicasets'];
const PODS: Coordinates = ['', 'v1', 'pods'];
const CONFIGMAPS: Coordinates = ['', 'v1', 'configmaps'];

async function get(c: Coordinates, ns: string, name: string): Promise<KubeObject | undefined> {
  try {
    return await h.main.rest(...c).get(testContext(ns), name, {});
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

async function gone(c: Coordinates, ns: string, name: string): Promise<boolean> {
  return (await get(c, ns, name)) === undefined;
}

async function allGone(items: Array<[Coordinates, string]>, ns: string): Promise<boolean> {
  for (const [c, name] of items) if (!(await gone(c, ns, name))) return false;
  return true;
}

function del(c: Coordinates, ns: string, name: string, opts: DeleteRequestOptions) {
  return h.main.rest(...c).delete(testContext(ns), name, opts);
}

function ownerUids(obj: KubeObject | undefined): string[] {
  return ((obj?.metadata.ownerReferences ?? []) as unknown as Ref[]).map((r) => r.uid);
}

/** a Deployment, two ReplicaSets it controls, two Pods controlled by each */
async function deploymentTree(ns: string, name: string) {
  await createNamespace(ns);
  const d = await deployment(ns, name);
  const rsNames = [`${name}-a`, `${name}-b`];
  const podNames: string[] = [];
  for (const rsName of rsNames) {
    const rs = await replicaSet(ns, rsName, [controllerRef(d, 'apps/v1', 'Deployment')]);
    for (const i of [1, 2]) {
      await pod(ns, `${rsName}-${i}`, [controllerRef(rs, 'apps/v1', 'ReplicaSet')]);
      podNames.push(`${rsName}-${i}`);
    }
  }
  return { d, rsNames, podNames };
}

// ---- tests ------------------------------------------------------------------------------

test('background: the Deployment goes at once, then its ReplicaSets, then their Pods', async () => {
  const ns = 'gc-background';
  const { rsNames, podNames } = await deploymentTree(ns, 'web');
  await configMap(ns, 'bystander');
  const { deleted } = await del(DEPLOYMENTS, ns, 'web', { propagationPolicy: 'Background' });
  assert.equal(deleted, true);
  await eventually('the ReplicaSets and Pods to be collected', () =>
    allGone([...rsNames.map((n): [Coordinates, string] => [REPLICASETS, n]), ...podNames.map((n): [Coordinates, string] => [PODS, n])], ns),
  );
  assert.ok(await get(CONFIGMAPS, ns, 'bystander'), 'objects without owners stay');
});

test('the default propagation of an apps/v1 Deployment delete is background', async () => {
  const ns = 'gc-default';
  const { rsNames, podNames } = await deploymentTree(ns, 'web');
  await del(DEPLOYMENTS, ns, 'web', {});
  await eventually('the ReplicaSets and Pods to be collected', () =>
    allGone([...rsNames.map((n): [Coordinates, string] => [REPLICASETS, n]), ...podNames.map((n): [Coordinates, string] => [PODS, n])], ns),
  );
});

test('foreground: the owner stays, deleting, until every blocking dependent is gone; then it goes', async () => {
  const ns = 'gc-foreground';
  await createNamespace(ns);
  const d = await deployment(ns, 'web');
  const rs = await replicaSet(ns, 'web-a', [controllerRef(d, 'apps/v1', 'Deployment')]);
  await pod(ns, 'web-a-1', [controllerRef(rs, 'apps/v1', 'ReplicaSet')]);
  // a pod someone else holds with a finalizer keeps the whole chain waiting
  await pod(ns, 'web-a-held', [controllerRef(rs, 'apps/v1', 'ReplicaSet')], { finalizers: ['example.com/hold'] });

  const { deleted, object } = await del(DEPLOYMENTS, ns, 'web', { propagationPolicy: 'Foreground' });
  assert.equal(deleted, false);
  assert.deepEqual(object.metadata.finalizers, ['foregroundDeletion']);
  assert.ok(object.metadata.deletionTimestamp);

  // the ReplicaSet has dependents of its own, so it is deleted in foreground too
  const rsDeleting = await eventually('the ReplicaSet to be deleted in foreground', async () => {
    const cur = await get(REPLICASETS, ns, 'web-a');
    return cur?.metadata.deletionTimestamp ? cur : undefined;
  });
  assert.deepEqual(rsDeleting.metadata.finalizers, ['foregroundDeletion']);
  await eventually('the free pod to be collected', () => gone(PODS, ns, 'web-a-1'));
  const held = await eventually('the held pod to be marked deleted', async () => {
    const cur = await get(PODS, ns, 'web-a-held');
    return cur?.metadata.deletionTimestamp ? cur : undefined;
  });
  assert.deepEqual(held.metadata.finalizers, ['example.com/hold']);
  const owner = await get(DEPLOYMENTS, ns, 'web');
  assert.ok(owner?.metadata.deletionTimestamp, 'the Deployment waits');
  assert.deepEqual(owner.metadata.finalizers, ['foregroundDeletion']);
  assert.ok(await get(REPLICASETS, ns, 'web-a'), 'the ReplicaSet waits');

  await h.main.rest(...PODS).update(testContext(ns), 'web-a-held', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, finalizers: [] } }), {
    allowCreate: false,
  });
  await eventually('the Deployment to go once its dependents are gone', () => gone(DEPLOYMENTS, ns, 'web'));
  assert.equal(await gone(REPLICASETS, ns, 'web-a'), true);
  assert.equal(await gone(PODS, ns, 'web-a-held'), true);
});

test('foreground: a whole Deployment tree goes, leaves first', async () => {
  const ns = 'gc-foreground-tree';
  const { rsNames, podNames } = await deploymentTree(ns, 'web');
  await del(DEPLOYMENTS, ns, 'web', { propagationPolicy: 'Foreground' });
  await eventually('the Deployment to go', () => gone(DEPLOYMENTS, ns, 'web'));
  for (const n of rsNames) assert.equal(await gone(REPLICASETS, ns, n), true, n);
  for (const n of podNames) assert.equal(await gone(PODS, ns, n), true, n);
});

test('foreground: a dependent that does not block its owner is deleted but not waited for', async () => {
  const ns = 'gc-foreground-nonblocking';
  await createNamespace(ns);
  const owner = await configMap(ns, 'owner');
  await configMap(ns, 'loose', [refTo(owner, 'v1', 'ConfigMap', { blockOwnerDeletion: false })]);
  await pod(ns, 'held', [refTo(owner, 'v1', 'ConfigMap', { blockOwnerDeletion: false })], { finalizers: ['example.com/hold'] });
  await del(CONFIGMAPS, ns, 'owner', { propagationPolicy: 'Foreground' });
  await eventually('the owner to go', () => gone(CONFIGMAPS, ns, 'owner'));
  await eventually('the loose dependent to be collected', () => gone(CONFIGMAPS, ns, 'loose'));
  const held = await eventually('the held pod to be marked deleted', async () => {
    const cur = await get(PODS, ns, 'held');
    return cur?.metadata.deletionTimestamp ? cur : undefined;
  });
  assert.deepEqual(held.metadata.finalizers, ['example.com/hold']);
});

test('orphan: the ReplicaSets stay without their owner reference; their Pods keep theirs', async () => {
  const ns = 'gc-orphan';
  const { rsNames, podNames } = await deploymentTree(ns, 'web');
  const { deleted, object } = await del(DEPLOYMENTS, ns, 'web', { propagationPolicy: 'Orphan' });
  assert.equal(deleted, false);
  assert.deepEqual(object.metadata.finalizers, ['orphan']);
  await eventually('the Deployment to go', () => gone(DEPLOYMENTS, ns, 'web'));
  for (const n of rsNames) {
    const rs = await get(REPLICASETS, ns, n);
    assert.ok(rs, n);
    assert.equal(rs.metadata.ownerReferences, undefined, `${n} has no ownerReferences left`);
    assert.equal(rs.metadata.deletionTimestamp, undefined);
  }
  for (const n of podNames) {
    const p = await get(PODS, ns, n);
    assert.equal(ownerUids(p).length, 1, n);
  }
});

test('orphanDependents=true orphans; a dependent with a second owner keeps that reference', async () => {
  const ns = 'gc-orphan-dependents';
  await createNamespace(ns);
  const a = await configMap(ns, 'a');
  const b = await configMap(ns, 'b');
  await configMap(ns, 'child', [refTo(a, 'v1', 'ConfigMap'), refTo(b, 'v1', 'ConfigMap')]);
  await del(CONFIGMAPS, ns, 'a', { orphanDependents: true });
  await eventually('the owner to go', () => gone(CONFIGMAPS, ns, 'a'));
  assert.deepEqual(ownerUids(await get(CONFIGMAPS, ns, 'child')), [b.metadata.uid]);
});

test('several owners: a dependent goes only when the last one is gone; dangling references are removed before', async () => {
  const ns = 'gc-owners';
  await createNamespace(ns);
  const a = await configMap(ns, 'a');
  const b = await configMap(ns, 'b');
  await configMap(ns, 'child', [refTo(a, 'v1', 'ConfigMap'), refTo(b, 'v1', 'ConfigMap')]);
  await del(CONFIGMAPS, ns, 'a', {});
  const child = await eventually('the reference to the deleted owner to be removed', async () => {
    const cur = await get(CONFIGMAPS, ns, 'child');
    return cur && ownerUids(cur).length === 1 ? cur : undefined;
  });
  assert.deepEqual(ownerUids(child), [b.metadata.uid]);
  await del(CONFIGMAPS, ns, 'b', {});
  await eventually('the child to be collected once its last owner is gone', () => gone(CONFIGMAPS, ns, 'child'));
});

test('an owner of the same name but another uid is absent; an owner that exists keeps its dependent', async () => {
  const ns = 'gc-uid';
  await createNamespace(ns);
  const owner = await configMap(ns, 'owner');
  await configMap(ns, 'impostor-child', [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: randomUUID() }]);
  await configMap(ns, 'real-child', [refTo(owner, 'v1', 'ConfigMap')]);
  await configMap(ns, 'orphan-child', [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'never-existed', uid: randomUUID() }]);
  await eventually('the dependent of a uid that does not exist to be collected', () => gone(CONFIGMAPS, ns, 'impostor-child'));
  await eventually('the dependent of a name that does not exist to be collected', () => gone(CONFIGMAPS, ns, 'orphan-child'));
  assert.ok(await get(CONFIGMAPS, ns, 'owner'));
  assert.deepEqual(ownerUids(await get(CONFIGMAPS, ns, 'real-child')), [owner.metadata.uid]);
});

test("an owner deleted and created again under the same name does not keep the old one's dependents", async () => {
  const ns = 'gc-recreated';
  await createNamespace(ns);
  const first = await configMap(ns, 'owner');
  await configMap(ns, 'child', [refTo(first, 'v1', 'ConfigMap')]);
  await del(CONFIGMAPS, ns, 'owner', { propagationPolicy: 'Orphan' });
  // the orphan finalizer is removed only after the reference is: wait for both
  await eventually('the first owner to go', () => gone(CONFIGMAPS, ns, 'owner'));
  assert.deepEqual(ownerUids(await get(CONFIGMAPS, ns, 'child')), []);
  const second = await configMap(ns, 'owner');
  await configMap(ns, 'child-2', [refTo(first, 'v1', 'ConfigMap')]);
  assert.notEqual(second.metadata.uid, first.metadata.uid);
  await eventually('a dependent of the first owner to be collected', () => gone(CONFIGMAPS, ns, 'child-2'));
  assert.ok(await get(CONFIGMAPS, ns, 'child'), 'the orphaned child stays');
});

test('a cluster-scoped owner collects namespaced dependents; a cluster-scoped object naming a namespaced owner is left alone', async () => {
  const ns = 'gc-scopes';
  await createNamespace(ns);
  const clusterRoles = h.main.rest('rbac.authorization.k8s.io', 'v1', 'clusterroles');
  const owner = await clusterRoles.create(testContext(), {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'gc-owner' },
  });
  await configMap(ns, 'child', [refTo(owner, 'rbac.authorization.k8s.io/v1', 'ClusterRole')]);
  // invalid as upstream sees it: never collected nor changed
  await clusterRoles.create(testContext(), {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'gc-invalid', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'nothing', uid: randomUUID() }] },
  });
  await clusterRoles.delete(testContext(), 'gc-owner', {});
  await eventually('the namespaced dependent to be collected', () => gone(CONFIGMAPS, ns, 'child'));
  const invalid = await clusterRoles.get(testContext(), 'gc-invalid', {});
  assert.equal(invalid.metadata.deletionTimestamp, undefined);
  assert.equal(ownerUids(invalid).length, 1);
});

test('a namespaced owner named from another namespace is absent there: the dependent goes, with a Warning event', async () => {
  await createNamespace('gc-ns-a');
  await createNamespace('gc-ns-b');
  // both configmaps: one watch reports the owner before the dependent, so the graph knows it
  const owner = await configMap('gc-ns-a', 'owner');
  await configMap('gc-ns-b', 'child', [refTo(owner, 'v1', 'ConfigMap')]);
  await eventually('the dependent to be collected', () => gone(CONFIGMAPS, 'gc-ns-b', 'child'));
  assert.ok(await get(CONFIGMAPS, 'gc-ns-a', 'owner'));
  const event = await eventually('a Warning event', async () => {
    const events = await h.main.rest('', 'v1', 'events').list(testContext('gc-ns-b'), {});
    return events.items.find((e) => e.reason === 'OwnerRefInvalidNamespace');
  });
  assert.equal(event.type, 'Warning');
  assert.deepEqual(event.source, { component: 'garbage-collector-controller' });
  assert.deepEqual((event.involvedObject as { name: string; namespace: string }).name, 'child');
  assert.equal(
    event.message,
    `ownerRef [v1/ConfigMap, namespace: gc-ns-b, name: owner, uid: ${owner.metadata.uid}] does not exist in namespace "gc-ns-b"`,
  );
});

test('an owner created after its dependent is found by uid and keeps it', async () => {
  const ns = 'gc-late-owner';
  await createNamespace(ns);
  // the same uid cannot be chosen at create, so point the dependent at the owner afterwards
  const child = await configMap(ns, 'child');
  const owner = await configMap(ns, 'owner');
  await h.main.rest(...CONFIGMAPS).update(
    testContext(ns),
    'child',
    (cur) => ({
      ...cur!,
      metadata: {
        ...cur!.metadata,
        ownerReferences: [refTo(owner, 'v1', 'ConfigMap')] as unknown as KubeObject['metadata']['ownerReferences'],
      },
    }),
    { allowCreate: false },
  );
  // a control dependent created after it, whose owner is absent, is collected: the GC has
  // looked at this namespace's objects by then
  await configMap(ns, 'control', [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: randomUUID() }]);
  await eventually('the control dependent to be collected', () => gone(CONFIGMAPS, ns, 'control'));
  assert.equal((await get(CONFIGMAPS, ns, 'child'))?.metadata.uid, child.metadata.uid);
  await del(CONFIGMAPS, ns, 'owner', {});
  await eventually('the dependent to be collected with its owner', () => gone(CONFIGMAPS, ns, 'child'));
});

test('after a restart the graph is rebuilt: what happened meanwhile is collected', async () => {
  const ns = 'gc-restart';
  await createNamespace(ns);
  const bg = await configMap(ns, 'bg-owner');
  await configMap(ns, 'bg-child', [refTo(bg, 'v1', 'ConfigMap')]);
  const orphaning = await configMap(ns, 'orphan-owner');
  await configMap(ns, 'orphan-child', [refTo(orphaning, 'v1', 'ConfigMap')]);
  const fg = await configMap(ns, 'fg-owner');
  await configMap(ns, 'fg-child', [refTo(fg, 'v1', 'ConfigMap', { blockOwnerDeletion: true })]);

  await stopGarbageCollector();
  await del(CONFIGMAPS, ns, 'bg-owner', {});
  await del(CONFIGMAPS, ns, 'orphan-owner', { propagationPolicy: 'Orphan' });
  await del(CONFIGMAPS, ns, 'fg-owner', { propagationPolicy: 'Foreground' });
  assert.deepEqual((await get(CONFIGMAPS, ns, 'orphan-owner'))?.metadata.finalizers, ['orphan']);
  assert.ok(await get(CONFIGMAPS, ns, 'bg-child'));

  startGC();
  await eventually('the background dependent to be collected', () => gone(CONFIGMAPS, ns, 'bg-child'));
  await eventually('the orphaning owner to go', () => gone(CONFIGMAPS, ns, 'orphan-owner'));
  assert.deepEqual(ownerUids(await get(CONFIGMAPS, ns, 'orphan-child')), []);
  await eventually('the foreground owner to go', () => gone(CONFIGMAPS, ns, 'fg-owner'));
  assert.equal(await gone(CONFIGMAPS, ns, 'fg-child'), true);
});

test('another replica takes the garbage collector over when the leader stops', async () => {
  const ns = 'gc-failover';
  await createNamespace(ns);
  const other = h.replica();
  const stopOther = new AbortController();
  const otherDone = garbageCollectorController(other.deps(), { leaseDurationSeconds: 6, retryPeriodMs: 200 }).start(stopOther.signal);
  try {
    await stopGarbageCollector();
    const owner = await configMap(ns, 'owner');
    await configMap(ns, 'child', [refTo(owner, 'v1', 'ConfigMap')]);
    await del(CONFIGMAPS, ns, 'owner', {});
    await eventually('the other replica to collect the dependent', () => gone(CONFIGMAPS, ns, 'child'));
  } finally {
    stopOther.abort();
    await otherDone;
  }
});
