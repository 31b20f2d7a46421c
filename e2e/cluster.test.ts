// The replicated control plane as users run it: 3 etcd members, 3 kapi replicas and haproxy
// (TCP) in front (deploy/local-cluster.ts), kubectl 1.33 through the load balancer. A change
// made through one replica reaches a watch held through the load balancer; killing a
// replica does not interrupt the load balancer's service, and a restarted replica rejoins.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startLocalCluster, type LocalCluster } from '../deploy/local-cluster.js';
import { backendServers } from '../deploy/lib/haproxy-stats.js';
import { pidAlive } from '../deploy/lib/process.js';
import { kubectl, kubectlOk, kubectlSpawn, loadKubeconfig, repoRoot, uniqueName, waitFor } from './harness.js';

const podYaml = (name: string, ns: string): string => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${ns}
spec:
  containers:
  - name: c
    image: busybox:1.36
`;

describe('local cluster: 3 etcd + 3 kapi + haproxy', () => {
  let cluster: LocalCluster;
  let dir: string;
  const ns = uniqueName('cluster');
  const lb = (): { kubeconfig: string } => ({ kubeconfig: cluster.kubeconfig });

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-cluster-test-'));
    cluster = await startLocalCluster({ dir });
  });
  after(async () => {
    await cluster?.stop();
    if (cluster) {
      for (const p of [...cluster.replicas, ...cluster.etcd, cluster.haproxy]) assert.equal(p.running(), false, `${p.name} stopped`);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('lays out the cluster: kubeconfig for the load balancer, one per replica, the replica list', () => {
    assert.equal(cluster.replicas.length, 3);
    assert.equal(cluster.etcd.length, 3);
    assert.equal(cluster.kubeconfig, path.join(dir, 'admin.kubeconfig'));
    assert.equal(loadKubeconfig(cluster.kubeconfig).server, cluster.lbURL);
    assert.match(cluster.lbURL, /^https:\/\/127\.0\.0\.1:\d+$/);
    const listed = readFileSync(path.join(dir, 'replicas'), 'utf8').trim().split('\n');
    assert.deepEqual(
      listed,
      cluster.replicas.map((r) => r.url),
    );
    cluster.replicas.forEach((r, i) => {
      assert.match(r.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(loadKubeconfig(cluster.replicaKubeconfig(i)).server, r.url);
      assert.ok(r.running() && r.pid > 0, `${r.name} runs`);
    });
    for (const e of cluster.etcd) assert.match(e.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(cluster.haproxy.running());
  });

  it('kubectl through the load balancer: get ns, create/get/delete a configmap', async () => {
    const namespaces = await kubectlOk(['get', 'ns', '-o', 'name'], lb());
    for (const n of ['default', 'kube-system', 'kube-public', 'kube-node-lease'])
      assert.match(namespaces, new RegExp(`^namespace/${n}$`, 'm'));
    await kubectlOk(['create', 'namespace', ns], lb());
    await kubectlOk(['create', 'configmap', 'cm1', '-n', ns, '--from-literal=k=v'], lb());
    assert.equal(await kubectlOk(['get', 'configmap', 'cm1', '-n', ns, '-o', 'jsonpath={.data.k}'], lb()), 'v');
    // the load balancer spreads kubectl's connections: every replica has served some
    for (let i = 0; i < 6; i++) await kubectlOk(['get', 'configmap', 'cm1', '-n', ns, '-o', 'name'], lb());
    const servers = await backendServers(dir);
    assert.deepEqual(servers.map((s) => s.name).sort(), ['kapi-0', 'kapi-1', 'kapi-2']);
    for (const s of servers) {
      // `UP 1/2`: still up and in the pool, one health check (1 s apart) late on a loaded machine
      assert.match(s.status, /^UP(?: \d+\/\d+)?$/, `${s.name}: ${s.status}`);
      assert.ok(s.sessionsTotal > 0, `${s.name} got connections`);
    }
    await kubectlOk(['delete', 'configmap', 'cm1', '-n', ns], lb());
    const gone = await kubectl(['get', 'configmap', 'cm1', '-n', ns], lb());
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /configmaps "cm1" not found/);
  });

  it('kubectl get pods -w through the load balancer sees changes made through each replica', async () => {
    const w = kubectlSpawn(['get', 'pods', '-n', ns, '-w', '--output-watch-events', '-L', 'step'], lb());
    try {
      await kubectlOk(['create', '-f', '-'], { kubeconfig: cluster.replicaKubeconfig(2), input: podYaml('p1', ns) });
      await w.waitForOutput(/^ADDED\s+p1\s+0\/1\s+Pending/m);
      await kubectlOk(['label', 'pod', 'p1', '-n', ns, 'step=one'], { kubeconfig: cluster.replicaKubeconfig(0) });
      await w.waitForOutput(/^MODIFIED\s+p1\s.*\sone$/m);
      await kubectlOk(['label', 'pod', 'p1', '-n', ns, 'step=two', '--overwrite'], { kubeconfig: cluster.replicaKubeconfig(1) });
      await w.waitForOutput(/^MODIFIED\s+p1\s.*\stwo$/m);
      const events = w
        .stdout()
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => l.split(/\s+/).slice(0, 2).join(' '));
      assert.deepEqual(events, ['ADDED p1', 'MODIFIED p1', 'MODIFIED p1']);
    } finally {
      await w.stop();
    }
  });

  it('killing a replica keeps the load balancer serving; the restarted replica rejoins', async () => {
    const victim = cluster.replicas[1]!;
    const oldPid = victim.pid;
    await victim.kill();
    assert.equal(victim.running(), false);
    // right away, before haproxy's checks have noticed: a refused connection is retried on
    // another replica
    for (let i = 0; i < 6; i++) {
      await kubectlOk(['create', 'configmap', `during-${i}`, '-n', ns], lb());
      assert.match(await kubectlOk(['get', 'configmap', `during-${i}`, '-n', ns, '-o', 'name'], lb()), /configmap\/during-/);
    }
    await waitFor(
      'haproxy to take kapi-1 out',
      async () => (await backendServers(dir)).find((s) => s.name === 'kapi-1')?.status.startsWith('DOWN'),
      15_000,
      200,
    );

    await victim.restart();
    assert.ok(victim.running());
    assert.notEqual(victim.pid, oldPid);
    // the restarted replica serves what was written while it was down
    const direct = await kubectlOk(['get', 'configmaps', '-n', ns, '-o', 'name'], { kubeconfig: cluster.replicaKubeconfig(1) });
    for (let i = 0; i < 6; i++) assert.match(direct, new RegExp(`^configmap/during-${i}$`, 'm'));
    await waitFor(
      'haproxy to put kapi-1 back',
      async () => (await backendServers(dir)).find((s) => s.name === 'kapi-1')?.status === 'UP',
      15_000,
      200,
    );
    const before = (await backendServers(dir)).find((s) => s.name === 'kapi-1')!.sessionsTotal;
    for (let i = 0; i < 6; i++) await kubectlOk(['get', 'ns', ns, '-o', 'name'], lb());
    const afterRejoin = (await backendServers(dir)).find((s) => s.name === 'kapi-1')!.sessionsTotal;
    assert.ok(afterRejoin > before, `kapi-1 gets connections again (${before} -> ${afterRejoin})`);
  });
});

describe('cluster CLI (make cluster / make cluster-down)', () => {
  let dir: string;
  const cli = (args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(repoRoot, 'dist', 'deploy', 'cluster-cli.js'), ...args, '--dir', dir], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  const ok = async (args: string[]): Promise<string> => {
    const r = await cli(args);
    assert.equal(r.code, 0, `cluster-cli ${args.join(' ')}: ${r.stdout}\n${r.stderr}`);
    return r.stdout;
  };
  // alive and not a zombie (a detached process whose parent, the CLI, has exited is reaped by
  // whatever adopted it, which may take its time)
  const alive = pidAlive;
  const recordedPids = (): number[] =>
    readdirSync(path.join(dir, 'pids')).map((f) => Number(readFileSync(path.join(dir, 'pids', f), 'utf8').trim()));

  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-cluster-cli-test-'));
  });
  after(async () => {
    if (existsSync(path.join(dir, 'cluster.json'))) await cli(['down']);
    rmSync(dir, { recursive: true, force: true });
  });

  it('up returns with the processes running detached; kill/restart by PID; down stops every one', async () => {
    const up = await ok(['up', '--replicas', '1', '--etcd-members', '1']);
    assert.match(up, /cluster up in .*: 1 etcd members, 1 kapi replicas, haproxy/);
    const pids = recordedPids();
    assert.equal(pids.length, 3);
    // the CLI has exited; its processes have not
    for (const pid of pids) assert.ok(alive(pid), `pid ${pid} alive`);
    const kubeconfig = path.join(dir, 'admin.kubeconfig');
    assert.match(await kubectlOk(['get', 'ns', 'default', '-o', 'name'], { kubeconfig }), /namespace\/default/);

    assert.match(await ok(['kill-replica', '0']), /kapi-0 \(pid \d+\) killed/);
    assert.match(await ok(['status']), /^kapi-0\s+-\s+stopped\s+https:/m);
    assert.match(await ok(['restart-replica', '0']), /kapi-0 running again/);
    assert.match(await ok(['status']), /^kapi-0\s+\d+\s+running\s+https:/m);
    assert.match(await kubectlOk(['get', 'ns', 'default', '-o', 'name'], { kubeconfig }), /namespace\/default/);

    const bad = await cli(['kill-etcd', '5']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /no etcd member 5/);

    const running = recordedPids();
    assert.match(await ok(['down']), /stopped 3 processes/);
    for (const pid of running) assert.ok(!alive(pid), `pid ${pid} gone`);
    assert.match(await ok(['status']), /^etcd-0\s+-\s+stopped/m);
  });
});
