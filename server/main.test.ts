// bin/kapi as a user runs it: a child process with its own data dir on a free port.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { freePort, startEtcd } from '../storage/testing/etcd-server.js';
import { processAlive as alive } from '../storage/testing/processes.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const kapiBin = path.join(repoRoot, 'bin', 'kapi');

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function gone(pid: number, timeoutMs = 20_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (alive(pid) && Date.now() < deadline) await sleep(50);
  return !alive(pid);
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** kubectl 1.33 beside the real file `kubectl` on PATH names, or undefined */
function kubectl133(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const p = path.join(dir, 'kubectl');
    if (dir && existsSync(p)) {
      const versioned = path.join(path.dirname(realpathSync(p)), 'kubectl.1.33');
      return existsSync(versioned) ? versioned : undefined;
    }
  }
  return undefined;
}

interface Kubeconfig {
  clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
  users: { user: { 'client-certificate-data': string; 'client-key-data': string } }[];
}

function getWithAdminCert(kubeconfigFile: string, urlPath: string): Promise<{ status: number; body: string }> {
  const kc = parseYaml(readFileSync(kubeconfigFile, 'utf8')) as Kubeconfig;
  const b = (s: string): Buffer => Buffer.from(s, 'base64');
  const server = new URL(kc.clusters[0]!.cluster.server);
  return new Promise((resolve, reject) => {
    const req = https.get(
      {
        host: server.hostname,
        port: server.port,
        path: urlPath,
        ca: b(kc.clusters[0]!.cluster['certificate-authority-data']),
        cert: b(kc.users[0]!.user['client-certificate-data']),
        key: b(kc.users[0]!.user['client-key-data']),
        agent: false,
        timeout: 5000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

function runKapi(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [kapiBin, ...args], { encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('--help prints the flags and exits 0', () => {
  const r = runKapi(['--help']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /--secure-port int\s+.*\(default 6443\)/);
  assert.match(r.stdout, /--etcd-servers strings/);
  assert.match(r.stdout, /--data-dir string/);
});

test('an unknown flag exits 1 naming it', () => {
  const r = runKapi(['--no-such-flag=1']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /unknown flag: --no-such-flag/);
  assert.equal(r.stdout, '');
});

test('a bad value exits 1 naming the flag', () => {
  const r = runKapi(['--etcd-compaction-interval=5']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /invalid argument "5" for "--etcd-compaction-interval" flag/);
});

test('kapi starts with embedded etcd, serves /readyz and kubectl, and stops everything by SIGTERM', async (t) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kapi-main-test-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  let logs = '';
  const start = (): ChildProcess => {
    const child = spawn(process.execPath, [kapiBin, '--data-dir', dataDir, '--secure-port', String(port), '--bind-address', '127.0.0.1'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (b: Buffer) => (logs = (logs + b.toString()).slice(-20_000)));
    child.stderr!.on('data', (b: Buffer) => (logs = (logs + b.toString()).slice(-20_000)));
    return child;
  };
  const pids: number[] = [];
  t.after(() => {
    for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  });

  const kubeconfig = path.join(dataDir, 'admin.kubeconfig');
  const waitReady = async (child: ChildProcess): Promise<void> => {
    const deadline = Date.now() + 90_000;
    let last = '';
    for (;;) {
      assert.equal(child.exitCode, null, `kapi exited early:\n${logs}`);
      if (Date.now() > deadline) assert.fail(`kapi not ready (last: ${last}):\n${logs}`);
      if (existsSync(kubeconfig)) {
        try {
          const r = await getWithAdminCert(kubeconfig, '/readyz');
          if (r.status === 200) return;
          last = `${r.status} ${r.body}`;
        } catch (err) {
          last = (err as Error).message;
        }
      }
      await sleep(200);
    }
  };

  const kapi = start();
  pids.push(kapi.pid!);
  await waitReady(kapi);
  const etcdPid = Number.parseInt(readFileSync(path.join(dataDir, 'etcd.pid'), 'utf8'), 10);
  pids.push(etcdPid);
  assert.ok(alive(etcdPid));

  const readyz = await getWithAdminCert(kubeconfig, '/readyz?verbose');
  assert.equal(readyz.status, 200);
  assert.match(readyz.body, /readyz check passed/);

  const kubectl = kubectl133();
  if (kubectl) {
    const want = ['default', 'kube-node-lease', 'kube-public', 'kube-system'];
    let names: string[] = [];
    const deadline = Date.now() + 30_000;
    // the bootstrap controller creates the namespaces just after start-up
    while (Date.now() < deadline) {
      const r = spawnSync(
        kubectl,
        ['--kubeconfig', kubeconfig, '--cache-dir', path.join(dataDir, 'kubectl-cache'), 'get', 'ns', '-o', 'name'],
        {
          encoding: 'utf8',
          timeout: 30_000,
        },
      );
      names = r.stdout
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => l.replace(/^namespace\//, ''))
        .sort();
      if (want.every((n) => names.includes(n))) break;
      await sleep(500);
    }
    assert.deepEqual(
      names.filter((n) => want.includes(n)),
      want,
      `kubectl get ns listed ${names.join(',')}\n${logs}`,
    );
  } else {
    t.diagnostic('kubectl.1.33 not found beside kubectl on PATH: the kubectl check was skipped');
  }

  const caBefore = readFileSync(path.join(dataDir, 'pki', 'ca.crt'), 'utf8');
  process.kill(kapi.pid!, 'SIGTERM');
  assert.equal(await exited(kapi), 0, `kapi did not exit 0 on SIGTERM:\n${logs}`);
  assert.ok(await gone(etcdPid), 'the embedded etcd outlived kapi');
  assert.ok(!existsSync(path.join(dataDir, 'etcd.pid')));

  // a restart on the same data dir keeps the PKI and serves again
  const again = start();
  pids.push(again.pid!);
  await waitReady(again);
  assert.equal(readFileSync(path.join(dataDir, 'pki', 'ca.crt'), 'utf8'), caBefore);
  const etcdPid2 = Number.parseInt(readFileSync(path.join(dataDir, 'etcd.pid'), 'utf8'), 10);
  pids.push(etcdPid2);
  process.kill(again.pid!, 'SIGTERM');
  assert.equal(await exited(again), 0);
  assert.ok(await gone(etcdPid2), 'the embedded etcd outlived kapi after a restart');
});

test('during --shutdown-delay-duration /readyz fails while /livez and the API keep serving', async (t) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kapi-main-test-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  let logs = '';
  const kapi = spawn(
    process.execPath,
    [kapiBin, '--data-dir', dataDir, '--secure-port', String(port), '--bind-address', '127.0.0.1', '--shutdown-delay-duration=5s'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  kapi.stdout!.on('data', (b: Buffer) => (logs = (logs + b.toString()).slice(-20_000)));
  kapi.stderr!.on('data', (b: Buffer) => (logs = (logs + b.toString()).slice(-20_000)));
  t.after(() => {
    if (kapi.pid && alive(kapi.pid)) process.kill(kapi.pid, 'SIGKILL');
  });
  const kubeconfig = path.join(dataDir, 'admin.kubeconfig');
  const deadline = Date.now() + 90_000;
  for (;;) {
    assert.equal(kapi.exitCode, null, `kapi exited early:\n${logs}`);
    assert.ok(Date.now() < deadline, `kapi not ready:\n${logs}`);
    if (existsSync(kubeconfig)) {
      const r = await getWithAdminCert(kubeconfig, '/readyz').catch(() => undefined);
      if (r?.status === 200) break;
    }
    await sleep(200);
  }
  const etcdPid = Number.parseInt(readFileSync(path.join(dataDir, 'etcd.pid'), 'utf8'), 10);
  t.after(() => {
    if (alive(etcdPid)) process.kill(etcdPid, 'SIGKILL');
  });

  process.kill(kapi.pid!, 'SIGTERM');
  let readyz = await getWithAdminCert(kubeconfig, '/readyz?verbose');
  while (readyz.status === 200) readyz = await getWithAdminCert(kubeconfig, '/readyz?verbose');
  assert.equal(readyz.status, 500);
  assert.match(readyz.body, /\[-\]shutdown failed/);
  assert.equal((await getWithAdminCert(kubeconfig, '/livez')).status, 200);
  assert.equal((await getWithAdminCert(kubeconfig, '/api/v1/namespaces/default')).status, 200);
  assert.equal(await exited(kapi), 0, logs);
  assert.ok(await gone(etcdPid), 'the embedded etcd outlived kapi');
});

test('with --etcd-servers kapi uses that etcd, starts none of its own, and leaves it running', async (t) => {
  const etcd = await startEtcd();
  t.after(() => etcd.stop());
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kapi-main-test-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  let logs = '';
  const kapi = spawn(
    process.execPath,
    [
      kapiBin,
      '--data-dir',
      dataDir,
      '--secure-port',
      String(port),
      '--bind-address',
      '127.0.0.1',
      `--etcd-servers=${etcd.endpoint}`,
      '--etcd-prefix=/kapi-test',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  kapi.stdout!.on('data', (b: Buffer) => (logs = (logs + b.toString()).slice(-20_000)));
  kapi.stderr!.on('data', (b: Buffer) => (logs = (logs + b.toString()).slice(-20_000)));
  t.after(() => {
    if (kapi.pid && alive(kapi.pid)) process.kill(kapi.pid, 'SIGKILL');
  });
  const kubeconfig = path.join(dataDir, 'admin.kubeconfig');
  const deadline = Date.now() + 90_000;
  for (;;) {
    assert.equal(kapi.exitCode, null, `kapi exited early:\n${logs}`);
    assert.ok(Date.now() < deadline, `kapi not ready:\n${logs}`);
    if (existsSync(kubeconfig)) {
      const r = await getWithAdminCert(kubeconfig, '/readyz').catch(() => undefined);
      if (r?.status === 200) break;
    }
    await sleep(200);
  }
  assert.ok(!existsSync(path.join(dataDir, 'etcd')), 'an embedded etcd data dir was created');
  assert.ok(!existsSync(path.join(dataDir, 'etcd.pid')));
  // the objects live under --etcd-prefix in that etcd
  const res = await fetch(`${etcd.endpoint}/v3/kv/range`, {
    method: 'POST',
    body: JSON.stringify({ key: Buffer.from('/kapi-test/namespaces/default').toString('base64') }),
  });
  assert.equal(((await res.json()) as { count?: string }).count, '1');
  process.kill(kapi.pid!, 'SIGTERM');
  assert.equal(await exited(kapi), 0, logs);
  assert.ok(alive(etcd.pid), 'kapi stopped an etcd it does not own');
});
