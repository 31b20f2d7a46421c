// What one more cached Pod keeps on kapi's JS heap, and what holds it. Starts an etcd and a
// kapi as `make bench` does (with node's --heapsnapshot-signal), creates warm-up Pods, waits
// until no request's timers or garbage remain, takes a heap snapshot, creates the measured
// Pods, waits again and takes another. Prints the growth per Pod: the JS heap without compiled
// code, the memory outside it (the cache's stored bytes), then the new objects by type and by
// their retainer chain (the first path from a root that reaches them, numbers folded).
//
// Usage: node dist/bench/heap-growth.js [--pods N] [--warm-up N] [--wait-s S] [--depth D]
//   [--top N] [--keep DIR] (keep the two snapshots in DIR instead of removing them)

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { podBody, objectName } from './bodies.js';
import { TokenClient } from './client.js';
import { runConcurrent } from './measure.js';
import { startBenchEtcd, startBenchKapi, writeBenchToken } from './servers.js';
import { createNamespace, createPodOwner } from './setup.js';

interface Options {
  pods: number;
  warmUp: number;
  waitS: number;
  depth: number;
  top: number;
  keep?: string;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { pods: 3000, warmUp: 2000, waitS: 70, depth: 3, top: 25 };
  const numeric = { '--pods': 'pods', '--warm-up': 'warmUp', '--wait-s': 'waitS', '--depth': 'depth', '--top': 'top' } as const;
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i]!;
    const value = argv[i + 1] ?? '';
    if (flag === '--keep') o.keep = path.resolve(value);
    else if (flag in numeric) {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 0) throw new Error(`${flag} needs a whole number`);
      o[numeric[flag as keyof typeof numeric]] = n;
    } else throw new Error(`unknown flag ${flag}`);
  }
  if (o.pods < 1) throw new Error('--pods needs at least 1');
  return o;
}

/** the parts of a .heapsnapshot this reads */
interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** a snapshot's nodes with the first retainer of each (breadth of the edge list order) */
class HeapGraph {
  private readonly stride: number;
  private readonly typeAt: number;
  private readonly nameAt: number;
  private readonly idAt: number;
  private readonly sizeAt: number;
  readonly count: number;
  private readonly parent: Int32Array;
  private readonly parentEdge: string[];

  constructor(private readonly s: Snapshot) {
    const f = s.snapshot.meta.node_fields;
    this.stride = f.length;
    this.typeAt = f.indexOf('type');
    this.nameAt = f.indexOf('name');
    this.idAt = f.indexOf('id');
    this.sizeAt = f.indexOf('self_size');
    this.count = s.nodes.length / this.stride;
    this.parent = new Int32Array(this.count).fill(-1);
    this.parentEdge = new Array<string>(this.count);
    const ef = s.snapshot.meta.edge_fields;
    const edgeStride = ef.length;
    const edgeType = ef.indexOf('type');
    const edgeName = ef.indexOf('name_or_index');
    const edgeTo = ef.indexOf('to_node');
    const edgeTypes = s.snapshot.meta.edge_types[0];
    const countAt = f.indexOf('edge_count');
    let e = 0;
    for (let n = 0; n < this.count; n++) {
      const edges = s.nodes[n * this.stride + countAt]!;
      for (let k = 0; k < edges; k++, e += edgeStride) {
        const kind = edgeTypes[s.edges[e + edgeType]!];
        if (kind === 'weak' || kind === 'shortcut') continue;
        const to = s.edges[e + edgeTo]! / this.stride;
        if (this.parent[to] !== -1 || to === n) continue;
        this.parent[to] = n;
        const name = s.edges[e + edgeName]!;
        // element indexes and numbered properties (a hash table's slots) fold into one
        const named = kind === 'element' || kind === 'hidden' ? '' : s.strings[name]!;
        this.parentEdge[to] = named === '' || /^\d+$/.test(named) ? '[i]' : `.${named}`;
      }
    }
  }

  type(n: number): string {
    return this.s.snapshot.meta.node_types[0][this.s.nodes[n * this.stride + this.typeAt]!]!;
  }

  name(n: number): string {
    return this.s.strings[this.s.nodes[n * this.stride + this.nameAt]!]!;
  }

  id(n: number): number {
    return this.s.nodes[n * this.stride + this.idAt]!;
  }

  size(n: number): number {
    return this.s.nodes[n * this.stride + this.sizeAt]!;
  }

  /** `object:Pod` style; strings and code without their (per object) names */
  kind(n: number): string {
    const type = this.type(n);
    return type === 'object' || type === 'closure' || type === 'native' ? `${type}:${this.name(n)}` : type;
  }

  /** ` <-.edge- holder` for `depth` holders up from `n` */
  retainers(n: number, depth: number): string {
    let out = '';
    for (let d = 0, cur = n; d < depth && this.parent[cur]! >= 0; d++) {
      const holder = this.parent[cur]!;
      out += ` <-${this.parentEdge[cur]}- ${this.kind(holder).replace(/^object:/, '')}`;
      cur = holder;
    }
    return out;
  }
}

function readSnapshot(file: string): HeapGraph {
  return new HeapGraph(JSON.parse(readFileSync(file, 'utf8')) as Snapshot);
}

const fmt = (bytes: number, per: number) => (bytes / per).toFixed(0).padStart(6);

interface Totals {
  heap: number;
  code: number;
  native: number;
}

function totals(g: HeapGraph): Totals {
  const t = { heap: 0, code: 0, native: 0 };
  for (let n = 0; n < g.count; n++) {
    const type = g.type(n);
    if (type === 'code') t.code += g.size(n);
    else if (type === 'native') t.native += g.size(n);
    else t.heap += g.size(n);
  }
  return t;
}

/** the first snapshot's totals and object ids (the snapshot itself is let go: both whole
 *  would need twice the memory) */
function summarize(file: string): { totals: Totals; ids: Set<number> } {
  const g = readSnapshot(file);
  const ids = new Set<number>();
  for (let n = 0; n < g.count; n++) ids.add(g.id(n));
  return { totals: totals(g), ids };
}

function report(beforeFile: string, afterFile: string, o: Options): void {
  const { totals: b, ids: oldIds } = summarize(beforeFile);
  const after = readSnapshot(afterFile);
  const a = totals(after);
  const per = o.pods;
  console.log(
    `per Pod: JS heap without code ${fmt(a.heap - b.heap, per)} B, outside the heap ${fmt(a.native - b.native, per)} B, code ${fmt(a.code - b.code, per)} B`,
  );
  const byKind = new Map<string, [number, number]>();
  const byChain = new Map<string, [number, number]>();
  for (let n = 0; n < after.count; n++) {
    if (oldIds.has(after.id(n)) || after.type(n) === 'code') continue;
    const kind = after.kind(n);
    const size = after.size(n);
    const k = byKind.get(kind) ?? [0, 0];
    byKind.set(kind, [k[0] + 1, k[1] + size]);
    const chain = kind + after.retainers(n, o.depth);
    const c = byChain.get(chain) ?? [0, 0];
    byChain.set(chain, [c[0] + 1, c[1] + size]);
  }
  const show = (title: string, m: Map<string, [number, number]>) => {
    console.log(`\nnew objects by ${title} (B per Pod, count per Pod):`);
    for (const [key, [count, size]] of [...m].sort((x, y) => y[1][1] - x[1][1]).slice(0, o.top)) {
      console.log(`${fmt(size, per)} ${(count / per).toFixed(2).padStart(6)}  ${key}`);
    }
  };
  show('type', byKind);
  show('retainer chain', byChain);
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'kapi-heap-'));
  const snapshots = o.keep ?? path.join(tmp, 'snapshots');
  mkdirSync(snapshots, { recursive: true });
  const { token, tokenFile } = writeBenchToken(tmp);
  const etcd = await startBenchEtcd();
  const kapi = await startBenchKapi(etcd, tokenFile, {
    nodeArgs: ['--heapsnapshot-signal=SIGUSR2', '--diagnostic-dir', snapshots],
  });
  const client = new TokenClient(kapi.url, kapi.http.creds.ca, token, 64);
  const log = (msg: string) => console.error(`[heap ${new Date().toISOString().slice(11, 19)}] ${msg}`);
  try {
    const createPods = async (ns: string, n: number) => {
      await createNamespace(client, ns);
      const owner = await createPodOwner(client, ns, `${ns}-app-5f6d8c7b9a`);
      await runConcurrent(n, 64, (i) =>
        client.expect(201, 'POST', `/api/v1/namespaces/${ns}/pods`, { body: podBody(objectName('pod', i), i, owner) }).then(() => {}),
      );
    };
    const snapshot = async (): Promise<string> => {
      const known = new Set(readdirSync(snapshots));
      process.kill(kapi.pid, 'SIGUSR2');
      for (;;) {
        await new Promise((r) => setTimeout(r, 1000));
        const fresh = readdirSync(snapshots).find((f) => f.endsWith('.heapsnapshot') && !known.has(f));
        if (!fresh) continue;
        const file = path.join(snapshots, fresh);
        const size = statSync(file).size;
        await new Promise((r) => setTimeout(r, 2000));
        if (statSync(file).size === size) return file;
      }
    };
    log(`${o.warmUp} warm-up Pods, then ${o.waitS} s`);
    if (o.warmUp > 0) await createPods('heap-warm', o.warmUp);
    await new Promise((r) => setTimeout(r, o.waitS * 1000));
    const beforeFile = await snapshot();
    log(`${o.pods} Pods, then ${o.waitS} s`);
    await createPods('heap', o.pods);
    await new Promise((r) => setTimeout(r, o.waitS * 1000));
    const afterFile = await snapshot();
    report(beforeFile, afterFile, o);
  } finally {
    client.close();
    await kapi.stop().catch(() => {});
    await etcd.stop().catch(() => {});
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
