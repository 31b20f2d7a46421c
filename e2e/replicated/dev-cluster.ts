// A stand-in for deploy/local-cluster.ts while it is being written: the same topology (3 etcd
// members, N kapi replicas sharing one cert dir, haproxy in TCP mode in front) and the same
// API, on loopback ports, every process stopped by its PID. cluster.ts uses the real launcher
// as soon as dist/deploy/local-cluster.js exists.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePort, waitForPort } from '../../storage/testing/etcd-server.js';
import { KubeHttpClient, loadKubeconfig } from '../http-client.js';
import { repoRoot, sleep } from '../harness.js';
import type { ClusterProcess, LocalCluster, StartClusterOptions } from './cluster.js';

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

interface Spec {
  name: string;
  url: string;
  cmd: string;
  args: () => string[];
  /** resolves once the process serves */
  ready: (proc: ManagedProcess) => Promise<void>;
}

class ManagedProcess implements ClusterProcess {
  private child: ChildProcess | undefined;
  private log = '';
  constructor(private readonly spec: Spec) {}
  get name(): string {
    return this.spec.name;
  }
  get url(): string {
    return this.spec.url;
  }
  get pid(): number {
    return this.child?.pid ?? 0;
  }
  logs(): string {
    return this.log;
  }
  running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }
  exitedNow(): boolean {
    return !this.running();
  }
  async start(): Promise<void> {
    this.log = '';
    const child = spawn(this.spec.cmd, this.spec.args(), { stdio: ['ignore', 'pipe', 'pipe'], cwd: repoRoot });
    const add = (b: Buffer) => {
      this.log = (this.log + b.toString()).slice(-200_000);
    };
    child.stdout?.on('data', add);
    child.stderr?.on('data', add);
    this.child = child;
    try {
      await this.spec.ready(this);
    } catch (err) {
      await this.kill();
      throw new Error(`${this.spec.name} did not start: ${(err as Error).message}\n${this.log.slice(-4000)}`);
    }
  }
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || !this.running()) return;
    process.kill(child.pid!, 'SIGTERM');
    const done = await Promise.race([exited(child).then(() => true), sleep(30_000).then(() => false)]);
    if (!done) {
      process.kill(child.pid!, 'SIGKILL');
      await exited(child);
    }
  }
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.running()) return;
    process.kill(child.pid!, 'SIGKILL');
    await exited(child);
  }
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }
}

async function waitUntil(what: string, check: () => Promise<boolean>, proc: ManagedProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exitedNow()) throw new Error(`${proc.name} exited`);
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(150);
  }
}

export async function startDevCluster(opts: StartClusterOptions): Promise<LocalCluster> {
  const dir = opts.dir;
  const replicaCount = opts.replicas ?? 3;
  const memberCount = opts.etcdMembers ?? 3;
  mkdirSync(dir, { recursive: true });

  // --- etcd members -----------------------------------------------------------------------
  const members: { name: string; client: number; peer: number }[] = [];
  for (let i = 0; i < memberCount; i++) members.push({ name: `etcd${i}`, client: await freePort(), peer: await freePort() });
  const initialCluster = members.map((m) => `${m.name}=http://127.0.0.1:${m.peer}`).join(',');
  const etcd = members.map(
    (m) =>
      new ManagedProcess({
        name: m.name,
        url: `http://127.0.0.1:${m.client}`,
        cmd: 'etcd',
        args: () => [
          '--name', m.name,
          '--data-dir', path.join(dir, m.name),
          '--listen-client-urls', `http://127.0.0.1:${m.client}`,
          '--advertise-client-urls', `http://127.0.0.1:${m.client}`,
          '--listen-peer-urls', `http://127.0.0.1:${m.peer}`,
          '--initial-advertise-peer-urls', `http://127.0.0.1:${m.peer}`,
          '--initial-cluster', initialCluster,
          '--initial-cluster-state', 'new',
          '--initial-cluster-token', path.basename(dir),
          '--log-level', 'error',
          '--logger', 'zap',
        ],
        ready: (p) => waitForPort('127.0.0.1', m.client, 30_000).then(() => void p),
      }),
  );
  await Promise.all(etcd.map((p) => p.start()));
  const etcdServers = etcd.map((p) => p.url).join(',');

  // --- kapi replicas (one shared cert dir: one CA, one admin certificate) ------------------
  const certDir = path.join(dir, 'pki');
  const ports: number[] = [];
  for (let i = 0; i < replicaCount; i++) ports.push(await freePort());
  const replicaKubeconfig = (i: number) => path.join(dir, `kapi${i}`, 'admin.kubeconfig');
  const replicas: ManagedProcess[] = ports.map(
    (port, i) =>
      new ManagedProcess({
        name: `kapi${i}`,
        url: `https://127.0.0.1:${port}`,
        cmd: process.execPath,
        args: () => [
          path.join(repoRoot, 'bin', 'kapi'),
          '--data-dir', path.join(dir, `kapi${i}`),
          '--cert-dir', certDir,
          '--secure-port', String(port),
          '--bind-address', '127.0.0.1',
          '--etcd-servers', etcdServers,
          ...(opts.etcdCompactionInterval ? ['--etcd-compaction-interval', opts.etcdCompactionInterval] : []),
          ...(opts.kapiArgs ?? []),
        ],
        ready: (p) =>
          waitUntil(
            `${p.name} /readyz`,
            async () => {
              const kc = replicaKubeconfig(i);
              if (!existsSync(kc)) return false;
              const c = new KubeHttpClient({ ...loadKubeconfig(kc), server: p.url });
              try {
                return (await c.get('/readyz', { timeoutMs: 3000 })).status === 200;
              } finally {
                c.close();
              }
            },
            p,
            90_000,
          ),
      }),
  );
  // the first one makes the PKI; the others reuse it
  await replicas[0]!.start();
  await Promise.all(replicas.slice(1).map((p) => p.start()));

  // --- haproxy ----------------------------------------------------------------------------
  const lbPort = await freePort();
  const cfgPath = path.join(dir, 'haproxy.cfg');
  writeFileSync(
    cfgPath,
    [
      'global',
      '  maxconn 20000',
      'defaults',
      '  mode tcp',
      '  timeout connect 2s',
      '  timeout client 1h',
      '  timeout server 1h',
      '  timeout tunnel 1h',
      'frontend kapi',
      `  bind 127.0.0.1:${lbPort}`,
      '  default_backend replicas',
      'backend replicas',
      '  balance roundrobin',
      '  option httpchk',
      '  http-check send meth GET uri /readyz',
      '  http-check expect status 200',
      '  default-server check check-ssl verify none inter 1s fall 2 rise 1 on-marked-down shutdown-sessions',
      ...replicas.map((r, i) => `  server kapi${i} 127.0.0.1:${ports[i]}`),
      '',
    ].join('\n'),
  );
  const haproxy = new ManagedProcess({
    name: 'haproxy',
    url: `https://127.0.0.1:${lbPort}`,
    cmd: 'haproxy',
    args: () => ['-f', cfgPath, '-db'],
    ready: (p) => waitForPort('127.0.0.1', lbPort, 15_000).then(() => void p),
  });
  await haproxy.start();
  const kubeconfig = path.join(dir, 'admin.kubeconfig');
  const text = readFileSync(replicaKubeconfig(0), 'utf8').replace(/server: .*/, `server: ${haproxy.url}`);
  writeFileSync(kubeconfig, text);

  return {
    dir,
    lbURL: haproxy.url,
    kubeconfig,
    replicas,
    etcd,
    haproxy,
    replicaKubeconfig,
    async stop() {
      await haproxy.stop();
      await Promise.all(replicas.map((r) => r.stop()));
      await Promise.all(etcd.map((e) => e.stop()));
    },
  };
}
