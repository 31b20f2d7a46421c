import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubeObject } from '../../storage/interface.js';
import { runBootstrap } from './bootstrap.js';
import type { NamespaceCondition } from './namespace-conditions.js';
import { namespacedContentResources } from './namespace-deleter.js';
import { readLeader } from './leader.js';
import { namespaceController } from './namespace.js';
import { eventually, startHarness, testContext, type Harness } from './testing/harness.js';
import { isNotFound } from './util.js';

let h: Harness;
const stopController = new AbortController();
let controllerDone: Promise<void>;

before(async () => {
  h = await startHarness();
  await runBootstrap(h.main.deps());
  controllerDone = namespaceController(h.main.deps(), { leaseDurationSeconds: 6, retryPeriodMs: 200 }).start(stopController.signal);
});

after(async () => {
  stopController.abort();
  await controllerDone;
  await h.close();
});

const podSpec = { containers: [{ name: 'c', image: 'busybox' }] };

async function createNamespace(name: string): Promise<void> {
  await h.main.rest('', 'v1', 'namespaces').create(testContext(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

async function create(
  group: string,
  version: string,
  resource: string,
  ns: string,
  obj: Omit<KubeObject, 'metadata'> & { metadata: KubeObject['metadata'] },
) {
  return h.main.rest(group, version, resource).create(testContext(ns), { ...obj, metadata: { ...obj.metadata, namespace: ns } });
}

async function namespaceGone(name: string): Promise<boolean> {
  try {
    await h.main.rest('', 'v1', 'namespaces').get(testContext(), name, {});
    return false;
  } catch (err) {
    if (isNotFound(err)) return true;
    throw err;
  }
}

async function count(group: string, version: string, resource: string, ns: string): Promise<number> {
  return (await h.main.rest(group, version, resource).list(testContext(ns), {})).items.length;
}

function conditions(ns: KubeObject): Map<string, NamespaceCondition> {
  const list = ((ns.status as { conditions?: NamespaceCondition[] }).conditions ?? []) as NamespaceCondition[];
  return new Map(list.map((c) => [c.type, c]));
}

test('content resources: one version per namespaced group/resource that can be deleted, no subresources', () => {
  const resources = namespacedContentResources(h.main.registry);
  const names = resources.map((r) => `${r.info.group}/${r.info.resource}`);
  assert.equal(new Set(names).size, names.length);
  for (const want of ['/configmaps', '/pods', '/secrets', 'apps/deployments', 'batch/jobs', 'autoscaling/horizontalpodautoscalers']) {
    assert.ok(names.includes(want), `${want} missing from ${names.join(' ')}`);
  }
  assert.ok(!names.includes('/namespaces'));
  assert.ok(!names.includes('authorization.k8s.io/localsubjectaccessreviews'));
  assert.ok(resources.every((r) => !r.subresource && r.info.namespaced && r.info.verbs.includes('delete')));
  const hpa = resources.find((r) => r.info.resource === 'horizontalpodautoscalers')!;
  assert.equal(hpa.info.version, hpa.info.preferredVersion);
});

test('deleting a namespace removes its configmaps, deployment and pods, then the namespace', async () => {
  const ns = 'doomed';
  await createNamespace(ns);
  await create('', 'v1', 'configmaps', ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one' }, data: { a: '1' } });
  await create('', 'v1', 'configmaps', ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'two' }, data: { b: '2' } });
  await create('apps', 'v1', 'deployments', ns, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: podSpec } },
  });
  await create('', 'v1', 'pods', ns, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'loose' }, spec: podSpec });
  // a pod bound to a node is deleted gracefully; nobody but the controller finishes that
  await create('', 'v1', 'pods', ns, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'bound' },
    spec: { ...podSpec, nodeName: 'node-1', terminationGracePeriodSeconds: 1 },
  });
  // an object elsewhere must survive
  await create('', 'v1', 'configmaps', 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bystander' } });

  const { deleted } = await h.main.rest('', 'v1', 'namespaces').delete(testContext(), ns, {});
  assert.equal(deleted, false, 'a namespace is first marked Terminating');

  await eventually('the namespace to be gone', () => namespaceGone(ns));
  assert.equal(await count('', 'v1', 'configmaps', ns), 0);
  assert.equal(await count('apps', 'v1', 'deployments', ns), 0);
  assert.equal(await count('', 'v1', 'pods', ns), 0);
  assert.ok(await h.main.rest('', 'v1', 'configmaps').get(testContext('default'), 'bystander', {}));
});

test('a configmap with a finalizer keeps the namespace Terminating until the finalizer is removed', async () => {
  const ns = 'held';
  await createNamespace(ns);
  await create('', 'v1', 'configmaps', ns, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'pinned', finalizers: ['example.com/hold'] },
  });
  await create('', 'v1', 'configmaps', ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'free' } });
  await h.main.rest('', 'v1', 'namespaces').delete(testContext(), ns, {});

  const namespaces = h.main.rest('', 'v1', 'namespaces');
  const terminating = await eventually('conditions naming the remaining finalizer', async () => {
    const cur = await namespaces.get(testContext(), ns, {});
    return conditions(cur).get('NamespaceFinalizersRemaining')?.status === 'True' ? cur : undefined;
  });
  assert.equal((terminating.status as { phase: string }).phase, 'Terminating');
  assert.deepEqual((terminating.spec as { finalizers: string[] }).finalizers, ['kubernetes']);
  const c = conditions(terminating);
  assert.deepEqual(
    { ...c.get('NamespaceFinalizersRemaining'), lastTransitionTime: undefined },
    {
      type: 'NamespaceFinalizersRemaining',
      status: 'True',
      lastTransitionTime: undefined,
      reason: 'SomeFinalizersRemain',
      message: 'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances',
    },
  );
  assert.equal(c.get('NamespaceContentRemaining')?.message, 'Some resources are remaining: configmaps. has 1 resource instances');
  assert.equal(c.get('NamespaceDeletionDiscoveryFailure')?.status, 'False');
  assert.equal(c.get('NamespaceDeletionContentFailure')?.status, 'False');

  const configmaps = h.main.rest('', 'v1', 'configmaps');
  const remaining = (await configmaps.list(testContext(ns), {})).items;
  assert.deepEqual(
    remaining.map((o) => o.metadata.name),
    ['pinned'],
  );
  assert.ok(remaining[0]!.metadata.deletionTimestamp);
  assert.equal(await namespaceGone(ns), false);

  await configmaps.update(testContext(ns), 'pinned', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, finalizers: [] } }), {
    allowCreate: false,
  });
  await eventually('the namespace to be gone once the finalizer is removed', () => namespaceGone(ns));
  assert.equal(await count('', 'v1', 'configmaps', ns), 0);
});

test('a namespace with another spec finalizer loses only ours and stays', async () => {
  const ns = 'shared-finalizer';
  const namespaces = h.main.rest('', 'v1', 'namespaces');
  await namespaces.create(testContext(), {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: ns },
    spec: { finalizers: ['example.com/other'] },
  });
  await namespaces.delete(testContext(), ns, {});
  const cur = await eventually('our finalizer to be removed', async () => {
    const n = await namespaces.get(testContext(), ns, {});
    return (n.spec as { finalizers: string[] }).finalizers.includes('kubernetes') ? undefined : n;
  });
  assert.deepEqual((cur.spec as { finalizers: string[] }).finalizers, ['example.com/other']);
  // whoever owns the other finalizer releases it; the registry then removes the namespace
  await h.main
    .rest('', 'v1', 'namespaces', 'finalize')
    .update(testContext(), ns, (n) => ({ ...n!, spec: { finalizers: [] } }), { allowCreate: false });
  await eventually('the namespace to be gone', () => namespaceGone(ns));
});

test('only one replica leads the namespace controller; when it stops, the other finishes deletions', async () => {
  const other = h.replica();
  const stopOther = new AbortController();
  const otherDone = namespaceController(other.deps(), { leaseDurationSeconds: 6, retryPeriodMs: 200 }).start(stopOther.signal);
  try {
    assert.equal((await readLeader(h.main.registry, 'namespace-controller'))?.holderIdentity, 'replica-1');
    stopController.abort();
    await controllerDone;
    await eventually('the other replica to lead', async () => {
      return (await readLeader(h.main.registry, 'namespace-controller'))?.holderIdentity === other.deps().identity;
    });
    const ns = 'after-failover';
    await createNamespace(ns);
    await create('', 'v1', 'configmaps', ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } });
    await h.main.rest('', 'v1', 'namespaces').delete(testContext(), ns, {});
    await eventually('the namespace to be gone', () => namespaceGone(ns));
  } finally {
    stopOther.abort();
    await otherDone;
  }
});
