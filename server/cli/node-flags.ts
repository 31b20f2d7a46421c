// The node flags kapi runs with live in one place: bin/kapi's shebang line, which is what runs
// when a user, the Makefile or the image starts bin/kapi itself. Launchers that start it as
// `node bin/kapi` (the test harness, the local cluster) read the same line here, so that every
// kapi runs with the flags it is measured with.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** the node flags of a `#!/usr/bin/env -S node <flags>` (or `#!… node <flags>`) first line */
export function nodeFlagsOfShebang(firstLine: string): string[] {
  if (!firstLine.startsWith('#!')) return [];
  const words = firstLine.slice(2).trim().split(/\s+/);
  const node = words.findIndex((w) => w === 'node' || w.endsWith('/node'));
  return node < 0 ? [] : words.slice(node + 1).filter((w) => w.startsWith('--'));
}

/** the node flags bin/kapi (or the script at `binPath`) runs itself with; none if unreadable */
export function kapiNodeFlags(binPath: string): string[] {
  let text: string;
  try {
    text = readFileSync(binPath, 'utf8');
  } catch {
    return [];
  }
  const end = text.indexOf('\n');
  return nodeFlagsOfShebang(end < 0 ? text : text.slice(0, end));
}

/** whether this process got node flag `name` (`--name` or `--name=…`), on its command line or
 *  in NODE_OPTIONS */
export function startedWithNodeFlag(name: string): boolean {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  return given.some((a) => a === name || a.startsWith(`${name}=`));
}

/** bin/kapi of the checkout or image this module runs from (dist/server/cli/ -> bin/) */
const ownKapiBin = (): string => fileURLToPath(new URL('../../../bin/kapi', import.meta.url));

/** the flags of bin/kapi's first line this process did not get (a launcher that runs
 *  `node bin/kapi` skips that line) */
export function missingKapiNodeFlags(binPath: string = ownKapiBin()): string[] {
  return kapiNodeFlags(binPath).filter((flag) => !startedWithNodeFlag(flag.split('=')[0]!));
}
