// Starts a real etcd member for tests and benchmarks: loopback only, free ports, its own
// temporary data dir, stopped by PID. Used by every integration test; never mocked.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export interface EtcdProcess {
  endpoint: string;
  pid: number;
  dataDir: string;
  /** SIGTERM, then wait for exit (SIGKILL after a grace period); nothing to do if it exited */
  stop(): Promise<void>;
  /** SIGKILL, keeping the data dir (for crash tests) */
  kill(): Promise<void>;
  /** the end of what etcd wrote to stderr (why a member died) */
  readonly stderr: string;
}

export async function waitForPort(host: string, port: number, timeoutMs = 15000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, host);
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${host}:${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** how long a stopped etcd may take before it is killed */
const STOP_GRACE_MS = 10_000;

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function exited(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export interface StartEtcdOptions {
  /** reuse a data dir (restart tests); default: a new temporary one, removed on stop */
  dataDir?: string;
  clientPort?: number;
  extraArgs?: string[];
  /** serve clients over https with this certificate, and accept only clients with a certificate from `caFile` */
  tls?: EtcdServerTls;
}

export interface EtcdServerTls {
  caFile: string;
  certFile: string;
  keyFile: string;
}

/** a port freePort() handed out was taken by another process before the server bound it */
export class PortTaken extends Error {}

/**
 * `start` again (three times in all) while it fails with PortTaken: freePort() closes its probe
 * before the server binds, so a test running beside this one may take the port meanwhile.
 * Only ports chosen by `start` may be chosen again: a port its caller named is not.
 */
export async function retryWhilePortTaken<T>(start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (!(err instanceof PortTaken) || attempt >= 3) throw err;
    }
  }
}

export function startEtcd(opts: StartEtcdOptions = {}): Promise<EtcdProcess> {
  return retryWhilePortTaken(() => startEtcdOnce(opts));
}

async function startEtcdOnce(opts: StartEtcdOptions): Promise<EtcdProcess> {
  const ownDir = !opts.dataDir;
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'kapi-etcd-'));
  const clientPort = opts.clientPort ?? (await freePort());
  const peerPort = await freePort();
  const clientURL = `${opts.tls ? 'https' : 'http'}://127.0.0.1:${clientPort}`;
  const tlsArgs = opts.tls
    ? ['--cert-file', opts.tls.certFile, '--key-file', opts.tls.keyFile, '--trusted-ca-file', opts.tls.caFile, '--client-cert-auth']
    : [];
  const peerURL = `http://127.0.0.1:${peerPort}`;
  const child = spawn(
    'etcd',
    [
      '--name',
      'default',
      '--data-dir',
      dataDir,
      '--listen-client-urls',
      clientURL,
      '--advertise-client-urls',
      clientURL,
      '--listen-peer-urls',
      peerURL,
      '--initial-advertise-peer-urls',
      peerURL,
      '--initial-cluster',
      `default=${peerURL}`,
      '--log-level',
      'error',
      '--logger',
      'zap',
      ...tlsArgs,
      ...(opts.extraArgs ?? []),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => {
    stderr = (stderr + b.toString()).slice(-4000);
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('etcd did not start (is it on PATH?)');
  const exitedEarly = exited(child).then(() => {
    throw new Error('etcd exited');
  });
  try {
    await Promise.race([waitForPort('127.0.0.1', clientPort), exitedEarly]);
  } catch (err) {
    child.kill('SIGKILL');
    await exited(child);
    if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    const message = `etcd did not come up: ${(err as Error).message}\n${stderr}`;
    if (/address already in use/.test(stderr) && opts.clientPort === undefined) throw new PortTaken(message);
    throw new Error(message);
  }
  exitedEarly.catch(() => undefined);
  return {
    endpoint: clientURL,
    pid,
    dataDir,
    async stop() {
      // a member that already exited (a cluster member can die with its peers) is just cleaned
      // up; one that does not stop in time is killed (etcd 3.4 can hang stopping without quorum)
      if (!hasExited(child)) {
        process.kill(pid, 'SIGTERM');
        const killer = setTimeout(() => {
          if (!hasExited(child)) process.kill(pid, 'SIGKILL');
        }, STOP_GRACE_MS);
        await exited(child);
        clearTimeout(killer);
      }
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    },
    async kill() {
      if (!hasExited(child)) process.kill(pid, 'SIGKILL');
      await exited(child);
    },
    get stderr() {
      return stderr;
    },
  };
}
