// One process of the local cluster (an etcd member, a kapi replica, haproxy), started from a
// recorded spec and controlled by PID only. The PID lives in a pid file so that another
// process (the cluster CLI, run later) can stop or restart it; before signalling a recorded
// PID we check /proc that it is still our process (its command line names the cluster dir),
// so a recycled PID is never signalled.

import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { waitHealthy, type HealthSpec } from './health.js';

export type ProcessKind = 'etcd' | 'kapi' | 'haproxy';

/** Everything needed to start a process again, identically (kept in <dir>/cluster.json). */
export interface ProcessSpec {
  name: string;
  kind: ProcessKind;
  command: string;
  args: string[];
  /** what clients use: etcd's client URL, kapi's https URL, the load balancer's URL */
  url: string;
  logFile: string;
  pidFile: string;
  health: HealthSpec;
  /** a string in the command line that marks the process as ours (the cluster dir) */
  marker: string;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function procState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}

/** alive and not a zombie */
export function pidAlive(pid: number): boolean {
  if (!(pid > 0)) return false;
  const state = procState(pid);
  return state !== undefined && state !== 'Z' && state !== 'X';
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

export function readPidFile(file: string): number {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : 0;
  } catch {
    return 0;
  }
}

export function tail(file: string, chars = 4000): string {
  try {
    const text = readFileSync(file, 'utf8');
    return text.slice(-chars);
  } catch {
    return '';
  }
}

export interface ProcessOptions {
  /** start in its own session, unreferenced: it outlives this node process (the CLI) */
  detached: boolean;
  /** how long start/restart waits for health; default 90 s */
  readyTimeoutMs?: number;
}

export class ManagedProcess {
  private child: ChildProcess | undefined;
  private currentPid: number;

  constructor(
    readonly spec: ProcessSpec,
    private readonly opts: ProcessOptions,
  ) {
    // adopt a process a previous invocation started, if it still runs
    const recorded = readPidFile(spec.pidFile);
    this.currentPid = recorded && this.isOurs(recorded) ? recorded : 0;
  }

  get name(): string {
    return this.spec.name;
  }
  get url(): string {
    return this.spec.url;
  }
  /** the current (or last) PID; 0 before the first start */
  get pid(): number {
    return this.currentPid;
  }

  private isOurs(pid: number): boolean {
    return pidAlive(pid) && cmdline(pid).includes(this.spec.marker);
  }

  running(): boolean {
    return this.currentPid > 0 && this.isOurs(this.currentPid);
  }

  /** Starts the process (it must not be running) and waits until it is healthy. */
  async start(): Promise<void> {
    if (this.running()) throw new Error(`${this.name} is already running (pid ${this.currentPid})`);
    mkdirSync(path.dirname(this.spec.logFile), { recursive: true });
    mkdirSync(path.dirname(this.spec.pidFile), { recursive: true });
    const fd = openSync(this.spec.logFile, 'a');
    let child: ChildProcess;
    try {
      writeFileSync(fd, `--- ${new Date().toISOString()} starting ${this.spec.command} ${this.spec.args.join(' ')}\n`);
      child = spawn(this.spec.command, this.spec.args, { stdio: ['ignore', fd, fd], detached: this.opts.detached });
    } finally {
      closeSync(fd);
    }
    const pid = child.pid;
    if (pid === undefined) {
      await new Promise((r) => child.once('error', r).once('spawn', r));
      throw new Error(`${this.name}: ${this.spec.command} did not start (is it installed?)`);
    }
    child.on('error', () => {});
    if (this.opts.detached) child.unref();
    this.child = child;
    this.currentPid = pid;
    writeFileSync(this.spec.pidFile, `${pid}\n`);
    try {
      await waitHealthy(this.spec.health, {
        timeoutMs: this.opts.readyTimeoutMs ?? 90_000,
        stillRunning: () => pidAlive(pid),
      });
    } catch (err) {
      throw new Error(
        `${this.name} (pid ${pid}) did not become healthy: ${(err as Error).message}\n--- ${this.spec.logFile} (tail) ---\n${tail(this.spec.logFile)}`,
      );
    }
  }

  private async waitExit(pid: number, timeoutMs: number): Promise<boolean> {
    const child = this.child;
    if (child && child.pid === pid) {
      if (child.exitCode === null && child.signalCode === null) {
        let timer: NodeJS.Timeout | undefined;
        const exitedInTime = await Promise.race([
          new Promise<boolean>((r) => child.once('exit', () => r(true))),
          new Promise<boolean>((r) => (timer = setTimeout(() => r(false), timeoutMs))),
        ]);
        clearTimeout(timer);
        if (!exitedInTime) return false;
      }
      return true;
    }
    // not our child (a CLI run after the one that started it): poll /proc
    const deadline = Date.now() + timeoutMs;
    while (pidAlive(pid)) {
      if (Date.now() > deadline) return false;
      await sleep(50);
    }
    return true;
  }

  private async signal(sig: NodeJS.Signals, timeoutMs: number): Promise<boolean> {
    const pid = this.currentPid;
    if (!this.running()) return true;
    try {
      process.kill(pid, sig);
    } catch {
      return true;
    }
    return this.waitExit(pid, timeoutMs);
  }

  /** SIGTERM and wait for exit (SIGKILL after 30 s). */
  async stop(): Promise<void> {
    if (!(await this.signal('SIGTERM', 30_000))) await this.signal('SIGKILL', 10_000);
    rmSync(this.spec.pidFile, { force: true });
  }

  /** SIGKILL and wait for exit: a crash. */
  async kill(): Promise<void> {
    await this.signal('SIGKILL', 10_000);
    rmSync(this.spec.pidFile, { force: true });
  }

  /** Stops it if it runs, starts it again with the same ports, data and flags, waits until healthy. */
  async restart(): Promise<void> {
    if (this.running()) await this.stop();
    await this.start();
  }

  /** for an exit hook: SIGKILL without waiting (synchronous) */
  killNow(): void {
    if (this.running()) {
      try {
        process.kill(this.currentPid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}
