// mixed: density, churn, list and watch at once for a duration, the total call rate shared by
// their weights. Each part runs its own checks; the mix passes when every part does.

import type { RunContext, ScenarioResult } from '../context.js';
import { runChurn } from './churn.js';
import { runDensity } from './density.js';
import { runList } from './list.js';
import { runWatch } from './watch.js';

export interface MixedParams {
  durationSeconds: number;
  /** calls per second over all parts */
  rate: number;
  weights: { density: number; churn: number; list: number; watch: number };
  /** sizes of the parts that are not set by rate and duration */
  namespaces: number;
  nodes: number;
  informers: number;
  watchers: number;
  listObjects: number;
  size: number;
}

export async function runMixed(ctx: RunContext, p: MixedParams): Promise<ScenarioResult> {
  const w = p.weights;
  const sum = w.density + w.churn + w.list + w.watch || 1;
  const rateOf = (weight: number): number => (p.rate * weight) / sum;
  const countOf = (weight: number): number => Math.max(1, Math.round(rateOf(weight) * p.durationSeconds));
  // the parts' set-up happens inside the duration too; the deadline bounds them all
  const part: RunContext = { ...ctx, deadline: Math.min(ctx.deadline, performance.now() + p.durationSeconds * 1000) };
  const runs: Promise<ScenarioResult>[] = [];
  if (w.density > 0)
    runs.push(
      runDensity(part, {
        pods: countOf(w.density),
        namespaces: p.namespaces,
        rate: rateOf(w.density),
        nodes: p.nodes,
        informers: p.informers,
      }),
    );
  if (w.churn > 0)
    runs.push(runChurn(part, { objects: Math.max(1, Math.round(countOf(w.churn) / 3)), rate: rateOf(w.churn), size: p.size }));
  if (w.watch > 0) runs.push(runWatch(part, { watchers: p.watchers, rate: rateOf(w.watch), updates: countOf(w.watch), objects: 10 }));
  if (w.list > 0)
    runs.push(
      runList(part, { objects: p.listObjects, size: p.size, repeats: Math.max(1, Math.round(countOf(w.list) / 8)), pageSize: 100 }),
    );
  const parts = await Promise.all(runs);
  return {
    scenario: 'mixed',
    parameters: {
      durationSeconds: p.durationSeconds,
      rate: p.rate,
      weights: `density=${w.density},churn=${w.churn},list=${w.list},watch=${w.watch}`,
    },
    delivery: Object.fromEntries(parts.flatMap((r) => Object.entries(r.delivery).map(([k, v]) => [`${r.scenario}: ${k}`, v]))),
    checks: parts.flatMap((r) => r.checks.map((c) => ({ ...c, name: `${r.scenario}: ${c.name}` }))),
    parts,
  };
}
