// The ClusterRole aggregation controller (kube-controller-manager's
// clusterrole-aggregation): a ClusterRole with an aggregationRule gets as its rules the union
// of the rules of every other ClusterRole its selectors match, in name order, duplicates
// dropped; manual edits of those rules are overwritten. Any ClusterRole change queues every
// aggregated role, so a newly labelled role shows up within a watch round trip.
// Leader-elected: one replica writes at a time.

import type { KubeObject } from '../../storage/interface.js';
import { startInformer, type Informer } from '../authz/informer.js';
import { RBAC_GROUP } from '../authz/rbac/types.js';
import { jsonEqual as semanticEqual } from '../registry/object.js';
import type { ResourceResolver } from '../registry/rest.js';
import { labelSelectorFromObject, type LabelSelectorObject } from '../selectors/labels.js';
import { runLeaderElected } from './leader.js';
import { defaultLogger, type Controller, type ControllerDeps, type Logger } from './types.js';
import { errorMessage, internalContext, isConflict, isNotFound } from './util.js';
import { WorkQueue } from './workqueue.js';

const fieldManager = 'clusterrole-aggregation-controller';

function selectorsOf(role: KubeObject): LabelSelectorObject[] | undefined {
  const rule = role.aggregationRule as { clusterRoleSelectors?: unknown } | undefined | null;
  if (!rule || typeof rule !== 'object') return undefined;
  return Array.isArray(rule.clusterRoleSelectors) ? (rule.clusterRoleSelectors as LabelSelectorObject[]) : [];
}

/** the rules an aggregated role should have, given every ClusterRole */
export function aggregatedRules(role: KubeObject, all: readonly KubeObject[]): unknown[] {
  const byName = [...all].sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
  const out: unknown[] = [];
  for (const sel of selectorsOf(role) ?? []) {
    let selector;
    try {
      selector = labelSelectorFromObject(sel);
    } catch {
      continue;
    }
    for (const other of byName) {
      if (other.metadata.name === role.metadata.name) continue;
      if (!selector.matches(other.metadata.labels)) continue;
      for (const r of Array.isArray(other.rules) ? other.rules : []) {
        if (!out.some((x) => semanticEqual(x, r))) out.push(r);
      }
    }
  }
  return out;
}

function rulesEqual(want: unknown[], have: unknown): boolean {
  const h = Array.isArray(have) ? have : [];
  return semanticEqual(want, h);
}

async function syncRole(resolver: ResourceResolver, informer: Informer, name: string, signal: AbortSignal): Promise<void> {
  const role = informer.get('', name);
  if (!role || selectorsOf(role) === undefined) return;
  const want = aggregatedRules(role, informer.list(''));
  if (rulesEqual(want, role.rules)) return;
  const res = resolver.lookup(RBAC_GROUP, 'v1', 'clusterroles');
  if (!res) return;
  await res.update(
    internalContext(fieldManager, '', signal),
    name,
    (current) => {
      if (!current) throw Object.assign(new Error('gone'), { code: 404 });
      const next = aggregatedRules(current, informer.list(''));
      return { ...current, rules: next };
    },
    { allowCreate: false },
  );
}

export async function runAggregationController(resolver: ResourceResolver, signal: AbortSignal, log: Logger): Promise<void> {
  const res = resolver.lookup(RBAC_GROUP, 'v1', 'clusterroles');
  if (!res) throw new Error(`the registry serves no ${RBAC_GROUP}/v1 clusterroles`);
  const informer = startInformer(res, log, signal);
  const queue = new WorkQueue();
  const enqueueAggregated = () => {
    for (const r of informer.list('')) if (selectorsOf(r) !== undefined) queue.add(r.metadata.name ?? '');
  };
  informer.onChange(() => enqueueAggregated());
  await informer.synced;
  enqueueAggregated();
  await queue.run(signal, 1, async (name) => {
    try {
      await syncRole(resolver, informer, name, signal);
      queue.forget(name);
    } catch (err) {
      if (signal.aborted || isNotFound(err) || (err as { code?: number }).code === 404) return;
      if (!isConflict(err)) log.warn('clusterrole aggregation failed, retrying', { clusterrole: name, err: errorMessage(err) });
      queue.addRateLimited(name);
    }
  });
  informer.stop();
}

/** the aggregation controller, leader-elected among replicas */
export function rbacAggregationController(
  deps: ControllerDeps,
  opts: { leaseDurationSeconds?: number; retryPeriodMs?: number } = {},
): Controller {
  const log = deps.log ?? defaultLogger;
  return {
    name: 'clusterrole-aggregation',
    start(signal) {
      return runLeaderElected(
        'clusterrole-aggregation-controller',
        { resolver: deps.resolver, identity: deps.identity, signal, log, ...opts },
        (leading) => runAggregationController(deps.resolver, leading, log),
      );
    },
  };
}
