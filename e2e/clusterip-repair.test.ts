// The ClusterIP repair loop of a kapi process, on an etcd this test edits with etcdctl while
// kapi is stopped: a Service's IPAddress object deleted from etcd is created again, and an
// IPAddress (managed by kube's allocator, older than the grace period) whose Service does not
// exist is released, when kapi starts. kubectl 1.33 sees the result: the address shows the
// Service as its parent again and stays taken; the leaked one is gone and a new Service may
// ask for it.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { etcdctl, kubectl, kubectlOk, startEtcd, startKapi, uniqueName, type EtcdProcess, type KapiProcess } from './harness.js';

const IPADDRESSES = '/registry/networking.k8s.io/ipaddresses';

describe('ClusterIP repair loop', () => {
  let dir: string;
  let etcd: EtcdProcess;
  let kapi: KapiProcess;
  let serviceIP: string;
  let leakedIP: string;
  const ns = uniqueName('ip-repair');
  const admin = () => ({ kubeconfig: kapi.kubeconfig });
  const start = () => startKapi({ etcdServers: etcd.endpoint, dataDir: path.join(dir, 'kapi') });

  async function etcdOk(args: string[]): Promise<string> {
    const r = await etcdctl(etcd.endpoint, args);
    assert.equal(r.code, 0, `etcdctl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  }

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-e2e-ip-repair-'));
    etcd = await startEtcd();
    kapi = await start();
    await kubectlOk(['create', 'namespace', ns], admin());
    await kubectlOk(['create', 'service', 'clusterip', 'web', '-n', ns, '--tcp=80:8080'], admin());
    serviceIP = await kubectlOk(['get', 'service', 'web', '-n', ns, '-o', 'jsonpath={.spec.clusterIP}'], admin());
    leakedIP = ['10.96.200.200', '10.96.200.201'].find((ip) => ip !== serviceIP)!;

    // an allocation as a replica that died between allocating and writing its Service leaves it
    const stored = JSON.parse(await etcdOk(['get', `${IPADDRESSES}/${serviceIP}`, '--print-value-only'])) as {
      metadata: Record<string, unknown>;
      spec: { parentRef: Record<string, string> };
    };
    const leaked = {
      ...stored,
      metadata: {
        ...stored.metadata,
        name: leakedIP,
        uid: '6b1c1f0e-0000-4000-8000-00000000beef',
        creationTimestamp: '2020-01-01T00:00:00Z',
      },
      spec: { parentRef: { ...stored.spec.parentRef, name: 'never-written' } },
    };
    await kapi.stop();
    await etcdOk(['del', `${IPADDRESSES}/${serviceIP}`]);
    await etcdOk(['put', `${IPADDRESSES}/${leakedIP}`, JSON.stringify(leaked)]);
    kapi = await start();
  });
  after(async () => {
    await kapi?.stop();
    await etcd?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("creates the Service's IPAddress again", async () => {
    const ip = JSON.parse(await kubectlOk(['get', 'ipaddress', serviceIP, '-o', 'json'], admin())) as {
      metadata: { labels: Record<string, string> };
      spec: { parentRef: Record<string, string> };
    };
    assert.deepEqual(ip.spec.parentRef, { resource: 'services', namespace: ns, name: 'web' });
    assert.equal(ip.metadata.labels['ipaddress.kubernetes.io/managed-by'], 'ipallocator.k8s.io');
    // and it is taken again: another Service cannot have it
    const clash = await kubectl(
      ['create', 'service', 'clusterip', 'clash', '-n', ns, '--tcp=80:8080', `--clusterip=${serviceIP}`],
      admin(),
    );
    assert.notEqual(clash.code, 0);
    assert.match(
      clash.stderr,
      new RegExp(
        `spec\\.clusterIPs: Invalid value: \\[\\]string\\{"${serviceIP.replace(/\./g, '\\.')}"\\}: failed to allocate IP ${serviceIP.replace(/\./g, '\\.')}: provided IP is already allocated`,
      ),
    );
  });

  it('releases an address whose Service does not exist', async () => {
    const gone = await kubectl(['get', 'ipaddress', leakedIP], admin());
    assert.notEqual(gone.code, 0);
    assert.match(gone.stderr, new RegExp(`ipaddresses.networking.k8s.io "${leakedIP.replace(/\./g, '\\.')}" not found`));
    await kubectlOk(['create', 'service', 'clusterip', 'reuses', '-n', ns, '--tcp=80:8080', `--clusterip=${leakedIP}`], admin());
    assert.equal(await kubectlOk(['get', 'service', 'reuses', '-n', ns, '-o', 'jsonpath={.spec.clusterIP}'], admin()), leakedIP);
  });
});
