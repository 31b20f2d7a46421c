// Drives the local cluster from a shell (`make cluster`, `make cluster-down`):
//
//   node dist/deploy/cluster-cli.js up [--replicas N] [--etcd-members N] [--compaction-interval D] [-- kapi flags...]
//   node dist/deploy/cluster-cli.js down | status
//   node dist/deploy/cluster-cli.js kill-replica N | stop-replica N | restart-replica N
//   node dist/deploy/cluster-cli.js kill-etcd N | stop-etcd N | restart-etcd N
//   node dist/deploy/cluster-cli.js kill-haproxy | restart-haproxy
//
// The directory is --dir, else $CLUSTER_DIR, else ./cluster. `up` starts the processes
// detached (they outlive this command) and records their PIDs in <dir>/pids/; every other
// command finds them there. N counts from 0, as in the process names (kapi-0, etcd-0).

import path from 'node:path';
import { launchCluster, openCluster, type RunningCluster } from './lib/cluster.js';
import type { ManagedProcess } from './lib/process.js';

const USAGE = `usage: cluster-cli <command> [--dir DIR]
  up [--replicas N] [--etcd-members N] [--compaction-interval D] [-- kapi flags...]
                       start (or resume) the cluster in DIR; returns once it serves
  down                 stop every process of the cluster (by recorded PID); data stays
  status               each process: name, PID, running, URL
  kill-replica N       SIGKILL kapi replica N (0-based)      stop-replica N: SIGTERM
  restart-replica N    start replica N again (same port, flags); waits until ready
  kill-etcd N          SIGKILL etcd member N                 stop-etcd N: SIGTERM
  restart-etcd N       start etcd member N again; waits until healthy
  kill-haproxy, restart-haproxy
DIR: --dir, else $CLUSTER_DIR, else ./cluster`;

class UsageError extends Error {}

interface Parsed {
  command: string;
  index?: number;
  dir: string;
  replicas?: number;
  etcdMembers?: number;
  compaction?: string;
  kapiArgs: string[];
}

function parse(argv: string[]): Parsed {
  const out: Parsed = { command: '', dir: process.env.CLUSTER_DIR || './cluster', kapiArgs: [] };
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const eq = a.indexOf('=');
      if (eq > 0) return a.slice(eq + 1);
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`${a} needs a value`);
      return v;
    };
    const count = (): number => {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 1) throw new UsageError(`${a} must be a positive integer`);
      return n;
    };
    if (a === '--') {
      out.kapiArgs = argv.slice(i + 1);
      break;
    } else if (a === '--dir' || a.startsWith('--dir=')) out.dir = value();
    else if (a === '--replicas' || a.startsWith('--replicas=')) out.replicas = count();
    else if (a === '--etcd-members' || a.startsWith('--etcd-members=')) out.etcdMembers = count();
    else if (a === '--compaction-interval' || a.startsWith('--compaction-interval=')) out.compaction = value();
    else if (a === '-h' || a === '--help') out.command = 'help';
    else if (a.startsWith('-')) throw new UsageError(`unknown option ${a}`);
    else positional.push(a);
  }
  if (out.command !== 'help') out.command = positional[0] ?? '';
  if (positional[1] !== undefined) {
    const n = Number(positional[1]);
    if (!Number.isInteger(n) || n < 0) throw new UsageError(`${positional[1]} is not a process number`);
    out.index = n;
  }
  return out;
}

function pick(list: ManagedProcess[], index: number | undefined, what: string): ManagedProcess {
  if (index === undefined) throw new UsageError(`which ${what}? (0..${list.length - 1})`);
  const p = list[index];
  if (!p) throw new UsageError(`no ${what} ${index} (there are ${list.length}: 0..${list.length - 1})`);
  return p;
}

function rel(p: string): string {
  const r = path.relative(process.cwd(), p);
  return r === '' ? '.' : r.startsWith('..') ? p : r;
}

function printStatus(c: RunningCluster): void {
  const rows = c.all().map((p) => [p.name, p.running() ? String(p.pid) : '-', p.running() ? 'running' : 'stopped', p.url]);
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length), ['NAME', 'PID', 'STATE'][i]!.length));
  const line = (r: string[]): string => r.map((c2, i) => (i < 3 ? c2.padEnd(widths[i]!) : c2)).join('  ');
  console.log(line(['NAME', 'PID', 'STATE', 'URL']));
  for (const r of rows) console.log(line(r));
  console.log(`load balancer: ${c.state.lbURL}   kubeconfig: ${rel(c.state.kubeconfig)}`);
}

function mustOpen(dir: string): RunningCluster {
  const c = openCluster(dir, true);
  if (!c) throw new UsageError(`no cluster in ${dir} (start one with: make cluster CLUSTER_DIR=${dir})`);
  return c;
}

async function run(p: Parsed): Promise<number> {
  switch (p.command) {
    case 'help':
      console.log(USAGE);
      return 0;
    case 'up': {
      const existing = openCluster(p.dir, true);
      if (existing && existing.all().every((x) => x.running())) {
        console.log(`the cluster in ${rel(existing.state.dir)} is already running`);
        printStatus(existing);
        return 0;
      }
      const started = Date.now();
      const c = await launchCluster({
        dir: p.dir,
        replicas: p.replicas,
        etcdMembers: p.etcdMembers,
        kapiArgs: p.kapiArgs,
        etcdCompactionInterval: p.compaction,
        detached: true,
      });
      console.log(
        `cluster up in ${((Date.now() - started) / 1000).toFixed(1)}s: ${c.etcd.length} etcd members, ${c.replicas.length} kapi replicas, haproxy`,
      );
      printStatus(c);
      console.log(`try:   kubectl --kubeconfig ${rel(c.state.kubeconfig)} get ns`);
      console.log(`status: ${c.state.lbURL}/status (any replica; admins and system:monitoring), in a browser through`);
      console.log(`        kubectl --kubeconfig ${rel(c.state.kubeconfig)} proxy --port 8001, then http://127.0.0.1:8001/status`);
      console.log(
        `stop:  make cluster-down${p.dir === './cluster' ? '' : ` CLUSTER_DIR=${p.dir}`}   (logs in ${rel(path.join(c.state.dir, 'logs'))}/)`,
      );
      return 0;
    }
    case 'down': {
      const c = openCluster(p.dir, true);
      if (!c) {
        console.log(`no cluster in ${p.dir}`);
        return 0;
      }
      const running = c.all().filter((x) => x.running()).length;
      await c.stop();
      console.log(
        `stopped ${running} processes of the cluster in ${rel(c.state.dir)} (data kept; rm -rf ${rel(c.state.dir)} for a fresh one)`,
      );
      return 0;
    }
    case 'status': {
      printStatus(mustOpen(p.dir));
      return 0;
    }
    case 'kill-replica':
    case 'stop-replica':
    case 'restart-replica':
    case 'kill-etcd':
    case 'stop-etcd':
    case 'restart-etcd':
    case 'kill-haproxy':
    case 'restart-haproxy': {
      const c = mustOpen(p.dir);
      const [verb, what] = p.command.split('-') as [string, string];
      const proc =
        what === 'haproxy' ? c.haproxy : what === 'etcd' ? pick(c.etcd, p.index, 'etcd member') : pick(c.replicas, p.index, 'replica');
      const pid = proc.pid;
      if (verb === 'restart') {
        await proc.restart();
        console.log(`${proc.name} running again (pid ${proc.pid}) at ${proc.url}`);
      } else {
        if (!proc.running()) {
          console.log(`${proc.name} is not running`);
          return 0;
        }
        await (verb === 'kill' ? proc.kill() : proc.stop());
        console.log(`${proc.name} (pid ${pid}) ${verb === 'kill' ? 'killed' : 'stopped'}`);
      }
      return 0;
    }
    case '':
      throw new UsageError('no command');
    default:
      throw new UsageError(`unknown command ${p.command}`);
  }
}

try {
  process.exitCode = await run(parse(process.argv.slice(2)));
} catch (err) {
  if (err instanceof UsageError) {
    console.error(`cluster-cli: ${err.message}\n${USAGE}`);
    process.exitCode = 2;
  } else {
    console.error(`cluster-cli: ${(err as Error).message}`);
    process.exitCode = 1;
  }
}
