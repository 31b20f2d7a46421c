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

/** reference data beside the repository: `../shared/<rel>` */
export function sharedPath(rel) {
  return path.join(repoRoot, '..', 'shared', rel);
}

/**
 * The git directory of a repository's Go source, e.g. goSource('kubernetes+api'): the
 * `<owner>+<name>/repo` folder under KAPI_GO_SOURCES (scripts/README.md). These sources live
 * outside the repository, so there is no default; '' when the variable is unset.
 */
export function goSource(name) {
  const root = process.env.KAPI_GO_SOURCES;
  return root ? path.join(root, name, 'repo') : '';
}

/** runs git in a (bare) mirror and returns its output */
export function git(gitDir, ...args) {
  if (!gitDir) {
    throw new Error('this generator reads Go sources: set KAPI_GO_SOURCES or pass the --go-* flags (scripts/README.md)');
  }
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
