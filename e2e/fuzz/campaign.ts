// A fuzz campaign: cases in batches against one replica until the time budget is spent. Each
// answer is judged on its own; after each batch the replica must be alive, ready, serving, under
// the memory bound, and every sentinel unchanged. A replica that went down is replaced (a few
// times) so that one run can show several distinct failures.

import { generateCase } from './cases.js';
import { judge } from './oracle.js';
import { ensureTargets, healthProblems, LIMITED_TOKEN, rssMiB, snapshotSentinels, startFuzzReplica, type FuzzReplica } from './replica.js';
import { describeRequest, type FuzzRequest } from './request.js';
import { FuzzTransport } from './transport.js';

export interface CampaignOptions {
  seed: number;
  /** fuzzing time, start-up of the replica excluded */
  seconds: number;
  /** only these case numbers (a replay) */
  only?: number[];
  /** kinds left out (prefixes of FuzzRequest.kind) */
  skip: string[];
  /** the bound on the replica's resident memory */
  maxRssMiB: number;
  batchSize?: number;
  log?: (line: string) => void;
}

export interface CampaignFailure {
  /** what went wrong, the same for every instance of one failure (used to group them) */
  problem: string;
  /** the case that showed it, when one case did */
  caseIndex?: number;
  request?: string;
  answer?: string;
  /** for failures seen after a batch: the cases of that batch that could have caused it */
  suspects?: string[];
}

export interface CampaignResult {
  seed: number;
  cases: number;
  failures: CampaignFailure[];
  peakRssMiB: number;
  replicaRestarts: number;
}

const MAX_RESTARTS = 3;

export function replayHint(seed: number, index: number): string {
  return `KAPI_FUZZ_SEED=${seed} KAPI_FUZZ_CASE=${index}`;
}

function changedSentinels(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [p, v] of before) if (after.get(p) !== v) out.push(`${p}: ${v} -> ${after.get(p)}`);
  return out;
}

function mayWrite(req: FuzzRequest): boolean {
  return req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'OPTIONS';
}

export async function runCampaign(opts: CampaignOptions): Promise<CampaignResult> {
  const log = opts.log ?? (() => {});
  const batchSize = opts.batchSize ?? 20;
  const failures: CampaignFailure[] = [];
  let replica: FuzzReplica = await startFuzzReplica();
  let transport = new FuzzTransport({ admin: replica.admin, limitedToken: LIMITED_TOKEN });
  let sentinels = await snapshotSentinels(replica.kapi, replica.targets);
  let peakRssMiB = rssMiB(replica.kapi.pid) ?? 0;
  let restarts = 0;
  let cases = 0;
  const deadline = Date.now() + opts.seconds * 1000;
  const indexes = opts.only ?? [];
  let next = 0;
  const nextIndex = (): number | undefined => {
    if (opts.only) return next < indexes.length ? indexes[next++] : undefined;
    return Date.now() < deadline ? next++ : undefined;
  };

  const replace = async (why: string): Promise<boolean> => {
    transport.close();
    await replica.kapi.kill();
    await replica.stop();
    if (restarts >= MAX_RESTARTS) {
      failures.push({ problem: `stopped after ${MAX_RESTARTS} replacements of the replica (last: ${why})` });
      return false;
    }
    restarts++;
    log(`fuzz: replacing the replica (${why})`);
    replica = await startFuzzReplica();
    transport = new FuzzTransport({ admin: replica.admin, limitedToken: LIMITED_TOKEN });
    sentinels = await snapshotSentinels(replica.kapi, replica.targets);
    return true;
  };

  try {
    for (;;) {
      const batch: { index: number; req: FuzzRequest }[] = [];
      for (let i = nextIndex(); i !== undefined; i = batch.length < batchSize ? nextIndex() : undefined) {
        const req = generateCase(opts.seed, i, replica.targets, opts.skip);
        if (!req) continue;
        batch.push({ index: i, req });
        cases++;
        const outcome = await transport.send(req);
        const verdict = judge(req, outcome);
        if (!verdict.ok) {
          failures.push({ problem: verdict.problem ?? 'failed', caseIndex: i, request: describeRequest(req), answer: verdict.answer });
          log(`fuzz: case ${i} failed: ${verdict.problem}\n${describeRequest(req)}\n  answer: ${verdict.answer.slice(0, 300)}`);
        }
        // a dead replica stops the batch at once: the next requests would only repeat it
        if ('error' in outcome && (await healthProblems(replica)).length > 0) break;
      }
      if (batch.length === 0) break;
      const suspects = (filter: (r: FuzzRequest) => boolean): string[] =>
        batch.filter((b) => filter(b.req)).map((b) => `case ${b.index}: ${describeRequest(b.req).split('\n')[0]}`);

      const rss = rssMiB(replica.kapi.pid);
      if (rss !== undefined) peakRssMiB = Math.max(peakRssMiB, rss);
      if (rss !== undefined && rss > opts.maxRssMiB) {
        failures.push({
          problem: `replica RSS ${Math.round(rss)} MiB over the ${opts.maxRssMiB} MiB bound`,
          suspects: suspects(() => true),
        });
      }
      const health = await healthProblems(replica);
      if (health.length > 0) {
        failures.push({
          problem: `replica unwell after a batch: ${health[0]!.split('\n')[0]}`,
          answer: health.join('\n'),
          suspects: suspects(() => true),
        });
        if (!(await replace(health[0]!.split('\n')[0]!))) break;
        continue;
      }
      const now = await snapshotSentinels(replica.kapi, replica.targets);
      const changed = changedSentinels(sentinels, now);
      if (changed.length > 0) {
        failures.push({ problem: 'an object no request named changed', answer: changed.join('\n'), suspects: suspects(mayWrite) });
        if ([...now.values()].some((v) => v === 'missing' || v.endsWith('terminating'))) {
          if (!(await replace('a sentinel is gone'))) break;
          continue;
        }
        sentinels = now;
      }
      if (rss !== undefined && rss > opts.maxRssMiB && !(await replace('memory over the bound'))) break;
      await ensureTargets(replica.kapi, replica.targets);
    }
  } finally {
    transport.close();
    await replica.stop();
  }
  return { seed: opts.seed, cases, failures, peakRssMiB, replicaRestarts: restarts };
}

/** one entry per distinct problem and input kind, with the first case that showed it */
export function distinctFailures(failures: CampaignFailure[]): CampaignFailure[] {
  const seen = new Map<string, CampaignFailure>();
  for (const f of failures) {
    const kind = f.request ? /^\[([^\]]*)\]/.exec(f.request)?.[1]?.split('.').slice(0, 2).join('.') : '';
    const key = `${f.problem} @ ${kind}`;
    if (!seen.has(key)) seen.set(key, f);
  }
  return [...seen.values()];
}

export function formatFailures(result: CampaignResult): string {
  const lines = [
    `fuzz: seed ${result.seed}, ${result.cases} cases, ${result.failures.length} failures, peak RSS ${Math.round(result.peakRssMiB)} MiB, ${result.replicaRestarts} replica replacements`,
  ];
  for (const f of distinctFailures(result.failures)) {
    lines.push('', `* ${f.problem}`);
    if (f.caseIndex !== undefined) lines.push(`  replay: ${replayHint(result.seed, f.caseIndex)}`);
    if (f.request) lines.push(f.request.replace(/^/gm, '  '));
    if (f.answer) lines.push(`  answer: ${f.answer.slice(0, 800).replace(/\n/g, '\n  ')}`);
    if (f.suspects?.length) lines.push('  cases of that batch:', ...f.suspects.map((s) => `    ${s.slice(0, 300)}`));
  }
  return lines.join('\n');
}
