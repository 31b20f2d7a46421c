#!/usr/bin/env node
// make check: every relative link in the project's documentation names a file or folder that
// exists, and none points at a line number (those rot with every edit; name the symbol).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const docs = ['README.md', 'docs/flow.md', 'e2e/README.md', 'scripts/README.md'];
const problems = [];
for (const doc of docs) {
  const file = path.join(repoRoot, doc);
  if (!existsSync(file)) continue;
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1];
    if (/^[a-z]+:/.test(target) || target.startsWith('#')) continue;
    const [file, anchor] = target.split('#');
    if (anchor && /^L\d+/.test(anchor)) problems.push(`${doc}: ${target} points at a line number`);
    if (!existsSync(path.resolve(path.dirname(path.join(repoRoot, doc)), file))) problems.push(`${doc}: ${target} does not exist`);
  }
}
for (const p of problems) console.error(`check-doc-links: ${p}`);
if (problems.length > 0) process.exit(1);
console.log('check-doc-links: every link resolves');
