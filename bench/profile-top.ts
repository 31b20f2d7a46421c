// Reads a V8 .cpuprofile (node --cpu-prof) and prints the functions with the most self time
// and the most inclusive time, each as a share of the profile's samples.
//
// Usage: node dist/bench/profile-top.js FILE.cpuprofile [--top N] [--filter SUBSTRING]
//          [--callers FUNCTION]  (where FUNCTION's inclusive time comes from, by calling frame)

import { readFileSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
}

function label(n: ProfileNode): string {
  const f = n.callFrame;
  const file = f.url ? path.basename(f.url.replace(/^file:\/\//, '')) : '';
  return `${f.functionName || '(anonymous)'} ${file}${file ? `:${f.lineNumber + 1}` : ''}`;
}

function main(): void {
  const [file, ...rest] = process.argv.slice(2);
  if (!file) throw new Error('usage: profile-top FILE.cpuprofile [--top N] [--filter S]');
  const top = Number(rest[rest.indexOf('--top') + 1]) || 40;
  const filter = rest.includes('--filter') ? rest[rest.indexOf('--filter') + 1]! : '';
  const prof = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const hits = new Map<number, number>();
  for (const s of prof.samples) hits.set(s, (hits.get(s) ?? 0) + 1);
  const callersOf = rest.includes('--callers') ? rest[rest.indexOf('--callers') + 1]! : '';
  const callers = new Map<string, number>();
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  for (const [id, count] of hits) {
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(idle)') continue;
    total += count;
    self.set(label(node), (self.get(label(node)) ?? 0) + count);
    // each function counts once per sample even when it recurses
    const seen = new Set<string>();
    let callerOfOutermost: string | undefined;
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const l = label(byId.get(cur)!);
      if (callersOf && byId.get(cur)!.callFrame.functionName === callersOf) {
        const up = parent.get(cur);
        callerOfOutermost = up === undefined ? '(none)' : label(byId.get(up)!);
      }
      if (seen.has(l)) continue;
      seen.add(l);
      inclusive.set(l, (inclusive.get(l) ?? 0) + count);
    }
    if (callerOfOutermost) callers.set(callerOfOutermost, (callers.get(callerOfOutermost) ?? 0) + count);
  }
  const show = (title: string, m: Map<string, number>) => {
    console.log(`\n${title} (of ${total} busy samples)`);
    [...m]
      .filter(([l]) => l.includes(filter))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .forEach(([l, c]) => console.log(`${((100 * c) / total).toFixed(1).padStart(5)}%  ${l}`));
  };
  if (callersOf) return show(`callers of ${callersOf}`, callers);
  show('self', self);
  show('inclusive', inclusive);
}

main();
