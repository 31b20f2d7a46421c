// kapi's benchmark: the scenarios of the performance issue, each beside raw etcd measured in
// the same run against the same etcd member (the machine is shared and noisy, so only the
// ratios, and kapi's CPU time per operation, mean something).
//
//   create        ConfigMaps (2271 B), 64 concurrent     | etcd: txn create_revision==0 -> put, same bytes
//   create-serial ConfigMaps, 1 at a time                | the same, 1 at a time
//   get           by name, 64 concurrent                 | etcd: range of one key
//   update        PUT with resourceVersion, 16 concurrent, one object each
//                                                        | etcd: txn mod_revision==last -> put
//   pods          create Pods (2463 B), 64 concurrent    | etcd: txn create, the bytes kapi stored
//                 and the memory per cached Pod (RSS 2 s after and once settled, V8 heap)
//   list          consistent, resourceVersion=0, limit=500 pages | etcd: range of the prefix (paged)
//   proto         get and consistent list with Accept: application/vnd.kubernetes.protobuf
//   watch         W watches, R changes/s for S s, HTTP/1.1 and HTTP/2 | etcd: W watchers on one client
//
// kapi runs as the issue's comparison ran it: a system:masters bearer token, RBAC, default
// admission without ServiceAccount, no endpoint reconciler, the bench's own etcd.
//
// Usage: node dist/bench/run.js [--only create,get,...] [--quick] [--objects N] [--serial N]
//          [--gets N] [--updates N] [--pods N] [--list-repeats R] [--watchers W] [--watch-rate R]
//          [--watch-seconds S] [--watch-transport h1,h2] [--workers N] [--cpu-prof DIR] [--out FILE|-]
//          [--no-settle] [--warm-up N] [--rounds N]
//
// Each scenario is measured in steady state: kapi (and raw etcd beside it) first does
// --warm-up operations of the scenario's own kind (default 10000, 1000 with --quick; GETs twice
// as many, Pods a third), unmeasured. A fresh node process runs its first few thousand requests
// at up to 2.5 times the CPU of later ones while V8 compiles the hot paths and grows its young
// generation to full size (which takes some 7000 creates at 64 concurrent; after 3000 the CPU per
// create was still falling); a server runs for days, and kube-apiserver, compiled ahead of time,
// has no such phase. --warm-up 0 measures from a cold start. In a whole run the Pods come after
// an idle wait for kapi's memory to settle, which lets V8 flush the warmed-up code: dry-run
// creates compile it again, storing nothing.
//
// The throughput scenarios (creates, GETs, updates, Pods) run kapi's side and raw etcd's in
// --rounds alternated slices (default 4: kapi, raw, kapi, raw, ...), each side's slices summed:
// on a shared machine other processes' load comes and goes within seconds, and one side
// measured whole after the other could fall in a quiet spell and the other in a busy one.
//
// --no-settle skips the two 150 s waits for kapi's RSS to settle before and after the Pods are
// created: the settled memory row is left out, for before/after runs of the create rate.
//
// --workers N starts kapi with N worker processes; kapi's CPU time is then its whole process
// tree's (primary and workers), and its memory the sum of their RSS.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { spawnSync } from 'node:child_process';
import { createEtcdClient } from '../storage/etcd/client.js';
import { prefixEnd, type EtcdClient } from '../storage/etcd/types.js';
import { repoRoot, type EtcdProcess, type KapiProcess } from '../e2e/harness.js';
import { startBenchEtcd, startBenchKapi, writeBenchToken } from './servers.js';
import { createNamespace, createPodOwner } from './setup.js';
import { TokenClient } from './client.js';
import { configMapBody, configMapUpdateBody, objectName, podBody } from './bodies.js';
import {
  alternate,
  median,
  percentile,
  sliceOf,
  runPerWriter,
  resultsTable,
  treeRssBytes,
  runConcurrent,
  throughput,
  withCpu,
  type Alternated,
  type CpuUse,
  type Result,
  type Run,
} from './measure.js';
import { DeliveryLog, openKapiWatches, seqOf, writeAtRate } from './watch-load.js';

// ---- options ---------------------------------------------------------------------------

const SCENARIOS = ['create', 'create-serial', 'get', 'sa-get', 'update', 'pods', 'list', 'proto', 'watch'] as const;
type Scenario = (typeof SCENARIOS)[number];

interface Options {
  only: Set<Scenario>;
  objects: number;
  serial: number;
  gets: number;
  updates: number;
  pods: number;
  listRepeats: number;
  watchers: number;
  watchRate: number;
  watchSeconds: number;
  watchTransports: ('h1' | 'h2')[];
  cpuProfDir?: string;
  /** kapi's --workers (1: one process, as kapi's default) */
  workers: number;
  /** wait for kapi's RSS to settle after the Pods (the settled memory row) */
  settle: boolean;
  /** unmeasured operations of each scenario's kind before it is measured */
  warmUp: number;
  /** slices a throughput scenario's kapi and raw etcd sides alternate in */
  rounds: number;
  out: string;
}

const USAGE =
  'node dist/bench/run.js [--only ' +
  SCENARIOS.join(',') +
  '] [--quick]\n' +
  '  [--objects N] [--serial N] [--gets N] [--updates N] [--pods N] [--list-repeats R]\n' +
  '  [--watchers W] [--watch-rate R] [--watch-seconds S] [--watch-transport h1,h2]\n' +
  '  [--workers N] [--cpu-prof DIR] [--out FILE|-] [--no-settle] [--warm-up N] [--rounds N]';

function parseArgs(argv: string[]): Options {
  const o: Options = {
    only: new Set(SCENARIOS),
    // long enough that each of the alternated slices spans many of /proc's 10 ms CPU ticks
    objects: 10000,
    serial: 2000,
    gets: 40000,
    updates: 10000,
    pods: 10000,
    listRepeats: 5,
    watchers: 1000,
    watchRate: 50,
    watchSeconds: 20,
    watchTransports: ['h1', 'h2'],
    workers: 1,
    settle: true,
    warmUp: 10000,
    rounds: 4,
    out: path.join(repoRoot, 'bench', 'last-run.md'),
  };
  const ints: Record<string, keyof Options> = {
    '--objects': 'objects',
    '--serial': 'serial',
    '--gets': 'gets',
    '--updates': 'updates',
    '--pods': 'pods',
    '--list-repeats': 'listRepeats',
    '--watchers': 'watchers',
    '--watch-rate': 'watchRate',
    '--watch-seconds': 'watchSeconds',
    '--workers': 'workers',
    '--rounds': 'rounds',
  };
  let warmUpGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split('=', 2) as [string, string | undefined];
    const value = () => inline ?? argv[++i] ?? '';
    if (flag === '--help' || flag === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else if (flag in ints) {
      const n = Number(value());
      if (!Number.isInteger(n) || n <= 0) throw new Error(`${flag} needs a positive integer`);
      (o as unknown as Record<string, number>)[ints[flag]!] = n;
    } else if (flag === '--no-settle') {
      o.settle = false;
    } else if (flag === '--warm-up') {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 0) throw new Error('--warm-up needs a non-negative integer');
      o.warmUp = n;
      warmUpGiven = true;
    } else if (flag === '--quick') {
      // a before/after comparison in a minute or two
      Object.assign(o, {
        objects: 2000,
        serial: 300,
        gets: 4000,
        updates: 2000,
        pods: 3000,
        listRepeats: 3,
        watchers: 200,
        watchSeconds: 5,
      });
      if (!warmUpGiven) o.warmUp = 1000;
    } else if (flag === '--only') {
      const names = value().split(',').filter(Boolean);
      for (const n of names)
        if (!(SCENARIOS as readonly string[]).includes(n)) throw new Error(`unknown scenario ${n}; known: ${SCENARIOS.join(',')}`);
      o.only = new Set(names as Scenario[]);
    } else if (flag === '--watch-transport') {
      const list = value().split(',');
      for (const t of list) if (t !== 'h1' && t !== 'h2') throw new Error('--watch-transport is h1, h2 or h1,h2');
      o.watchTransports = list as ('h1' | 'h2')[];
    } else if (flag === '--cpu-prof') {
      o.cpuProfDir = path.resolve(value());
    } else if (flag === '--out') {
      const v = value();
      o.out = v === '-' ? '-' : path.resolve(v);
    } else {
      throw new Error(`unknown flag ${flag}\n${USAGE}`);
    }
  }
  return o;
}

// ---- the run's shared state ---------------------------------------------------------------

const NS = 'bench';
const POD_NS = 'bench-pods';
const WATCH_NS = 'bench-watch';
/** the Pods of the warm-up, apart from those listed */
const WARM_NS = 'bench-warm';
const RAW = '/bench-raw';
const PROTOBUF = 'application/vnd.kubernetes.protobuf';

interface Bench {
  o: Options;
  kapi: KapiProcess;
  client: TokenClient;
  token: string;
  ca: Buffer;
  etcd: EtcdClient;
  pids: { kapi: number; etcd: number };
  results: Result[];
  notes: string[];
  /** ConfigMaps cm-000000.. that exist in kapi, and their raw copies */
  configMaps: number;
  /** Pods that exist in kapi (and under the raw prefix) */
  pods: number;
}

const log = (msg: string) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);

function noteErrors(b: Bench, name: string, runs: Record<string, Run>): void {
  for (const [side, run] of Object.entries(runs)) {
    if (run.errors) b.notes.push(`${name}: ${run.errors} ${side} errors (first: ${run.firstError})`);
  }
}

/** the CPU columns of a line: kapi's, etcd's (serving kapi) and the load client's per operation */
function cpuColumns(ops: number, kapiCpu: CpuUse, rawCpu: CpuUse | undefined): Partial<Result> {
  return {
    kapiCpuMsPerOp: kapiCpu.kapiMs / ops,
    etcdCpuMsPerOp: kapiCpu.etcdMs / ops,
    rawEtcdCpuMsPerOp: rawCpu && rawCpu.etcdMs / ops,
    kapiCores: kapiCpu.kapiMs / kapiCpu.wallMs,
    clientCpuMsPerOp: kapiCpu.clientMs / ops,
    rawClientCpuMsPerOp: rawCpu && rawCpu.clientMs / ops,
  };
}

/** the latency columns of a line */
function latencyColumns(kapi: Run, raw: Run | undefined): Partial<Result> {
  return {
    kapiP50: median(kapi.latencies),
    kapiP99: percentile(kapi.latencies, 99),
    rawP50: raw && median(raw.latencies),
    rawP99: raw && percentile(raw.latencies, 99),
  };
}

/** a throughput scenario's line of the table */
function throughputResult(name: string, ops: number, kapi: Run, kapiCpu: CpuUse, raw: Run | undefined, rawCpu?: CpuUse): Result {
  return {
    scenario: name,
    unit: 'ops/s',
    higherIsBetter: true,
    kapi: throughput(kapi),
    raw: raw && throughput(raw),
    ...latencyColumns(kapi, raw),
    ...cpuColumns(ops, kapiCpu, rawCpu),
  };
}

/** a latency scenario's line (lists): the median time per operation */
function timeResult(name: string, ops: number, kapi: Run, kapiCpu: CpuUse, raw: Run | undefined, rawCpu?: CpuUse): Result {
  return {
    scenario: name,
    unit: 'ms',
    higherIsBetter: false,
    kapi: median(kapi.latencies),
    raw: raw && median(raw.latencies),
    ...latencyColumns(kapi, raw),
    ...cpuColumns(ops, kapiCpu, rawCpu),
  };
}

const rawCreate = (etcd: EtcdClient) => async (key: Buffer, value: Buffer) => {
  const r = await etcd.txn({
    compare: [{ key, target: 'CREATE', result: 'EQUAL', value: 0 }],
    success: [{ put: { key, value } }],
    failure: [],
  });
  if (!r.succeeded) throw new Error(`raw create of ${key.toString()} found the key`);
};

async function storedUnder(etcd: EtcdClient, prefix: string) {
  return (await etcd.rangeAll({ key: Buffer.from(prefix), rangeEnd: prefixEnd(Buffer.from(prefix)) })).kvs;
}

const rawKeyOf = (key: Buffer, tag: string) => Buffer.from(`${RAW}/${tag}${key.toString().slice('/registry'.length)}`);

// ---- scenarios ----------------------------------------------------------------------------

const cmBase = `/api/v1/namespaces/${NS}/configmaps`;

/** creates ConfigMaps [from, to) through kapi */
async function createConfigMaps(b: Bench, from: number, to: number, concurrency: number): Promise<Run> {
  const bodies = Array.from({ length: to - from }, (_, i) => configMapBody(objectName('cm', from + i), from + i));
  const run = await runConcurrent(bodies.length, concurrency, (i) =>
    b.client.expect(201, 'POST', cmBase, { body: bodies[i] }).then(() => {}),
  );
  b.configMaps = Math.max(b.configMaps, to);
  return run;
}

/** an object as kapi stored it in etcd */
type StoredKv = { key: Buffer; value: Buffer };

/** what kapi stored for the objects named `prefix-from` to `prefix-(to-1)` under `dir` */
async function storedBetween(b: Bench, dir: string, prefix: string, from: number, to: number) {
  const key = Buffer.from(`${dir}${objectName(prefix, from)}`);
  const rangeEnd = Buffer.from(`${dir}${objectName(prefix, to)}`);
  return (await b.etcd.rangeAll({ key, rangeEnd })).kvs;
}

/** the raw side of a create scenario: txn creates of the bytes kapi stored, under a raw prefix */
async function rawCreates(b: Bench, tag: string, kvs: StoredKv[], concurrency: number): Promise<Run> {
  const create = rawCreate(b.etcd);
  return runConcurrent(kvs.length, concurrency, (i) => create(rawKeyOf(kvs[i]!.key, tag), kvs[i]!.value));
}

async function ensureConfigMaps(b: Bench, n: number): Promise<void> {
  if (b.configMaps >= n) return;
  log(`setting up ${n - b.configMaps} configmaps (not measured)`);
  await createConfigMaps(b, b.configMaps, n, 64);
}

/**
 * Creates, kapi's and raw etcd's in alternated slices: slice [a, z) of `count` goes through
 * kapi (`kapiCreate`), then the bytes kapi stored for it (`storedFor`, read unmeasured) are
 * written raw with txn creates. Also says how many objects kapi stored, and their bytes.
 */
async function alternatedCreates(
  b: Bench,
  tag: string,
  count: number,
  concurrency: number,
  kapiCreate: (from: number, to: number) => Promise<Run>,
  storedFor: (from: number, to: number) => Promise<StoredKv[]>,
): Promise<Alternated & { storedCount: number; storedBytes: number }> {
  let stored: StoredKv[] = [];
  let storedCount = 0;
  let storedBytes = 0;
  const result = await alternate(
    b.pids,
    b.o.rounds,
    (round) => kapiCreate(...sliceOf(count, b.o.rounds, round)),
    () => rawCreates(b, tag, stored, concurrency),
    async (round) => {
      const [a, z] = sliceOf(count, b.o.rounds, round);
      stored = await storedFor(a, z);
      if (stored.length !== z - a) b.notes.push(`${tag}: kapi stored ${stored.length} of ${z - a} objects`);
      storedCount += stored.length;
      storedBytes += stored.reduce((sum, kv) => sum + kv.value.length, 0);
    },
  );
  noteErrors(b, tag, { kapi: result.kapi, raw: result.raw });
  return { ...result, storedCount, storedBytes };
}

/** ConfigMap creates through kapi and raw etcd, alternated */
function alternatedConfigMapCreates(b: Bench, tag: string, count: number, concurrency: number): Promise<Alternated> {
  const from = b.configMaps;
  return alternatedCreates(
    b,
    tag,
    count,
    concurrency,
    (a, z) => createConfigMaps(b, from + a, from + z, concurrency),
    (a, z) => storedBetween(b, `/registry/configmaps/${NS}/`, 'cm', from + a, from + z),
  );
}

async function benchCreate(b: Bench): Promise<void> {
  const { o } = b;
  const warm = Math.max(o.warmUp, 200);
  log(`create: warm-up, ${warm} creates each`);
  await runConcurrent(warm, 64, (i) =>
    b.client.expect(201, 'POST', cmBase, { body: configMapBody(objectName('warm', i), i) }).then(() => {}),
  );
  const create = rawCreate(b.etcd);
  await runConcurrent(warm, 64, (i) => create(Buffer.from(`${RAW}/warm/${i}`), configMapBody(objectName('warm', i), i)));
  if (o.only.has('create')) {
    log(`create: ${o.objects} configmaps, 64 concurrent, ${o.rounds} alternated rounds`);
    const r = await alternatedConfigMapCreates(b, 'create', o.objects, 64);
    b.results.push(throughputResult('create ConfigMap, 64 concurrent', o.objects, r.kapi, r.kapiCpu, r.raw, r.rawCpu));
  }
  if (o.only.has('create-serial')) {
    log(`create: ${o.serial} configmaps, 1 at a time, ${o.rounds} alternated rounds`);
    const r = await alternatedConfigMapCreates(b, 'create-serial', o.serial, 1);
    b.results.push(throughputResult('create ConfigMap, 1 at a time', o.serial, r.kapi, r.kapiCpu, r.raw, r.rawCpu));
  }
}

async function benchGet(b: Bench, accept: string, label: string, client: TokenClient = b.client): Promise<void> {
  const { o } = b;
  await ensureConfigMaps(b, Math.min(o.objects, 2000));
  const n = Math.min(b.configMaps, 2000);
  const name = (i: number) => objectName('cm', (i * 7919) % n);
  if (o.warmUp > 0) {
    log(`${label}: warm-up, ${2 * o.warmUp} GETs each`);
    await runConcurrent(2 * o.warmUp, 64, (i) => client.expect(200, 'GET', `${cmBase}/${name(i)}`, { accept }).then(() => {}));
    await runConcurrent(2 * o.warmUp, 64, async (i) => {
      await b.etcd.range({ key: Buffer.from(`/registry/configmaps/${NS}/${name(i)}`) });
    });
  }
  log(`${label}: ${o.gets} GETs (${accept}), ${o.rounds} alternated rounds`);
  const slice = (round: number, get: (i: number) => Promise<void>) => {
    const [a, z] = sliceOf(o.gets, o.rounds, round);
    return runConcurrent(z - a, 64, (i) => get(a + i));
  };
  const r = await alternate(
    b.pids,
    o.rounds,
    (round) => slice(round, (i) => client.expect(200, 'GET', `${cmBase}/${name(i)}`, { accept }).then(() => {})),
    (round) =>
      slice(round, async (i) => {
        const got = await b.etcd.range({ key: Buffer.from(`/registry/configmaps/${NS}/${name(i)}`) });
        if (got.kvs.length !== 1) throw new Error('raw get found nothing');
      }),
  );
  noteErrors(b, label, { kapi: r.kapi, raw: r.raw });
  b.results.push(throughputResult(label, o.gets, r.kapi, r.kapiCpu, r.raw, r.rawCpu));
}

/**
 * GETs as a controller in a Pod makes them: with a bound service account token (TokenRequest),
 * authorized by RBAC through a RoleBinding to the `view` ClusterRole, rather than the bench's
 * static system:masters token.
 */
async function benchServiceAccountGet(b: Bench): Promise<void> {
  await ensureConfigMaps(b, Math.min(b.o.objects, 2000));
  const json = (o: unknown) => ({ body: Buffer.from(JSON.stringify(o)) });
  const sa = 'bench-reader';
  await b.client.expect(
    201,
    'POST',
    `/api/v1/namespaces/${NS}/serviceaccounts`,
    json({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa } }),
  );
  await b.client.expect(
    201,
    'POST',
    `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`,
    json({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: sa },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ kind: 'ServiceAccount', name: sa, namespace: NS }],
    }),
  );
  const review = await b.client.expect(
    201,
    'POST',
    `/api/v1/namespaces/${NS}/serviceaccounts/${sa}/token`,
    json({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } }),
  );
  const token = (JSON.parse(review.toString()) as { status: { token: string } }).status.token;
  const client = new TokenClient(b.kapi.url, b.ca, token, 64);
  // RBAC learns of the binding through its informer
  const probe = `${cmBase}/${objectName('cm', 0)}`;
  const deadline = Date.now() + 30_000;
  while ((await client.request('GET', probe)).status !== 200) {
    if (Date.now() > deadline) throw new Error('the service account was not allowed to read configmaps');
    await new Promise((r) => setTimeout(r, 100));
  }
  try {
    await benchGet(b, 'application/json', 'get ConfigMap by name, 64 concurrent (service account token)', client);
  } finally {
    client.close();
  }
}

async function benchUpdate(b: Bench): Promise<void> {
  const { o } = b;
  const WRITERS = 16;
  await ensureConfigMaps(b, WRITERS);
  const perWriter = Math.ceil(o.updates / WRITERS);
  const rvs: string[] = [];
  for (let w = 0; w < WRITERS; w++) {
    const got = JSON.parse((await b.client.expect(200, 'GET', `${cmBase}/${objectName('cm', w)}`)).toString()) as {
      metadata: { resourceVersion: string };
    };
    rvs.push(got.metadata.resourceVersion);
  }
  const RV = /"resourceVersion":"(\d+)"/;
  // every PUT carries a value none before it had (a PUT that changes nothing writes nothing),
  // whichever slice or warm-up it is in
  let seq = 0;
  const kapiUpdates = (perWriter: number) =>
    runPerWriter(WRITERS, perWriter, async (w) => {
      const name = objectName('cm', w);
      const body = await b.client.expect(200, 'PUT', `${cmBase}/${name}`, { body: configMapUpdateBody(name, ++seq, rvs[w]!) });
      rvs[w] = RV.exec(body.toString())![1]!;
    });
  const keys = Array.from({ length: WRITERS }, (_, w) => Buffer.from(`${RAW}/update/${w}`));
  const revs: number[] = [];
  for (const key of keys) revs.push((await b.etcd.put(key, configMapUpdateBody('raw', 0, '1'))).header.revision);
  const rawUpdates = (perWriter: number) =>
    runPerWriter(WRITERS, perWriter, async (w) => {
      const key = keys[w]!;
      const r = await b.etcd.txn({
        compare: [{ key, target: 'MOD', result: 'EQUAL', value: revs[w]! }],
        success: [{ put: { key, value: configMapUpdateBody('raw', ++seq, String(revs[w])) } }],
        failure: [],
      });
      if (!r.succeeded) throw new Error('raw update lost its compare');
      revs[w] = r.header.revision;
    });
  if (o.warmUp > 0) {
    const warmPerWriter = Math.ceil(o.warmUp / WRITERS);
    log(`update: warm-up, ${warmPerWriter * WRITERS} updates each`);
    const warmKapi = await kapiUpdates(warmPerWriter);
    const warmRaw = await rawUpdates(warmPerWriter);
    noteErrors(b, 'update warm-up', { kapi: warmKapi, raw: warmRaw });
  }
  const rounds = Math.min(o.rounds, perWriter);
  const perSlice = Math.ceil(perWriter / rounds);
  log(`update: ${perSlice * rounds * WRITERS} PUTs, ${WRITERS} writers with one object each, ${rounds} alternated rounds`);
  const r = await alternate(
    b.pids,
    rounds,
    () => kapiUpdates(perSlice),
    () => rawUpdates(perSlice),
  );
  noteErrors(b, 'update', { kapi: r.kapi, raw: r.raw });
  b.results.push(
    throughputResult(
      `update (PUT with resourceVersion), ${WRITERS} concurrent`,
      perSlice * rounds * WRITERS,
      r.kapi,
      r.kapiCpu,
      r.raw,
      r.rawCpu,
    ),
  );
}

/** kapi's RSS and V8 heap in use outside the young generation (from its /metrics), bytes: the
 *  young generation (up to 2×64 MiB, bin/kapi's flag) holds garbage at whatever level the last
 *  scavenge left it, which would swamp a per-object figure */
async function kapiMemory(b: Bench): Promise<{ rss: number; heap: number }> {
  await new Promise((r) => setTimeout(r, 2000));
  const metrics = (await b.client.expect(200, 'GET', '/metrics')).toString();
  const heap = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(metrics);
  const young = /^nodejs_heap_space_size_used_bytes\{space="new"\} (\S+)$/m.exec(metrics);
  return { rss: treeRssBytes(b.pids.kapi), heap: heap && young ? Number(heap[1]) - Number(young[1]) : NaN };
}

/**
 * kapi's RSS once V8 has collected the garbage the load left: node has no idle-time
 * collection, and V8 shrinks an idle heap only after a while (about 100 s on this machine), so
 * right after a load the RSS is mostly the room V8 let the heap grow into. The lowest RSS of
 * kapi's whole process tree (workers included) over a fixed `windowMs`: the baseline before
 * the Pods and the figure after them wait alike, since a wait that stops once the RSS looks
 * steady stopped at different points on the two sides and swung the difference by more than
 * the goal's margin.
 */
async function settledRss(pid: number, windowMs = 150_000): Promise<number> {
  const started = Date.now();
  let low = treeRssBytes(pid);
  while (Date.now() - started < windowMs) {
    await new Promise((r) => setTimeout(r, 5000));
    low = Math.min(low, treeRssBytes(pid));
  }
  return low;
}

async function benchPods(b: Bench): Promise<void> {
  const { o } = b;
  const base = `/api/v1/namespaces/${POD_NS}/pods`;
  const owner = await createPodOwner(b.client, POD_NS, 'bench-app-7d4b9c8f6d');
  const bodies = Array.from({ length: o.pods }, (_, i) => podBody(objectName('pod', i), i, owner));
  await warmUpPods(b);
  const before = await kapiMemory(b);
  // after other scenarios the heap has grown into room V8 gives back only when idle: the
  // settled figure must start from a settled RSS too, or it can come out below zero
  let settledBefore = before.rss;
  if (o.only.has('pods') && o.settle && b.results.length > 0) {
    log("pods: waiting 150 s for kapi's RSS to settle before the Pods, as after them");
    settledBefore = Math.min(before.rss, await settledRss(b.pids.kapi));
    // an idle minute lets V8 flush the bytecode of the warmed-up paths: warm them again with
    // dry-run creates, which store nothing and so leave the memory baseline as it is
    await rewarmPods(b, bodies);
  }
  log(`pods: creating ${o.pods} pods, 64 concurrent, alternated with raw etcd's txn creates of the stored bytes, ${o.rounds} rounds`);
  const {
    kapi,
    kapiCpu: cpu,
    raw,
    rawCpu,
    storedCount,
    storedBytes,
  } = await alternatedCreates(
    b,
    'pods',
    o.pods,
    64,
    (a, z) => runConcurrent(z - a, 64, (i) => b.client.expect(201, 'POST', base, { body: bodies[a + i] }).then(() => {})),
    (a, z) => storedBetween(b, `/registry/pods/${POD_NS}/`, 'pod', a, z),
  );
  b.pods = o.pods - kapi.errors;
  const after = await kapiMemory(b);
  let settled = NaN;
  if (o.only.has('pods') && o.settle) {
    log("pods: waiting 150 s for kapi's RSS to settle");
    settled = await settledRss(b.pids.kapi);
  }
  if (o.only.has('pods')) {
    b.results.push(throughputResult(`create ${o.pods} Pods, 64 concurrent`, o.pods, kapi, cpu, raw, rawCpu));
    const per = (a: number, z: number) => (z - a) / 1024 / storedCount;
    b.results.push({
      scenario: 'memory per cached Pod: RSS 2 s after',
      unit: 'KiB',
      higherIsBetter: false,
      kapi: per(before.rss, after.rss),
    });
    if (o.settle) {
      b.results.push({
        scenario: 'memory per cached Pod: RSS settled',
        unit: 'KiB',
        higherIsBetter: false,
        kapi: per(settledBefore, settled),
      });
    }
    b.results.push({
      scenario: 'memory per cached Pod: V8 heap in use, young generation left out',
      unit: 'KiB',
      higherIsBetter: false,
      kapi: per(before.heap, after.heap),
    });
    b.notes.push(`pods: ${storedCount} stored, ${(storedBytes / storedCount).toFixed(0)} B each in etcd`);
  }
}

/** dry-run creates of the measured Pods (a third of --warm-up): the create path compiled again
 *  after an idle wait, nothing stored */
async function rewarmPods(b: Bench, bodies: Buffer[]): Promise<void> {
  const n = Math.min(bodies.length, Math.floor(b.o.warmUp / 3));
  if (n === 0) return;
  log(`pods: ${n} dry-run creates after the wait`);
  const base = `/api/v1/namespaces/${POD_NS}/pods?dryRun=All`;
  const warm = await runConcurrent(n, 64, (i) => b.client.expect(201, 'POST', base, { body: bodies[i] }).then(() => {}));
  if (warm.errors > 0) b.notes.push(`pods: ${warm.errors} dry-run warm-up creates failed`);
}

/** Pods created (through kapi, then their bytes raw) before the measured ones, in a namespace
 *  of their own: a third of --warm-up */
async function warmUpPods(b: Bench): Promise<void> {
  const n = Math.floor(b.o.warmUp / 3);
  if (n === 0) return;
  log(`pods: warm-up, ${n} creates each`);
  const owner = await createPodOwner(b.client, WARM_NS, 'warm-app-5f6d8c7b9a');
  const warmKapi = await runConcurrent(n, 64, (i) =>
    b.client
      .expect(201, 'POST', `/api/v1/namespaces/${WARM_NS}/pods`, { body: podBody(objectName('warm-pod', i), i, owner) })
      .then(() => {}),
  );
  const stored = await storedUnder(b.etcd, `/registry/pods/${WARM_NS}/`);
  const create = rawCreate(b.etcd);
  const warmRaw = await runConcurrent(stored.length, 64, (i) => create(rawKeyOf(stored[i]!.key, 'warm-pods'), stored[i]!.value));
  noteErrors(b, 'pods warm-up', { kapi: warmKapi, raw: warmRaw });
}

async function ensurePods(b: Bench): Promise<void> {
  if (b.pods === 0) await benchPods(b);
}

/** a JSON list's continue token, read from the list's metadata ahead of its items: the client
 *  does not decode 2 MiB pages (the raw side does not decode its values either) */
function continueOf(body: Buffer): string {
  const meta = /^\{"kind":"[^"]*","apiVersion":"[^"]*","metadata":\{([^{}]*)\}/.exec(body.subarray(0, 4096).toString());
  if (!meta) return (JSON.parse(body.toString()) as { metadata: { continue?: string } }).metadata.continue ?? '';
  return /"continue":"([^"]*)"/.exec(meta[1]!)?.[1] ?? '';
}

/** all pages of a limit=500 list */
async function pagedList(b: Bench, base: string, accept: string): Promise<void> {
  let next = '';
  do {
    const body = await b.client.expect(200, 'GET', `${base}?limit=500${next ? `&continue=${encodeURIComponent(next)}` : ''}`, {
      accept,
      timeoutMs: 120000,
    });
    next = continueOf(body);
  } while (next);
}

async function rawPagedRange(etcd: EtcdClient, prefix: string): Promise<number> {
  const end = prefixEnd(Buffer.from(prefix));
  let key = Buffer.from(prefix);
  let revision = 0;
  let count = 0;
  for (;;) {
    const r = await etcd.range({ key, rangeEnd: end, limit: 500, revision });
    revision = r.header.revision;
    count += r.kvs.length;
    if (!r.more || !r.kvs.length) return count;
    key = Buffer.concat([r.kvs.at(-1)!.key, Buffer.from([0])]);
  }
}

async function benchList(b: Bench, accept: string, kinds: ('consistent' | 'rv0' | 'pages')[]): Promise<void> {
  const { o } = b;
  await ensurePods(b);
  const base = `/api/v1/namespaces/${POD_NS}/pods`;
  const rawPrefix = `${RAW}/pods/pods/${POD_NS}/`;
  const check = await b.client.expect(200, 'GET', base, { timeoutMs: 120000 });
  const items = (JSON.parse(check.toString()) as { items: unknown[] }).items.length;
  if (items !== b.pods) b.notes.push(`list: kapi returned ${items} pods, ${b.pods} were created`);
  if (accept === 'application/json') b.notes.push(`list: ${items} pods, ${(check.length / 1024 / 1024).toFixed(1)} MiB of JSON per list`);
  const once = (fn: () => Promise<unknown>) => withCpu(b.pids, () => runConcurrent(o.listRepeats, 1, () => fn().then(() => {})));
  const rawAll = () =>
    once(async () => {
      const n = (await storedUnder(b.etcd, rawPrefix)).length;
      if (n !== b.pods) throw new Error(`raw list got ${n}`);
    });
  const suffix = accept === PROTOBUF ? ' (protobuf)' : '';
  if (kinds.includes('consistent')) {
    log(`list: consistent${suffix}, ${o.listRepeats} times`);
    const [kapi, cpu] = await once(() => b.client.expect(200, 'GET', base, { accept, timeoutMs: 120000 }));
    const [raw, rawCpu] = await rawAll();
    noteErrors(b, 'list', { kapi, raw });
    b.results.push(timeResult(`list ${items} Pods, consistent${suffix}`, o.listRepeats, kapi, cpu, raw, rawCpu));
  }
  if (kinds.includes('rv0')) {
    log(`list: resourceVersion=0${suffix}, ${o.listRepeats} times`);
    const [kapi, cpu] = await once(() => b.client.expect(200, 'GET', `${base}?resourceVersion=0`, { accept, timeoutMs: 120000 }));
    const [raw, rawCpu] = await once(async () => {
      const r = await b.etcd.rangeAll({ key: Buffer.from(rawPrefix), rangeEnd: prefixEnd(Buffer.from(rawPrefix)), serializable: true });
      if (r.kvs.length !== b.pods) throw new Error(`raw list got ${r.kvs.length}`);
    });
    noteErrors(b, 'list rv=0', { kapi, raw });
    b.results.push(timeResult(`list ${items} Pods, resourceVersion=0${suffix}`, o.listRepeats, kapi, cpu, raw, rawCpu));
  }
  if (kinds.includes('pages')) {
    log(`list: limit=500 pages${suffix}, ${o.listRepeats} times`);
    const [kapi, cpu] = await once(() => pagedList(b, base, accept));
    const [raw, rawCpu] = await once(async () => {
      const n = await rawPagedRange(b.etcd, rawPrefix);
      if (n !== b.pods) throw new Error(`raw paged list got ${n}`);
    });
    noteErrors(b, 'list pages', { kapi, raw });
    b.results.push(timeResult(`list ${items} Pods, limit=500 pages${suffix}`, o.listRepeats, kapi, cpu, raw, rawCpu));
  }
}

async function benchWatch(b: Bench, transport: 'h1' | 'h2'): Promise<void> {
  const { o } = b;
  const base = `/api/v1/namespaces/${WATCH_NS}/configmaps`;
  const beaconName = `beacon-${transport}`;
  const created = JSON.parse(
    (
      await b.client.expect(201, 'POST', base, {
        body: Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: beaconName }, data: { seq: '0' } })),
      })
    ).toString(),
  ) as { metadata: { resourceVersion: string } };
  const key = Buffer.from(`/registry/configmaps/${WATCH_NS}/${beaconName}`);
  const stored = JSON.parse((await b.etcd.range({ key })).kvs[0]!.value.toString()) as { data?: Record<string, string> };
  // each change is a direct etcd put (as another replica would write it), so both sides
  // measure the same thing: etcd's notification plus the fan-out
  const valueFor = (seq: number) => Buffer.from(JSON.stringify({ ...stored, data: { ...stored.data, seq: String(seq) } }));

  log(`watch (${transport}): opening ${o.watchers} kapi watches`);
  const kapiLog = new DeliveryLog();
  const watches = await openKapiWatches(
    { url: b.kapi.url, ca: b.ca, token: b.token },
    transport,
    o.watchers,
    `${base}?watch=1&fieldSelector=metadata.name%3D${beaconName}&resourceVersion=${created.metadata.resourceVersion}`,
    (s) => kapiLog.arrived(s),
  );
  log(`watch (${transport}): ${o.watchRate} changes/s for ${o.watchSeconds} s`);
  const [events, cpu] = await withCpu(b.pids, async () => {
    const n = await writeAtRate(o.watchRate, o.watchSeconds, kapiLog, async (seq) => void (await b.etcd.put(key, valueFor(seq))));
    await settle(kapiLog, n * o.watchers);
    return n;
  });
  watches.close();

  const rawKey = Buffer.from(`${RAW}/watch/${beaconName}`);
  const probeLog = new DeliveryLog();
  const measuredLog = new DeliveryLog();
  let current = probeLog;
  const rawWatchers = Array.from({ length: o.watchers }, () =>
    b.etcd.watch({ key: rawKey }, (msg) => {
      if (msg.kind !== 'events') return;
      for (const ev of msg.events) {
        const seq = seqOf(ev.kv.value.toString());
        if (seq !== undefined) current.arrived(seq);
      }
    }),
  );
  // etcd registers watchers asynchronously and a watcher sees only later writes: probe until
  // one write reaches every watcher
  for (let probe = 1; probe <= 300; probe++) {
    const seq = 1_000_000 + probe;
    const before = probeLog.delivered;
    probeLog.written(seq, performance.now());
    await b.etcd.put(rawKey, valueFor(seq));
    await new Promise((r) => setTimeout(r, 100));
    if (probeLog.delivered - before >= o.watchers) break;
  }
  current = measuredLog;
  const rawEvents = await writeAtRate(
    o.watchRate,
    o.watchSeconds,
    measuredLog,
    async (seq) => void (await b.etcd.put(rawKey, valueFor(seq))),
  );
  await settle(measuredLog, rawEvents * o.watchers);
  for (const w of rawWatchers) w.cancel();

  const expected = events * o.watchers;
  const delivered = (l: DeliveryLog, n: number) => (100 * l.delivered) / n;
  b.results.push({
    scenario: `${o.watchers} watches, ${o.watchRate} changes/s for ${o.watchSeconds} s (${transport}): delivered`,
    unit: '%',
    higherIsBetter: true,
    kapi: delivered(kapiLog, expected),
    raw: delivered(measuredLog, rawEvents * o.watchers),
  });
  b.results.push({
    scenario: `${o.watchers} watches, ${o.watchRate} changes/s for ${o.watchSeconds} s (${transport}): latency`,
    unit: 'ms',
    higherIsBetter: false,
    kapi: percentile(kapiLog.latencies, 99),
    raw: percentile(measuredLog.latencies, 99),
    kapiP50: median(kapiLog.latencies),
    kapiP99: percentile(kapiLog.latencies, 99),
    rawP50: median(measuredLog.latencies),
    rawP99: percentile(measuredLog.latencies, 99),
    kapiCpuMsPerOp: cpu.kapiMs / events,
    etcdCpuMsPerOp: cpu.etcdMs / events,
    kapiCores: cpu.kapiMs / cpu.wallMs,
  });
}

/** waits until `expected` deliveries arrived, or 10 s without progress */
async function settle(l: DeliveryLog, expected: number): Promise<void> {
  let last = -1;
  let still = 0;
  while (l.delivered < expected && still < 100) {
    await new Promise((r) => setTimeout(r, 100));
    still = l.delivered === last ? still + 1 : 0;
    last = l.delivered;
  }
}

// ---- main ---------------------------------------------------------------------------------

function versionOf(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return (r.stdout || r.stderr || '').split('\n')[0]!.trim();
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'kapi-bench-'));
  const { token, tokenFile } = writeBenchToken(tmp);
  let etcdProc: EtcdProcess | undefined;
  let kapi: KapiProcess | undefined;
  let etcd: EtcdClient | undefined;
  let client: TokenClient | undefined;
  const stopAll = async () => {
    client?.close();
    etcd?.close();
    await kapi?.stop().catch(() => {});
    await etcdProc?.stop().catch(() => {});
    rmSync(tmp, { recursive: true, force: true });
  };
  process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
  try {
    log(`starting etcd and kapi (scenarios: ${[...o.only].join(',')})`);
    etcdProc = await startBenchEtcd();
    kapi = await startBenchKapi(etcdProc, tokenFile, {
      nodeArgs: o.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', o.cpuProfDir] : [],
      extraArgs: ['--workers', String(o.workers)],
    });
    etcd = createEtcdClient({ endpoints: [etcdProc.endpoint] });
    const ca = kapi.http.creds.ca;
    client = new TokenClient(kapi.url, ca, token, 64);
    const b: Bench = {
      o,
      kapi,
      client,
      token,
      ca,
      etcd,
      pids: { kapi: kapi.pid, etcd: etcdProc.pid },
      results: [],
      notes: [],
      configMaps: 0,
      pods: 0,
    };
    for (const ns of [NS, POD_NS, WATCH_NS, WARM_NS]) await createNamespace(client, ns);

    const started = Date.now();
    if (o.only.has('create') || o.only.has('create-serial')) await benchCreate(b);
    if (o.only.has('get')) await benchGet(b, 'application/json', 'get ConfigMap by name, 64 concurrent');
    if (o.only.has('sa-get')) await benchServiceAccountGet(b);
    if (o.only.has('update')) await benchUpdate(b);
    if (o.only.has('pods')) await benchPods(b);
    if (o.only.has('list')) await benchList(b, 'application/json', ['consistent', 'rv0', 'pages']);
    if (o.only.has('proto')) {
      await benchGet(b, PROTOBUF, 'get ConfigMap by name, 64 concurrent (protobuf)');
      await benchList(b, PROTOBUF, ['consistent', 'rv0']);
    }
    if (o.only.has('watch')) for (const t of o.watchTransports) await benchWatch(b, t);

    const env = [
      `date: ${new Date().toISOString()}`,
      `machine: ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, load ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
      `node ${process.version}; ${versionOf('etcd', ['--version'])}`,
      `kapi: ${process.env.KAPI_BIN ?? 'bin/kapi'}`,
      `parameters: ${process.argv.slice(2).join(' ') || '(defaults)'}`,
      `duration: ${((Date.now() - started) / 1000).toFixed(0)} s`,
    ];
    const t = resultsTable(b.results);
    console.log(env.map((e) => `- ${e}`).join('\n'));
    console.log(t);
    for (const n of b.notes) console.log(`note: ${n}`);
    if (o.out !== '-') {
      const md = [
        '# kapi benchmark',
        '',
        'Produced by `node dist/bench/run.js` (`make bench`). kapi and raw etcd are measured in the same',
        "run against the same etcd member. Raw etcd uses kapi's own etcd client (storage/etcd/client.ts)",
        'with the bytes kapi stored; watch changes are direct etcd puts seen by both sides. "kapi / raw"',
        "is kapi's figure over raw etcd's. CPU time per operation (user+system, from /proc) is what each",
        'operation costs; a busy machine disturbs it far less than the latencies.',
        '',
        ...env.map((e) => `- ${e}`),
        '',
        t,
        '',
        ...(b.notes.length ? ['Notes:', '', ...b.notes.map((n) => `- ${n}`), ''] : []),
      ].join('\n');
      writeFileSync(o.out, md);
      log(`wrote ${o.out}`);
    }
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
