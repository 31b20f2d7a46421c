// Empties a terminating namespace and then releases it. One `sync` is one idempotent pass:
// mark it Terminating, delete every namespaced object in it, see what is left (objects held
// by finalizers stay until their owners remove them), record that in status conditions, and
// once nothing is left remove the `kubernetes` finalizer from spec.finalizers through the
// `namespaces/finalize` subresource; the registry then removes the namespace itself.

import type { KubeObject } from '../../storage/interface.js';
import type { RESTResource, ResourceResolver } from '../registry/rest.js';
import { updatedConditions, type DeletionOutcome, type NamespaceCondition } from './namespace-conditions.js';
import { errorMessage, internalContext, isConflict, isMethodNotSupported, isNotFound } from './util.js';

/** the token in `spec.finalizers` this controller owns */
export const namespaceFinalizer = 'kubernetes';

const fieldManager = 'kube-controller-manager';

/** how soon a namespace whose content is held by finalizers is looked at again, watch events aside */
const finalizerRecheckMs = 5_000;

/** a resource with objects still in the namespace, and the revision its last list was read at */
export interface RemainingContent {
  resource: RESTResource;
  resourceVersion: string;
}

export type SyncResult =
  /** nothing more to do: the namespace is gone, not being deleted, or no longer ours to finalize */
  | { state: 'done' }
  /** content remains: look again after `recheckAfterMs`, or when one of `remaining` changes */
  | { state: 'waiting'; remaining: RemainingContent[]; recheckAfterMs: number };

export interface NamespaceDeleterOptions {
  signal?: AbortSignal;
  now?: () => Date;
}

/** one served version per namespaced group/resource that can be deleted: the preferred one */
export function namespacedContentResources(resolver: ResourceResolver): RESTResource[] {
  const byGroupResource = new Map<string, RESTResource>();
  const rank = (r: RESTResource) => (r.info.version === r.info.preferredVersion ? 0 : r.info.version === r.info.storageVersion ? 1 : 2);
  for (const res of resolver.all()) {
    const { info } = res;
    if (res.subresource || !info.namespaced || !info.verbs.includes('delete')) continue;
    const key = `${info.group}/${info.resource}`;
    const seen = byGroupResource.get(key);
    if (!seen || rank(res) < rank(seen)) byGroupResource.set(key, res);
  }
  return [...byGroupResource.values()];
}

interface ResourceOutcome {
  /** objects still present */
  remaining: number;
  finalizers: Map<string, number>;
  /** list revision, for watching what happens to the remaining objects */
  resourceVersion: string;
  /** earliest time a graceful deletion in progress will be due */
  gracefulDueAt?: number;
  error?: string;
}

export class NamespaceDeleter {
  private readonly now: () => Date;

  constructor(
    private readonly resolver: ResourceResolver,
    private readonly opts: NamespaceDeleterOptions = {},
  ) {
    this.now = opts.now ?? (() => new Date());
  }

  private lookup(resource: string, subresource?: string): RESTResource {
    const res = this.resolver.lookup('', 'v1', resource, subresource);
    if (!res) throw new Error(`the registry serves no ${resource}${subresource ? '/' + subresource : ''}`);
    return res;
  }

  private ctx(namespace: string) {
    return internalContext(fieldManager, namespace, this.opts.signal);
  }

  async sync(name: string): Promise<SyncResult> {
    let ns: KubeObject;
    try {
      ns = await this.lookup('namespaces').get(this.ctx(''), name, {});
    } catch (err) {
      if (isNotFound(err)) return { state: 'done' };
      throw err;
    }
    if (!ns.metadata.deletionTimestamp) return { state: 'done' };
    const uid = ns.metadata.uid;

    const terminating = await this.ensureTerminating(ns);
    if (!terminating) return { state: 'done' };
    ns = terminating;
    if (!specFinalizers(ns).includes(namespaceFinalizer)) return { state: 'done' };

    const { outcome, perResource } = await this.deleteAllContent(name);
    await this.recordConditions(name, uid, outcome);

    const waiting = [...perResource].filter(([, o]) => o.remaining > 0 && o.error === undefined);
    if (outcome.contentErrors.length > 0) {
      throw new Error(`namespace ${name}: ${outcome.contentErrors.sort().join('; ')}`);
    }
    if (waiting.length > 0) {
      const now = this.now().getTime();
      const gracefulDue = waiting.map(([, o]) => o.gracefulDueAt).filter((t): t is number => t !== undefined);
      const recheckAfterMs = Math.max(100, Math.min(finalizerRecheckMs, ...gracefulDue.map((t) => t - now + 100)));
      return {
        state: 'waiting',
        remaining: waiting.map(([resource, o]) => ({ resource, resourceVersion: o.resourceVersion })),
        recheckAfterMs,
      };
    }

    await this.finalize(name, uid);
    return { state: 'done' };
  }

  /** the namespace with status.phase Terminating (written if needed); null once it is gone */
  private async ensureTerminating(ns: KubeObject): Promise<KubeObject | null> {
    if (phaseOf(ns) === 'Terminating') return ns;
    const status = this.resolver.lookup('', 'v1', 'namespaces', 'status');
    if (!status) return ns;
    try {
      const { object } = await status.update(
        this.ctx(''),
        ns.metadata.name ?? '',
        (current) => {
          if (!current || current.metadata.uid !== ns.metadata.uid) throw new NamespaceReplaced(ns.metadata.name ?? '');
          const st = (current.status ?? {}) as Record<string, unknown>;
          return { ...current, status: { ...st, phase: 'Terminating' } };
        },
        { allowCreate: false },
      );
      return object;
    } catch (err) {
      if (isNotFound(err) || err instanceof NamespaceReplaced) return null;
      throw err;
    }
  }

  private async recordConditions(name: string, uid: string | undefined, outcome: DeletionOutcome): Promise<void> {
    const status = this.resolver.lookup('', 'v1', 'namespaces', 'status');
    if (!status) return;
    const now = this.now();
    try {
      const current = await this.lookup('namespaces').get(this.ctx(''), name, {});
      if (!updatedConditions(conditionsOf(current), outcome, now).changed) return;
      await status.update(
        this.ctx(''),
        name,
        (latest) => {
          if (!latest || latest.metadata.uid !== uid) throw new NamespaceReplaced(name);
          const st = (latest.status ?? {}) as Record<string, unknown>;
          const { conditions } = updatedConditions(conditionsOf(latest), outcome, now);
          return { ...latest, status: { ...st, conditions } };
        },
        { allowCreate: false },
      );
    } catch (err) {
      // conditions are informative; failing to write them must not hold up the deletion
      if (!isNotFound(err) && !(err instanceof NamespaceReplaced) && !isConflict(err)) throw err;
    }
  }

  /** removes our token from spec.finalizers; the registry deletes the namespace when none remain */
  private async finalize(name: string, uid: string | undefined): Promise<void> {
    const finalizeRes = this.lookup('namespaces', 'finalize');
    try {
      await finalizeRes.update(
        this.ctx(''),
        name,
        (current) => {
          if (!current || current.metadata.uid !== uid) throw new NamespaceReplaced(name);
          const spec = (current.spec ?? {}) as Record<string, unknown>;
          const finalizers = specFinalizers(current).filter((f) => f !== namespaceFinalizer);
          return { ...current, spec: { ...spec, finalizers } };
        },
        { allowCreate: false },
      );
    } catch (err) {
      // another worker (or replica) finished first
      if (isNotFound(err) || err instanceof NamespaceReplaced) return;
      throw err;
    }
  }

  private async deleteAllContent(
    namespace: string,
  ): Promise<{ outcome: DeletionOutcome; perResource: Map<RESTResource, ResourceOutcome> }> {
    const outcome: DeletionOutcome = {
      contentErrors: [],
      remainingByResource: new Map(),
      remainingByFinalizer: new Map(),
    };
    let resources: RESTResource[] = [];
    try {
      resources = namespacedContentResources(this.resolver);
    } catch (err) {
      outcome.discoveryError = errorMessage(err);
    }
    const results = await Promise.all(resources.map((r) => this.deleteContentOf(r, namespace)));
    const perResource = new Map<RESTResource, ResourceOutcome>();
    resources.forEach((res, i) => {
      const r = results[i]!;
      perResource.set(res, r);
      if (r.error !== undefined) outcome.contentErrors.push(r.error);
      if (r.remaining > 0) {
        outcome.remainingByResource.set(`${res.info.resource}.${res.info.group}`, r.remaining);
        for (const [f, n] of r.finalizers) outcome.remainingByFinalizer.set(f, (outcome.remainingByFinalizer.get(f) ?? 0) + n);
      }
    });
    return { outcome, perResource };
  }

  private async deleteContentOf(res: RESTResource, namespace: string): Promise<ResourceOutcome> {
    const ctx = this.ctx(namespace);
    const gvr = `${res.info.group || 'core'}/${res.info.version}, Resource=${res.info.resource}`;
    const canList = res.info.verbs.includes('list');
    const none: ResourceOutcome = { remaining: 0, finalizers: new Map(), resourceVersion: '' };
    try {
      // Background: dependents are the garbage collector's business, and the orphan
      // finalizer must not be added to anything we delete here.
      let deletedAll = false;
      if (res.info.verbs.includes('deletecollection')) {
        try {
          await res.deleteCollection(ctx, { propagationPolicy: 'Background' }, {});
          deletedAll = true;
        } catch (err) {
          if (!isMethodNotSupported(err) && !isNotFound(err)) throw err;
        }
      }
      if (!canList) return none;
      let list = await res.list(ctx, {});
      if (!deletedAll && list.items.length > 0) {
        for (const item of list.items) {
          await ignoreGone(res.delete(ctx, item.metadata.name ?? '', { propagationPolicy: 'Background' }));
        }
        list = await res.list(ctx, {});
      }
      return await this.assessRemaining(res, namespace, list.items, list.metadata.resourceVersion, gvr);
    } catch (err) {
      return { ...none, remaining: 0, error: `${gvr}: ${errorMessage(err)}` };
    }
  }

  /** counts what is left and why; finishes graceful deletions that nobody else will finish */
  private async assessRemaining(
    res: RESTResource,
    namespace: string,
    items: KubeObject[],
    resourceVersion: string,
    gvr: string,
  ): Promise<ResourceOutcome> {
    const out: ResourceOutcome = { remaining: 0, finalizers: new Map(), resourceVersion };
    const now = this.now().getTime();
    let unexpected = 0;
    for (const item of items) {
      const finalizers = item.metadata.finalizers ?? [];
      if (finalizers.length > 0) {
        out.remaining++;
        for (const f of finalizers) out.finalizers.set(f, (out.finalizers.get(f) ?? 0) + 1);
        continue;
      }
      const deletionAt = item.metadata.deletionTimestamp ? Date.parse(item.metadata.deletionTimestamp) : NaN;
      if (Number.isNaN(deletionAt)) {
        // not even marked for deletion: created after our delete (a race); the next pass gets it
        unexpected++;
        out.remaining++;
        continue;
      }
      if (deletionAt > now) {
        // a graceful deletion (a pod bound to a node) still running its grace period
        out.remaining++;
        out.gracefulDueAt = Math.min(out.gracefulDueAt ?? Infinity, deletionAt);
        continue;
      }
      // The grace period is over and there is no kubelet to confirm the pod stopped: finish
      // the deletion as the pod garbage collector would.
      const gone = await ignoreGone(
        res.delete(this.ctx(namespace), item.metadata.name ?? '', {
          gracePeriodSeconds: 0,
          preconditions: item.metadata.uid ? { uid: item.metadata.uid } : undefined,
          propagationPolicy: 'Background',
        }),
      );
      if (!gone) out.remaining++;
    }
    if (unexpected > 0) out.error = `unexpected items still remain in namespace: ${namespace} for gvr: ${gvr}`;
    return out;
  }
}

/** true when the object is gone (deleted now, or already); false when it lingers */
async function ignoreGone(p: Promise<{ deleted: boolean }>): Promise<boolean> {
  try {
    return (await p).deleted;
  } catch (err) {
    if (isNotFound(err)) return true;
    if (isMethodNotSupported(err) || isConflict(err)) return false;
    throw err;
  }
}

class NamespaceReplaced extends Error {
  constructor(name: string) {
    super(`namespace ${name} was deleted and created again`);
  }
}

function specFinalizers(ns: KubeObject): string[] {
  const spec = ns.spec as { finalizers?: unknown } | undefined;
  return Array.isArray(spec?.finalizers) ? spec.finalizers.filter((f): f is string => typeof f === 'string') : [];
}

function phaseOf(ns: KubeObject): string | undefined {
  return (ns.status as { phase?: string } | undefined)?.phase;
}

function conditionsOf(ns: KubeObject): NamespaceCondition[] | undefined {
  const c = (ns.status as { conditions?: unknown } | undefined)?.conditions;
  return Array.isArray(c) ? (c as NamespaceCondition[]) : undefined;
}
