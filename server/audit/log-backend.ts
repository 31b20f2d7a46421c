// The log backend (--audit-log-*): one JSON event per line, to a file or to stdout ("-").
// Writes are queued and done asynchronously, so a slow disk never holds a request; a full
// queue drops events with a log line. Rotation follows lumberjack, which kube-apiserver uses:
// past --audit-log-maxsize MB the file is renamed to `<name>-<UTC time>.<ext>` (gzipped with
// --audit-log-compress), backups past --audit-log-maxbackup or older than --audit-log-maxage
// days are removed.

import { createReadStream, createWriteStream, mkdirSync, openSync, closeSync, statSync } from 'node:fs';
import { open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { encodeJson } from '../request/encode.js';
import type { AuditBackend, AuditLogger } from './backend.js';

export interface LogBackendOptions {
  /** a file, or "-" for stdout */
  path: string;
  /** rotate past this many megabytes; 0 never rotates */
  maxSizeMB: number;
  /** backups kept; 0 keeps all */
  maxBackups: number;
  /** days a backup is kept; 0 keeps them regardless of age */
  maxAgeDays: number;
  compress: boolean;
  /** events queued before new ones are dropped (kube's batch buffer size) */
  bufferSize?: number;
  logger: AuditLogger;
  /** for tests: the clock that names backups */
  now?: () => Date;
}

const DEFAULT_BUFFER_SIZE = 10_000;
const MB = 1024 * 1024;

/** lumberjack's backup name: `audit.log` -> `audit-2006-01-02T15-04-05.000.log` */
export function backupName(file: string, at: Date): string {
  const dir = path.dirname(file);
  const ext = path.extname(file);
  const prefix = path.basename(file, ext);
  const stamp = at.toISOString().slice(0, 23).replace(/:/g, '-');
  return path.join(dir, `${prefix}-${stamp}${ext}`);
}

/** the time in a backup's name, or undefined when the name is not one of this file's backups */
export function backupTime(file: string, candidate: string): Date | undefined {
  const ext = path.extname(file);
  const prefix = path.basename(file, ext) + '-';
  let name = path.basename(candidate);
  if (name.endsWith('.gz')) name = name.slice(0, -3);
  if (!name.startsWith(prefix) || !name.endsWith(ext)) return undefined;
  const stamp = name.slice(prefix.length, name.length - ext.length);
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})\.(\d{3})$/.exec(stamp);
  if (!m) return undefined;
  const t = new Date(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`);
  return Number.isNaN(t.getTime()) ? undefined : t;
}

/** Creates the file (and its directory) at once, so a bad path fails start-up. */
function ensureLogFile(file: string): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  closeSync(openSync(file, 'a', 0o600));
}

/** the log backend; `processLines` takes events already serialized (one JSON line each, as
 *  the workers of a --workers replica send them to the primary, which alone writes the file) */
export interface LogBackend extends AuditBackend {
  processLines(lines: readonly string[]): void;
}

export function createLogBackend(opts: LogBackendOptions): LogBackend {
  const toStdout = opts.path === '-';
  if (!toStdout) ensureLogFile(opts.path);
  const bufferSize = opts.bufferSize ?? DEFAULT_BUFFER_SIZE;
  const maxBytes = opts.maxSizeMB > 0 ? opts.maxSizeMB * MB : 0;
  const now = opts.now ?? (() => new Date());
  let queue: string[] = [];
  let dropped = 0;
  let handle: FileHandle | undefined;
  let size = toStdout ? 0 : statSync(opts.path).size;
  let draining: Promise<void> | undefined;
  let lastBackupMs = 0;

  async function cleanup(): Promise<void> {
    if (opts.maxBackups <= 0 && opts.maxAgeDays <= 0) return;
    const dir = path.dirname(opts.path);
    const backups: { file: string; time: number }[] = [];
    for (const name of await readdir(dir)) {
      const t = backupTime(opts.path, name);
      if (t) backups.push({ file: path.join(dir, name), time: t.getTime() });
    }
    backups.sort((a, b) => b.time - a.time);
    const cutoff = opts.maxAgeDays > 0 ? now().getTime() - opts.maxAgeDays * 24 * 3600 * 1000 : -Infinity;
    for (const [i, b] of backups.entries()) {
      const tooMany = opts.maxBackups > 0 && i >= opts.maxBackups;
      if (tooMany || b.time < cutoff) await unlink(b.file).catch(() => undefined);
    }
  }

  async function rotate(): Promise<void> {
    await handle?.close();
    handle = undefined;
    // two rotations within one millisecond must not share a name
    const at = Math.max(now().getTime(), lastBackupMs + 1);
    lastBackupMs = at;
    const backup = backupName(opts.path, new Date(at));
    await rename(opts.path, backup);
    size = 0;
    if (opts.compress) {
      await pipeline(createReadStream(backup), createGzip(), createWriteStream(backup + '.gz', { mode: 0o600 }));
      await unlink(backup);
    }
    await cleanup();
  }

  async function writeFile(text: string): Promise<void> {
    const bytes = Buffer.byteLength(text);
    if (maxBytes > 0 && size > 0 && size + bytes > maxBytes) await rotate();
    handle ??= await open(opts.path, 'a', 0o600);
    await handle.write(text);
    size += bytes;
  }

  async function drain(): Promise<void> {
    while (queue.length > 0) {
      const lines = queue;
      queue = [];
      if (toStdout) {
        process.stdout.write(lines.join(''));
        continue;
      }
      // one write per line keeps rotation at line boundaries
      for (const line of lines) {
        try {
          await writeFile(line);
        } catch (err) {
          opts.logger.error('audit log write failed; event lost', { path: opts.path, error: (err as Error).message });
        }
      }
    }
  }

  function kick(): void {
    draining ??= drain().finally(() => {
      draining = undefined;
      if (queue.length > 0) kick();
    });
  }

  /** true (and the drop counted) when the queue has no room for another line */
  function full(): boolean {
    if (queue.length < bufferSize) return false;
    if (dropped++ % 1000 === 0) opts.logger.error('audit log buffer full; dropping events', { path: opts.path, dropped });
    return true;
  }

  return {
    name: 'log',
    processEvents(events) {
      for (const ev of events) if (!full()) queue.push(encodeJson(ev));
      kick();
    },
    processLines(lines) {
      for (const line of lines) if (!full()) queue.push(line);
      kick();
    },
    async shutdown() {
      while (draining) await draining;
      await handle?.close();
      handle = undefined;
    },
  };
}
