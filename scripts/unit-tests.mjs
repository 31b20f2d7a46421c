#!/usr/bin/env node
// Lists the unit tests: the test files (`**/*.test.ts`) that start no process. A test starts
// processes when it spawns one itself (imports node:child_process) or when anything it
// imports, directly or not, is storage/testing/etcd-server.ts, through which every test that
// runs etcd or kapi starts them. Prints their compiled paths (dist/...test.js), one a line.
// Usage: node scripts/unit-tests.mjs [--integration]   (the other tests instead)

import { readFileSync, readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PROCESS_STARTER = path.join(root, 'storage/testing/etcd-server.ts');
const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', '.tmp', 'data', 'cluster']);

function testFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name) && !entry.name.startsWith('.')) out.push(...testFiles(path.join(dir, entry.name)));
    } else if (entry.name.endsWith('.test.ts')) {
      out.push(path.join(dir, entry.name));
    }
  }
  return out;
}

const importRe = /^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;

/** the specifiers a module imports (static, side-effect and literal dynamic imports) */
function importsOf(file) {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(importRe)].map((m) => m[1] ?? m[2] ?? m[3]);
}

/** a relative specifier (`./x.js`) as the TypeScript source it compiles from */
function sourceOf(from, spec) {
  if (!spec.startsWith('.')) return undefined;
  const js = path.resolve(path.dirname(from), spec);
  for (const candidate of [js.replace(/\.js$/, '.ts'), js, `${js}.ts`, path.join(js, 'index.ts')]) {
    if (existsSync(candidate) && candidate.endsWith('.ts')) return candidate;
  }
  return undefined;
}

const directSources = new Map();
function sourcesImportedBy(file) {
  if (!directSources.has(file))
    directSources.set(
      file,
      importsOf(file)
        .map((spec) => sourceOf(file, spec))
        .filter(Boolean),
    );
  return directSources.get(file);
}

/** whether the starter is among the modules `file` imports, directly or not */
function reachesStarter(file) {
  const seen = new Set([file]);
  const queue = [file];
  while (queue.length > 0) {
    const next = queue.shift();
    if (next === PROCESS_STARTER) return true;
    for (const src of sourcesImportedBy(next)) {
      if (!seen.has(src)) {
        seen.add(src);
        queue.push(src);
      }
    }
  }
  return false;
}

const integration = process.argv.includes('--integration');
for (const file of testFiles(root).sort()) {
  const spawns = importsOf(file).some((s) => s === 'node:child_process' || s === 'child_process');
  const isIntegration = spawns || reachesStarter(file);
  if (isIntegration === integration) {
    console.log(path.join('dist', path.relative(root, file)).replace(/\.ts$/, '.js'));
  }
}
