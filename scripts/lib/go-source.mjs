// What the generators that read Go declarations share: the repository root, `--name value`
// options, files read from a git mirror with `git show`, and a Go file's imports.

import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** the value after `--<name>` on the command line, or `fallback` */
export function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

/** runs git in a (bare) mirror and returns its output */
export function git(gitDir, ...args) {
  return execFileSync('git', ['-C', gitDir, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
}

/** the imports of a Go file: alias (or the import path's last element) -> import path */
export function goImports(text) {
  const out = new Map();
  const block = /^import\s*\(([\s\S]*?)^\)/m.exec(text);
  const lines = block ? block[1].split('\n') : [];
  const single = /^import\s+(\w+\s+)?"([^"]+)"/m.exec(text);
  if (single) lines.push(`${single[1] ?? ''}"${single[2]}"`);
  for (const line of lines) {
    const m = /^\s*(\w+)?\s*"([^"]+)"/.exec(line);
    if (m) out.set(m[1] ?? m[2].slice(m[2].lastIndexOf('/') + 1), m[2]);
  }
  return out;
}
