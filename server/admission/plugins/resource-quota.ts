// ResourceQuota (kube's k8s.io/apiserver pkg/admission/plugin/resourcequota): a create or
// update in a namespace with ResourceQuota objects is charged against each quota that
// applies to it (status.hard names something the object uses and every scope matches). A
// charge above status.hard is refused with kube's `exceeded quota: <name>, requested: ...,
// used: ..., limited: ...`; a pod that omits a cpu/memory request or limit a quota tracks is
// refused with `failed quota: <name>: must specify ...`; a quota whose status does not yet
// say what is used (the controller has not seen it) refuses with `status unknown for quota`.
// With a ResourceQuotaConfiguration (--admission-control-config-file), resources listed in
// limitedResources may only be consumed under a quota that covers them (`insufficient quota
// to consume: ...`), and pods matching its matchScopes only under a quota with that scope.
//
// The charge is written into the quota's status.used before the object is stored, as an
// update at the resourceVersion the check was made against: a concurrent charge through any
// replica makes it a Conflict, and the check is made again on the quota as it is now (three
// more times at most, as kube). Within a replica charges in one namespace go one at a time.
// The quota controller (server/controllers/resource-quota.ts) recomputes usage from what is
// stored, so a charge for a write that then failed is given back at its next pass.

import type { ReadFence } from '../../../storage/read-fence.js';
import type { KubeObject } from '../../../storage/interface.js';
import { startInformer, type Informer } from '../../authz/informer.js';
import { internalContext, isNotFound } from '../../controllers/util.js';
import { errors, StatusError } from '../../machinery/status.js';
import { createLogger } from '../../log.js';
import { asArray, asObject, clone, isObject } from '../../registry/object.js';
import type { AdmissionAttributes, ResourceResolver } from '../../registry/rest.js';
import type { AdmissionPlugin, AdmissionPluginFactory } from '../plugin.js';
import {
  addLists,
  evaluatorFor,
  exceeding,
  isIgnoredByQuota,
  listsEqual,
  maskList,
  parseResourceList,
  prettyPrint,
  quotaMatches,
  quotaScopeSelectors,
  removeZeros,
  resourceListJson,
  subtractNonNegative,
  type QuotaEvaluator,
  type ResourceList,
  type ScopeRequirement,
} from './quota-evaluators.js';
import { forbidden } from './shared.js';
import { listSharedObjects } from './pod-plugins-common.js';

const fieldManager = 'kube-apiserver';
const RESOURCE_QUOTAS = { group: '', version: 'v1', resource: 'resourcequotas' };
const retries = 3;

function rvNumber(obj: KubeObject): bigint {
  try {
    return BigInt(obj.metadata.resourceVersion ?? '0');
  } catch {
    return 0n;
  }
}

const hardOf = (q: KubeObject): ResourceList => parseResourceList(asObject(q.status).hard);
const usedOf = (q: KubeObject): ResourceList => parseResourceList(asObject(q.status).used);

/** an entry of ResourceQuotaConfiguration's limitedResources: consuming these needs a quota */
export interface LimitedResource {
  apiGroup: string;
  resource: string;
  matchContains: string[];
  matchScopes: ScopeRequirement[];
}

/** reads the plugin's configuration (apiserver.config.k8s.io/v1 ResourceQuotaConfiguration) */
export function limitedResourcesOf(config: unknown): LimitedResource[] {
  return asArray(asObject(config).limitedResources)
    .filter(isObject)
    .map((l) => ({
      apiGroup: typeof l.apiGroup === 'string' ? l.apiGroup : '',
      resource: typeof l.resource === 'string' ? l.resource : '',
      matchContains: asArray(l.matchContains).map(String),
      matchScopes: asArray(l.matchScopes)
        .filter(isObject)
        .map((m) => ({ scopeName: String(m.scopeName ?? ''), operator: String(m.operator ?? ''), values: asArray(m.values).map(String) })),
    }));
}

/** the scope requirements the object matches (only pods have scopes) */
function matchingScopes(evaluator: QuotaEvaluator, obj: KubeObject, scopes: ScopeRequirement[]): ScopeRequirement[] {
  return scopes.filter((s) => evaluator.matchesScope(s, obj));
}

/** Go's %v of a ScopedResourceSelectorRequirement */
const scopeText = (s: ScopeRequirement): string => `{${s.scopeName} ${s.operator} [${s.values.join(' ')}]}`;

/**
 * The new quotas (status.used charged) if the request fits every quota that applies to it;
 * throws kube's refusal otherwise. Quotas that do not apply are returned unchanged.
 */
export function chargeRequest(
  quotas: KubeObject[],
  attrs: AdmissionAttributes,
  evaluator: QuotaEvaluator,
  limited: LimitedResource[] = [],
  now = new Date(),
): KubeObject[] {
  const input = attrs.object;
  if (!input) return quotas;
  const obj =
    input.metadata.namespace || !attrs.namespace ? input : { ...input, metadata: { ...input.metadata, namespace: attrs.namespace } };

  // what the configuration says may only be consumed under a quota
  const limitedScopes = limited.flatMap((l) => matchingScopes(evaluator, obj, l.matchScopes));
  const limitedHere = limited.filter((l) => `${l.apiGroup}/${l.resource}` === `${attrs.resource.group}/${attrs.resource.resource}`);
  const limitedNames = new Set<string>();
  if (limitedHere.length > 0) {
    for (const [name, q] of evaluator.usage(obj, now)) {
      if (q.unscaled > 0n && limitedHere.some((l) => l.matchContains.some((m) => name.includes(m)))) limitedNames.add(name);
    }
  }

  const interesting: number[] = [];
  const restrictedNames = new Set<string>();
  const restrictedScopes: ScopeRequirement[] = [];
  quotas.forEach((quota, i) => {
    restrictedScopes.push(...matchingScopes(evaluator, obj, quotaScopeSelectors(quota)));
    if (!quotaMatches(evaluator, quota, obj)) return;
    const hard = hardOf(quota);
    const restricted = evaluator.matchingResources(hard.keys());
    const unmet = evaluator.constraints(restricted, obj);
    if (unmet) throw forbidden(attrs, `failed quota: ${quota.metadata.name ?? ''}: ${unmet}`);
    const used = usedOf(quota);
    const unknown = restricted.filter((r) => hard.has(r) && !used.has(r));
    if (unknown.length > 0) {
      throw forbidden(attrs, `status unknown for quota: ${quota.metadata.name ?? ''}, resources: ${[...restricted].sort().join(',')}`);
    }
    interesting.push(i);
    for (const r of restricted) restrictedNames.add(r);
  });

  const inputUsage = evaluator.usage(obj, now);
  const negative = [...inputUsage].filter(([, q]) => q.unscaled < 0n).map(([k]) => k);
  if (negative.length > 0) throw forbidden(attrs, `quota usage is negative for resource(s): ${negative.sort().join(',')}`);

  const delta = new Map<number, ResourceList>(interesting.map((i) => [i, inputUsage]));
  let deltaWithoutQuota: ResourceList = attrs.operation === 'CREATE' && interesting.length === 0 ? inputUsage : new Map();
  if (attrs.operation === 'UPDATE') {
    const prev = attrs.oldObject;
    if (!prev) throw forbidden(attrs, 'unable to get previous usage since prior version of object was not found');
    if (prev.metadata.resourceVersion) {
      const change = subtractNonNegative(inputUsage, evaluator.usage(prev, now));
      if (interesting.length === 0) deltaWithoutQuota = change;
      // a quota the old object was already charged to pays only the growth
      for (const i of interesting) if (quotaMatches(evaluator, quotas[i] as KubeObject, prev)) delta.set(i, change);
    } else if (interesting.length === 0) {
      deltaWithoutQuota = inputUsage;
    }
  }
  for (const [i, d] of [...delta]) {
    const nonZero = removeZeros(d);
    if (nonZero.size === 0) delta.delete(i);
    else delta.set(i, nonZero);
  }
  if (interesting.length > 0 ? delta.size === 0 : removeZeros(deltaWithoutQuota).size === 0) return quotas;

  const uncovered = [...limitedNames].filter((n) => !restrictedNames.has(n)).sort();
  if (uncovered.length > 0) throw forbidden(attrs, `insufficient quota to consume: ${uncovered.join(',')}`);
  const uncoveredScopes = limitedScopes.filter((s) => !restrictedScopes.some((r) => r.scopeName === s.scopeName));
  if (uncoveredScopes.length > 0)
    throw errors.internal(`insufficient quota to match these scopes: [${uncoveredScopes.map(scopeText).join(' ')}]`);
  if (interesting.length === 0) return quotas;

  const out = quotas.slice();
  for (const i of interesting) {
    const d = delta.get(i);
    if (!d) continue;
    const quota = out[i] as KubeObject;
    const hard = hardOf(quota);
    const used = usedOf(quota);
    const requested = maskList(d, hard.keys());
    const newUsed = addLists(used, requested);
    if (attrs.subresource !== 'status') {
      const over = exceeding(maskList(newUsed, requested.keys()), hard);
      if (over.length > 0) {
        throw forbidden(
          attrs,
          `exceeded quota: ${quota.metadata.name ?? ''}, requested: ${prettyPrint(maskList(requested, over))}, used: ${prettyPrint(maskList(used, over))}, limited: ${prettyPrint(maskList(hard, over))}`,
        );
      }
    }
    const next = clone(quota);
    next.status = { ...asObject(quota.status), used: resourceListJson(newUsed) };
    out[i] = next;
  }
  return out;
}

function hasHard(quota: KubeObject): boolean {
  const hard = (quota.status as { hard?: unknown } | undefined)?.hard;
  return typeof hard === 'object' && hard !== null;
}

/** the quotas of each namespace as this replica knows them: an informer, overlaid with the
 *  newer versions this replica wrote itself (the informer may not have seen them yet) */
class QuotaAccessor {
  private informer: Informer | undefined;
  private readonly written = new Map<string, KubeObject>();

  constructor(
    private readonly resolver: ResourceResolver,
    private readonly signal: AbortSignal,
  ) {}

  private rest(subresource?: string) {
    const r = this.resolver.lookup('', 'v1', 'resourcequotas', subresource);
    if (!r) throw new Error('the registry serves no resourcequotas');
    return r;
  }

  async quotas(namespace: string, fence?: ReadFence): Promise<KubeObject[]> {
    if (!this.informer) this.informer = startInformer(this.rest(), createLogger('admission').named('resourcequota'), this.signal);
    const known = this.informer.hasSynced ? this.informer.list(namespace) : [];
    // a quota without status.hard yet enforces nothing; the informer may not have seen the
    // controller fill it in, so such a namespace is read consistently, as one without quotas
    const newest = known.map((q) => this.newest(q));
    if (newest.length > 0 && newest.every(hasHard)) return newest;
    // None known (or one not filled in yet): the informer may not have seen a quota created a
    // moment ago (on this replica or another), so the namespace is read consistently. kube
    // caches this live lookup for 30 s, empty answers included; kapi does not, so such a quota
    // is honoured at once. Read only (a charge works on a copy): shared, not decoded per write.
    // Through a create's fence the read may be optimistic, a condition of the create: that
    // the namespace still has no quota when it is written. A quota found is charged, which
    // changes what was read, so that condition is withdrawn and the quotas read strictly.
    const mark = fence?.mark() ?? 0;
    let items = await listSharedObjects(this.resolver, RESOURCE_QUOTAS, namespace, fence);
    if (fence && items.length > 0 && fence.conditions.length > mark) {
      fence.withdraw(mark);
      items = await listSharedObjects(this.resolver, RESOURCE_QUOTAS, namespace);
    }
    return items.map((q) => this.newest(q));
  }

  private newest(q: KubeObject): KubeObject {
    const key = `${q.metadata.namespace ?? ''}/${q.metadata.name ?? ''}`;
    const mine = this.written.get(key);
    if (!mine) return q;
    if (rvNumber(q) >= rvNumber(mine)) {
      this.written.delete(key);
      return q;
    }
    return mine;
  }

  async live(namespace: string, name: string): Promise<KubeObject | undefined> {
    try {
      return await this.rest().get(internalContext(fieldManager, namespace), name, {});
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** writes status.used at the quota's resourceVersion (a Conflict when it has moved on) */
  async updateStatus(quota: KubeObject): Promise<void> {
    const ns = quota.metadata.namespace ?? '';
    const { object } = await this.rest('status').update(internalContext(fieldManager, ns), quota.metadata.name ?? '', () => clone(quota), {
      allowCreate: false,
    });
    this.written.set(`${ns}/${quota.metadata.name ?? ''}`, object);
    if (this.written.size > 1000) this.written.delete(this.written.keys().next().value as string);
  }
}

export function resourceQuotaPlugin(resolver: ResourceResolver, signal: AbortSignal, limited: LimitedResource[] = []): AdmissionPlugin {
  const accessor = new QuotaAccessor(resolver, signal);
  const lanes = new Map<string, Promise<void>>();

  /** runs `work` after every earlier charge in the namespace has finished */
  const inLane = async (ns: string, work: () => Promise<void>): Promise<void> => {
    const prev = lanes.get(ns) ?? Promise.resolve();
    const run = prev.then(work, work);
    const tail = run.catch(() => undefined);
    lanes.set(ns, tail);
    void tail.then(() => {
      if (lanes.get(ns) === tail) lanes.delete(ns);
    });
    return run;
  };

  /** creates charged already, by their fence: a create whose read conditions failed runs
   *  validating admission again, and must not be charged twice */
  const chargedCreates = new WeakSet<ReadFence>();

  const evaluate = async (attrs: AdmissionAttributes, evaluator: QuotaEvaluator, fence: ReadFence | undefined): Promise<void> => {
    let quotas = await accessor.quotas(attrs.namespace, fence);
    if (quotas.length === 0 && limited.length === 0) return;
    for (let attempt = 0; ; attempt++) {
      const charged = chargeRequest(quotas, attrs, evaluator, limited);
      if (attrs.dryRun) return;
      const failed: KubeObject[] = [];
      let lastErr: unknown;
      for (let i = 0; i < charged.length; i++) {
        const before = quotas[i] as KubeObject;
        const after = charged[i] as KubeObject;
        if (listsEqual(usedOf(before), usedOf(after))) continue;
        try {
          await accessor.updateStatus(after);
        } catch (err) {
          failed.push(before);
          lastErr = err;
        }
      }
      if (failed.length === 0) {
        if (attrs.operation === 'CREATE' && attrs.readFence) chargedCreates.add(attrs.readFence);
        return;
      }
      if (attempt >= retries) throw lastErr instanceof StatusError ? lastErr : new StatusError(500, 'InternalError', String(lastErr));
      // charge again only the quotas whose write lost, as they are now
      const fresh: KubeObject[] = [];
      for (const q of failed) {
        const now = await accessor.live(q.metadata.namespace ?? '', q.metadata.name ?? '');
        if (now) fresh.push(now);
      }
      quotas = fresh;
      if (quotas.length === 0) return;
    }
  };

  return {
    name: 'ResourceQuota',
    handles(attrs) {
      if (!attrs.namespace) return false;
      if (attrs.operation !== 'CREATE' && attrs.operation !== 'UPDATE') return false;
      if (attrs.operation === 'CREATE' && attrs.resource.group === '' && attrs.resource.resource === 'namespaces') return false;
      return !isIgnoredByQuota(attrs.resource.group, attrs.resource.resource);
    },
    async validate(attrs, ctx) {
      const evaluator = evaluatorFor(attrs.resource.group, attrs.resource.resource);
      if (!evaluator.handles(attrs)) return;
      if (attrs.readFence && chargedCreates.has(attrs.readFence)) return;
      // most namespaces have no quota: learn that without queueing behind the namespace's
      // other writes (the lane serializes charges, and the lookup may wait for a revision probe)
      if (limited.length === 0 && (await accessor.quotas(attrs.namespace, ctx.readFence)).length === 0) return;
      await inLane(attrs.namespace, () => evaluate(attrs, evaluator, ctx.readFence));
    },
  };
}

export const resourceQuota: AdmissionPluginFactory = {
  name: 'ResourceQuota',
  create(deps, config) {
    return resourceQuotaPlugin(deps.resolver, deps.signal, limitedResourcesOf(config));
  },
};
