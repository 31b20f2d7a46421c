// kapi's first benchmark: every figure beside raw etcd measured in the same run, on the same
// machine, against the same etcd member (the machine is shared and noisy, so only the ratios
// mean something).
//
//   create  N objects with C concurrent clients  | etcd: txn create_revision==0 -> put, same bytes
//   get     N single-object GETs                 | etcd: range of one key
//   list    consistent LIST of P pods (rv unset) | etcd: linearizable range of the prefix (paged)
//   watch   one write -> all W watch streams     | etcd: W watchers multiplexed on our client
//
// Beside the latencies, the CPU time kapi's and etcd's processes used per operation (from
// /proc): far less sensitive to a busy machine than latencies, so it shows what a change to
// kapi's code costs or saves even when the latencies are noise.
//
// Usage: node dist/bench/run.js [--objects 2000] [--concurrency 32] [--gets 2000]
//          [--pods 10000] [--list-repeats 5] [--watchers 1000] [--watch-events 10]
//          [--watch-transport h1|h2] [--out bench/results.md] [--keep-going]

import { readFileSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createEtcdClient } from '../storage/etcd/client.js';
import { prefixEnd, type EtcdClient, type EtcdWatcher } from '../storage/etcd/types.js';
import { KubeHttpClient, repoRoot, startEtcd, startKapi, type EtcdProcess, type KapiProcess } from '../e2e/harness.js';
import { spawnSync } from 'node:child_process';

// ---- options ---------------------------------------------------------------------------

interface Options {
  objects: number;
  concurrency: number;
  gets: number;
  pods: number;
  listRepeats: number;
  watchers: number;
  watchEvents: number;
  watchTransport: 'h1' | 'h2';
  out: string;
}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    objects: 2000,
    concurrency: 32,
    gets: 2000,
    pods: 10000,
    listRepeats: 5,
    watchers: 1000,
    watchEvents: 10,
    watchTransport: 'h1',
    out: path.join(repoRoot, 'bench', 'results.md'),
  };
  const ints: Record<string, keyof Options> = {
    '--objects': 'objects',
    '--concurrency': 'concurrency',
    '--gets': 'gets',
    '--pods': 'pods',
    '--list-repeats': 'listRepeats',
    '--watchers': 'watchers',
    '--watch-events': 'watchEvents',
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split('=', 2) as [string, string | undefined];
    const value = () => inline ?? argv[++i] ?? '';
    if (flag === '--help' || flag === '-h') {
      console.log(
        'node dist/bench/run.js [--objects N] [--concurrency C] [--gets N] [--pods N] [--list-repeats R]\n' +
          '  [--watchers W] [--watch-events E] [--watch-transport h1|h2] [--out FILE]',
      );
      process.exit(0);
    } else if (flag in ints) {
      const n = Number(value());
      if (!Number.isInteger(n) || n <= 0) throw new Error(`${flag} needs a positive integer`);
      (o as unknown as Record<string, number>)[ints[flag]!] = n;
    } else if (flag === '--watch-transport') {
      const v = value();
      if (v !== 'h1' && v !== 'h2') throw new Error('--watch-transport is h1 or h2');
      o.watchTransport = v;
    } else if (flag === '--out') {
      o.out = path.resolve(value());
    } else {
      throw new Error(`unknown flag ${flag}`);
    }
  }
  return o;
}

// ---- measuring -------------------------------------------------------------------------

interface Run {
  /** per-operation latencies, ms */
  latencies: number[];
  /** wall time of the whole run, ms */
  wallMs: number;
  errors: number;
  firstError?: string;
}

/** runs fn(0..n-1) with `concurrency` workers; records each call's latency */
async function runConcurrent(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<Run> {
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  let firstError: string | undefined;
  const start = performance.now();
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= n) return;
      const t0 = performance.now();
      try {
        await fn(i);
        latencies.push(performance.now() - t0);
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  return { latencies, wallMs: performance.now() - start, errors, firstError };
}

function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
const median = (values: number[]) => percentile(values, 50);

interface Row {
  operation: string;
  unit: string;
  kapi: number;
  etcd: number;
  /** true: bigger is better (throughput); the ratio is then etcd/kapi "times slower" */
  higherIsBetter: boolean;
}

const rows: Row[] = [];
const notes: string[] = [];

// ---- CPU time ----------------------------------------------------------------------------

const CLOCK_TICKS_PER_SECOND = (() => {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number((r.stdout ?? '').trim());
  return Number.isInteger(n) && n > 0 ? n : 100;
})();

/** user+system CPU time a process has used, ms; undefined where /proc cannot tell */
function cpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // after "pid (comm) ": state is field 3, utime 14, stime 15
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? (ticks * 1000) / CLOCK_TICKS_PER_SECOND : undefined;
  } catch {
    return undefined;
  }
}

interface CpuRow {
  operation: string;
  /** kapi's CPU ms per operation, and etcd's while serving kapi */
  kapiMs: number;
  etcdForKapiMs: number;
  /** etcd's CPU ms per operation of the raw side (the bench's own client not counted) */
  etcdRawMs: number;
}

const cpuRows: CpuRow[] = [];
const pids = { kapi: 0, etcd: 0 };

interface CpuUse {
  kapi: number;
  etcd: number;
}

/** runs fn and reports the CPU time kapi and etcd used meanwhile */
async function withCpu<T>(fn: () => Promise<T>): Promise<[T, CpuUse]> {
  const k0 = cpuMs(pids.kapi);
  const e0 = cpuMs(pids.etcd);
  const result = await fn();
  const k1 = cpuMs(pids.kapi);
  const e1 = cpuMs(pids.etcd);
  const delta = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? NaN : b - a);
  return [result, { kapi: delta(k0, k1), etcd: delta(e0, e1) }];
}

function addCpu(operation: string, ops: number, kapiSide: CpuUse, rawSide: CpuUse): void {
  cpuRows.push({ operation, kapiMs: kapiSide.kapi / ops, etcdForKapiMs: kapiSide.etcd / ops, etcdRawMs: rawSide.etcd / ops });
}

function cpuTable(): string {
  const head = ['operation', 'kapi CPU ms/op', 'etcd CPU ms/op (for kapi)', 'etcd CPU ms/op (raw)'];
  const body = cpuRows.map((r) => [r.operation, fmt(r.kapiMs), fmt(r.etcdForKapiMs), fmt(r.etcdRawMs)]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}

function addRuns(name: string, kapi: Run, etcd: Run): void {
  for (const [label, run] of [['kapi', kapi], ['etcd', etcd]] as const) {
    if (run.errors) notes.push(`${name}: ${run.errors} ${label} errors (first: ${run.firstError})`);
  }
  const tput = (r: Run) => (r.latencies.length / r.wallMs) * 1000;
  rows.push({ operation: `${name} throughput`, unit: 'ops/s', kapi: tput(kapi), etcd: tput(etcd), higherIsBetter: true });
  rows.push({ operation: `${name} latency p50`, unit: 'ms', kapi: median(kapi.latencies), etcd: median(etcd.latencies), higherIsBetter: false });
  rows.push({ operation: `${name} latency p99`, unit: 'ms', kapi: percentile(kapi.latencies, 99), etcd: percentile(etcd.latencies, 99), higherIsBetter: false });
}

function fmt(n: number): string {
  if (!Number.isFinite(n)) return 'n/a';
  if (n >= 100) return n.toFixed(0);
  if (n >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

/** how many times slower kapi is than raw etcd (1.0 = as fast) */
function slowdown(r: Row): number {
  return r.higherIsBetter ? r.etcd / r.kapi : r.kapi / r.etcd;
}

function table(): string {
  const head = ['operation', 'unit', 'kapi', 'raw etcd', 'kapi slower by'];
  const body = rows.map((r) => [r.operation, r.unit, fmt(r.kapi), fmt(r.etcd), `${fmt(slowdown(r))}x`]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}

const log = (msg: string) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);

// ---- the benchmark ---------------------------------------------------------------------

const NS = 'bench';
const LIST_NS = 'bench-list';
const WATCH_NS = 'bench-watch';
const RAW = '/bench-raw';

function configMap(name: string, i: number): object {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, labels: { app: 'bench', shard: String(i % 16) } },
    data: { index: String(i), payload: 'x'.repeat(256) },
  };
}

function pod(name: string, i: number): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'bench-list', shard: String(i % 16) } },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'registry.example/app:1.0',
          ports: [{ containerPort: 8080 }],
          env: [{ name: 'INDEX', value: String(i) }],
          resources: { requests: { cpu: '10m', memory: '16Mi' } },
        },
      ],
    },
  };
}

async function expectStatus(p: Promise<{ status: number; body: string }>, want: number): Promise<void> {
  const res = await p;
  if (res.status !== want) throw new Error(`HTTP ${res.status} (want ${want}): ${res.body.slice(0, 300)}`);
}

/** copies the values kapi stored under `from` to `to` (same bytes), for the raw etcd side */
async function copyPrefix(etcd: EtcdClient, from: string, to: string, concurrency: number): Promise<number> {
  const all = await etcd.rangeAll({ key: Buffer.from(from), rangeEnd: prefixEnd(Buffer.from(from)) });
  await runConcurrent(all.kvs.length, concurrency, async (i) => {
    const kv = all.kvs[i]!;
    await etcd.put(Buffer.from(to + kv.key.toString().slice(from.length)), kv.value);
  });
  return all.kvs.length;
}

async function benchCreateAndGet(o: Options, client: KubeHttpClient, etcd: EtcdClient): Promise<void> {
  await expectStatus(client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }), 201);
  const base = `/api/v1/namespaces/${NS}/configmaps`;

  log(`create: warm-up`);
  await runConcurrent(200, o.concurrency, (i) => expectStatus(client.post(base, configMap(`warm-${i}`, i)), 201));

  log(`create: kapi, ${o.objects} configmaps, concurrency ${o.concurrency}`);
  const [kapiCreate, kapiCreateCpu] = await withCpu(() =>
    runConcurrent(o.objects, o.concurrency, (i) => expectStatus(client.post(base, configMap(`cm-${i}`, i)), 201)),
  );

  // the raw side writes exactly the bytes kapi stored
  const stored = await etcd.rangeAll({
    key: Buffer.from(`/registry/configmaps/${NS}/cm-`),
    rangeEnd: prefixEnd(Buffer.from(`/registry/configmaps/${NS}/cm-`)),
  });
  if (stored.kvs.length !== o.objects) notes.push(`create: kapi stored ${stored.kvs.length} of ${o.objects} configmaps`);
  const values = stored.kvs.map((kv) => ({ key: Buffer.from(`${RAW}${kv.key.toString().slice('/registry'.length)}`), value: kv.value }));
  const rawCreate = (key: Buffer, value: Buffer) =>
    etcd
      .txn({
        compare: [{ key, target: 'CREATE', result: 'EQUAL', value: 0 }],
        success: [{ put: { key, value } }],
        failure: [],
      })
      .then((r) => {
        if (!r.succeeded) throw new Error(`raw create of ${key.toString()} found the key`);
      });
  log('create: etcd warm-up');
  await runConcurrent(200, o.concurrency, (i) => rawCreate(Buffer.from(`${RAW}/warm/${i}`), values[i % values.length]!.value));
  log(`create: raw etcd, ${values.length} txn puts, concurrency ${o.concurrency}`);
  const [etcdCreate, etcdCreateCpu] = await withCpu(() =>
    runConcurrent(values.length, o.concurrency, (i) => rawCreate(values[i]!.key, values[i]!.value)),
  );
  addRuns('create', kapiCreate, etcdCreate);
  addCpu('create', o.objects, kapiCreateCpu, etcdCreateCpu);

  log(`get: kapi, ${o.gets} GETs, concurrency ${o.concurrency}`);
  const [kapiGet, kapiGetCpu] = await withCpu(() =>
    runConcurrent(o.gets, o.concurrency, (i) => expectStatus(client.get(`${base}/cm-${(i * 7919) % o.objects}`), 200)),
  );
  log(`get: raw etcd, ${o.gets} ranges, concurrency ${o.concurrency}`);
  const [etcdGet, etcdGetCpu] = await withCpu(() =>
    runConcurrent(o.gets, o.concurrency, async (i) => {
      const r = await etcd.range({ key: values[(i * 7919) % values.length]!.key });
      if (r.kvs.length !== 1) throw new Error('raw get found nothing');
    }),
  );
  addRuns('get', kapiGet, etcdGet);
  addCpu('get', o.gets, kapiGetCpu, etcdGetCpu);
}

async function benchList(o: Options, client: KubeHttpClient, etcd: EtcdClient): Promise<void> {
  await expectStatus(client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: LIST_NS } }), 201);
  const base = `/api/v1/namespaces/${LIST_NS}/pods`;
  log(`list: creating ${o.pods} pods through kapi`);
  const created = await runConcurrent(o.pods, o.concurrency, (i) => expectStatus(client.post(base, pod(`pod-${i}`, i)), 201));
  if (created.errors) notes.push(`list: ${created.errors} pod creates failed (first: ${created.firstError})`);
  const rawPrefix = `${RAW}/pods/${LIST_NS}/`;
  const copied = await copyPrefix(etcd, `/registry/pods/${LIST_NS}/`, rawPrefix, o.concurrency);
  log(`list: ${copied} pods stored; ${o.listRepeats} lists each`);

  // one checked list first (not timed): the consistent list has every pod
  const check = await client.get(base, { timeoutMs: 120000 });
  const items = (JSON.parse(check.body) as { items: unknown[] }).items.length;
  if (items !== copied) notes.push(`list: kapi returned ${items} pods, etcd holds ${copied}`);
  const bytes = Buffer.byteLength(check.body);
  notes.push(`list: ${items} pods, ${(bytes / 1024 / 1024).toFixed(1)} MiB of JSON per kapi list`);

  const [kapiList, kapiListCpu] = await withCpu(() =>
    runConcurrent(o.listRepeats, 1, () => expectStatus(client.get(base, { timeoutMs: 120000 }), 200)),
  );
  const [kapiCached, kapiCachedCpu] = await withCpu(() =>
    runConcurrent(o.listRepeats, 1, () => expectStatus(client.get(`${base}?resourceVersion=0`, { timeoutMs: 120000 }), 200)),
  );
  const [etcdList, etcdListCpu] = await withCpu(() =>
    runConcurrent(o.listRepeats, 1, async () => {
      const r = await etcd.rangeAll({ key: Buffer.from(rawPrefix), rangeEnd: prefixEnd(Buffer.from(rawPrefix)) });
      if (r.kvs.length !== copied) throw new Error(`raw list got ${r.kvs.length}`);
    }),
  );
  addCpu(`consistent list of ${copied} pods`, o.listRepeats, kapiListCpu, etcdListCpu);
  addCpu(`list rv=0 of ${copied} pods`, o.listRepeats, kapiCachedCpu, etcdListCpu);
  rows.push({
    operation: `consistent list of ${copied} pods (median)`,
    unit: 'ms',
    kapi: median(kapiList.latencies),
    etcd: median(etcdList.latencies),
    higherIsBetter: false,
  });
  rows.push({
    operation: `list rv=0 (watch cache) of ${copied} pods`,
    unit: 'ms',
    kapi: median(kapiCached.latencies),
    etcd: median(etcdList.latencies),
    higherIsBetter: false,
  });
  for (const [n, r] of [['kapi consistent list', kapiList], ['kapi rv=0 list', kapiCached], ['etcd list', etcdList]] as const) {
    if (r.errors) notes.push(`${n}: ${r.errors} errors (first: ${r.firstError})`);
  }
}

// -- watch fan-out --

/** counts, per marker seq, the watchers that have seen it; resolves when all have */
class ArrivalTracker {
  private readonly times = new Map<number, number[]>();
  private readonly waiters = new Map<number, () => void>();
  constructor(private readonly expected: number) {}

  arrived(seq: number): void {
    const list = this.times.get(seq);
    if (!list) return;
    list.push(performance.now());
    if (list.length === this.expected) this.waiters.get(seq)?.();
  }

  /** starts counting `seq`; the promise resolves with the arrival times (or what came in time) */
  expect(seq: number, timeoutMs: number): Promise<{ times: number[]; complete: boolean }> {
    this.times.set(seq, []);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve({ times: this.times.get(seq)!, complete: false }), timeoutMs);
      this.waiters.set(seq, () => {
        clearTimeout(timer);
        resolve({ times: this.times.get(seq)!, complete: true });
      });
    });
  }
}

/** feeds newline-delimited watch output; reports each `"seq":"<n>"` marker once per event */
function lineScanner(onMarker: (seq: number) => void): (chunk: string) => void {
  const marker = /"seq":"(\d+)"/;
  let partial = '';
  return (chunk) => {
    const text = partial + chunk;
    let from = 0;
    let nl: number;
    while ((nl = text.indexOf('\n', from)) >= 0) {
      const m = marker.exec(text.slice(from, nl));
      if (m) onMarker(Number(m[1]));
      from = nl + 1;
    }
    partial = text.slice(from);
  };
}

interface Closer {
  close(): void;
}

/** Opens `count` kapi watches over HTTP/1.1 (one connection each) or HTTP/2 (100 streams per session). */
async function openKapiWatchers(kapi: KapiProcess, o: Options, watchPath: string, onMarker: (seq: number) => void): Promise<Closer> {
  const creds = kapi.http.creds;
  const ready: Promise<void>[] = [];
  if (o.watchTransport === 'h2') {
    const sessions: http2.ClientHttp2Session[] = [];
    for (let i = 0; i < o.watchers; i++) {
      if (i % 100 === 0) {
        const s = http2.connect(kapi.url, { ca: creds.ca, cert: creds.cert, key: creds.key });
        s.on('error', () => {});
        sessions.push(s);
      }
      const req = sessions.at(-1)!.request({ ':method': 'GET', ':path': watchPath, accept: 'application/json' });
      req.setEncoding('utf8');
      req.on('data', lineScanner(onMarker));
      ready.push(
        new Promise((resolve, reject) => {
          req.on('response', (h) => (h[':status'] === 200 ? resolve() : reject(new Error(`watch answered ${h[':status']}`))));
          req.on('error', reject);
        }),
      );
    }
    await Promise.all(ready);
    return { close: () => sessions.forEach((s) => s.destroy()) };
  }
  const agent = new https.Agent({ keepAlive: true, maxSockets: Infinity, ca: creds.ca, cert: creds.cert, key: creds.key });
  const url = new URL(kapi.url);
  for (let i = 0; i < o.watchers; i++) {
    const req = https.request({ agent, hostname: url.hostname, port: url.port, path: watchPath, headers: { accept: 'application/json' } });
    ready.push(
      new Promise((resolve, reject) => {
        req.on('response', (res) => {
          if (res.statusCode !== 200) return reject(new Error(`watch answered ${res.statusCode}`));
          res.setEncoding('utf8');
          res.on('data', lineScanner(onMarker));
          res.on('error', () => {});
          resolve();
        });
        req.on('error', reject);
      }),
    );
    req.end();
  }
  await Promise.all(ready);
  return { close: () => agent.destroy() };
}

async function benchWatch(o: Options, kapi: KapiProcess, client: KubeHttpClient, etcd: EtcdClient): Promise<void> {
  await expectStatus(client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: WATCH_NS } }), 201);
  const base = `/api/v1/namespaces/${WATCH_NS}/configmaps`;
  const created = await client.post(base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'beacon' }, data: { seq: '0' } });
  if (created.status !== 201) throw new Error(`beacon: ${created.status} ${created.body}`);
  const key = Buffer.from(`/registry/configmaps/${WATCH_NS}/beacon`);
  const stored = (await etcd.range({ key })).kvs[0];
  if (!stored) throw new Error('beacon not in etcd');
  let storedObj: { data?: Record<string, string> } | undefined;
  try {
    storedObj = JSON.parse(stored.value.toString()) as { data?: Record<string, string> };
  } catch {
    storedObj = undefined;
  }
  const valueFor = (seq: number) =>
    Buffer.from(JSON.stringify({ ...(storedObj ?? created), data: { ...(storedObj?.data ?? {}), seq: String(seq) } }));
  // Each event is one direct etcd put (as another replica would write it), so both sides
  // measure the same thing: etcd's notification plus the fan-out. If kapi does not store
  // JSON, kapi's events are written through kapi instead (noted).
  const kapiWrite = storedObj
    ? async (seq: number) => void (await etcd.put(key, valueFor(seq)))
    : async (seq: number) => expectStatus(client.patch(`${base}/beacon`, { data: { seq: String(seq) } }), 200);
  if (!storedObj) notes.push('watch: kapi does not store JSON in etcd; kapi events were written through kapi PATCH');

  const measure = async (name: string, tracker: ArrivalTracker, write: (seq: number) => Promise<void>) => {
    const lastMs: number[] = [];
    const p50Ms: number[] = [];
    for (let seq = 1; seq <= o.watchEvents; seq++) {
      const arrival = tracker.expect(seq, 60000);
      const t0 = performance.now();
      await write(seq);
      const { times, complete } = await arrival;
      if (!complete) notes.push(`${name}: event ${seq} reached ${times.length} of ${o.watchers} watchers within 60 s`);
      const rel = times.map((t) => t - t0);
      lastMs.push(Math.max(...rel));
      p50Ms.push(median(rel));
      await new Promise((r) => setTimeout(r, 50));
    }
    return { last: median(lastMs), p50: median(p50Ms) };
  };

  log(`watch: opening ${o.watchers} kapi watches (${o.watchTransport})`);
  const rv = (JSON.parse((await client.get(base)).body) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  const kapiTracker = new ArrivalTracker(o.watchers);
  const kapiWatchers = await openKapiWatchers(kapi, o, `${base}?watch=1&resourceVersion=${rv}`, (seq) => kapiTracker.arrived(seq));
  log('watch: measuring kapi fan-out');
  const [kapiResult, kapiWatchCpu] = await withCpu(() => measure('kapi watch', kapiTracker, kapiWrite));
  kapiWatchers.close();

  log(`watch: opening ${o.watchers} etcd watchers on one client`);
  const rawKey = Buffer.from(`${RAW}/watch/beacon`);
  const etcdTracker = new ArrivalTracker(o.watchers);
  const marker = /"seq":"(\d+)"/;
  const watchers: EtcdWatcher[] = [];
  for (let i = 0; i < o.watchers; i++) {
    watchers.push(
      etcd.watch({ key: rawKey }, (msg) => {
        if (msg.kind !== 'events') return;
        for (const ev of msg.events) {
          const m = marker.exec(ev.kv.value.toString());
          if (m) etcdTracker.arrived(Number(m[1]));
        }
      }),
    );
  }
  // etcd registers watchers asynchronously and a watcher sees only writes after it is
  // registered: probe until one write reaches every watcher
  let registered = false;
  for (let probe = 1_000_000; probe < 1_000_300 && !registered; probe++) {
    const arrival = etcdTracker.expect(probe, 1000);
    await etcd.put(rawKey, valueFor(probe));
    registered = (await arrival).complete;
  }
  if (!registered) notes.push('etcd watch: not every watcher was registered after 300 probes');
  log('watch: measuring etcd fan-out');
  const [etcdResult, etcdWatchCpu] = await withCpu(() =>
    measure('etcd watch', etcdTracker, async (seq) => void (await etcd.put(rawKey, valueFor(seq)))),
  );
  addCpu(`one change to ${o.watchers} watchers`, o.watchEvents, kapiWatchCpu, etcdWatchCpu);
  for (const w of watchers) w.cancel();

  rows.push({
    operation: `watch fan-out to ${o.watchers}: last watcher`,
    unit: 'ms',
    kapi: kapiResult.last,
    etcd: etcdResult.last,
    higherIsBetter: false,
  });
  rows.push({
    operation: `watch fan-out to ${o.watchers}: median watcher`,
    unit: 'ms',
    kapi: kapiResult.p50,
    etcd: etcdResult.p50,
    higherIsBetter: false,
  });
}

function versionOf(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return (r.stdout || r.stderr || '').split('\n')[0]!.trim();
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  let etcdProc: EtcdProcess | undefined;
  let kapi: KapiProcess | undefined;
  let etcd: EtcdClient | undefined;
  let client: KubeHttpClient | undefined;
  const stopAll = async () => {
    client?.close();
    etcd?.close();
    await kapi?.stop().catch(() => {});
    await etcdProc?.stop().catch(() => {});
  };
  process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
  try {
    log('starting etcd and kapi (embedded etcd off: kapi uses the bench etcd)');
    etcdProc = await startEtcd({ extraArgs: ['--quota-backend-bytes', String(8 * 1024 * 1024 * 1024)] });
    kapi = await startKapi({ etcdServers: etcdProc.endpoint });
    etcd = createEtcdClient({ endpoints: [etcdProc.endpoint] });
    client = new KubeHttpClient(kapi.http.creds, { maxSockets: o.concurrency });
    pids.kapi = kapi.pid;
    pids.etcd = etcdProc.pid;

    const started = Date.now();
    await benchCreateAndGet(o, client, etcd);
    await benchList(o, client, etcd);
    await benchWatch(o, kapi, client, etcd);

    const env = [
      `date: ${new Date().toISOString()}`,
      `machine: ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, load ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
      `node ${process.version}; ${versionOf('etcd', ['--version'])}`,
      `parameters: objects=${o.objects} concurrency=${o.concurrency} gets=${o.gets} pods=${o.pods} list-repeats=${o.listRepeats} ` +
        `watchers=${o.watchers} watch-events=${o.watchEvents} watch-transport=${o.watchTransport}`,
      `duration: ${((Date.now() - started) / 1000).toFixed(0)} s`,
    ];
    const t = table();
    const ct = cpuTable();
    console.log(t);
    console.log(ct);
    for (const n of notes) console.log(`note: ${n}`);
    const md = [
      '# kapi benchmark',
      '',
      'Produced by `node dist/bench/run.js` (`make bench`). kapi and raw etcd measured in the same run',
      'against the same etcd member; "kapi slower by" is kapi latency / etcd latency, or etcd',
      'throughput / kapi throughput. Raw etcd uses kapi\'s own etcd client (storage/etcd/client.ts)',
      'with the bytes kapi stored. Watch events are direct etcd puts seen by both sides.',
      '',
      ...env.map((e) => `- ${e}`),
      '',
      t,
      '',
      'CPU time per operation (user+system, from /proc), kapi\'s and etcd\'s processes. Less sensitive',
      'to a busy machine than the latencies above: it is what each operation costs, not how long it waits.',
      '',
      ct,
      '',
      ...(notes.length ? ['Notes:', '', ...notes.map((n) => `- ${n}`), ''] : []),
    ].join('\n');
    writeFileSync(o.out, md);
    log(`wrote ${o.out}`);
  } finally {
    await stopAll();
  }
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    console.error(err.stack ?? err.message);
    process.exit(1);
  },
);
