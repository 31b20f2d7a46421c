// The resource quota controller (kube-controller-manager's resourcequota controller):
// keeps each ResourceQuota's status.hard equal to spec.hard and status.used equal to what
// the namespace holds, counted by the same evaluators admission charges with
// (server/admission/plugins/quota-evaluators.ts). A quota is recomputed when it is created
// or its spec changes, when an object it may count is deleted (or a pod ends, a service
// changes type, a claim's allocated storage changes; resources counted as
// `count/<resource>.<group>` are watched once a quota names them), and every resync period for all
// quotas (kube's --resource-quota-sync-period, 5 minutes). Leader-elected: one replica
// writes the statuses; admission on every replica charges them in between.

import { setMaxListeners } from 'node:events';
import type { KubeObject } from '../../storage/interface.js';
import { phaseOnly, slimObject, startInformer, type Informer, type InformerOptions } from '../authz/informer.js';
import {
  addLists,
  countedResource,
  evaluatorFor,
  listsEqual,
  maskList,
  parseResourceList,
  podCountsForCompute,
  quotaScopeSelectors,
  quotaServiceType,
  resourceListJson,
  specialEvaluators,
  type QuotaEvaluator,
  type ResourceList,
} from '../admission/plugins/quota-evaluators.js';
import { asObject, clone, jsonEqual } from '../registry/object.js';
import type { ResourceResolver, RESTResource } from '../registry/rest.js';
import { runLeaderElected } from './leader.js';
import { defaultLogger, type Controller, type ControllerDeps, type Logger } from './types.js';
import { errorMessage, internalContext, isConflict, isNotFound, sleep } from './util.js';
import { WorkQueue } from './workqueue.js';

const fieldManager = 'resourcequota-controller';

export interface ResourceQuotaControllerOptions {
  /** full recomputation of every quota; default 5 minutes */
  resyncPeriodMs?: number;
  leaseDurationSeconds?: number;
  retryPeriodMs?: number;
}

/** the served resource of a group (its preferred version), not a subresource */
function findResource(resolver: ResourceResolver, group: string, resource: string): RESTResource | undefined {
  let found: RESTResource | undefined;
  for (const r of resolver.all()) {
    if (r.subresource || r.info.group !== group || r.info.resource !== resource || !r.info.namespaced) continue;
    if (!found || r.info.version === r.info.preferredVersion) found = r;
  }
  return found;
}

/** the evaluators a quota's hard names need, each with the resource it counts */
function evaluatorsFor(hardNames: string[]): Array<{ evaluator: QuotaEvaluator; group: string; resource: string }> {
  const out = new Map<string, { evaluator: QuotaEvaluator; group: string; resource: string }>();
  for (const e of specialEvaluators) {
    if (e.matchingResources(hardNames).length === 0) continue;
    const [group, resource] = e.groupResource.split('/') as [string, string];
    out.set(e.groupResource, { evaluator: e, group, resource });
  }
  for (const n of hardNames) {
    const gr = countedResource(n);
    if (!gr || out.has(`${gr.group}/${gr.resource}`)) continue;
    out.set(`${gr.group}/${gr.resource}`, { evaluator: evaluatorFor(gr.group, gr.resource), group: gr.group, resource: gr.resource });
  }
  return [...out.values()];
}

/** what the namespace uses of the quota's hard resources, counting only objects in its scopes */
export async function calculateUsage(
  resolver: ResourceResolver,
  quota: KubeObject,
  signal?: AbortSignal,
  now = new Date(),
): Promise<ResourceList> {
  const ns = quota.metadata.namespace ?? '';
  const hard = parseResourceList(asObject(quota.spec).hard);
  const hardNames = [...hard.keys()];
  const scopes = quotaScopeSelectors(quota);
  let usage: ResourceList = new Map();
  const counted = new Set<string>();
  for (const { evaluator, group, resource } of evaluatorsFor(hardNames)) {
    const names = evaluator.matchingResources(hardNames);
    const rest = findResource(resolver, group, resource);
    if (!rest) continue;
    let items: KubeObject[] = [];
    const ctx = internalContext(fieldManager, ns, signal);
    let cont: string | undefined;
    do {
      const page = await rest.list(ctx, { limit: 500, continue: cont });
      items = items.concat(page.items);
      cont = page.metadata.continue || undefined;
    } while (cont);
    // every name this evaluator charges starts at zero, so an empty namespace shows 0
    let sum: ResourceList = new Map(names.map((n) => [n, { unscaled: 0n, exp10: 0, format: 'DecimalSI' as const }]));
    for (const item of items) {
      if (!scopes.every((s) => evaluator.matchesScope(s, item))) continue;
      sum = addLists(sum, evaluator.usage(item, now));
    }
    usage = addLists(usage, maskList(sum, names));
    for (const n of names) counted.add(n);
  }
  return maskList(usage, counted);
}

/** one pass over a quota: returns whether its status was written */
export async function syncQuota(resolver: ResourceResolver, quota: KubeObject, signal?: AbortSignal): Promise<boolean> {
  const spec = asObject(quota.spec);
  const status = asObject(quota.status);
  const hard = parseResourceList(spec.hard);
  let dirty = !jsonEqual(spec.hard ?? null, status.hard ?? null) || status.hard === undefined || status.used === undefined;
  const oldUsed = parseResourceList(status.used);
  const fresh = await calculateUsage(resolver, quota, signal);
  const used = maskList(new Map([...oldUsed, ...fresh]), hard.keys());
  dirty = dirty || !listsEqual(used, oldUsed);
  if (!dirty) return false;
  const next = clone(quota);
  next.status = { hard: clone(spec.hard ?? {}), used: resourceListJson(used) };
  const rest = resolver.lookup('', 'v1', 'resourcequotas', 'status');
  if (!rest) throw new Error('the registry serves no resourcequotas/status');
  await rest.update(internalContext(fieldManager, quota.metadata.namespace ?? '', signal), quota.metadata.name ?? '', () => next, {
    allowCreate: false,
  });
  return true;
}

interface Replenishing {
  resource: string;
  changed?: (obj: KubeObject, old: KubeObject | undefined) => boolean;
  /** what `changed` reads, beside the metadata (the informer keeps only that) */
  keep?: (obj: KubeObject) => KubeObject;
  /** changes in namespaces without a quota may be watched as metadata alone (no change there
   *  is acted on, and a quota that appears is computed from a fresh list): `changed` must take
   *  an old state kept from metadata alone for one that may have counted */
  metadataOutsideQuotas?: true;
  /** watched only from the first quota that counts it on (as `count/...` resources): only
   *  deletions give back, so a cluster whose quotas do not count it need not follow it (each
   *  ConfigMap or Secret written would otherwise be decoded once more, for nothing) */
  whenCounted?: true;
}

/** resources whose changes give quota back, and which changes do */
const replenishing: Replenishing[] = [
  {
    resource: 'pods',
    keep: (pod) => slimObject(pod, { status: phaseOnly(pod.status) }),
    // a pod kept from its metadata has no phase, which counts
    changed: (obj, old) =>
      !old || (podCountsForCompute(old, new Date()) && !podCountsForCompute(obj, new Date())) || Boolean(obj.metadata.deletionTimestamp),
    metadataOutsideQuotas: true,
  },
  {
    resource: 'services',
    keep: (svc) => slimObject(svc, { spec: { type: asObject(svc.spec).type } }),
    changed: (obj, old) => !old || quotaServiceType(obj) !== quotaServiceType(old),
  },
  {
    resource: 'persistentvolumeclaims',
    keep: (pvc) => slimObject(pvc, { status: { allocatedResources: asObject(pvc.status).allocatedResources } }),
    changed: (obj, old) =>
      !old || !jsonEqual(asObject(obj.status).allocatedResources ?? null, asObject(old.status).allocatedResources ?? null),
  },
  { resource: 'configmaps', whenCounted: true },
  { resource: 'secrets', whenCounted: true },
  { resource: 'replicationcontrollers', whenCounted: true },
];

/** how a resource watched only for its deletions is followed: its metadata */
const METADATA_ONLY: InformerOptions = { keep: (obj) => slimObject(obj), metadataOnly: true };

/** how the informer of a replenishing resource watches: pods, the bulk of the changes, are
 *  decoded whole only in namespaces that have a quota */
export function replenishingInformerOptions(resource: string, quotas: Pick<Informer, 'hasAnyIn'>): InformerOptions {
  const r = replenishing.find((x) => x.resource === resource);
  if (!r?.keep) return METADATA_ONLY;
  if (!r.metadataOutsideQuotas) return { keep: r.keep };
  return { keep: r.keep, metadataOnly: (namespace) => !quotas.hasAnyIn(namespace) };
}

export async function runResourceQuotaController(
  resolver: ResourceResolver,
  signal: AbortSignal,
  log: Logger,
  opts: ResourceQuotaControllerOptions = {},
): Promise<void> {
  const quotaRes = resolver.lookup('', 'v1', 'resourcequotas');
  if (!quotaRes) throw new Error('the registry serves no resourcequotas');
  // one informer per replenishing resource, the resync and the queue all listen on it
  setMaxListeners(50, signal);
  const quotas = startInformer(quotaRes, log, signal);
  const queue = new WorkQueue();
  const keyOf = (q: KubeObject) => `${q.metadata.namespace ?? ''}/${q.metadata.name ?? ''}`;
  quotas.onChange((type, q, old) => {
    if (type === 'DELETED') return;
    const spec = asObject(q.spec);
    const status = asObject(q.status);
    // our own status writes come back here: only a spec change or a missing status matters
    if (
      !old ||
      !jsonEqual(spec.hard ?? null, status.hard ?? null) ||
      status.used === undefined ||
      !jsonEqual(old.spec ?? null, q.spec ?? null)
    )
      queue.add(keyOf(q));
  });

  const enqueueNamespace = (ns: string, evaluator: QuotaEvaluator) => {
    for (const q of quotas.list(ns)) {
      const names = Object.keys(asObject(asObject(q.status).hard));
      if (evaluator.matchingResources(names).length > 0) queue.add(keyOf(q));
    }
  };
  const watched: Informer[] = [];
  for (const { resource, changed, whenCounted } of replenishing) {
    if (whenCounted) continue;
    const rest = resolver.lookup('', 'v1', resource);
    if (!rest) continue;
    const inf = startInformer(rest, log, signal, replenishingInformerOptions(resource, quotas));
    const evaluator = evaluatorFor('', resource);
    inf.onChange((type, obj, old) => {
      if (!inf.hasSynced) return;
      const ns = obj.metadata.namespace ?? '';
      if (type === 'DELETED' || (type === 'MODIFIED' && changed?.(obj, old))) enqueueNamespace(ns, evaluator);
    });
    watched.push(inf);
  }
  await Promise.all([quotas.synced, ...watched.map((w) => w.synced)]);

  // other resources a quota counts (`count/<resource>.<group>`, and those marked whenCounted)
  // are watched from the first quota that names them on, so their deletions give quota back
  // at once too
  const watchedKeys = new Set(replenishing.filter((r) => !r.whenCounted).map((r) => `/${r.resource}`));
  const ensureWatched = (quota: KubeObject) => {
    const names = Object.keys(asObject(asObject(quota.spec).hard));
    const counted = names.map(countedResource).filter((gr) => gr !== undefined);
    for (const r of replenishing) {
      if (r.whenCounted && evaluatorFor('', r.resource).matchingResources(names).length > 0)
        counted.push({ group: '', resource: r.resource });
    }
    for (const gr of counted) {
      if (watchedKeys.has(`${gr.group}/${gr.resource}`)) continue;
      watchedKeys.add(`${gr.group}/${gr.resource}`);
      const rest = findResource(resolver, gr.group, gr.resource);
      if (!rest) continue;
      const inf = startInformer(rest, log, signal, METADATA_ONLY);
      const evaluator = evaluatorFor(gr.group, gr.resource);
      inf.onChange((type, obj) => {
        if (type === 'DELETED' && inf.hasSynced) enqueueNamespace(obj.metadata.namespace ?? '', evaluator);
      });
      watched.push(inf);
    }
  };
  for (const q of quotas.list()) queue.add(keyOf(q));

  // the periodic full recomputation (counts of other resources catch up here)
  const resyncMs = opts.resyncPeriodMs ?? 5 * 60_000;
  const resync = (async () => {
    while (!signal.aborted) {
      await sleep(resyncMs, signal);
      if (signal.aborted) return;
      for (const q of quotas.list()) queue.add(keyOf(q));
    }
  })();

  await queue.run(signal, 2, async (key) => {
    const slash = key.indexOf('/');
    const quota = quotas.get(key.slice(0, slash), key.slice(slash + 1));
    if (!quota) return;
    ensureWatched(quota);
    try {
      await syncQuota(resolver, quota, signal);
      queue.forget(key);
    } catch (err) {
      if (signal.aborted || isNotFound(err)) return;
      if (!isConflict(err)) log.v(1).info('syncing a resource quota failed, retrying', { quota: key, err: errorMessage(err) });
      queue.addRateLimited(key);
    }
  });
  await resync;
  quotas.stop();
  for (const w of watched) w.stop();
}

export function resourceQuotaController(deps: ControllerDeps, opts: ResourceQuotaControllerOptions = {}): Controller {
  const log = deps.log ?? defaultLogger;
  return {
    name: 'resourcequota',
    start(signal) {
      // shared by every controller started together: one more listener per controller
      setMaxListeners(100, signal);
      return runLeaderElected(
        'resourcequota-controller',
        {
          resolver: deps.resolver,
          identity: deps.identity,
          signal,
          log,
          leaseDurationSeconds: opts.leaseDurationSeconds,
          retryPeriodMs: opts.retryPeriodMs,
        },
        (leading) => runResourceQuotaController(deps.resolver, leading, log, opts),
      );
    },
  };
}
