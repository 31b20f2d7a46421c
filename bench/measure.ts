// Timing, CPU accounting and the results table of the benchmark.

import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { descendants } from '../e2e/harness.js';

export interface Run {
  /** per-operation latencies, ms */
  latencies: number[];
  /** wall time of the whole run, ms */
  wallMs: number;
  errors: number;
  firstError?: string;
}

/** runs fn(0..n-1) with `concurrency` workers; records each call's latency */
export async function runConcurrent(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<Run> {
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

/** `writers` sequential loops of `each` calls, fn(writer, call); one Run over all calls */
export async function runPerWriter(writers: number, each: number, fn: (writer: number, call: number) => Promise<void>): Promise<Run> {
  const start = performance.now();
  const runs = await Promise.all(Array.from({ length: writers }, (_, w) => runConcurrent(each, 1, (k) => fn(w, w * each + k))));
  // the writers ran at once: the wall time is the whole run's, not their sum
  return { ...mergeRuns(runs), wallMs: performance.now() - start };
}

export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
export const median = (values: number[]): number => percentile(values, 50);
export const throughput = (r: Run): number => (r.latencies.length / r.wallMs) * 1000;

const CLOCK_TICKS_PER_SECOND = (() => {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number((r.stdout ?? '').trim());
  return Number.isInteger(n) && n > 0 ? n : 100;
})();

/** user+system CPU time a process has used, ms; NaN where /proc cannot tell */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // after "pid (comm) ": state is field 3, utime 14, stime 15
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/** the process and every process below it: a kapi primary's workers (--workers) count as kapi */
function processTree(pid: number): number[] {
  return [pid, ...descendants(pid)];
}

/** user+system CPU time of a process and its descendants still running, ms */
export function treeCpuMs(pid: number): number {
  return processTree(pid).reduce((sum, p) => sum + cpuMs(p), 0);
}

/** resident set size of a process and its descendants, bytes */
export function treeRssBytes(pid: number): number {
  return processTree(pid).reduce((sum, p) => sum + rssBytes(p), 0);
}

/** resident set size of a process, bytes */
export function rssBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

export interface CpuUse {
  kapiMs: number;
  etcdMs: number;
  /** the bench process itself: the load client's share of the machine */
  clientMs: number;
  wallMs: number;
}

/** runs fn and reports the CPU time kapi, etcd and the load client used meanwhile */
export async function withCpu<T>(pids: { kapi: number; etcd: number }, fn: () => Promise<T>): Promise<[T, CpuUse]> {
  const k0 = treeCpuMs(pids.kapi);
  const e0 = cpuMs(pids.etcd);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await fn();
  const wallMs = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return [result, { kapiMs: treeCpuMs(pids.kapi) - k0, etcdMs: cpuMs(pids.etcd) - e0, clientMs: (c.user + c.system) / 1000, wallMs }];
}

/** the slices of one side, as one Run: every latency, the wall time of all slices */
export function mergeRuns(runs: readonly Run[]): Run {
  return {
    latencies: runs.flatMap((r) => r.latencies),
    wallMs: runs.reduce((ms, r) => ms + r.wallMs, 0),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    firstError: runs.find((r) => r.firstError)?.firstError,
  };
}

/** the slices of one side, as one CpuUse */
export function mergeCpu(uses: readonly CpuUse[]): CpuUse {
  const sum = (pick: (u: CpuUse) => number) => uses.reduce((ms, u) => ms + pick(u), 0);
  return { kapiMs: sum((u) => u.kapiMs), etcdMs: sum((u) => u.etcdMs), clientMs: sum((u) => u.clientMs), wallMs: sum((u) => u.wallMs) };
}

/** [from, to) of slice `round` of `n` operations cut into `rounds` slices */
export function sliceOf(n: number, rounds: number, round: number): [from: number, to: number] {
  return [Math.floor((n * round) / rounds), Math.floor((n * (round + 1)) / rounds)];
}

export interface Alternated {
  kapi: Run;
  kapiCpu: CpuUse;
  raw: Run;
  rawCpu: CpuUse;
}

/**
 * A scenario's two sides in `rounds` alternated slices (kapi, raw etcd, kapi, raw etcd, ...),
 * each side's slices merged. On a shared machine the load of other processes comes and goes
 * within seconds: measured one after the other, one side could run in a quiet spell and the
 * other in a busy one (ratios of one build moved between 0.7x and 1.0x), while alternated
 * slices share the spells out.
 */
export async function alternate(
  pids: { kapi: number; etcd: number },
  rounds: number,
  kapiSlice: (round: number) => Promise<Run>,
  rawSlice: (round: number) => Promise<Run>,
  /** unmeasured, between a round's kapi slice and its raw slice (reading what kapi stored) */
  beforeRaw?: (round: number) => Promise<void>,
): Promise<Alternated> {
  const kapi: [Run, CpuUse][] = [];
  const raw: [Run, CpuUse][] = [];
  for (let round = 0; round < rounds; round++) {
    kapi.push(await withCpu(pids, () => kapiSlice(round)));
    await beforeRaw?.(round);
    raw.push(await withCpu(pids, () => rawSlice(round)));
  }
  return {
    kapi: mergeRuns(kapi.map(([r]) => r)),
    kapiCpu: mergeCpu(kapi.map(([, c]) => c)),
    raw: mergeRuns(raw.map(([r]) => r)),
    rawCpu: mergeCpu(raw.map(([, c]) => c)),
  };
}

/** one line of the results: a scenario measured through kapi and, where it has one, raw etcd */
export interface Result {
  scenario: string;
  unit: string;
  /** true: bigger is better (throughput) */
  higherIsBetter: boolean;
  kapi: number;
  raw?: number;
  kapiP50?: number;
  kapiP99?: number;
  rawP50?: number;
  rawP99?: number;
  /** kapi's CPU per operation, and etcd's while serving kapi and while serving raw etcd's side */
  kapiCpuMsPerOp?: number;
  etcdCpuMsPerOp?: number;
  rawEtcdCpuMsPerOp?: number;
  /** kapi CPU time / wall time while the scenario ran */
  kapiCores?: number;
  /** the load client's CPU per operation against kapi and against raw etcd */
  clientCpuMsPerOp?: number;
  rawClientCpuMsPerOp?: number;
}

export function fmt(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '—';
  if (n >= 100) return n.toFixed(0);
  if (n >= 10) return n.toFixed(1);
  if (n >= 1) return n.toFixed(2);
  return n.toFixed(3);
}

/** kapi's figure as a multiple of raw etcd's, oriented so that 1.0 is "as good as raw etcd" */
function ofRaw(r: Result): string {
  if (r.raw === undefined) return '—';
  return `${fmt(r.higherIsBetter ? r.kapi / r.raw : r.kapi / r.raw)}x`;
}

export function markdownTable(head: string[], body: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => ` ${'-'.repeat(w)} `).join('|')}|`, ...body.map(line)].join('\n');
}

export function resultsTable(results: Result[]): string {
  const head = [
    'scenario',
    'unit',
    'kapi',
    'raw etcd',
    'kapi / raw',
    'kapi p50/p99 ms',
    'raw p50/p99 ms',
    'kapi CPU ms/op',
    'etcd CPU ms/op kapi / raw',
    'kapi cores',
    'client CPU ms/op kapi / raw',
  ];
  const pair = (a?: number, b?: number) => (a === undefined ? '—' : `${fmt(a)} / ${fmt(b)}`);
  const body = results.map((r) => [
    r.scenario,
    r.unit,
    fmt(r.kapi),
    fmt(r.raw),
    ofRaw(r),
    pair(r.kapiP50, r.kapiP99),
    pair(r.rawP50, r.rawP99),
    fmt(r.kapiCpuMsPerOp),
    pair(r.etcdCpuMsPerOp, r.rawEtcdCpuMsPerOp),
    fmt(r.kapiCores),
    pair(r.clientCpuMsPerOp, r.rawClientCpuMsPerOp),
  ]);
  return markdownTable(head, body);
}
