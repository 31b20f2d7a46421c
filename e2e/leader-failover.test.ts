// Three kapi replicas on one etcd: leader-elected controllers live on kube-system Leases that
// kubectl shows. SIGKILL the replica holding the namespace controller's Lease: another replica
// holds it within 20 s (a 15 s lease plus slack) and namespace deletion still completes; a
// graceful stop releases the Lease so the next replica takes over without waiting it out. The
// replicas' logs (klog lines with their local time) show that no two ever led at once.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import { apiserverIdentityLeaseName, servingEndpoint } from '../server/controllers/identity.js';
import {
  createConfigMap,
  createNamespace,
  kubectl,
  kubectlOk,
  startEtcd,
  startKapi,
  uniqueName,
  waitFor,
  type EtcdProcess,
  type KapiProcess,
} from './harness.js';

const controllerLease = 'kapi-namespace-controller';

interface LeaseJson {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { holderIdentity?: string; leaseDurationSeconds?: number; leaseTransitions?: number; renewTime?: string };
}

describe('leader-elected controllers across three replicas', () => {
  let etcd: EtcdProcess;
  let replicas: KapiProcess[] = [];
  /** replica identity -> process, read from the replicas' identity Leases */
  const byIdentity = new Map<string, KapiProcess>();
  /** when each replica was killed (test clock), for the leadership intervals */
  const killedAt = new Map<KapiProcess, number>();

  before(async () => {
    etcd = await startEtcd();
    replicas = await Promise.all([0, 1, 2].map(() => startKapi({ etcdServers: etcd.endpoint })));
  });
  after(async () => {
    for (const r of replicas) await r.stop();
    await etcd?.stop();
  });

  /** replicas stopped gracefully */
  const stopped = new Set<KapiProcess>();
  const living = () => replicas.filter((r) => !killedAt.has(r) && !stopped.has(r));
  const kubeconfigOf = (r: KapiProcess) => ({ kubeconfig: r.kubeconfig });

  async function lease(via: KapiProcess, name: string): Promise<LeaseJson> {
    return JSON.parse(await kubectlOk(['get', 'lease', '-n', 'kube-system', name, '-o', 'json'], kubeconfigOf(via))) as LeaseJson;
  }

  async function holder(via: KapiProcess): Promise<string> {
    return (await lease(via, controllerLease)).spec.holderIdentity ?? '';
  }

  it("kubectl get leases -n kube-system shows the controllers' Leases and one identity Lease per replica", async () => {
    const identities = await waitFor('an identity lease per replica', async () => {
      const out = await kubectlOk(
        ['get', 'leases', '-n', 'kube-system', '-l', 'apiserver.kubernetes.io/identity=kube-apiserver', '-o', 'json'],
        kubeconfigOf(replicas[0]!),
      );
      const items = (JSON.parse(out) as { items: LeaseJson[] }).items;
      return items.length >= 3 ? items : undefined;
    });
    const host = os.hostname();
    for (const r of replicas) {
      const name = apiserverIdentityLeaseName(host, servingEndpoint('127.0.0.1', r.port));
      const l = identities.find((i) => i.metadata.name === name);
      assert.ok(l, `an identity lease ${name} for the replica on port ${r.port}`);
      assert.equal(l.metadata.labels?.['kubernetes.io/hostname'], host);
      assert.equal(l.spec.leaseDurationSeconds, 3600);
      byIdentity.set(l.spec.holderIdentity ?? '', r);
    }
    assert.equal(byIdentity.size, 3, 'three distinct replica identities');

    await waitFor('the controllers to elect leaders', async () => {
      const out = await kubectlOk(['get', 'leases', '-n', 'kube-system'], kubeconfigOf(replicas[0]!));
      return out.includes(controllerLease) && out.includes('kapi-garbage-collector') ? out : undefined;
    });
    assert.ok(byIdentity.has(await holder(replicas[0]!)), 'the namespace controller is held by one of the replicas');
  });

  it('SIGKILL of the holder: another replica holds the Lease within 20 s and namespace deletion completes', async () => {
    const ns = uniqueName('failover');
    await createNamespace(replicas[0]!.http, ns);
    await createConfigMap(replicas[0]!.http, ns, 'content', { k: 'v' });
    const before = await lease(replicas[0]!, controllerLease);
    const victim = byIdentity.get(before.spec.holderIdentity ?? '');
    assert.ok(victim, `holder ${before.spec.holderIdentity} is one of ours`);

    await victim.kill();
    killedAt.set(victim, Date.now());
    const survivor = living()[0]!;
    // deletion is asked for at once; only the namespace controller can finish it
    await kubectlOk(['delete', 'namespace', ns, '--wait=false'], kubeconfigOf(survivor));

    const next = await waitFor(
      'another replica to hold the namespace controller lease',
      async () => {
        const h = await holder(survivor);
        const r = byIdentity.get(h);
        return r && r !== victim ? r : undefined;
      },
      20_000 - (Date.now() - killedAt.get(victim)!),
      250,
    );
    assert.ok(living().includes(next));
    const after = await lease(survivor, controllerLease);
    assert.equal(after.spec.leaseTransitions, (before.spec.leaseTransitions ?? 0) + 1);

    await waitFor(
      'the namespace to be deleted',
      async () => (await kubectl(['get', 'namespace', ns], kubeconfigOf(survivor))).stderr.includes('NotFound'),
      60_000,
      500,
    );
  });

  it('a graceful stop releases the Lease: the last replica takes over without waiting out the lease', async () => {
    const current = byIdentity.get(await holder(living()[0]!));
    assert.ok(current && living().includes(current));
    await current.stop();
    stopped.add(current);
    const last = living()[0]!;
    // 10 s after the holder exited: without the release the Lease would still be valid
    // (15 s from its last renewal, at most 2 s before the exit)
    await waitFor('the remaining replica to hold the lease', async () => byIdentity.get(await holder(last)) === last, 10_000, 250);
  });

  it("the replicas' logs never show two leaders of a controller at once", () => {
    for (const leaseName of [controllerLease, 'kapi-garbage-collector']) {
      const intervals = replicas.flatMap((r) => leadership(r.logs(), `kube-system/${leaseName}`, killedAt.get(r)));
      intervals.sort((a, b) => a.start - b.start);
      assert.ok(intervals.length >= 1, `someone led ${leaseName}`);
      for (let i = 1; i < intervals.length; i++) {
        const prev = intervals[i - 1]!;
        assert.ok(
          prev.end !== undefined && prev.end <= intervals[i]!.start,
          `${leaseName}: overlapping terms ${JSON.stringify(intervals)}`,
        );
      }
    }
    assert.ok(
      leadership(replicas.map((r) => r.logs()).join('\n'), `kube-system/${controllerLease}`).length >= 3,
      'the namespace controller changed hands twice',
    );
  });
});

/** terms of leadership of `lease` in one replica's log (klog lines, local time); a term still
 *  open ends at `endedAt` (when the replica was killed), or stays open */
function leadership(logs: string, lease: string, endedAt?: number): Array<{ start: number; end?: number }> {
  const terms: Array<{ start: number; end?: number }> = [];
  const year = new Date().getFullYear();
  for (const line of logs.split('\n')) {
    if (!line.includes(`lease="${lease}"`)) continue;
    const m = /^[IWE](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})/.exec(line);
    if (!m) continue;
    const [mo, d, h, mi, s, us] = m.slice(1).map(Number) as [number, number, number, number, number, number];
    const at = new Date(year, mo - 1, d, h, mi, s, Math.floor(us / 1000)).getTime();
    if (line.includes('] became leader')) terms.push({ start: at });
    else if (line.includes('] stopped leading')) {
      const open = terms.at(-1);
      if (open && open.end === undefined) open.end = at;
    }
  }
  const open = terms.at(-1);
  if (open && open.end === undefined && endedAt !== undefined) open.end = endedAt;
  return terms;
}
