// Issue 3, done-when 5: `kubectl delete deployment --cascade=foreground|background|orphan`
// leaves a Deployment's ReplicaSets (created here with ownerReferences, as the deployment
// controller would, since kapi runs none) and their Pods in the state kube-apiserver plus
// kube-controller-manager's garbage collector would.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { treeTools, type Meta } from './owner-trees.js';
import { createNamespace, startEtcd, startKapi, uniqueName, waitFor, type EtcdProcess, type KapiProcess } from './harness.js';

describe('garbage collection through kubectl delete --cascade', () => {
  let kapi: KapiProcess;
  let k: (args: string[], input?: string) => Promise<string>;
  let meta: (kind: string, name: string) => Promise<Meta | undefined>;
  let names: (kind: string, tree: string) => Promise<string[]>;
  let tree: ReturnType<typeof treeTools>['tree'];
  const ns = uniqueName('gc');

  before(async () => {
    kapi = await startKapi();
    ({ k, meta, names, tree } = treeTools(kapi.kubeconfig, ns));
    await createNamespace(kapi.http, ns);
  });
  after(async () => {
    await kapi?.stop();
  });

  it('--cascade=foreground returns once the Deployment, its ReplicaSets and their Pods are all gone', async () => {
    const t = await tree('fg');
    assert.deepEqual(await names('replicasets', 'fg'), t.replicaSets);
    const out = await k(['delete', 'deployment', 'fg', '--cascade=foreground']);
    assert.equal(out, 'deployment.apps "fg" deleted\n');
    assert.equal(await meta('deployment', 'fg'), undefined);
    assert.deepEqual(await names('replicasets', 'fg'), []);
    assert.deepEqual(await names('pods', 'fg'), []);
  });

  it('--cascade=foreground keeps the Deployment and ReplicaSet deleting while a Pod is held, then finishes', async () => {
    const t = await tree('fgheld', { heldPod: true });
    const heldPod = t.pods[0]!;
    const heldRs = t.replicaSets[0]!;
    await k(['delete', 'deployment', 'fgheld', '--cascade=foreground', '--wait=false']);

    const pod = await waitFor('the held pod to be marked deleted', async () => {
      const m = await meta('pod', heldPod);
      return m?.deletionTimestamp ? m : undefined;
    });
    assert.deepEqual(pod.finalizers, ['example.com/hold']);
    await waitFor('every other pod to be collected', async () => (await names('pods', 'fgheld')).join() === heldPod);
    await waitFor('the other ReplicaSet to be collected', async () => (await names('replicasets', 'fgheld')).join() === heldRs);
    const rs = await meta('replicaset', heldRs);
    assert.ok(rs?.deletionTimestamp, 'the ReplicaSet of the held pod waits, deleting');
    assert.deepEqual(rs.finalizers, ['foregroundDeletion']);
    const d = await meta('deployment', 'fgheld');
    assert.ok(d?.deletionTimestamp, 'the Deployment waits, deleting');
    assert.deepEqual(d.finalizers, ['foregroundDeletion']);

    await k(['patch', 'pod', heldPod, '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
    await k(['wait', '--for=delete', 'deployment/fgheld', '--timeout=60s']);
    assert.deepEqual(await names('replicasets', 'fgheld'), []);
    assert.deepEqual(await names('pods', 'fgheld'), []);
  });

  it('--cascade=background (the default) removes the Deployment at once and its dependents shortly after', async () => {
    for (const [name, flags] of [
      ['bg', ['--cascade=background']],
      ['bgdefault', []],
    ] as const) {
      await tree(name);
      const out = await k(['delete', 'deployment', name, ...flags]);
      assert.equal(out, `deployment.apps "${name}" deleted\n`);
      assert.equal(await meta('deployment', name), undefined, 'no finalizer holds the owner');
      await waitFor(`the ReplicaSets of ${name} to be collected`, async () => (await names('replicasets', name)).length === 0);
      await waitFor(`the Pods of ${name} to be collected`, async () => (await names('pods', name)).length === 0);
    }
  });

  it('--cascade=orphan returns once the Deployment is gone; the ReplicaSets stay without ownerReferences', async () => {
    const t = await tree('orph');
    const out = await k(['delete', 'deployment', 'orph', '--cascade=orphan']);
    assert.equal(out, 'deployment.apps "orph" deleted\n');
    assert.equal(await meta('deployment', 'orph'), undefined);
    assert.deepEqual(await names('replicasets', 'orph'), t.replicaSets);
    for (const rs of t.replicaSets) {
      const m = await meta('replicaset', rs);
      assert.equal(m?.ownerReferences, undefined, `${rs} keeps no reference to the Deployment`);
      assert.equal(m?.deletionTimestamp, undefined);
      assert.deepEqual(m?.finalizers, undefined);
    }
    // the Pods still belong to their ReplicaSets
    assert.deepEqual(await names('pods', 'orph'), t.pods);
    for (const p of t.pods) {
      const m = await meta('pod', p);
      assert.deepEqual(
        m?.ownerReferences?.map((r) => r.kind),
        ['ReplicaSet'],
        p,
      );
    }

    // deleting an orphaned ReplicaSet now collects only its own Pods
    const [first, second] = t.replicaSets as [string, string];
    await k(['delete', 'replicaset', first]);
    await waitFor("the first ReplicaSet's pods to be collected", async () =>
      (await names('pods', 'orph')).every((p) => !p.startsWith(first)),
    );
    assert.deepEqual(
      await names('pods', 'orph'),
      t.pods.filter((p) => p.startsWith(second)),
    );
  });
});

describe('garbage collection with two replicas: kubectl on either, the collector on the leader', () => {
  let etcd: EtcdProcess;
  const replicas: KapiProcess[] = [];
  const ns = uniqueName('gc2');

  before(async () => {
    etcd = await startEtcd();
    replicas.push(await startKapi({ etcdServers: etcd.endpoint }));
    replicas.push(await startKapi({ etcdServers: etcd.endpoint }));
    await createNamespace(replicas[0]!.http, ns);
  });
  after(async () => {
    for (const r of replicas) await r.stop();
    await etcd?.stop();
  });

  it('each cascade, deleted through each replica, ends as on one kube-apiserver', async () => {
    for (const [i, r] of replicas.entries()) {
      const other = replicas[1 - i]!;
      const here = treeTools(r.kubeconfig, ns);
      const there = treeTools(other.kubeconfig, ns);

      const fg = `fg${i}`;
      await there.tree(fg);
      await here.k(['delete', 'deployment', fg, '--cascade=foreground']);
      assert.deepEqual(await there.names('replicasets', fg), []);
      assert.deepEqual(await there.names('pods', fg), []);

      const bg = `bg${i}`;
      await there.tree(bg);
      await here.k(['delete', 'deployment', bg]);
      await waitFor(
        `the dependents of ${bg} to be collected`,
        async () => (await there.names('pods', bg)).length + (await there.names('replicasets', bg)).length === 0,
      );

      const orph = `orph${i}`;
      const t = await there.tree(orph);
      await here.k(['delete', 'deployment', orph, '--cascade=orphan']);
      assert.deepEqual(await there.names('replicasets', orph), t.replicaSets);
      for (const rs of t.replicaSets) assert.equal((await there.meta('replicaset', rs))?.ownerReferences, undefined, rs);
    }
  });
});
