// Two kapi builds side by side, for a before/after of a change worth a few percent.
//
//   node dist/bench/ab.js --a BIN --b BIN [--a-args FLAGS] [--b-args FLAGS] [--a-env VARS] [--b-env VARS]
//          [--only get,create,update,pods] [--rounds N] [--ops N] [--warm-up N]
//
// --a-args/--b-args: kapi flags of that side beyond the bench's own, space-separated (the same
// BIN twice with `--b-args "--workers 2"` compares a flag); --a-env/--b-env: NAME=VALUE
// environment variables of that side's kapi, space-separated.
//
// On this shared machine the CPU one build takes per operation moves by a third between runs a
// minute apart, which hides such a change (eight alternated whole runs of two builds could not
// tell 0.042 from 0.043 ms per GET). Here both builds run at once, each with an etcd of its
// own and `make bench`'s options, and the load alternates between them in short slices (A B,
// then B A, ...): whatever else the machine does falls on both alike. For each scenario it
// prints each build's kapi CPU per operation over all its slices, its throughput, and the
// median and spread of the per-round ratios B/A.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EtcdProcess, KapiProcess } from '../e2e/harness.js';
import { startBenchEtcd, startBenchKapi, writeBenchToken } from './servers.js';
import { createNamespace, createPodOwner } from './setup.js';
import { TokenClient } from './client.js';
import { configMapBody, configMapUpdateBody, objectName, podBody } from './bodies.js';
import {
  median,
  mergeCpu,
  mergeRuns,
  runConcurrent,
  runPerWriter,
  sliceOf,
  throughput,
  withCpu,
  type CpuUse,
  type Run,
} from './measure.js';

const SCENARIOS = ['get', 'create', 'update', 'pods'] as const;
type Scenario = (typeof SCENARIOS)[number];

interface Options {
  a: string;
  b: string;
  aArgs: string[];
  bArgs: string[];
  aEnv: Record<string, string>;
  bEnv: Record<string, string>;
  only: Scenario[];
  rounds: number;
  ops: number;
  warmUp: number;
}

const USAGE =
  'node dist/bench/ab.js --a BIN --b BIN [--a-args FLAGS] [--b-args FLAGS] [--a-env VARS] [--b-env VARS] [--only get,create,update,pods] [--rounds N] [--ops N] [--warm-up N]';

function parseArgs(argv: string[]): Options {
  const o: Options = {
    a: '',
    b: '',
    aArgs: [],
    bArgs: [],
    aEnv: {},
    bEnv: {},
    only: [...SCENARIOS],
    rounds: 10,
    ops: 40000,
    warmUp: 10000,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = argv[++i] ?? '';
    if (flag === '--a' || flag === '--b') o[flag === '--a' ? 'a' : 'b'] = path.resolve(value);
    else if (flag === '--a-env' || flag === '--b-env') o[flag === '--a-env' ? 'aEnv' : 'bEnv'] = parseEnv(value);
    else if (flag === '--a-args' || flag === '--b-args') o[flag === '--a-args' ? 'aArgs' : 'bArgs'] = value.split(' ').filter(Boolean);
    else if (flag === '--only') {
      const names = value.split(',').filter(Boolean);
      for (const n of names) if (!(SCENARIOS as readonly string[]).includes(n)) throw new Error(`unknown scenario ${n}\n${USAGE}`);
      o.only = names as Scenario[];
    } else if (flag === '--rounds' || flag === '--ops' || flag === '--warm-up') {
      const n = Number(value);
      if (!Number.isInteger(n) || n < (flag === '--warm-up' ? 0 : 1)) throw new Error(`${flag} needs a positive integer`);
      if (flag === '--rounds') o.rounds = n;
      else if (flag === '--ops') o.ops = n;
      else o.warmUp = n;
    } else throw new Error(`unknown flag ${flag}\n${USAGE}`);
  }
  if (!o.a || !o.b) throw new Error(USAGE);
  return o;
}

/** `NAME=VALUE NAME=VALUE` */
function parseEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const word of text.split(' ').filter(Boolean)) {
    const eq = word.indexOf('=');
    if (eq <= 0) throw new Error(`not NAME=VALUE: ${word}`);
    env[word.slice(0, eq)] = word.slice(eq + 1);
  }
  return env;
}

/** one build under test: its kapi, its etcd, a client */
interface Side {
  name: 'A' | 'B';
  etcd: EtcdProcess;
  kapi: KapiProcess;
  client: TokenClient;
  pids: { kapi: number; etcd: number };
}

const NS = 'ab';
const cmBase = `/api/v1/namespaces/${NS}/configmaps`;
const podBase = `/api/v1/namespaces/${NS}/pods`;
const log = (msg: string) => console.error(`[ab ${new Date().toISOString().slice(11, 19)}] ${msg}`);

async function startSide(
  name: 'A' | 'B',
  bin: string,
  extraArgs: string[],
  env: Record<string, string>,
  tokenFile: string,
  token: string,
): Promise<Side> {
  const etcd = await startBenchEtcd();
  const kapi = await startBenchKapi(etcd, tokenFile, { bin, extraArgs, env });
  const client = new TokenClient(kapi.url, kapi.http.creds.ca, token, 64);
  await createNamespace(client, NS);
  return { name, etcd, kapi, client, pids: { kapi: kapi.pid, etcd: etcd.pid } };
}

/** what one scenario does on a side: unmeasured set-up, then measured slices */
interface Workload {
  prepare(side: Side): Promise<void>;
  /** operations [from, to) of the side's measured share */
  run(side: Side, from: number, to: number): Promise<Run>;
}

function workloads(o: Options): Record<Scenario, Workload> {
  const ownerOf = new Map<Side, { name: string; uid: string }>();
  const rvs = new Map<Side, string[]>();
  const WRITERS = 16;
  let seq = 0;
  const updates = (side: Side, perWriter: number) =>
    runPerWriter(WRITERS, perWriter, async (w) => {
      const name = objectName('cm', w);
      const body = await side.client.expect(200, 'PUT', `${cmBase}/${name}`, {
        body: configMapUpdateBody(name, ++seq, rvs.get(side)![w]!),
      });
      rvs.get(side)![w] = /"resourceVersion":"(\d+)"/.exec(body.toString())![1]!;
    });
  const creates = (side: Side, prefix: string, from: number, to: number) =>
    runConcurrent(to - from, 64, (i) =>
      side.client.expect(201, 'POST', cmBase, { body: configMapBody(objectName(prefix, from + i), from + i) }).then(() => {}),
    );
  const pods = (side: Side, prefix: string, from: number, to: number) =>
    runConcurrent(to - from, 64, (i) =>
      side.client
        .expect(201, 'POST', podBase, { body: podBody(objectName(prefix, from + i), from + i, ownerOf.get(side)!) })
        .then(() => {}),
    );
  return {
    get: {
      prepare: async (side) => {
        await creates(side, 'cm', 0, 2000);
        await runConcurrent(2 * o.warmUp, 64, (i) =>
          side.client.expect(200, 'GET', `${cmBase}/${objectName('cm', (i * 7919) % 2000)}`).then(() => {}),
        );
      },
      run: (side, from, to) =>
        runConcurrent(to - from, 64, (i) =>
          side.client.expect(200, 'GET', `${cmBase}/${objectName('cm', ((from + i) * 7919) % 2000)}`).then(() => {}),
        ),
    },
    create: {
      prepare: async (side) => void (await creates(side, 'warm', 0, o.warmUp)),
      run: (side, from, to) => creates(side, 'new', from, to),
    },
    update: {
      prepare: async (side) => {
        await creates(side, 'cm', 0, WRITERS);
        const got: string[] = [];
        for (let w = 0; w < WRITERS; w++) {
          const body = JSON.parse((await side.client.expect(200, 'GET', `${cmBase}/${objectName('cm', w)}`)).toString()) as {
            metadata: { resourceVersion: string };
          };
          got.push(body.metadata.resourceVersion);
        }
        rvs.set(side, got);
        await updates(side, Math.ceil(o.warmUp / WRITERS));
      },
      run: (side, from, to) => updates(side, Math.max(1, Math.round((to - from) / WRITERS))),
    },
    pods: {
      prepare: async (side) => {
        ownerOf.set(side, await createPodOwner(side.client, NS, 'ab-app-7d4b9c8f6d'));
        await pods(side, 'warm-pod', 0, Math.floor(o.warmUp / 3));
      },
      run: (side, from, to) => pods(side, 'pod', from, to),
    },
  };
}

interface Tally {
  runs: Run[];
  cpu: CpuUse[];
}

/** a side's kapi CPU per operation and throughput over all its slices */
function summary(t: Tally): { perOp: number; rate: number } {
  const run = mergeRuns(t.runs);
  return { perOp: mergeCpu(t.cpu).kapiMs / run.latencies.length, rate: throughput(run) };
}

async function compare(o: Options, scenario: Scenario, work: Workload, a: Side, b: Side): Promise<string> {
  log(`${scenario}: set-up and warm-up on both`);
  await work.prepare(a);
  await work.prepare(b);
  const tallies = new Map<Side, Tally>([
    [a, { runs: [], cpu: [] }],
    [b, { runs: [], cpu: [] }],
  ]);
  const ratios: number[] = [];
  let errors = 0;
  log(`${scenario}: ${o.ops} operations each, in ${o.rounds} alternated rounds`);
  for (let round = 0; round < o.rounds; round++) {
    const [from, to] = sliceOf(o.ops, o.rounds, round);
    const order = round % 2 === 0 ? [a, b] : [b, a];
    const perRound = new Map<Side, number>();
    for (const side of order) {
      const [run, cpu] = await withCpu(side.pids, () => work.run(side, from, to));
      errors += run.errors;
      const tally = tallies.get(side)!;
      tally.runs.push(run);
      tally.cpu.push(cpu);
      perRound.set(side, cpu.kapiMs / Math.max(1, run.latencies.length));
    }
    ratios.push(perRound.get(b)! / perRound.get(a)!);
  }
  const sorted = [...ratios].sort((x, y) => x - y);
  const sa = summary(tallies.get(a)!);
  const sb = summary(tallies.get(b)!);
  return (
    `${scenario}: kapi CPU ms/op A ${sa.perOp.toFixed(4)}, B ${sb.perOp.toFixed(4)} (B/A ${(sb.perOp / sa.perOp).toFixed(3)}); ` +
    `per-round B/A median ${median(ratios).toFixed(3)}, range ${sorted[0]!.toFixed(3)}-${sorted.at(-1)!.toFixed(3)}; ` +
    `ops/s A ${sa.rate.toFixed(0)}, B ${sb.rate.toFixed(0)}${errors ? `; ${errors} errors` : ''}`
  );
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'kapi-ab-'));
  const { token, tokenFile } = writeBenchToken(tmp);
  const sides: Side[] = [];
  try {
    const describe = (bin: string, args: string[], env: Record<string, string>) =>
      [...Object.entries(env).map(([k, v]) => `${k}=${v}`), bin, ...args].join(' ');
    log(`starting A (${describe(o.a, o.aArgs, o.aEnv)}) and B (${describe(o.b, o.bArgs, o.bEnv)}), each with its own etcd`);
    sides.push(await startSide('A', o.a, o.aArgs, o.aEnv, tokenFile, token));
    sides.push(await startSide('B', o.b, o.bArgs, o.bEnv, tokenFile, token));
    const work = workloads(o);
    log(`kapi pids: A ${sides[0]!.kapi.pid}, B ${sides[1]!.kapi.pid}`);
    for (const scenario of o.only) console.log(await compare(o, scenario, work[scenario], sides[0]!, sides[1]!));
  } finally {
    for (const side of sides) {
      side.client.close();
      await side.kapi.stop().catch(() => {});
      await side.etcd.stop().catch(() => {});
    }
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
