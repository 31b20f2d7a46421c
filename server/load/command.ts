// `kapi load <scenario>`: drives a named load scenario against the cluster of a kubeconfig,
// shows a progress line, and keeps result.json and report.html in a folder of its own.

import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { FlagError, formatFlagHelp, parseFlagSet, type FlagSpec, type FlagValue } from '../machinery/flagset.js';
import type { RunContext, ScenarioResult } from './context.js';
import { renderHtmlReport } from './html-report.js';
import { LoadClient } from './http-client.js';
import { Progress } from './progress.js';
import { Recorder } from './recorder.js';
import { buildResult, type IdentityLeaseSummary, type LoadResult } from './result.js';
import { runChurn } from './scenarios/churn.js';
import { runDensity } from './scenarios/density.js';
import { runList } from './scenarios/list.js';
import { runMixed } from './scenarios/mixed.js';
import { runWatch } from './scenarios/watch.js';
import { isLoopback } from './target.js';
import { readKubeconfigTarget } from '../kubeconfig/read.js';

const G = 'load';
const D = 'density';
const C = 'churn';
const L = 'list';
const W = 'watch';
const M = 'mixed';

export const LOAD_FLAGS: readonly FlagSpec[] = [
  {
    group: G,
    name: 'kubeconfig',
    kind: 'string',
    default: '',
    usage: 'The kubeconfig of the cluster to load.',
    defaultText: '"$KUBECONFIG, else ~/.kube/config"',
  },
  { group: G, name: 'context', kind: 'string', default: '', usage: 'The kubeconfig context to use (default: its current-context).' },
  {
    group: G,
    name: 'server',
    kind: 'string',
    default: '',
    usage: "Send requests here instead of the context's server (e.g. one replica).",
  },
  {
    group: G,
    name: 'allow-non-loopback',
    kind: 'bool',
    default: false,
    usage: 'Load a server that is not on this machine (127.0.0.0/8, ::1, localhost). Refused without it.',
  },
  {
    group: G,
    name: 'results-dir',
    kind: 'string',
    default: 'load-results',
    usage: 'Where each run gets its folder with result.json and report.html.',
  },
  {
    group: G,
    name: 'timeout',
    kind: 'duration',
    default: 600_000,
    usage: 'No call starts after this long; watchers still get --settle to catch up.',
  },
  { group: G, name: 'concurrency', kind: 'int', default: 32, usage: 'Calls in flight at most.' },
  {
    group: G,
    name: 'settle',
    kind: 'duration',
    default: 30_000,
    usage: 'How long watchers may take to receive every event after the writes end.',
  },
  { group: G, name: 'cleanup', kind: 'bool', default: true, usage: "Delete the run's namespaces at the end." },
  { group: G, name: 'size', kind: 'int', default: 1024, usage: 'Bytes of data in each ConfigMap or Secret (churn, list, mixed).' },
  { group: D, name: 'pods', kind: 'int', default: 1000, usage: 'density: Pods to create.' },
  { group: D, name: 'namespaces', kind: 'int', default: 10, usage: 'density: namespaces the Pods spread over.' },
  {
    group: D,
    name: 'nodes',
    kind: 'int',
    default: 10,
    usage: 'density: node-like watchers (field selector spec.nodeName), Pods assigned round robin.',
  },
  { group: D, name: 'informers', kind: 'int', default: 2, usage: 'density: cluster-wide Pod informers.' },
  {
    group: G,
    name: 'rate',
    kind: 'float',
    default: 50,
    usage: 'Target rate: Pod creations (density), calls (churn, mixed) or patches (watch) per second.',
  },
  {
    group: C,
    name: 'objects',
    kind: 'int',
    default: 300,
    usage: 'churn: objects created, updated and deleted; list: objects in the listed collection.',
  },
  { group: L, name: 'repeats', kind: 'int', default: 3, usage: 'list: lists per variant (JSON/protobuf x full/paged x consistent/rv=0).' },
  { group: L, name: 'page-size', kind: 'int', default: 100, usage: 'list: limit of a paged list.' },
  { group: W, name: 'watchers', kind: 'int', default: 10, usage: 'watch, mixed: watchers of the written collection.' },
  { group: W, name: 'updates', kind: 'int', default: 500, usage: 'watch: patches to write.' },
  { group: M, name: 'duration', kind: 'duration', default: 60_000, usage: 'mixed: how long the mix runs.' },
  {
    group: M,
    name: 'mix',
    kind: 'mapStringString',
    default: { density: '2', churn: '4', list: '1', watch: '3' },
    usage: 'mixed: weights of the parts (density, churn, list, watch) in the call rate.',
  },
  { group: G, name: 'help', kind: 'bool', default: false, usage: 'help for load', shorthand: 'h' },
];

const SCENARIOS = ['density', 'churn', 'list', 'watch', 'mixed'] as const;
type ScenarioName = (typeof SCENARIOS)[number];

export const LOAD_SUMMARY =
  'load     run a load scenario (density, churn, list, watch, mixed) against a cluster; writes result.json and report.html';

export function loadHelp(): string {
  return [
    'Load a Kubernetes API server with a named scenario and report throughput, latency against',
    "kube's API call SLOs, errors and watch delivery, per replica when the replicas name",
    'themselves (kapi --replica-response-header).',
    '',
    '  density  Pods over namespaces at --rate, watched by --nodes node-like watchers and --informers informers',
    '  churn    ConfigMaps and Secrets created, updated and deleted at --rate calls/s',
    '  list     full and paged lists, consistent and rv=0, JSON and protobuf, of --objects ConfigMaps',
    '  watch    --watchers watchers of one collection while --updates patches are written at --rate',
    '  mixed    density, churn, list and watch together for --duration, weighted by --mix',
    '',
    'Usage:',
    '  kapi load <scenario> [--kubeconfig FILE] [flags]',
    '',
    formatFlagHelp(LOAD_FLAGS),
  ].join('\n');
}

type Values = Map<string, FlagValue>;
const int = (v: Values, n: string): number => v.get(n) as number;

function weight(mix: Record<string, string>, name: string): number {
  const n = Number(mix[name] ?? 0);
  if (!Number.isFinite(n) || n < 0) throw new FlagError(`--mix: ${name} must be a number >= 0`);
  return n;
}

function runScenario(name: ScenarioName, ctx: RunContext, v: Values): Promise<ScenarioResult> {
  switch (name) {
    case 'density':
      return runDensity(ctx, {
        pods: int(v, 'pods'),
        namespaces: int(v, 'namespaces'),
        rate: int(v, 'rate'),
        nodes: int(v, 'nodes'),
        informers: int(v, 'informers'),
      });
    case 'churn':
      return runChurn(ctx, { objects: int(v, 'objects'), rate: int(v, 'rate'), size: int(v, 'size') });
    case 'list':
      return runList(ctx, { objects: int(v, 'objects'), size: int(v, 'size'), repeats: int(v, 'repeats'), pageSize: int(v, 'page-size') });
    case 'watch':
      return runWatch(ctx, { watchers: int(v, 'watchers'), rate: int(v, 'rate'), updates: int(v, 'updates'), objects: 10 });
    case 'mixed': {
      const mix = v.get('mix') as Record<string, string>;
      for (const k of Object.keys(mix))
        if (!['density', 'churn', 'list', 'watch'].includes(k)) throw new FlagError(`--mix: unknown part ${k}`);
      return runMixed(ctx, {
        durationSeconds: int(v, 'duration') / 1000,
        rate: int(v, 'rate'),
        weights: { density: weight(mix, 'density'), churn: weight(mix, 'churn'), list: weight(mix, 'list'), watch: weight(mix, 'watch') },
        namespaces: int(v, 'namespaces'),
        nodes: int(v, 'nodes'),
        informers: int(v, 'informers'),
        watchers: int(v, 'watchers'),
        listObjects: int(v, 'objects'),
        size: int(v, 'size'),
      });
    }
  }
}

async function identityLeases(client: LoadClient): Promise<IdentityLeaseSummary[]> {
  const a = await client.call(
    'list',
    'leases',
    'GET',
    '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases?labelSelector=apiserver.kubernetes.io%2Fidentity%3Dkube-apiserver',
  );
  if (a.status !== 200) return [];
  const list = JSON.parse(a.body.toString()) as {
    items: { metadata: { name: string }; spec?: { holderIdentity?: string; renewTime?: string } }[];
  };
  return list.items.map((l) => ({
    name: l.metadata.name,
    holderIdentity: l.spec?.holderIdentity ?? '',
    renewTime: l.spec?.renewTime ?? '',
  }));
}

function stamp(d: Date): string {
  return d.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

function summary(r: LoadResult, dir: string): string {
  const lines = [`${r.scenario}: ${r.totals.calls} calls, ${r.totals.errors} errors in ${r.wallSeconds.toFixed(1)} s`];
  for (const c of r.calls) {
    const p99 = c.p99Ms === undefined ? '-' : `${c.p99Ms.toFixed(1)} ms`;
    lines.push(
      `  ${c.verb.padEnd(7)} ${c.resource.padEnd(44)} ${String(c.count).padStart(7)} ok ${String(c.errors).padStart(5)} err  p99 ${p99}${c.sloMet === false ? '  (SLO missed)' : ''}`,
    );
  }
  for (const [group, d] of Object.entries(r.delivery)) {
    lines.push(
      `  watch delivery (${group}): ${d.delivered} delivered, ${d.missing} missing, ${d.duplicated} duplicated, ${d.outOfOrder} out of order`,
    );
  }
  for (const c of r.checks.filter((x) => !x.ok)) lines.push(`  check failed: ${c.name}: expected ${c.expected}, got ${c.actual}`);
  if (r.replicas.toldApart) lines.push(`  replicas that answered: ${r.replicas.answeredBy.join(', ')}`);
  lines.push(`${r.complete ? 'complete' : 'INCOMPLETE'}; SLOs ${r.sloMet ? 'met' : 'missed'}`);
  lines.push(`result: ${path.join(dir, 'result.json')}`, `report: ${path.join(dir, 'report.html')}`);
  return lines.join('\n');
}

/** `kapi load ...`; returns the exit code (1 when counts or watch delivery do not add up) */
export async function runLoad(argv: readonly string[]): Promise<number> {
  const [scenario, ...rest] = argv;
  let values: Values;
  try {
    if (scenario === undefined || scenario === '--help' || scenario === '-h') {
      process.stdout.write(loadHelp() + '\n');
      return scenario === undefined ? 2 : 0;
    }
    if (!(SCENARIOS as readonly string[]).includes(scenario))
      throw new FlagError(`unknown scenario ${JSON.stringify(scenario)} (one of ${SCENARIOS.join(', ')})`);
    values = parseFlagSet(rest, LOAD_FLAGS, 'kapi load').values;
    if (values.get('help')) {
      process.stdout.write(loadHelp() + '\n');
      return 0;
    }
  } catch (err) {
    if (err instanceof FlagError) {
      process.stderr.write(`Error: ${err.message}\nRun 'kapi load --help' for usage.\n`);
      return 2;
    }
    throw err;
  }
  const kubeconfig =
    (values.get('kubeconfig') as string) || process.env.KUBECONFIG?.split(path.delimiter)[0] || path.join(os.homedir(), '.kube', 'config');
  const target = readKubeconfigTarget(kubeconfig, { context: values.get('context') as string, server: values.get('server') as string });
  if (!isLoopback(target.server.hostname) && values.get('allow-non-loopback') !== true) {
    process.stderr.write(`Error: ${target.server.origin} is not on this machine; a load test there needs --allow-non-loopback\n`);
    return 2;
  }
  const recorder = new Recorder();
  const client = new LoadClient(target, recorder, int(values, 'concurrency'));
  const progress = new Progress(recorder);
  const startedAt = new Date();
  const runId = randomBytes(3).toString('hex');
  const ctx: RunContext = {
    client,
    runId,
    deadline: performance.now() + int(values, 'timeout'),
    concurrency: Math.max(1, int(values, 'concurrency')),
    settleMs: int(values, 'settle'),
    cleanup: values.get('cleanup') !== false,
    phase: (text) => progress.phase(text),
  };
  progress.start();
  try {
    const leases = await identityLeases(client);
    const outcome = await runScenario(scenario as ScenarioName, ctx, values);
    progress.stop();
    const result = buildResult({
      scenario: outcome,
      server: target.server.origin,
      startedAt,
      wallSeconds: (performance.now() - recorder.startedAt) / 1000,
      recorder,
      identityLeases: leases,
    });
    const dir = path.resolve(values.get('results-dir') as string, `${scenario}-${stamp(startedAt)}-${runId}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'result.json'), JSON.stringify(result, null, 2) + '\n');
    writeFileSync(path.join(dir, 'report.html'), renderHtmlReport(result));
    process.stdout.write(summary(result, dir) + '\n');
    return result.complete ? 0 : 1;
  } catch (err) {
    progress.stop();
    process.stderr.write(`Error: ${(err as Error).message}\n`);
    return 1;
  } finally {
    client.close();
  }
}
