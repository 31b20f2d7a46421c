// kapi's process: parse the command line, start the server (app.ts), and turn SIGTERM and
// SIGINT into a graceful shutdown. A second signal during shutdown exits at once (the
// embedded etcd is still stopped by its exit hook and watchdog). With --workers N > 1 this
// process is the primary (workers/primary.ts) and the workers it forks run this file again.

import { FlagError, parseKapiFlags, FLAG_SPECS, type KapiConfig } from './config/flags.js';
import { formatDuration } from './machinery/duration.js';
import type { FlagValue } from './machinery/flagset.js';
import { log, setVerbosity } from './log.js';
import { startApp, type App } from './app.js';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { isSubcommand, runSubcommand, withSubcommandsHelp } from './cli/index.js';
import { startPrimary, type Primary } from './workers/primary.js';
import { workerRoleFromEnv, type WorkerRole } from './workers/role.js';
import { workerReady } from './workers/messages.js';

// Buffers under half the pool size are slices of a shared pool; node's 8 KiB pool is refilled
// every few requests, and each refill is a new ArrayBuffer for the collector to track. With
// 128 KiB: GETs 13% and creates 4% less CPU, and no more memory per cached Pod or per watcher
// (bench/results.md, "A bigger Buffer pool").
Buffer.poolSize = 128 * 1024;

function flagText(v: FlagValue | undefined, durationFlag: boolean): string {
  if (durationFlag && typeof v === 'number') return formatDuration(v);
  if (Array.isArray(v)) return `[${v.join(',')}]`;
  if (v !== null && typeof v === 'object')
    return Object.entries(v)
      .map(([k, x]) => `${k}=${x}`)
      .join(',');
  return String(v);
}

/** kube-apiserver logs every flag's value at -v 1; so do we */
function logFlags(config: KapiConfig): void {
  const v1 = log.v(1);
  for (const spec of FLAG_SPECS) {
    v1.info(`FLAG: --${spec.name}=${JSON.stringify(flagText(config.values.get(spec.name), spec.kind === 'duration'))}`);
  }
}

async function main(argv: string[]): Promise<void> {
  if (isSubcommand(argv[0])) {
    process.exitCode = await runSubcommand(argv);
    return;
  }
  let outcome;
  try {
    outcome = parseKapiFlags(argv);
  } catch (err) {
    if (err instanceof FlagError) {
      process.stderr.write(`Error: ${err.message}\nRun 'kapi --help' for the list of flags.\n`);
      process.exit(1);
    }
    throw err;
  }
  if (outcome.kind !== 'config') {
    const text = outcome.kind === 'help' ? withSubcommandsHelp(outcome.text) : outcome.text;
    process.stdout.write(text.endsWith('\n') ? text : text + '\n');
    return;
  }
  const config = outcome.config;
  const worker = workerRoleFromEnv();
  // the primary has said all this already
  if (!worker) {
    // pflag writes these to stderr as plain lines while parsing, before any log line
    for (const notice of config.flagDeprecationNotices) process.stderr.write(notice + '\n');
  }
  setVerbosity(config.verbosity);
  if (!worker) {
    logFlags(config);
    for (const warning of config.featureGateWarnings) log.warn(warning);
  }
  process.on('unhandledRejection', (reason) => {
    log.error('unhandled promise rejection', { error: reason instanceof Error ? (reason.stack ?? reason.message) : String(reason) });
  });
  const workerCount = workerCountOf(config.values.get('workers'));
  if (worker) await runWorker(config, worker);
  else if (workerCount > 1) await runPrimary(config, workerCount);
  else await runSingle(config);
}

/** --workers: 0 means one per core */
function workerCountOf(flag: number): number {
  return flag === 0 ? os.availableParallelism() : flag;
}

/** startApp, with the message and the exit code of a failed start */
async function start(config: KapiConfig, worker?: WorkerRole): Promise<App> {
  try {
    return await startApp(config, worker);
  } catch (err) {
    // the message says what is wrong; the stack helps only when debugging (-v 1)
    const e = err as Error;
    log.error('kapi failed to start', { error: e.message ?? String(err) });
    log.v(1).info('stack', { stack: e.stack });
    process.exit(1);
  }
}

/** shuts `app` down (when there is one yet) and exits */
function shutdownAndExit(app: App | undefined, reason: string): void {
  // during start-up there is no app yet: exit, and the embedded etcd's exit hook stops it
  void (async () => {
    try {
      await app?.shutdown(reason);
    } catch (err) {
      log.error('shutdown failed', { error: (err as Error).stack ?? String(err) });
      process.exit(1);
    }
    process.exit(0);
  })();
}

/** one process serves the replica */
async function runSingle(config: KapiConfig): Promise<void> {
  let app: App | undefined;
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals++;
    if (signals > 1) {
      log.warn('second signal: exiting now', { signal });
      process.exit(1);
    }
    log.info('received signal, shutting down', { signal });
    shutdownAndExit(app, `received ${signal}`);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  app = await start(config);
}

/** one of the replica's worker processes: the primary decides when it stops */
async function runWorker(config: KapiConfig, worker: WorkerRole): Promise<void> {
  let app: App | undefined;
  let stopping = false;
  const stop = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    log.info('worker shutting down', { worker: worker.index, reason });
    shutdownAndExit(app, reason);
  };
  // the primary sends SIGTERM; a Ctrl-C reaches the whole process group, and the primary
  // turns it into that same SIGTERM, so SIGINT waits for it (the primary kills a worker that
  // does not stop in time)
  process.on('SIGTERM', (signal) => stop(`received ${signal}`));
  process.on('SIGINT', () => undefined);
  // the primary is gone: nobody restarts or stops this worker any more
  process.on('disconnect', () => stop('the primary process exited'));
  app = await start(config, worker);
  if (stopping) return;
  process.send?.(workerReady);
}

/** the primary of a --workers replica (workers/primary.ts) */
async function runPrimary(config: KapiConfig, workerCount: number): Promise<void> {
  let primary: Primary | undefined;
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals++;
    if (signals > 1) {
      log.warn('second signal: killing the workers and exiting', { signal });
      void (primary?.kill() ?? Promise.resolve()).finally(() => process.exit(1));
      return;
    }
    log.info('received signal, shutting down', { signal });
    void (async () => {
      try {
        await primary?.shutdown(`received ${signal}`);
      } catch (err) {
        log.error('shutdown failed', { error: (err as Error).stack ?? String(err) });
        process.exit(1);
      }
      process.exit(0);
    })();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    primary = await startPrimary(config, workerCount, fileURLToPath(import.meta.url));
  } catch (err) {
    const e = err as Error;
    log.error('kapi failed to start', { error: e.message ?? String(err) });
    log.v(1).info('stack', { stack: e.stack });
    process.exit(1);
  }
  const code = await primary.failed;
  await primary.kill();
  process.exit(code);
}

await main(process.argv.slice(2));
