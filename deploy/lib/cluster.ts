// The local replicated control plane: N etcd members (static --initial-cluster), N kapi
// replicas sharing one PKI (`kapi certs`) and listing every member in --etcd-servers, and
// haproxy (TCP) in front; all on 127.0.0.1, free ports, one directory:
//
//   <dir>/cluster.json          every process's command line, ports and files (for restarts)
//   <dir>/admin.kubeconfig      the admin kubeconfig for the load balancer
//   <dir>/replica-<i>.kubeconfig  the same user, straight at replica i
//   <dir>/replicas              one replica URL per line
//   <dir>/pki/                  the shared PKI (`kapi certs`); every replica has --cert-dir on it
//   <dir>/etcd-<i>/  <dir>/kapi-<i>/   data
//   <dir>/haproxy.cfg  <dir>/haproxy.sock (stats)  <dir>/logs/<name>.log  <dir>/pids/<name>.pid
//
// The test API (local-cluster.ts) keeps the processes as children of the test; the CLI
// (cluster-cli.ts) starts them detached, so they outlive it, and finds them again by the pid
// files.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, closeSync, readFileSync, writeFileSync, renameSync, accessSync, constants } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import { createHash } from 'node:crypto';
import { kapiNodeFlags } from '../../server/cli/node-flags.js';
import { writeKubeconfig } from '../../server/kubeconfig/kubeconfig.js';
import { freePort } from '../../storage/testing/etcd-server.js';
import { ManagedProcess, tail, type ProcessSpec } from './process.js';
import { haproxyConfig } from './haproxy-config.js';

export interface ClusterOptions {
  dir: string;
  replicas?: number;
  etcdMembers?: number;
  kapiArgs?: string[];
  etcdCompactionInterval?: string;
}

export interface LaunchOptions extends ClusterOptions {
  /** start processes in their own sessions so they outlive this node process (the CLI) */
  detached: boolean;
}

export interface ClusterState {
  version: 1;
  dir: string;
  lbURL: string;
  kubeconfig: string;
  /** bin/kapi (its replicas' command runs it through node, with the flags of its first line) */
  kapiBin: string;
  pki: { dir: string; caFile: string; certFile: string; keyFile: string };
  etcd: ProcessSpec[];
  replicas: ProcessSpec[];
  haproxy: ProcessSpec;
}

export interface RunningCluster {
  state: ClusterState;
  etcd: ManagedProcess[];
  replicas: ManagedProcess[];
  haproxy: ManagedProcess;
  /** every process, in start order */
  all(): ManagedProcess[];
  replicaKubeconfig(i: number): string;
  stop(): Promise<void>;
}

const STATE_FILE = 'cluster.json';

/** the repository root, from this file's place in dist/deploy/lib/ (or deploy/lib/) */
function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'bin', 'kapi'))) return dir;
    dir = path.dirname(dir);
  }
  throw new Error('cannot find the repository root from ' + fileURLToPath(import.meta.url));
}

/** an executable by name on PATH (and the sbin dirs, where Debian puts haproxy) */
function findExecutable(name: string): string {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin', '/usr/local/sbin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const p = path.join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // next
    }
  }
  throw new Error(`${name} is not installed (scripts/install-deps.sh installs it)`);
}

async function distinctPorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

export function stateFile(dir: string): string {
  return path.join(path.resolve(dir), STATE_FILE);
}

export function readState(dir: string): ClusterState | undefined {
  const file = stateFile(dir);
  if (!existsSync(file)) return undefined;
  const state = JSON.parse(readFileSync(file, 'utf8')) as ClusterState;
  if (state.version !== 1) throw new Error(`${file}: unknown version ${String(state.version)}`);
  return state;
}

function writeState(state: ClusterState): void {
  const file = stateFile(state.dir);
  writeFileSync(`${file}.tmp`, JSON.stringify(state, null, 2) + '\n');
  renameSync(`${file}.tmp`, file);
}

async function planCluster(opts: ClusterOptions): Promise<ClusterState> {
  const dir = path.resolve(opts.dir);
  const nReplicas = opts.replicas ?? 3;
  const nEtcd = opts.etcdMembers ?? 3;
  if (!(nReplicas >= 1) || !(nEtcd >= 1)) throw new Error('a cluster needs at least one replica and one etcd member');
  const ports = await distinctPorts(2 * nEtcd + nReplicas + 1);
  const etcdPorts = Array.from({ length: nEtcd }, (_, i) => ({ client: ports[2 * i]!, peer: ports[2 * i + 1]! }));
  const replicaPorts = ports.slice(2 * nEtcd, 2 * nEtcd + nReplicas);
  const lbPort = ports[ports.length - 1]!;
  const root = repoRoot();
  const kapiBin = process.env.KAPI_BIN ?? path.join(root, 'bin', 'kapi');
  const etcdBin = findExecutable('etcd');
  const haproxyBin = findExecutable('haproxy');
  const logs = path.join(dir, 'logs');
  const pids = path.join(dir, 'pids');
  const pkiDir = path.join(dir, 'pki');
  const pki = {
    dir: pkiDir,
    caFile: path.join(pkiDir, 'ca.crt'),
    certFile: path.join(pkiDir, 'admin.crt'),
    keyFile: path.join(pkiDir, 'admin.key'),
  };
  const token = `kapi-local-${Date.now().toString(36)}-${process.pid}`;
  const initialCluster = etcdPorts.map((p, i) => `etcd-${i}=http://127.0.0.1:${p.peer}`).join(',');

  const etcd: ProcessSpec[] = etcdPorts.map((p, i) => {
    const name = `etcd-${i}`;
    const clientURL = `http://127.0.0.1:${p.client}`;
    const peerURL = `http://127.0.0.1:${p.peer}`;
    return {
      name,
      kind: 'etcd',
      command: etcdBin,
      args: [
        '--name',
        name,
        '--data-dir',
        path.join(dir, name),
        '--listen-client-urls',
        clientURL,
        '--advertise-client-urls',
        clientURL,
        '--listen-peer-urls',
        peerURL,
        '--initial-advertise-peer-urls',
        peerURL,
        '--initial-cluster',
        initialCluster,
        '--initial-cluster-state',
        'new',
        '--initial-cluster-token',
        token,
        '--logger',
        'zap',
        '--log-outputs',
        'stderr',
        '--log-level',
        'warn',
      ],
      url: clientURL,
      logFile: path.join(logs, `${name}.log`),
      pidFile: path.join(pids, `${name}.pid`),
      health: { kind: 'etcd', url: clientURL },
      marker: dir,
    };
  });
  const etcdServers = etcd.map((e) => e.url).join(',');
  const replicas: ProcessSpec[] = replicaPorts.map((port, i) => {
    const name = `kapi-${i}`;
    const url = `https://127.0.0.1:${port}`;
    return {
      name,
      kind: 'kapi',
      command: process.execPath,
      args: [
        ...kapiNodeFlags(kapiBin),
        kapiBin,
        '--data-dir',
        path.join(dir, name),
        '--cert-dir',
        pkiDir,
        '--bind-address',
        '127.0.0.1',
        '--secure-port',
        String(port),
        '--etcd-servers',
        etcdServers,
        ...(opts.etcdCompactionInterval ? ['--etcd-compaction-interval', opts.etcdCompactionInterval] : []),
        ...(opts.kapiArgs ?? []),
      ],
      url,
      logFile: path.join(logs, `${name}.log`),
      pidFile: path.join(pids, `${name}.pid`),
      health: { kind: 'readyz', url, ...pki },
      marker: dir,
    };
  });
  const lbURL = `https://127.0.0.1:${lbPort}`;
  const haproxy: ProcessSpec = {
    name: 'haproxy',
    kind: 'haproxy',
    command: haproxyBin,
    // -db: stay in the foreground, one process, so its PID is the one to signal
    args: ['-db', '-f', path.join(dir, 'haproxy.cfg')],
    url: lbURL,
    logFile: path.join(logs, 'haproxy.log'),
    pidFile: path.join(pids, 'haproxy.pid'),
    health: { kind: 'readyz', url: lbURL, ...pki },
    marker: dir,
  };
  return { version: 1, dir, lbURL, kubeconfig: path.join(dir, 'admin.kubeconfig'), kapiBin, pki, etcd, replicas, haproxy };
}

function portOf(url: string): number {
  return Number(new URL(url).port);
}

/** `kapi certs` for the load balancer (idempotent), then the per-replica kubeconfigs. */
async function writePki(state: ClusterState): Promise<void> {
  const kapi = state.replicas[0]!;
  const logFile = path.join(state.dir, 'logs', 'certs.log');
  mkdirSync(path.dirname(logFile), { recursive: true });
  const fd = openSync(logFile, 'a');
  const args = [
    state.kapiBin,
    'certs',
    '--dir',
    state.pki.dir,
    '--server-name',
    '127.0.0.1,localhost',
    '--lb-url',
    state.lbURL,
    '--kubeconfig',
    state.kubeconfig,
  ];
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(kapi.command, args, { stdio: ['ignore', fd, fd] });
    child.on('error', reject);
    child.on('exit', (c) => resolve(c));
  }).finally(() => closeSync(fd));
  if (code !== 0) throw new Error(`kapi certs exited ${code}:\n${tail(logFile)}`);
  const caPem = readFileSync(state.pki.caFile, 'utf8');
  const clientCertPem = readFileSync(state.pki.certFile, 'utf8');
  const clientKeyPem = readFileSync(state.pki.keyFile, 'utf8');
  state.replicas.forEach((r, i) => {
    writeKubeconfig(replicaKubeconfigPath(state, i), { server: r.url, caPem, clientCertPem, clientKeyPem, clusterName: `kapi-${i}` });
  });
}

/** haproxy's stats socket (see haproxy-stats.ts); in the temp dir when the cluster dir's path is too long for a unix socket */
export function haproxySocket(dir: string): string {
  const inDir = path.join(path.resolve(dir), 'haproxy.sock');
  if (Buffer.byteLength(inDir) < 100) return inDir;
  return path.join(os.tmpdir(), `kapi-haproxy-${createHash('sha256').update(inDir).digest('hex').slice(0, 16)}.sock`);
}

function replicaKubeconfigPath(state: ClusterState, i: number): string {
  return path.join(state.dir, `replica-${i}.kubeconfig`);
}

function writeSideFiles(state: ClusterState): void {
  writeFileSync(path.join(state.dir, 'replicas'), state.replicas.map((r) => r.url).join('\n') + '\n');
  writeFileSync(
    path.join(state.dir, 'haproxy.cfg'),
    haproxyConfig({
      port: portOf(state.lbURL),
      statsSocket: haproxySocket(state.dir),
      replicas: state.replicas.map((r) => ({ name: r.name, port: portOf(r.url) })),
    }),
  );
}

/** The cluster recorded in `dir`, its processes adopted by their pid files; nothing is started. */
export function openCluster(dir: string, detached: boolean): RunningCluster | undefined {
  const state = readState(dir);
  if (!state) return undefined;
  return wrap(state, detached);
}

function wrap(state: ClusterState, detached: boolean): RunningCluster {
  const mk = (s: ProcessSpec): ManagedProcess => new ManagedProcess(s, { detached });
  const etcd = state.etcd.map(mk);
  const replicas = state.replicas.map(mk);
  const haproxy = mk(state.haproxy);
  const all = (): ManagedProcess[] => [...etcd, ...replicas, haproxy];
  return {
    state,
    etcd,
    replicas,
    haproxy,
    all,
    replicaKubeconfig: (i) => {
      if (!Number.isInteger(i) || i < 0 || i >= replicas.length) throw new RangeError(`no replica ${i} (there are ${replicas.length})`);
      return replicaKubeconfigPath(state, i);
    },
    async stop() {
      await haproxy.stop();
      await Promise.all(replicas.map((r) => r.stop()));
      // one member at a time: a stopping leader hands leadership to a live member at once,
      // but waits seconds for one that is stopping too
      for (const e of etcd) await e.stop();
    },
  };
}

async function startAll(procs: ManagedProcess[]): Promise<void> {
  const results = await Promise.allSettled(procs.filter((p) => !p.running()).map((p) => p.start()));
  const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed.length) throw new Error(failed.map((f) => (f.reason as Error).message).join('\n\n'));
}

/**
 * Starts the cluster in opts.dir: a new one, or the one recorded there (same ports and data)
 * whose processes are not running. Waits until every member is healthy, every replica ready,
 * and the load balancer serves /readyz. On failure stops what it started and throws.
 */
export async function launchCluster(opts: LaunchOptions): Promise<RunningCluster> {
  const dir = path.resolve(opts.dir);
  mkdirSync(dir, { recursive: true });
  let state = readState(dir);
  if (state) {
    if (
      (opts.replicas !== undefined && opts.replicas !== state.replicas.length) ||
      (opts.etcdMembers !== undefined && opts.etcdMembers !== state.etcd.length)
    ) {
      throw new Error(
        `${dir} holds a cluster of ${state.etcd.length} etcd members and ${state.replicas.length} replicas; stop it and remove the directory to start another shape`,
      );
    }
  } else {
    state = await planCluster({ ...opts, dir });
    writeState(state);
  }
  const cluster = wrap(state, opts.detached);
  const wasRunning = new Set(cluster.all().filter((p) => p.running()));
  try {
    writeSideFiles(state);
    // etcd's election overlaps the PKI and the replicas' start-up (a replica waits for etcd)
    const settled = await Promise.allSettled([startAll(cluster.etcd), writePki(state).then(() => startAll(cluster.replicas))]);
    const failed = settled.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed.length) throw new Error(failed.map((f) => (f.reason as Error).message).join('\n\n'));
    await startAll([cluster.haproxy]);
  } catch (err) {
    // stop what this call started, by PID, in reverse order; leave what already ran
    for (const p of cluster.all().reverse()) {
      if (!wasRunning.has(p)) await p.stop().catch(() => {});
    }
    throw err;
  }
  return cluster;
}
