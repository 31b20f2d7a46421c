// `pods/<name>/eviction`: a delete that respects PodDisruptionBudgets (what `kubectl drain`
// uses). Pods that are Pending, finished or already being deleted are deleted at once;
// otherwise the one budget selecting the pod must allow a disruption, which is counted down
// (and the pod recorded in status.disruptedPods) before the pod is deleted.

import { keyPrefixFor } from '../keys.js';
import type { KubeObject, Storage } from '../../../storage/interface.js';
import { isStorageError } from '../../../storage/errors.js';
import { errors, StatusError } from '../../machinery/status.js';
import { labelSelectorFromObject, SelectorError, type LabelSelectorObject } from '../../selectors/labels.js';
import { asArray, asObject, clone, ensureObject, isObject, orderObject, rfc3339 } from '../object.js';
import type { DeleteRequestOptions, RequestContext } from '../rest.js';
import { CreateOnlyResource } from '../create-only.js';
import type { GenericStore } from '../store.js';
import { stringAt } from '../strategy.js';

export const disruptionBudgetCause = 'DisruptionBudget';
const evictionRetries = 5;
/** more recorded disruptions than this means the PDB controller is not keeping up */
const maxDisruptedPods = 2000;

function tooManyRequests(message: string, cause: string, retryAfterSeconds: number): StatusError {
  const details: { causes: { reason: string; message: string }[]; retryAfterSeconds?: number } = {
    causes: [{ reason: disruptionBudgetCause, message: cause }],
  };
  if (retryAfterSeconds) details.retryAfterSeconds = retryAfterSeconds;
  return new StatusError(429, 'TooManyRequests', message, details);
}

const violates = "Cannot evict pod as it would violate the pod's disruption budget.";

function stillProcessing(pdb: string): StatusError {
  return tooManyRequests(violates, `The disruption budget ${pdb} is still being processed by the server.`, 10);
}

/** Pending, finished or deleting pods are not guarded by a budget */
function canIgnoreBudget(pod: KubeObject): boolean {
  const phase = stringAt(pod, 'status', 'phase');
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || !!pod.metadata.deletionTimestamp;
}

function isReady(pod: KubeObject): boolean {
  return asArray(asObject(pod.status).conditions).some((c) => asObject(c).type === 'Ready' && asObject(c).status === 'True');
}

function num(v: unknown): number {
  return typeof v === 'number' ? v : 0;
}

/** the DeleteOptions inside an Eviction, as the registry takes them */
function deleteOptionsOf(eviction: KubeObject): DeleteRequestOptions {
  const o = asObject(eviction.deleteOptions);
  const out: DeleteRequestOptions = {};
  if (typeof o.gracePeriodSeconds === 'number') out.gracePeriodSeconds = o.gracePeriodSeconds;
  if (typeof o.orphanDependents === 'boolean') out.orphanDependents = o.orphanDependents;
  if (o.propagationPolicy === 'Orphan' || o.propagationPolicy === 'Background' || o.propagationPolicy === 'Foreground') {
    out.propagationPolicy = o.propagationPolicy;
  }
  const p = asObject(o.preconditions);
  if (typeof p.uid === 'string' || typeof p.resourceVersion === 'string') {
    out.preconditions = {};
    if (typeof p.uid === 'string') out.preconditions.uid = p.uid;
    if (typeof p.resourceVersion === 'string') out.preconditions.resourceVersion = p.resourceVersion;
  }
  return out;
}

export class PodEvictionResource extends CreateOnlyResource {
  constructor(
    private readonly pods: GenericStore,
    /** PodDisruptionBudget storage (policy/v1); without it budgets are not consulted */
    private readonly budgets: Storage | undefined,
    private readonly budgetPrefix = keyPrefixFor({ group: 'policy', resource: 'poddisruptionbudgets' }),
  ) {
    super(pods.info, 'eviction');
  }

  async create(ctx: RequestContext, eviction: KubeObject): Promise<KubeObject> {
    const name = ctx.name ?? eviction.metadata?.name ?? '';
    if (eviction.metadata?.name && eviction.metadata.name !== name) {
      throw errors.badRequest('name in URL does not match name in Eviction object');
    }
    const dryRun =
      ctx.dryRun ||
      (Array.isArray(asObject(eviction.deleteOptions).dryRun) && (asObject(eviction.deleteOptions).dryRun as unknown[]).includes('All'));
    const dctx: RequestContext = { ...ctx, dryRun };
    const original = deleteOptionsOf(eviction);
    const pinned = original.preconditions?.resourceVersion !== undefined;

    let pod: KubeObject | undefined;
    for (let attempt = 0; ; attempt++) {
      pod = await this.pods.get(dctx, name, {});
      if (!canIgnoreBudget(pod)) break;
      // the pod must still be what made the budget irrelevant
      const opts: DeleteRequestOptions = { ...original, preconditions: { ...original.preconditions } };
      if (!pinned) opts.preconditions!.resourceVersion = pod.metadata.resourceVersion;
      try {
        await this.pods.delete(dctx, name, opts);
        return this.success();
      } catch (e) {
        if (!pinned && e instanceof StatusError && e.reason === 'Conflict' && attempt < evictionRetries) continue;
        throw e;
      }
    }

    const budgets = await this.budgetsFor(pod);
    if (budgets.length > 1) {
      return {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
        code: 500,
      } as KubeObject;
    }
    let pinToPod = false;
    if (budgets.length === 1) {
      const pdb = budgets[0];
      const status = asObject(pdb.status);
      const unhealthyMayGo =
        !isReady(pod) &&
        (asObject(pdb.spec).unhealthyPodEvictionPolicy === 'AlwaysAllow' ||
          (num(status.currentHealthy) >= num(status.desiredHealthy) && num(status.desiredHealthy) > 0));
      if (unhealthyMayGo) pinToPod = true;
      else await this.decrement(pdb, pod, dryRun);
    }
    const opts: DeleteRequestOptions = { ...original };
    if (pinToPod && !pinned) opts.preconditions = { ...original.preconditions, resourceVersion: pod.metadata.resourceVersion };
    try {
      await this.pods.delete(dctx, name, opts);
    } catch (e) {
      if (pinToPod && !pinned && e instanceof StatusError && e.reason === 'Conflict') throw stillProcessing(budgets[0].metadata.name ?? '');
      throw e;
    }
    return this.success();
  }

  private success(): KubeObject {
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } as KubeObject;
  }

  /** the budgets in the pod's namespace whose selector matches the pod: policy/v1's empty
   *  selector matches every pod, a missing one none */
  private async budgetsFor(pod: KubeObject): Promise<KubeObject[]> {
    if (!this.budgets) return [];
    const ns = pod.metadata.namespace ?? '';
    const list = await this.budgets.getList(`${this.budgetPrefix}/${ns}/`, {
      recursive: true,
      predicate: { isEverything: true, matches: () => true },
    });
    return list.items.filter((pdb) => {
      try {
        const selector = asObject(pdb.spec).selector as LabelSelectorObject | null | undefined;
        if (selector === undefined || selector === null) return false;
        return labelSelectorFromObject(selector).matches(pod.metadata.labels);
      } catch (e) {
        if (e instanceof SelectorError) return false;
        throw e;
      }
    });
  }

  /** takes one allowed disruption from the budget (429 when none is left) */
  private async decrement(pdb: KubeObject, pod: KubeObject, dryRun: boolean): Promise<void> {
    const key = `${this.budgetPrefix}/${pdb.metadata.namespace ?? ''}/${pdb.metadata.name ?? ''}`;
    const pdbName = pdb.metadata.name ?? '';
    const check = (current: KubeObject): KubeObject => {
      const status = asObject(current.status);
      if (num(status.observedGeneration) < num(current.metadata.generation)) throw stillProcessing(pdbName);
      const allowed = num(status.disruptionsAllowed);
      if (allowed < 0)
        throw errors.forbidden({ group: 'policy', resource: 'poddisruptionbudget', name: pdbName }, 'pdb disruptions allowed is negative');
      if (Object.keys(asObject(status.disruptedPods)).length > maxDisruptedPods) {
        throw errors.forbidden(
          { group: 'policy', resource: 'poddisruptionbudget', name: pdbName },
          'DisruptedPods map too big - too many evictions not confirmed by PDB controller',
        );
      }
      if (allowed === 0) {
        throw tooManyRequests(
          violates,
          `The disruption budget ${pdbName} needs ${num(status.desiredHealthy)} healthy pods and has ${num(status.currentHealthy)} currently`,
          0,
        );
      }
      const next = clone(current);
      const st = ensureObject(next, 'status');
      st.disruptionsAllowed = allowed - 1;
      if (allowed - 1 === 0) {
        const conditions = asArray(st.conditions).filter(isObject);
        const now = rfc3339(new Date());
        const existing = conditions.find((c) => c.type === 'DisruptionAllowed');
        const cond = {
          type: 'DisruptionAllowed',
          status: 'False',
          observedGeneration: current.metadata.generation,
          lastTransitionTime: now,
          reason: 'InsufficientPods',
          message: '',
        };
        if (existing) {
          if (existing.status !== 'False') Object.assign(existing, cond);
        } else conditions.push(cond);
        st.conditions = conditions;
      }
      const disrupted = ensureObject(st, 'disruptedPods');
      disrupted[pod.metadata.name ?? ''] = rfc3339(new Date());
      return orderObject(next);
    };
    if (dryRun) {
      check(pdb);
      return;
    }
    try {
      await this.budgets!.guaranteedUpdate(key, async (current) => {
        if (!current) throw errors.notFound({ group: 'policy', resource: 'poddisruptionbudgets', name: pdbName });
        return check(current);
      });
    } catch (e) {
      if (isStorageError(e)) throw errors.timeout(`couldn't update PodDisruptionBudget "${pdbName}" due to conflicts`, 10);
      throw e;
    }
  }
}
