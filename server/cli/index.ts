// kapi's subcommands (`kapi <name> ...`); anything else on the command line is the server's flags.

import { CERTS_SUMMARY, runCerts } from './certs.js';
import { LOAD_SUMMARY, runLoad } from '../load/command.js';

type Runner = (argv: readonly string[]) => Promise<number>;

const SUBCOMMANDS: ReadonlyMap<string, Runner> = new Map([
  ['certs', runCerts],
  ['load', runLoad],
]);

const SUBCOMMANDS_USAGE = [`  kapi ${CERTS_SUMMARY}`, `  kapi ${LOAD_SUMMARY}`, "  (run 'kapi <subcommand> --help' for its flags)"];

/** The server's --help text with the subcommands listed under its usage line. */
export function withSubcommandsHelp(help: string): string {
  const usage = '  kapi [flags]\n';
  const at = help.indexOf(usage);
  if (at < 0) return `${help}\n\nSubcommands:\n${SUBCOMMANDS_USAGE.join('\n')}\n`;
  const end = at + usage.length;
  return help.slice(0, end) + SUBCOMMANDS_USAGE.join('\n') + '\n' + help.slice(end);
}

export function isSubcommand(arg: string | undefined): boolean {
  return arg !== undefined && SUBCOMMANDS.has(arg);
}

/** Runs `argv[0]`'s subcommand with the rest; returns the exit code. */
export async function runSubcommand(argv: readonly string[]): Promise<number> {
  const run = SUBCOMMANDS.get(argv[0] ?? '');
  if (!run) throw new Error(`unknown subcommand ${argv[0]}`);
  return run(argv.slice(1));
}
