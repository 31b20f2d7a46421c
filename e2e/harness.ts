// End-to-end harness: real kapi processes (node bin/kapi), real kubectl binaries, real etcd.
// Every process listens on 127.0.0.1 on a free port and is stopped by its PID. Test files
// run concurrently: each gets its own ports, data dirs and kubectl cache dir.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, PortTaken, retryWhilePortTaken } from '../storage/testing/etcd-server.js';
import { KubeHttpClient, loadKubeconfig } from './http-client.js';
import { processAlive as alive } from '../storage/testing/processes.js';
import { kapiNodeFlags } from '../server/cli/node-flags.js';

export { startEtcd, freePort, type EtcdProcess } from '../storage/testing/etcd-server.js';
export { KubeHttpClient, WatchStream, jsonOf, loadKubeconfig, type HttpResponse, type WatchEvent } from './http-client.js';

/** the repository root, found from this file's place in dist/e2e/ (or e2e/) */
export const repoRoot: string = (() => {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'bin'))) return dir;
    dir = path.dirname(dir);
  }
  throw new Error('cannot find the repository root from ' + fileURLToPath(import.meta.url));
})();

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a value other than undefined/false, or throws at the deadline. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${lastErr ? `: ${(lastErr as Error).message}` : ''}`);
    }
    await sleep(intervalMs);
  }
}

// ---- processes -------------------------------------------------------------------------

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** PIDs of every process below `pid` (children, grandchildren, ...), read from /proc. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // the process ended while we looked
    }
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length) {
    const p = queue.shift()!;
    for (const c of children.get(p) ?? []) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}

async function waitGone(pids: number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let left = pids.filter(alive);
  while (left.length && Date.now() < deadline) {
    await sleep(50);
    left = left.filter(alive);
  }
  return left;
}

class LogBuffer {
  private text = '';
  constructor(private readonly limit = 256 * 1024) {}
  add(chunk: Buffer | string): void {
    this.text += chunk.toString();
    if (this.text.length > this.limit) this.text = this.text.slice(-this.limit);
  }
  toString(): string {
    return this.text;
  }
}

// ---- kapi ------------------------------------------------------------------------------

export interface StartKapiOptions {
  /** reuse a data dir (restart tests); default: a new temporary dir, removed by stop() */
  dataDir?: string;
  /** e.g. an EtcdProcess endpoint; default: kapi's embedded etcd */
  etcdServers?: string;
  /** default: a free port */
  port?: number;
  /** e.g. '1h'; default: kapi's own default */
  etcdCompactionInterval?: string;
  extraArgs?: string[];
  /** node's own flags before kapi's script, e.g. ['--cpu-prof', '--cpu-prof-dir', dir] */
  nodeArgs?: string[];
  /** the bin/kapi to run; default: this checkout's, or KAPI_BIN */
  bin?: string;
  /** environment variables kapi gets beyond this process's own */
  env?: Record<string, string>;
  /** how long to wait for /readyz 200; default 90 s (embedded etcd start, cache sync) */
  readyTimeoutMs?: number;
}

export interface KapiProcess {
  url: string;
  port: number;
  pid: number;
  dataDir: string;
  /** <dataDir>/admin.kubeconfig, as kapi wrote it */
  kubeconfig: string;
  /** a raw HTTPS client with the admin certificate (closed by stop/kill) */
  http: KubeHttpClient;
  /** SIGTERM, wait for exit (and for kapi's embedded etcd to go); removes an own data dir */
  stop(): Promise<void>;
  /**
   * SIGKILL kapi and every process below it (its embedded etcd): a machine crash; keeps the
   * data dir. With `onlyKapi`, only kapi's own process dies (a crashed kapi): what it started
   * is left to its own watchdog; `orphans()` lists what is still alive.
   */
  kill(opts?: { onlyKapi?: boolean }): Promise<void>;
  /** processes kapi started that are still alive (after kill({ onlyKapi: true })) */
  orphans(): number[];
  /** SIGKILL the orphans (cleanup after kill({ onlyKapi: true })) */
  killOrphans(): Promise<void>;
  /** kapi's stdout and stderr so far (the tail) */
  logs(): string;
  /** problems the harness saw (e.g. processes kapi left behind on stop) */
  warnings: string[];
}

/** bin/kapi of this checkout; KAPI_BIN overrides it (e.g. a snapshot build that no one rebuilds mid-run) */
const kapiBin = (): string => process.env.KAPI_BIN ?? path.join(repoRoot, 'bin', 'kapi');

export function startKapi(opts: StartKapiOptions = {}): Promise<KapiProcess> {
  return retryWhilePortTaken(() => startKapiOnce(opts));
}

async function startKapiOnce(opts: StartKapiOptions): Promise<KapiProcess> {
  const ownDir = !opts.dataDir;
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'kapi-e2e-'));
  const port = opts.port ?? (await freePort());
  const bin = opts.bin ?? kapiBin();
  const args = [
    ...kapiNodeFlags(bin),
    ...(opts.nodeArgs ?? []),
    bin,
    '--data-dir',
    dataDir,
    '--secure-port',
    String(port),
    '--bind-address',
    '127.0.0.1',
  ];
  if (opts.etcdServers) args.push('--etcd-servers', opts.etcdServers);
  if (opts.etcdCompactionInterval) args.push('--etcd-compaction-interval', opts.etcdCompactionInterval);
  args.push(...(opts.extraArgs ?? []));

  const logs = new LogBuffer();
  const child = spawn(process.execPath, args, {
    cwd: path.dirname(path.dirname(bin)),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: opts.env ? { ...process.env, ...opts.env } : process.env,
  });
  child.stdout?.on('data', (b: Buffer) => logs.add(b));
  child.stderr?.on('data', (b: Buffer) => logs.add(b));
  const pid = child.pid;
  if (pid === undefined) throw new Error('kapi did not start');

  const kubeconfig = path.join(dataDir, 'admin.kubeconfig');
  const url = `https://127.0.0.1:${port}`;
  const warnings: string[] = [];
  let http: KubeHttpClient | undefined;
  // processes below kapi, remembered while it lives so that a crash leaves nothing behind
  let known: number[] = [];

  const killAll = async (): Promise<void> => {
    known = [...new Set([...known, ...descendants(pid)])];
    if (alive(pid)) process.kill(pid, 'SIGKILL');
    await exited(child);
    for (const p of known) if (alive(p)) process.kill(p, 'SIGKILL');
    await waitGone(known, 10000);
  };

  try {
    const deadline = Date.now() + (opts.readyTimeoutMs ?? 90000);
    let last = '';
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`kapi exited (${child.exitCode ?? child.signalCode}) before it was ready`);
      }
      if (Date.now() > deadline) throw new Error(`kapi not ready in time (last: ${last})`);
      known = [...new Set([...known, ...descendants(pid)])];
      if (existsSync(kubeconfig) && statSync(kubeconfig).size > 0) {
        try {
          http ??= new KubeHttpClient({ ...loadKubeconfig(kubeconfig), server: url });
          const res = await http.get('/readyz', { timeoutMs: 5000 });
          if (res.status === 200) break;
          last = `readyz ${res.status}: ${res.body.slice(0, 300)}`;
        } catch (err) {
          last = (err as Error).message;
          // credentials may have been read half-written: read them again next time
          http?.close();
          http = undefined;
        }
      } else {
        last = `${kubeconfig} not written yet`;
      }
      await sleep(200);
    }
  } catch (err) {
    http?.close();
    await killAll();
    const out = logs.toString();
    if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    const message = `${(err as Error).message}\n--- kapi ${args.slice(1).join(' ')} ---\n${out.slice(-6000)}`;
    const portTaken = opts.port === undefined && new RegExp(`EADDRINUSE: address already in use 127\\.0\\.0\\.1:${port}\\b`).test(out);
    throw portTaken ? new PortTaken(message) : new Error(message);
  }

  const written = loadKubeconfig(kubeconfig).server;
  if (written !== url && written !== `https://localhost:${port}`) {
    warnings.push(`admin.kubeconfig names server ${written}, kapi listens on ${url}`);
  }
  const client = http!;
  // keep track of kapi's children (embedded etcd) while it runs
  const tracker = setInterval(() => {
    if (alive(pid)) known = [...new Set([...known, ...descendants(pid)])];
  }, 1000);
  tracker.unref();

  let stopped = false;
  return {
    url,
    port,
    pid,
    dataDir,
    kubeconfig,
    http: client,
    warnings,
    logs: () => logs.toString(),
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(tracker);
      client.close();
      known = [...new Set([...known, ...descendants(pid)])];
      if (alive(pid)) process.kill(pid, 'SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const graceful = await Promise.race([
        exited(child).then(() => true),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(false), 30000))),
      ]);
      clearTimeout(timer);
      if (!graceful) {
        // the log's tail says what the replica was still waiting for
        warnings.push(`kapi did not exit within 30 s of SIGTERM; killed. Its last log lines:\n${logs.toString().slice(-3000)}`);
        process.kill(pid, 'SIGKILL');
        await exited(child);
      }
      const left = await waitGone(known, 15000);
      if (left.length) {
        warnings.push(`kapi left processes running after SIGTERM: ${left.join(', ')}; killed`);
        for (const p of left) if (alive(p)) process.kill(p, 'SIGKILL');
        await waitGone(left, 10000);
      }
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    },
    async kill(killOpts = {}) {
      if (stopped) return;
      stopped = true;
      clearInterval(tracker);
      client.close();
      if (killOpts.onlyKapi) {
        known = [...new Set([...known, ...descendants(pid)])];
        if (alive(pid)) process.kill(pid, 'SIGKILL');
        await exited(child);
      } else {
        await killAll();
      }
    },
    orphans: () => known.filter(alive),
    async killOrphans() {
      const left = known.filter(alive);
      for (const p of left) process.kill(p, 'SIGKILL');
      await waitGone(left, 10000);
    },
  };
}

// ---- kubectl ---------------------------------------------------------------------------

export type KubectlVersion = '1.27' | '1.28' | '1.29' | '1.30' | '1.31' | '1.32' | '1.33';
export const olderKubectlVersions: KubectlVersion[] = ['1.27', '1.28', '1.29', '1.30', '1.31', '1.32'];

function onPath(cmd: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const p = path.join(dir, cmd);
    if (dir && existsSync(p)) return p;
  }
  return undefined;
}

/** the kubectl.<version> binary beside the real file that `kubectl` on PATH names */
export function kubectlPath(version: KubectlVersion = '1.33'): string {
  const onPathKubectl = onPath('kubectl');
  if (!onPathKubectl) throw new Error('kubectl is not on PATH');
  const p = path.join(path.dirname(realpathSync(onPathKubectl)), `kubectl.${version}`);
  if (!existsSync(p)) throw new Error(`${p} does not exist`);
  return p;
}

export interface KubectlOptions {
  kubeconfig: string;
  /** written to kubectl's stdin */
  input?: string;
  version?: KubectlVersion;
  /** kills kubectl (by PID) after this long; default 60 s */
  timeoutMs?: number;
  /** extra environment variables (e.g. EDITOR for `kubectl edit`) */
  env?: Record<string, string>;
}

export interface KubectlResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function kubectlArgv(args: string[], opts: KubectlOptions): { bin: string; argv: string[] } {
  const version = opts.version ?? '1.33';
  // a cache dir per server and kubectl version: a stale discovery cache from another run on
  // the same port must never answer for this server
  const cacheDir = path.join(path.dirname(opts.kubeconfig), 'kubectl-cache', version);
  return { bin: kubectlPath(version), argv: ['--kubeconfig', opts.kubeconfig, '--cache-dir', cacheDir, ...args] };
}

function kubectlEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  delete env.KUBECONFIG;
  env.KUBECTL_INTERACTIVE_DELETE = 'false';
  return env;
}

/** Runs kubectl with argv (never a shell string). */
export function kubectl(args: string[], opts: KubectlOptions): Promise<KubectlResult> {
  const { bin, argv } = kubectlArgv(args, opts);
  return new Promise((resolve, reject) => {
    const child = spawn(bin, argv, { stdio: ['pipe', 'pipe', 'pipe'], env: kubectlEnv(opts.env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => {
      stderr += `\n[harness: kubectl killed after ${opts.timeoutMs ?? 60000} ms]`;
      if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
    }, opts.timeoutMs ?? 60000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    // a kubectl that exits without reading its input (a refused command) closes the pipe: the
    // result is its exit code and output, not the write's EPIPE
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input ?? '');
  });
}

/** a word for sh, single-quoted */
function shellWord(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** whether script(1) is there to give kubectl a terminal */
export const terminalAvailable: boolean = onPath('script') !== undefined;

/**
 * Runs kubectl on a pseudo-terminal of `rows` x `cols` that script(1) makes, for what needs
 * a TTY (`exec -t`). The argv is single-quoted word by word for script's shell; what the
 * terminal shows comes back as stdout (line ends as the terminal writes them, \r\n).
 */
export function kubectlInTerminal(args: string[], opts: KubectlOptions & { rows: number; cols: number }): Promise<KubectlResult> {
  const { bin, argv } = kubectlArgv(args, opts);
  const line = `stty cols ${opts.cols} rows ${opts.rows}; exec ${[bin, ...argv].map(shellWord).join(' ')}`;
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', line, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env: kubectlEnv(opts.env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => {
      stderr += `\n[harness: script(1) with kubectl killed after ${opts.timeoutMs ?? 60000} ms]`;
      if (child.pid !== undefined) for (const pid of [...descendants(child.pid), child.pid]) process.kill(pid, 'SIGKILL');
    }, opts.timeoutMs ?? 60000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    // a kubectl that exits without reading its input (a refused command) closes the pipe: the
    // result is its exit code and output, not the write's EPIPE
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input ?? '');
  });
}

/** kubectl that must succeed: returns stdout, throws with stderr otherwise */
export async function kubectlOk(args: string[], opts: KubectlOptions): Promise<string> {
  const r = await kubectl(args, opts);
  if (r.code !== 0) {
    throw new Error(`kubectl ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  }
  return r.stdout;
}

/** A long-running kubectl (e.g. `get -w`) whose output is read as it comes. */
export interface KubectlChild {
  pid: number;
  stdout(): string;
  stderr(): string;
  /** waits until stdout matches */
  waitForOutput(re: RegExp, timeoutMs?: number): Promise<string>;
  /** SIGTERM by PID and wait */
  stop(): Promise<KubectlResult>;
}

export function kubectlSpawn(args: string[], opts: KubectlOptions): KubectlChild {
  const { bin, argv } = kubectlArgv(args, opts);
  const child = spawn(bin, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: kubectlEnv(opts.env) });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const pid = child.pid;
  if (pid === undefined) throw new Error('kubectl did not start');
  return {
    pid,
    stdout: () => out,
    stderr: () => err,
    waitForOutput: (re, timeoutMs = 30000) =>
      waitFor(
        `kubectl ${args.join(' ')} to print ${re}`,
        () => {
          if (re.test(out)) return out;
          if (child.exitCode !== null) throw new Error(`kubectl exited ${child.exitCode}: ${err}\n${out}`);
          return undefined;
        },
        timeoutMs,
        50,
      ).catch((e: Error) => {
        throw new Error(`${e.message}\nstdout so far:\n${out}\nstderr:\n${err}`);
      }),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) process.kill(pid, 'SIGTERM');
      await exited(child);
      return { code: child.exitCode, stdout: out, stderr: err };
    },
  };
}

// ---- etcdctl ---------------------------------------------------------------------------

/** Debian's etcdctl (3.4) with the v3 API against one endpoint. */
export function etcdctl(endpoint: string, args: string[]): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('etcdctl', ['--endpoints', endpoint, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ETCDCTL_API: '3' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** etcd's current revision, read with etcdctl */
export async function etcdRevision(endpoint: string): Promise<number> {
  const r = await etcdctl(endpoint, ['endpoint', 'status', '-w', 'json']);
  if (r.code !== 0) throw new Error(`etcdctl endpoint status: ${r.stderr}`);
  const status = JSON.parse(r.stdout) as { Status: { header: { revision: number } } }[];
  return Number(status[0]!.Status.header.revision);
}

// ---- small helpers for tests ---------------------------------------------------------------

let counter = 0;
/** a DNS-1123 name unique within this process */
export function uniqueName(prefix: string): string {
  counter++;
  return `${prefix}-${process.pid.toString(36)}-${Date.now().toString(36).slice(-4)}${counter}`;
}

/** a kubeconfig (JSON is YAML) for kapi's server and CA with the given user entry
 *  (`admin` is a kubeconfig whose server and CA it copies) */
export function writeKubeconfig(file: string, admin: string, user: Record<string, unknown>): string {
  const creds = loadKubeconfig(admin);
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'kapi', cluster: { server: creds.server, 'certificate-authority-data': Buffer.from(creds.ca ?? '').toString('base64') } },
    ],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'kapi', context: { cluster: 'kapi', user: 'u' } }],
    'current-context': 'kapi',
  };
  writeFileSync(file, JSON.stringify(doc, null, 2));
  return file;
}

/** the path of a file in e2e/fixtures (the source folder: fixtures are not compiled) */
export function fixturePath(name: string): string {
  return path.join(repoRoot, 'e2e', 'fixtures', name);
}

/** whether `/usr/bin/python3` can import the Kubernetes client */
export function pythonKubernetesAvailable(): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn('/usr/bin/python3', ['-c', 'import kubernetes'], { stdio: 'ignore' });
    child.on('error', () => resolve(false));
    child.on('close', (code) => resolve(code === 0));
  });
}

/**
 * Creates a namespace with a raw JSON POST. Test set-up uses this rather than `kubectl create
 * namespace` (which sends protobuf) so that a scenario fails on what it tests, not its set-up.
 */
export async function createNamespace(http: KubeHttpClient, name: string): Promise<void> {
  const res = await http.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  if (res.status !== 201) throw new Error(`create namespace ${name}: HTTP ${res.status} ${res.body}`);
  // as kube's e2e framework does: the ServiceAccount admission plugin refuses pods until the
  // service account controller has made the namespace's `default` account (it looks again for
  // about a second only), so tests get a namespace that is ready for pods
  await waitForDefaultServiceAccount(http, name);
}

/** waits (up to 60 s, then gives up quietly) until `default` exists in `namespace` */
export async function waitForDefaultServiceAccount(http: KubeHttpClient, namespace: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const sa = await http.get(`/api/v1/namespaces/${namespace}/serviceaccounts/default`);
    if (sa.status === 200) return;
    await sleep(50);
  }
}

/** Creates a configmap with a raw JSON POST (set-up helper, see createNamespace). */
export async function createConfigMap(
  http: KubeHttpClient,
  namespace: string,
  name: string,
  data: Record<string, string> = {},
): Promise<void> {
  const res = await http.post(`/api/v1/namespaces/${namespace}/configmaps`, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name },
    data,
  });
  if (res.status !== 201) throw new Error(`create configmap ${namespace}/${name}: HTTP ${res.status} ${res.body}`);
}
