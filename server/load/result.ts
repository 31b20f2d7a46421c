// The result of one `kapi load` run: what result.json holds and report.html draws.

import type { Check, ScenarioResult } from './context.js';
import type { DeliveryStats } from './informer.js';
import type { CallStats, Recorder, TimePoint } from './recorder.js';

export interface IdentityLeaseSummary {
  name: string;
  holderIdentity: string;
  renewTime: string;
}

export interface LoadResult {
  kind: 'KapiLoadResult';
  scenario: string;
  server: string;
  startedAt: string;
  wallSeconds: number;
  parameters: ScenarioResult['parameters'];
  replicas: {
    /** the API server identity Leases at the start of the run */
    identityLeases: IdentityLeaseSummary[];
    /** answers carried the Kapi-Replica header (kapi's --replica-response-header) */
    toldApart: boolean;
    answeredBy: string[];
  };
  totals: { calls: number; errors: number };
  calls: CallStats[];
  /** empty unless replicas could be told apart */
  callsPerReplica: CallStats[];
  delivery: Record<string, DeliveryStats>;
  checks: Check[];
  /** every check held and no watcher missed, doubled or reordered an event */
  complete: boolean;
  /** every call kind's p99 within kube's SLO */
  sloMet: boolean;
  timeline: TimePoint[];
  parts?: ScenarioResult[];
}

export function buildResult(opts: {
  scenario: ScenarioResult;
  server: string;
  startedAt: Date;
  wallSeconds: number;
  recorder: Recorder;
  identityLeases: IdentityLeaseSummary[];
}): LoadResult {
  const r = opts.recorder;
  const answeredBy = r.replicas();
  const toldApart = answeredBy.some((x) => x !== '');
  const calls = r.stats(false, opts.wallSeconds);
  const delivery = opts.scenario.delivery;
  const deliveryComplete = Object.values(delivery).every((d) => d.missing === 0 && d.duplicated === 0 && d.outOfOrder === 0);
  return {
    kind: 'KapiLoadResult',
    scenario: opts.scenario.scenario,
    server: opts.server,
    startedAt: opts.startedAt.toISOString(),
    wallSeconds: opts.wallSeconds,
    parameters: opts.scenario.parameters,
    replicas: { identityLeases: opts.identityLeases, toldApart, answeredBy: answeredBy.filter((x) => x !== '') },
    totals: { calls: r.total, errors: r.failed },
    calls,
    callsPerReplica: toldApart ? r.stats(true, opts.wallSeconds) : [],
    delivery,
    checks: opts.scenario.checks,
    complete: deliveryComplete && opts.scenario.checks.every((c) => c.ok),
    sloMet: calls.every((c) => c.sloMet !== false),
    timeline: r.timeline(),
    ...(opts.scenario.parts ? { parts: opts.scenario.parts } : {}),
  };
}
