// Reads the generated JSON artifacts (server/apis/generated/, written by
// scripts/generate-schemas.mjs). They are read at run time instead of imported so that
// the compiler does not type-check a quarter megabyte of literal types; the build copies
// them next to the compiled modules (scripts/copy-assets.mjs), and a checkout that was
// compiled without the copy still finds them in the source tree.

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const candidates = (name: string): URL[] => [
  new URL(`./generated/${name}`, import.meta.url),
  // dist/server/apis/ -> server/apis/generated/
  new URL(`../../../server/apis/generated/${name}`, import.meta.url),
];

export function readGeneratedJson(name: string): unknown {
  for (const url of candidates(name)) {
    if (existsSync(url)) return JSON.parse(readFileSync(url, 'utf8')) as unknown;
  }
  const tried = candidates(name)
    .map((u) => fileURLToPath(u))
    .join(', ');
  throw new Error(`generated file ${name} not found (tried ${tried}); run npm run generate`);
}
