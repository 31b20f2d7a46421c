// Issue 3, done-when 5 and 6 on the replicated cluster (3 etcd + 3 kapi + haproxy), with
// kubectl 1.33 through the load balancer only: `kubectl delete deployment --cascade=...`
// ends as kube-apiserver plus kube-controller-manager would leave it, while consecutive
// kubectl runs land on different replicas and the garbage collector runs on whichever holds
// its Lease; and SIGKILL of the replica holding the namespace controller's Lease moves the
// Lease (and the collector's, if it was there too) to a survivor within 20 s, and a
// namespace deleted right after the kill is still removed.

import assert from 'node:assert/strict';
import os from 'node:os';
import { after, before, describe, it } from 'node:test';
import { apiserverIdentityLeaseName, servingEndpoint } from '../../server/controllers/identity.js';
import { kubectl, kubectlOk, sleep, uniqueName, waitFor } from '../harness.js';
import { startCluster, type TestCluster } from './cluster.js';
import { treeTools } from '../owner-trees.js';

const namespaceLease = 'kapi-namespace-controller';
const gcLease = 'kapi-garbage-collector';

/** kubectl through `kubeconfig`, retried while the load balancer may still send a new
 *  connection to a replica that was just killed (haproxy notices at its next health check) */
async function kubectlRetrying(args: string[], kubeconfig: string, input?: string): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await kubectl(args, { kubeconfig, input });
    if (r.code === 0) return r.stdout;
    const transient =
      /connection refused|connection reset|EOF|unexpected error when reading response body|TLS handshake|i\/o timeout/i.test(r.stderr);
    if (!transient || Date.now() > deadline) {
      throw new Error(`kubectl ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    }
    await sleep(250);
  }
}

describe('controllers on 3 etcd + 3 kapi + haproxy, through kubectl 1.33 and the load balancer', { timeout: 300_000 }, () => {
  let cluster: TestCluster;
  let kc: string;
  let tools: ReturnType<typeof treeTools>;
  const ns = uniqueName('rgc');
  /** a replica SIGKILLed and not yet restarted */
  let killed: number | undefined;

  before(async () => {
    cluster = await startCluster();
    kc = cluster.kubeconfig;
    tools = treeTools(kc, ns);
    await kubectlOk(['create', 'namespace', ns], { kubeconfig: kc });
  });
  after(async () => {
    if (killed !== undefined && cluster) await cluster.replicas[killed]!.restart().catch(() => undefined);
    await cluster?.stop();
  });

  it('--cascade=foreground returns once the Deployment, its ReplicaSets and their Pods are all gone', async () => {
    const t = await tools.tree('fg');
    assert.deepEqual(await tools.names('replicasets', 'fg'), t.replicaSets);
    assert.deepEqual(await tools.names('pods', 'fg'), t.pods);
    assert.equal(await tools.k(['delete', 'deployment', 'fg', '--cascade=foreground']), 'deployment.apps "fg" deleted\n');
    assert.equal(await tools.meta('deployment', 'fg'), undefined);
    assert.deepEqual(await tools.names('replicasets', 'fg'), []);
    assert.deepEqual(await tools.names('pods', 'fg'), []);
  });

  it('--cascade=background removes the Deployment at once and its dependents shortly after', async () => {
    const t = await tools.tree('bg');
    assert.equal(await tools.k(['delete', 'deployment', 'bg', '--cascade=background']), 'deployment.apps "bg" deleted\n');
    assert.equal(await tools.meta('deployment', 'bg'), undefined, 'no finalizer holds the owner');
    assert.ok(t.replicaSets.length === 2 && t.pods.length === 4);
    await waitFor('the ReplicaSets of bg to be collected', async () => (await tools.names('replicasets', 'bg')).length === 0, 30_000, 250);
    await waitFor('the Pods of bg to be collected', async () => (await tools.names('pods', 'bg')).length === 0, 30_000, 250);
  });

  it('--cascade=orphan leaves the ReplicaSets without ownerReferences and their Pods untouched', async () => {
    const t = await tools.tree('orph');
    assert.equal(await tools.k(['delete', 'deployment', 'orph', '--cascade=orphan']), 'deployment.apps "orph" deleted\n');
    assert.equal(await tools.meta('deployment', 'orph'), undefined);
    assert.deepEqual(await tools.names('replicasets', 'orph'), t.replicaSets);
    for (const rs of t.replicaSets) {
      const m = await tools.meta('replicaset', rs);
      assert.equal(m?.ownerReferences, undefined, `${rs} keeps no reference to the Deployment`);
      assert.equal(m?.deletionTimestamp, undefined);
      assert.equal(m?.finalizers, undefined);
    }
    assert.deepEqual(await tools.names('pods', 'orph'), t.pods);
    for (const p of t.pods)
      assert.deepEqual(
        (await tools.meta('pod', p))?.ownerReferences?.map((r) => r.kind),
        ['ReplicaSet'],
        p,
      );
  });

  it("SIGKILL of the namespace controller's holder: the Lease moves within 20 s and a namespace deleted at once is removed", async (t) => {
    const lease = async (name: string): Promise<string> =>
      kubectlRetrying(['get', 'lease', '-n', 'kube-system', name, '-o', 'jsonpath={.spec.holderIdentity}'], kc);

    // replica identity -> index, from the replicas' identity Leases (named after host:port)
    const byIdentity = new Map<string, number>();
    const host = os.hostname();
    for (const [i, r] of cluster.replicas.entries()) {
      const name = apiserverIdentityLeaseName(host, servingEndpoint('127.0.0.1', Number(new URL(r.url).port)));
      const id = await waitFor(
        `identity lease ${name}`,
        async () =>
          (await kubectl(['get', 'lease', '-n', 'kube-system', name, '-o', 'jsonpath={.spec.holderIdentity}'], { kubeconfig: kc }))
            .stdout || undefined,
      );
      byIdentity.set(id, i);
    }
    assert.equal(byIdentity.size, 3, 'three distinct replica identities');

    const holders = await waitFor('both controllers to have a leader among the replicas', async () => {
      const h = { ns: await lease(namespaceLease), gc: await lease(gcLease) };
      return byIdentity.has(h.ns) && byIdentity.has(h.gc) ? h : undefined;
    });
    const victim = byIdentity.get(holders.ns)!;
    const gcWasOnVictim = byIdentity.get(holders.gc) === victim;

    const doomed = uniqueName('doomed');
    await kubectlOk(['create', 'namespace', doomed], { kubeconfig: kc });
    await kubectlOk(['create', 'configmap', 'content', '-n', doomed, '--from-literal=k=v'], { kubeconfig: kc });

    await cluster.replicas[victim]!.kill();
    killed = victim;
    const killedAt = Date.now();
    // only the namespace controller can finish this deletion
    await kubectlRetrying(['delete', 'namespace', doomed, '--wait=false'], kc);

    const within20s = () => Math.max(0, 20_000 - (Date.now() - killedAt));
    const nsNext = await waitFor(
      "another replica to hold the namespace controller's Lease",
      async () => {
        const i = byIdentity.get(await lease(namespaceLease));
        return i !== undefined && i !== victim ? i : undefined;
      },
      within20s(),
      250,
    );
    assert.notEqual(nsNext, victim);
    const gcNext = await waitFor(
      "the garbage collector's Lease to be held by a living replica",
      async () => {
        const i = byIdentity.get(await lease(gcLease));
        return i !== undefined && i !== victim ? i : undefined;
      },
      within20s(),
      250,
    );
    t.diagnostic(
      `namespace controller: kapi-${victim} -> kapi-${nsNext}; garbage collector: kapi-${byIdentity.get(holders.gc)} -> kapi-${gcNext}; ${Date.now() - killedAt} ms after the kill`,
    );
    if (!gcWasOnVictim) assert.equal(gcNext, byIdentity.get(holders.gc), "the collector's Lease stays where it was");

    await waitFor(
      `namespace ${doomed} to be removed`,
      async () => (await kubectl(['get', 'namespace', doomed], { kubeconfig: kc })).stderr.includes('NotFound'),
      30_000,
      250,
    );

    // the collector, wherever it now runs, still collects
    await tools.tree('after');
    await tools.k(['delete', 'deployment', 'after']);
    await waitFor(
      'the dependents of after to be collected',
      async () => (await tools.names('pods', 'after')).length + (await tools.names('replicasets', 'after')).length === 0,
      30_000,
      250,
    );

    await cluster.replicas[victim]!.restart();
    killed = undefined;
    const c = cluster.replicaClient(victim);
    try {
      assert.equal((await c.get('/readyz')).status, 200);
    } finally {
      c.close();
    }
  });
});
