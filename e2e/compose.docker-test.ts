// deploy/docker-compose.yml on a real Docker engine, as a user runs it (`make test-docker`; not
// part of `make test`, whose runner takes *.test.js only). `up --build -d` under its own
// compose project, kubectl 1.33 through haproxy's port published on 127.0.0.1, then three
// faults each under a load loop that counts the requests that fail: a replica SIGKILLed, a
// replica stopped gracefully, the etcd leader SIGKILLed, each restarted. Data and PKI
// survive `down`/`up`; `down -v` leaves no container, network or volume behind.
//
// Environment: KAPI_COMPOSE_PROJECT (default kapi-e2e-<pid>), KAPI_PORT (default a free
// port), KAPI_BUILD_CA_CERTS (PEM text for the image build behind a TLS-intercepting proxy;
// by default the CAs of npm's CA file, NODE_EXTRA_CA_CERTS or `npm config get cafile`, that
// issue the npm registry's certificate chain and that Node does not already trust).

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { KubeHttpClient, freePort, kubectl, kubectlOk, repoRoot, sleep, uniqueName, waitFor, type HttpResponse } from './harness.js';

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs argv (no shell) in the repository root; kills it by its PID at the deadline. */
function run(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: repoRoot, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timeoutMs = opts.timeoutMs ?? 120_000;
    const timer = setTimeout(() => {
      stderr += `\n[killed after ${timeoutMs} ms]`;
      if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`${cmd}: ${err.message} (scripts/install-deps.sh --docker installs it)`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function runOk(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<string> {
  const r = await run(cmd, args, opts);
  assert.equal(r.code, 0, `${cmd} ${args.join(' ')} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

// ---- the CA for the image build ----------------------------------------------------------

function pemBlocks(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

/** The certificates of the chain that `host` presents, as verified against `ca`, root included. */
function peerChain(host: string, port: number, ca: string[]): Promise<X509Certificate[]> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host, port, servername: host, ca: [...tls.rootCertificates, ...ca] }, () => {
      const chain: X509Certificate[] = [];
      const seen = new Set<string>();
      // getPeerCertificate(true) links each certificate to its issuer, up to the trusted root
      let detailed: tls.DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
      while (detailed?.raw && !seen.has(detailed.fingerprint256)) {
        seen.add(detailed.fingerprint256);
        chain.push(new X509Certificate(detailed.raw));
        detailed = detailed.issuerCertificate;
      }
      socket.end();
      resolve(chain);
    });
    socket.setTimeout(15_000, () => socket.destroy(new Error(`${host}:${port}: no TLS handshake in time`)));
    socket.on('error', reject);
  });
}

async function buildCACerts(): Promise<string> {
  if (process.env.KAPI_BUILD_CA_CERTS !== undefined) return process.env.KAPI_BUILD_CA_CERTS;
  let file = process.env.NODE_EXTRA_CA_CERTS;
  if (!file) {
    const r = await run('npm', ['config', 'get', 'cafile']);
    const v = r.stdout.trim();
    if (r.code === 0 && v && v !== 'null' && v !== 'undefined') file = v;
  }
  if (!file || !existsSync(file)) return '';
  const registry = new URL((await runOk('npm', ['config', 'get', 'registry'])).trim() || 'https://registry.npmjs.org/');
  const bundle = pemBlocks(readFileSync(file, 'utf8'));
  const chain = await peerChain(registry.hostname, Number(registry.port || 443), bundle);
  const builtIn = new Set(tls.rootCertificates.map((p) => new X509Certificate(p).fingerprint256));
  const inChain = new Set(chain.map((c) => c.fingerprint256));
  // only what the image's Node would lack: CAs of the chain that come from the file
  return bundle
    .filter((p) => {
      const c = new X509Certificate(p);
      return inChain.has(c.fingerprint256) && !builtIn.has(c.fingerprint256);
    })
    .join('\n');
}

// ---- the compose project -----------------------------------------------------------------

const project = process.env.KAPI_COMPOSE_PROJECT ?? `kapi-e2e-${process.pid}`;
const composeFile = path.join('deploy', 'docker-compose.yml');
const label = `label=com.docker.compose.project=${project}`;
let composeEnv: NodeJS.ProcessEnv = process.env;

const compose = (args: string[], timeoutMs = 180_000): Promise<string> =>
  runOk('docker-compose', ['-p', project, '-f', composeFile, ...args], { env: composeEnv, timeoutMs });
const docker = (args: string[], timeoutMs = 120_000): Promise<string> => runOk('docker', args, { timeoutMs });
const lines = (s: string): string[] =>
  s
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

/** the ID of a service's container in this project, by compose's labels */
async function container(service: string): Promise<string> {
  const ids = lines(
    await docker([
      'ps',
      '-a',
      '-q',
      '--filter',
      label,
      '--filter',
      `label=com.docker.compose.service=${service}`,
      '--filter',
      'label=com.docker.compose.oneoff=False',
    ]),
  );
  assert.equal(ids.length, 1, `one container for ${service}: ${ids.join(' ')}`);
  return ids[0]!;
}

async function health(service: string): Promise<string> {
  return (
    await docker(['inspect', '-f', '{{.State.Status}}/{{if .State.Health}}{{.State.Health.Status}}{{end}}', await container(service)])
  ).trim();
}

const replicas = ['kapi1', 'kapi2', 'kapi3'];
const etcdMembers = ['etcd1', 'etcd2', 'etcd3'];

async function waitHealthy(services: string[], what: string): Promise<void> {
  await waitFor(
    what,
    async () => {
      for (const s of services) if ((await health(s)) !== 'running/healthy') return false;
      return true;
    },
    180_000,
    500,
  );
}

/** etcdctl in `service`'s container, against `members` (a stopped one would fail the command) */
async function etcdctl(service: string, members: string[], args: string[]): Promise<string> {
  return docker(['exec', await container(service), 'etcdctl', `--endpoints=${members.map((m) => `http://${m}:2379`).join(',')}`, ...args]);
}

/** the etcd member that leads, as `members` see it */
async function etcdLeader(members: string[]): Promise<string> {
  // member IDs are 64-bit: keep them as strings
  const text = (await etcdctl(members[0]!, members, ['endpoint', 'status', '-w', 'json'])).replace(/:\s*(\d{16,})/g, ':"$1"');
  const status = JSON.parse(text) as { Endpoint: string; Status: { header: { member_id: string }; leader: string } }[];
  const leader = status.find((s) => s.Status.header.member_id === s.Status.leader);
  assert.ok(leader, `an etcd leader: ${text}`);
  return new URL(leader.Endpoint).hostname;
}

// ---- the load loop -----------------------------------------------------------------------

interface LoadResult {
  requests: number;
  /** requests that got no successful answer, the retries below included */
  failed: number;
  retried: number;
  /** writes answered with an error that leaves their outcome open (below), then settled */
  unsettled: number;
  failures: string[];
}

/**
 * Workers that create, read and delete ConfigMaps through the load balancer until stopped.
 * A request is retried as client-go retries it: on a connection error before any answer, and
 * on 429 or a 5xx with Retry-After. A write answered 503 without Retry-After (etcd dropped
 * the connection while the write was in flight and the replica could not tell whether it was
 * applied) would be settled as its caller must settle it: sent again, where 409 AlreadyExists
 * for a create or 404 NotFound for a delete means the first one went through. Those are
 * counted in `unsettled`, and every fault asserts there are none: the replica reads such a
 * write back from the surviving members instead of answering 503.
 */
function startLoad(client: KubeHttpClient, ns: string, tag: string, workers = 4): { stop(): Promise<LoadResult> } {
  const result: LoadResult = { requests: 0, failed: 0, retried: 0, unsettled: 0, failures: [] };
  let stopping = false;
  const base = `/api/v1/namespaces/${ns}/configmaps`;

  /** `doneOnRepeat`: for a write, the status a repeat gets when the first one was applied */
  const attempt = async (what: string, send: () => Promise<HttpResponse>, doneOnRepeat?: number): Promise<void> => {
    result.requests++;
    let last = '';
    let repeated = false;
    for (let i = 0; i < 10; i++) {
      if (i > 0) result.retried++;
      let res: HttpResponse;
      try {
        res = await send();
      } catch (err) {
        last = (err as Error).message;
        if (/no answer in time/.test(last)) break;
        repeated = true;
        await sleep(200);
        continue;
      }
      if (res.status >= 200 && res.status < 300) return;
      if (repeated && doneOnRepeat !== undefined && res.status === doneOnRepeat) return;
      const retryAfter = Number(res.headers['retry-after'] ?? NaN);
      last = `${res.status} ${res.body.slice(0, 200).trim()}`;
      if (res.status === 429 || (res.status >= 500 && Number.isFinite(retryAfter))) {
        await sleep(Math.min(Number.isFinite(retryAfter) ? retryAfter * 1000 : 1000, 1000));
        continue;
      }
      if (res.status === 503 && doneOnRepeat !== undefined) {
        result.unsettled++;
        result.failures.push(`${what} (settled by repeating it): ${last}`);
        repeated = true;
        await sleep(200);
        continue;
      }
      break;
    }
    result.failed++;
    if (result.failures.length < 20) result.failures.push(`${what}: ${last}`);
  };

  const worker = async (w: number): Promise<void> => {
    for (let seq = 0; !stopping; seq++) {
      const name = `${tag}-${w}-${seq}`;
      const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { seq: String(seq) } };
      await attempt(`create ${name}`, () => client.request('POST', base, { body, timeoutMs: 20_000 }), 409);
      await attempt(`get ${name}`, () => client.request('GET', `${base}/${name}`, { timeoutMs: 20_000 }));
      await attempt(`delete ${name}`, () => client.request('DELETE', `${base}/${name}`, { timeoutMs: 20_000 }), 404);
    }
  };
  const running = Array.from({ length: workers }, (_, w) => worker(w));
  return {
    async stop() {
      stopping = true;
      await Promise.all(running);
      return result;
    },
  };
}

// ---- the test ------------------------------------------------------------------------------

describe(`docker-compose deployment (project ${project})`, () => {
  let dir: string;
  let port: number;
  let kubeconfig: string;
  let kubeconfigText: string;
  let client: KubeHttpClient;
  let volumesBefore: Set<string>;
  let cleanedUp = false;
  const ns = uniqueName('compose');

  const fetchKubeconfig = async (): Promise<string> =>
    compose(['run', '--rm', '-T', '--no-deps', '--entrypoint', 'cat', 'kapi-certs', '/var/lib/kapi/pki/admin.kubeconfig']);

  const waitServing = async (): Promise<void> => {
    await waitHealthy(replicas, 'the three replicas to be healthy');
    await waitFor(
      'kubectl through the load balancer',
      async () => (await kubectl(['get', '--raw', '/readyz'], { kubeconfig, timeoutMs: 20_000 })).code === 0,
      120_000,
      1000,
    );
  };

  const down = async (volumes: boolean): Promise<void> => {
    await compose(['down', ...(volumes ? ['-v'] : []), '--remove-orphans', '-t', '30'], 300_000);
  };

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-compose-test-'));
    port = process.env.KAPI_PORT ? Number(process.env.KAPI_PORT) : await freePort();
    volumesBefore = new Set(lines(await docker(['volume', 'ls', '-q'])));
    composeEnv = { ...process.env, KAPI_PORT: String(port), KAPI_BUILD_CA_CERTS: await buildCACerts() };
    // a project left by an interrupted run under the same name starts from nothing
    await down(true);
    await compose(['up', '--build', '-d'], 1_200_000);
    kubeconfigText = await fetchKubeconfig();
    kubeconfig = path.join(dir, 'admin.kubeconfig');
    writeFileSync(kubeconfig, kubeconfigText);
    client = KubeHttpClient.fromKubeconfig(kubeconfig, { maxSockets: 8 });
    await waitServing();
  });

  after(async () => {
    if (!cleanedUp) await down(true).catch(() => undefined);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('publishes the load balancer on 127.0.0.1 only; the kubeconfig (run -T) has no CRs and names that port', async () => {
    assert.ok(!kubeconfigText.includes('\r'), 'no CRLF line endings');
    assert.match(kubeconfigText, new RegExp(`server: https://127\\.0\\.0\\.1:${port}\\n`));
    const ports = (await docker(['port', await container('haproxy')])).trim();
    assert.equal(ports, `6443/tcp -> 127.0.0.1:${port}`);
    for (const s of [...replicas, ...etcdMembers])
      assert.equal((await docker(['port', await container(s)])).trim(), '', `${s} publishes nothing`);
  });

  it('kubectl 1.33 through 127.0.0.1: namespaces, a namespace and a configmap', async () => {
    const names = await kubectlOk(['get', 'ns', '-o', 'name'], { kubeconfig });
    for (const n of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) assert.match(names, new RegExp(`^namespace/${n}$`, 'm'));
    await kubectlOk(['create', 'namespace', ns], { kubeconfig });
    await kubectlOk(['create', 'configmap', 'kept', '-n', ns, '--from-literal=k=v'], { kubeconfig });
    assert.equal(await kubectlOk(['get', 'configmap', 'kept', '-n', ns, '-o', 'jsonpath={.data.k}'], { kubeconfig }), 'v');
  });

  /** runs `fault` under load; `unsettledWrites`: whether writes may be answered 503 (above) */
  const underLoad = async (
    t: { diagnostic(m: string): void },
    tag: string,
    fault: () => Promise<void>,
    unsettledWrites = false,
  ): Promise<LoadResult> => {
    const load = startLoad(client, ns, tag);
    // some traffic before the fault, so that it lands on busy replicas and connections
    await sleep(2000);
    await fault();
    await sleep(3000);
    const r = await load.stop();
    t.diagnostic(
      `${tag}: ${r.requests} requests, ${r.failed} failed, ${r.retried} retries, ${r.unsettled} writes answered 503 and settled`,
    );
    for (const f of r.failures) t.diagnostic(`  ${f}`);
    assert.ok(r.requests > 0, 'the load ran');
    assert.equal(r.failed, 0, `failed requests:\n${r.failures.join('\n')}`);
    if (!unsettledWrites) assert.equal(r.unsettled, 0, `writes answered 503:\n${r.failures.join('\n')}`);
    return r;
  };

  it('a replica SIGKILLed and restarted under load: 0 failed requests', async (t) => {
    await underLoad(t, 'kill', async () => {
      const id = await container('kapi2');
      await docker(['kill', '-s', 'KILL', id]);
      assert.match(await health('kapi2'), /^exited\//);
      // long enough for haproxy's checks (inter 1s, fall 2) to take it out: the load meets
      // both the dead server still in the pool and the pool without it
      await sleep(5000);
      await docker(['start', id]);
      await waitHealthy(['kapi2'], 'kapi2 healthy again');
    });
  });

  it('a replica stopped gracefully and restarted under load: 0 failed requests', async (t) => {
    await underLoad(t, 'stop', async () => {
      const id = await container('kapi1');
      // SIGTERM: /readyz fails at once, haproxy takes it out during --shutdown-delay-duration
      await docker(['stop', '-t', '60', id]);
      assert.match(await health('kapi1'), /^exited\//);
      await docker(['start', id]);
      await waitHealthy(['kapi1'], 'kapi1 healthy again');
    });
  });

  it('the etcd leader SIGKILLed and restarted under load: 0 failed requests', async (t) => {
    const leader = await etcdLeader(etcdMembers);
    const others = etcdMembers.filter((m) => m !== leader);
    t.diagnostic(`etcd leader: ${leader}`);
    await underLoad(
      t,
      'etcd',
      async () => {
        const id = await container(leader);
        await docker(['kill', '-s', 'KILL', id]);
        await waitFor(
          'a new etcd leader',
          async () => {
            const l = await etcdLeader(others).catch(() => undefined);
            return l !== undefined && l !== leader;
          },
          60_000,
          500,
        );
        await sleep(3000);
        await docker(['start', id]);
        await waitFor(
          `${leader} healthy again`,
          async () => (await run('docker', ['exec', id, 'etcdctl', 'endpoint', 'health'])).code === 0,
          60_000,
          500,
        );
      },
      false,
    );
    // etcdctl 3.4 reports health on stderr
    const health = await run('docker', [
      'exec',
      await container(others[0]!),
      'etcdctl',
      `--endpoints=${etcdMembers.map((m) => `http://${m}:2379`).join(',')}`,
      'endpoint',
      'health',
    ]);
    assert.equal(health.code, 0, health.stderr);
    for (const m of etcdMembers) assert.match(health.stdout + health.stderr, new RegExp(`http://${m}:2379 is healthy`));
  });

  it('data and PKI survive down and up', async () => {
    await kubectlOk(['create', 'configmap', 'across', '-n', ns, '--from-literal=k=before-down'], { kubeconfig });
    await down(false);
    assert.deepEqual(lines(await docker(['ps', '-a', '-q', '--filter', label])), [], 'no containers after down');
    const kept = lines(await docker(['volume', 'ls', '-q', '--filter', label])).sort();
    assert.deepEqual(
      kept,
      ['etcd1', 'etcd2', 'etcd3', 'pki'].map((v) => `${project}_${v}`),
    );
    await compose(['up', '-d'], 600_000);
    // the same PKI: the kubeconfig from before down still authenticates and trusts the server
    assert.equal(await fetchKubeconfig(), kubeconfigText);
    await waitServing();
    assert.equal(await kubectlOk(['get', 'configmap', 'across', '-n', ns, '-o', 'jsonpath={.data.k}'], { kubeconfig }), 'before-down');
    assert.equal(await kubectlOk(['get', 'configmap', 'kept', '-n', ns, '-o', 'jsonpath={.data.k}'], { kubeconfig }), 'v');
  });

  it('down -v leaves no container, network or volume of the project, and no anonymous volume', async () => {
    await down(true);
    cleanedUp = true;
    assert.deepEqual(lines(await docker(['ps', '-a', '-q', '--filter', label])), [], 'containers');
    assert.deepEqual(lines(await docker(['network', 'ls', '-q', '--filter', label])), [], 'networks');
    assert.deepEqual(lines(await docker(['volume', 'ls', '-q', '--filter', label])), [], 'volumes');
    const leaked = lines(await docker(['volume', 'ls', '-q'])).filter((v) => !volumesBefore.has(v));
    assert.deepEqual(leaked, [], 'volumes created during the run and still there');
  });
});
