#!/usr/bin/env node
// The import-boundary check of `make check`: a module may import its own layer and the
// layers below it, never one above. Layers, bottom first, are listed in LAYERS (docs/flow.md
// explains them). scripts/layer-exceptions.txt may list upward imports, one per line; it is
// empty, so the check fails on any upward import (and on a listed one that no longer happens).
// --write-exceptions rewrites the list from what it finds.
//
// Usage: node scripts/check-layers.mjs [--write-exceptions]

import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const exceptionsFile = path.join(repoRoot, 'scripts/layer-exceptions.txt');

/** bottom first; a module is a folder (or a single file) under server/ or storage/ */
const LAYERS = [
  [
    'storage/errors',
    'storage/interface',
    'storage/read-fence',
    'server/log',
    'server/limits',
    'server/machinery',
    'server/features',
    'server/cbor',
  ],
  ['storage/etcd', 'storage/value'],
  ['storage/etcd3'],
  ['storage/cacher', 'storage/testing'],
  [
    'server/apis',
    'server/request',
    'server/protobuf',
    'server/selectors',
    'server/cel',
    'server/pki',
    'server/kubeconfig',
    'server/etcd-embedded',
    'server/streaming',
  ],
  ['server/registry', 'server/fieldmanager', 'server/allocators', 'server/encryption'],
  [
    'server/authn',
    'server/authz',
    'server/admission',
    'server/crd',
    'server/audit',
    'server/flowcontrol',
    'server/controllers',
    'server/metrics',
  ],
  ['server/endpoints'],
  ['server/http', 'server/nonresource', 'server/aggregator', 'server/proxy'],
  ['server/config', 'server/load', 'server/cli'],
  ['server/app', 'server/main', 'server/workers'],
];

const layerOf = new Map(LAYERS.flatMap((mods, i) => mods.map((m) => [m, i])));

/** `server/registry/core/pods.ts` -> `server/registry`; `server/app.ts` -> `server/app` */
function moduleOf(file) {
  const parts = file.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : `${parts[0]}/${parts[1].replace(/\.[jt]s$/, '')}`;
}

function sources(dir, out = []) {
  for (const entry of readdirSync(path.join(repoRoot, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) sources(rel, out);
    else if (rel.endsWith('.ts') && !rel.endsWith('.test.ts') && !rel.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

const IMPORT =
  /^\s*(?:import|export)\b[^'"]*?from\s+'(\.{1,2}\/[^']+)'|^\s*import\s+'(\.{1,2}\/[^']+)'|import\(\s*'(\.{1,2}\/[^']+)'\s*\)/gm;

const found = new Set();
const unknown = new Set();
for (const file of [...sources('storage'), ...sources('server')]) {
  const from = moduleOf(file);
  const fromLayer = layerOf.get(from);
  if (fromLayer === undefined) unknown.add(from);
  const text = readFileSync(path.join(repoRoot, file), 'utf8');
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3];
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
    if (!target.startsWith('server/') && !target.startsWith('storage/')) continue;
    const to = moduleOf(target);
    const toLayer = layerOf.get(to);
    if (toLayer === undefined) unknown.add(to);
    if (fromLayer !== undefined && toLayer !== undefined && toLayer > fromLayer) found.add(`${file} -> ${to}`);
  }
}

if (unknown.size > 0) {
  console.error(`check-layers: modules without a layer (add them to LAYERS): ${[...unknown].sort().join(', ')}`);
  process.exit(1);
}

if (process.argv.includes('--write-exceptions')) {
  const header =
    '# Upward imports that exist today (file -> module it reaches up to), none left: every import\n# runs down the layers, and scripts/check-layers.mjs fails on any upward import not listed here.\n';
  writeFileSync(exceptionsFile, header + [...found].sort().join('\n') + '\n');
  console.log(`check-layers: wrote ${found.size} exceptions`);
  process.exit(0);
}

const allowed = new Set(
  readFileSync(exceptionsFile, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#')),
);
const added = [...found].filter((e) => !allowed.has(e)).sort();
const gone = [...allowed].filter((e) => !found.has(e)).sort();
for (const e of added) console.error(`check-layers: upward import: ${e}`);
for (const e of gone) console.error(`check-layers: no longer happens, remove it from scripts/layer-exceptions.txt: ${e}`);
if (added.length > 0 || gone.length > 0) process.exit(1);
console.log(`check-layers: every import runs down (${allowed.size} known exceptions left)`);
