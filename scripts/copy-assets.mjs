#!/usr/bin/env node
// Copies the generated JSON artifacts next to the compiled modules (dist/server/apis/generated/,
// dist/server/protobuf/generated/),
// so that a dist/ shipped without the sources still finds them. Runs after `tsc` in `npm run build`.

import { cpSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const copies = [
  ['server/apis/generated', 'dist/server/apis/generated'],
  ['server/protobuf/generated', 'dist/server/protobuf/generated'],
];

for (const [from, to] of copies) {
  const src = join(root, from);
  if (!existsSync(src)) throw new Error(`${from} is missing; run npm run generate`);
  const dst = join(root, to);
  mkdirSync(dst, { recursive: true });
  for (const name of readdirSync(src).filter((n) => n.endsWith('.json'))) cpSync(join(src, name), join(dst, name));
}
