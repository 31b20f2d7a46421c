// kapi's process: parse the command line, start the server (app.ts), and turn SIGTERM and
// SIGINT into a graceful shutdown. A second signal during shutdown exits at once (the
// embedded etcd is still stopped by its exit hook and watchdog).

import { FlagError, parseKapiFlags, FLAG_SPECS, type KapiConfig } from './config/flags.js';
import { formatDuration } from './machinery/duration.js';
import type { FlagValue } from './machinery/flagset.js';
import { log, setVerbosity } from './log.js';
import { startApp, type App } from './app.js';
import { isSubcommand, runSubcommand, withSubcommandsHelp } from './cli/index.js';

function flagText(v: FlagValue | undefined, durationFlag: boolean): string {
  if (durationFlag && typeof v === 'number') return formatDuration(v);
  if (Array.isArray(v)) return `[${v.join(',')}]`;
  if (v !== null && typeof v === 'object') return Object.entries(v).map(([k, x]) => `${k}=${x}`).join(',');
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
  // pflag writes these to stderr as plain lines while parsing, before any log line
  for (const notice of config.flagDeprecationNotices) process.stderr.write(notice + '\n');
  setVerbosity(config.verbosity);
  logFlags(config);
  for (const warning of config.featureGateWarnings) log.warn(warning);

  let app: App | undefined;
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals++;
    if (signals > 1) {
      log.warn('second signal: exiting now', { signal });
      process.exit(1);
    }
    log.info('received signal, shutting down', { signal });
    // during start-up there is no app yet: exit, and the embedded etcd's exit hook stops it
    void (async () => {
      try {
        await app?.shutdown(`received ${signal}`);
      } catch (err) {
        log.error('shutdown failed', { error: (err as Error).stack ?? String(err) });
        process.exit(1);
      }
      process.exit(0);
    })();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('unhandledRejection', (reason) => {
    log.error('unhandled promise rejection', { error: reason instanceof Error ? reason.stack ?? reason.message : String(reason) });
  });

  try {
    app = await startApp(config);
  } catch (err) {
    // the message says what is wrong; the stack helps only when debugging (-v 1)
    const e = err as Error;
    log.error('kapi failed to start', { error: e.message ?? String(err) });
    log.v(1).info('stack', { stack: e.stack });
    process.exit(1);
  }
}

await main(process.argv.slice(2));
