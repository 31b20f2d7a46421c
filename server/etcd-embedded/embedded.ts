// The embedded etcd member kapi starts when no --etcd-servers is given: the `etcd` binary on
// PATH, data in <data-dir>/etcd, client and peer URLs on free loopback ports. kapi owns it
// by PID: it stops it on shutdown, a watchdog stops it if kapi is killed outright, and a
// member left running by an earlier kapi on the same data dir is found by the pid file and
// stopped before a new one starts (only if /proc says it really is that etcd).

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { createLogger } from '../log.js';

const log = createLogger('etcd-embedded');

export interface EmbeddedEtcdOptions {
  /** kapi's --data-dir; etcd's data goes to <dataDir>/etcd */
  dataDir: string;
  /** default: `etcd` from PATH */
  binary?: string;
  /** how long to wait for the member to report healthy */
  startTimeoutMs?: number;
  /** ports etcd must not take: the replica's own listeners, which bind only after etcd is up */
  avoidPorts?: readonly number[];
  /** etcd's --log-level; default warn */
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
}

export interface EmbeddedEtcd {
  /** http://127.0.0.1:<port> */
  endpoint: string;
  pid: number;
  /** <data-dir>/etcd */
  etcdDataDir: string;
  /** SIGTERM, wait for exit (SIGKILL after a grace period), remove the pid file */
  stop(): Promise<void>;
  /** resolves when the member exits, for whatever reason */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function pidFilePath(dataDir: string): string {
  return path.join(dataDir, 'etcd.pid');
}

function portsFilePath(dataDir: string): string {
  return path.join(dataDir, 'etcd-ports.json');
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readCmdline(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((a) => a !== '');
  } catch {
    return undefined;
  }
}

/** True when `pid` is an etcd process whose --data-dir is `etcdDataDir`. */
export function isOurEtcd(pid: number, etcdDataDir: string): boolean {
  const argv = readCmdline(pid);
  if (!argv || argv.length === 0) return false;
  if (path.basename(argv[0]!) !== 'etcd') return false;
  const want = path.resolve(etcdDataDir);
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if ((a === '--data-dir' || a === '-data-dir') && argv[i + 1] && path.resolve(argv[i + 1]!) === want) return true;
    const m = /^--?data-dir=(.*)$/.exec(a);
    if (m && path.resolve(m[1]!) === want) return true;
  }
  return false;
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

/** Stops an etcd that an earlier kapi on this data dir left running. Returns whether it did. */
export async function stopStaleEtcd(dataDir: string): Promise<boolean> {
  const file = pidFilePath(dataDir);
  if (!existsSync(file)) return false;
  const pid = Number.parseInt(readFileSync(file, 'utf8').trim(), 10);
  const etcdDataDir = path.join(dataDir, 'etcd');
  let stopped = false;
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid) && isOurEtcd(pid, etcdDataDir)) {
    log.warn('stopping the etcd an earlier kapi left running on this data dir', { pid });
    process.kill(pid, 'SIGTERM');
    if (!(await waitForExit(pid, 10_000))) {
      process.kill(pid, 'SIGKILL');
      await waitForExit(pid, 5_000);
    }
    stopped = true;
  }
  rmSync(file, { force: true });
  return stopped;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** The ports of the last run when they are still free (the member's peer URL is stored in its
 *  data), otherwise new free ones; never one of `avoid`. */
async function choosePorts(dataDir: string, avoid: readonly number[]): Promise<{ client: number; peer: number }> {
  const usable = async (port: unknown): Promise<boolean> => typeof port === 'number' && !avoid.includes(port) && (await portFree(port));
  try {
    const saved = JSON.parse(readFileSync(portsFilePath(dataDir), 'utf8')) as { client?: unknown; peer?: unknown };
    if ((await usable(saved.client)) && (await usable(saved.peer))) return { client: saved.client as number, peer: saved.peer as number };
  } catch {
    // first run, or an unreadable file: pick new ports
  }
  const fresh = async (taken: readonly number[]): Promise<number> => {
    for (;;) {
      const port = await freePort();
      if (!taken.includes(port)) return port;
    }
  };
  const client = await fresh(avoid);
  const peer = await fresh([...avoid, client]);
  return { client, peer };
}

function healthy(endpoint: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(`${endpoint}/health`, { timeout: 2000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        try {
          resolve(res.statusCode === 200 && (JSON.parse(body) as { health?: string }).health === 'true');
        } catch {
          resolve(false);
        }
      });
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

/** A tiny shell that waits for its stdin to close (kapi gone, even by SIGKILL) and then stops etcd. */
function startWatchdog(etcdPid: number): ChildProcess {
  const dog = spawn('sh', ['-c', 'read _ignored; kill -TERM "$1" 2>/dev/null', 'kapi-etcd-watchdog', String(etcdPid)], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
  });
  dog.unref();
  // the pipe must not keep kapi's event loop alive
  (dog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  dog.on('error', (err) => log.warn('etcd watchdog failed to start', { error: err.message }));
  return dog;
}

export async function startEmbeddedEtcd(opts: EmbeddedEtcdOptions): Promise<EmbeddedEtcd> {
  const dataDir = path.resolve(opts.dataDir);
  const etcdDataDir = path.join(dataDir, 'etcd');
  mkdirSync(dataDir, { recursive: true });
  await stopStaleEtcd(dataDir);

  const ports = await choosePorts(dataDir, opts.avoidPorts ?? []);
  const clientURL = `http://127.0.0.1:${ports.client}`;
  const peerURL = `http://127.0.0.1:${ports.peer}`;
  const args = [
    '--name',
    'kapi',
    '--data-dir',
    etcdDataDir,
    '--listen-client-urls',
    clientURL,
    '--advertise-client-urls',
    clientURL,
    '--listen-peer-urls',
    peerURL,
    '--initial-advertise-peer-urls',
    peerURL,
    '--initial-cluster',
    `kapi=${peerURL}`,
    '--logger',
    'zap',
    '--log-level',
    opts.logLevel ?? 'warn',
  ];
  // its own process group: a terminal's Ctrl-C reaches kapi, which then stops etcd in order
  const child = spawn(opts.binary ?? 'etcd', args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderrTail = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderrTail = (stderrTail + chunk).slice(-8000);
    for (const line of chunk.split('\n')) if (line.trim() !== '') log.v(2).info(line.trim());
  });
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const pid = child.pid;
  if (pid === undefined) {
    const err = await spawnError;
    throw new Error(
      `cannot start etcd (${opts.binary ?? 'etcd'}): ${err.message}; install it (Debian: etcd-server) or pass --etcd-servers`,
    );
  }
  writeFileSync(pidFilePath(dataDir), `${pid}\n`);
  writeFileSync(portsFilePath(dataDir), JSON.stringify(ports) + '\n');
  const dog = startWatchdog(pid);
  let running = true;
  void exited.then(() => {
    running = false;
  });
  // a crash of kapi (uncaught exception, process.exit) must not leave etcd behind
  const onExit = (): void => {
    if (running) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
  };
  process.on('exit', onExit);

  const deadline = Date.now() + (opts.startTimeoutMs ?? 30_000);
  for (;;) {
    if (!running) {
      process.off('exit', onExit);
      rmSync(pidFilePath(dataDir), { force: true });
      throw new Error(`etcd exited during start-up:\n${stderrTail}`);
    }
    if (await healthy(clientURL)) break;
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      await exited;
      process.off('exit', onExit);
      rmSync(pidFilePath(dataDir), { force: true });
      throw new Error(`etcd did not become healthy at ${clientURL}:\n${stderrTail}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  log.info('embedded etcd is healthy', { endpoint: clientURL, pid, dataDir: etcdDataDir });

  child.unref();
  (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();

  let stopping: Promise<void> | undefined;
  return {
    endpoint: clientURL,
    pid,
    etcdDataDir,
    exited,
    stop() {
      stopping ??= (async () => {
        if (running) {
          process.kill(pid, 'SIGTERM');
          let timer: NodeJS.Timeout | undefined;
          const done = await Promise.race([
            exited.then(() => true),
            new Promise<boolean>((r) => {
              timer = setTimeout(() => r(false), 15_000);
            }),
          ]);
          clearTimeout(timer);
          if (!done) {
            log.warn('etcd did not stop in 15s; killing it', { pid });
            process.kill(pid, 'SIGKILL');
            await exited;
          }
        }
        process.off('exit', onExit);
        if (dog.pid !== undefined && dog.exitCode === null) {
          try {
            process.kill(dog.pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
        rmSync(pidFilePath(dataDir), { force: true });
        log.info('embedded etcd stopped', { pid });
      })();
      return stopping;
    },
  };
}
