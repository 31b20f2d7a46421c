// The decisions of a delete, as kube-apiserver makes them: option validation, preconditions,
// graceful deletion (deletionTimestamp in the future, deletionGracePeriodSeconds), the
// garbage collector's `orphan` / `foregroundDeletion` finalizers, and marking an object with
// finalizers as being deleted.

import type { KubeObject } from '../../storage/interface.js';
import { errors } from '../machinery/status.js';
import { rfc3339 } from './object.js';
import type { DeleteRequestOptions } from './rest.js';
import type { GarbageCollectionPolicy, ResourceStrategy } from './strategy.js';
import { fieldErrors, invalidError, type FieldError } from '../machinery/validation/field-error.js';
import { finalizerDeleteDependents, finalizerOrphanDependents } from './validation/object-meta.js';

export function validateDeleteOptions(opts: DeleteRequestOptions): void {
  const errs: FieldError[] = [];
  const policy = opts.propagationPolicy as string | undefined;
  if (opts.orphanDependents !== undefined && policy !== undefined) {
    errs.push(fieldErrors.invalid('propagationPolicy', policy, 'orphanDependents and deletionPropagation cannot be both set'));
  }
  if (policy !== undefined && policy !== 'Foreground' && policy !== 'Background' && policy !== 'Orphan') {
    errs.push(fieldErrors.notSupported('propagationPolicy', policy, ['Foreground', 'Background', 'Orphan', 'nil']));
  }
  if (errs.length) throw invalidError('meta.k8s.io', 'DeleteOptions', '', errs);
}

/** 409 when the delete preconditions do not hold for `obj` */
export function checkDeletePreconditions(obj: KubeObject, opts: DeleteRequestOptions, group: string, kind: string): void {
  const p = opts.preconditions;
  if (!p) return;
  const ref = { group, resource: kind, name: obj.metadata.name };
  if (p.uid !== undefined && p.uid !== obj.metadata.uid) {
    throw errors.conflict(
      ref,
      `the UID in the precondition (${p.uid}) does not match the UID in record (${obj.metadata.uid ?? ''}). The object might have been deleted and then recreated`,
    );
  }
  if (p.resourceVersion !== undefined && p.resourceVersion !== obj.metadata.resourceVersion) {
    throw errors.conflict(
      ref,
      `the ResourceVersion in the precondition (${p.resourceVersion}) does not match the ResourceVersion in record (${obj.metadata.resourceVersion ?? ''}). The object might have been modified`,
    );
  }
}

export interface GracefulDecision {
  /** the object now carries a (new) deletionTimestamp and grace period */
  graceful: boolean;
  /** a graceful deletion is already under way and this request does not shorten it */
  pending: boolean;
}

/**
 * kube-apiserver's BeforeDelete: validates options and preconditions, then decides about
 * graceful deletion, updating `obj` (deletionTimestamp, deletionGracePeriodSeconds,
 * generation) and `opts.gracePeriodSeconds` in place.
 */
export function beforeDelete(
  strategy: ResourceStrategy,
  obj: KubeObject,
  opts: DeleteRequestOptions,
  now: Date,
  group: string,
  kind: string,
): GracefulDecision {
  validateDeleteOptions(opts);
  checkDeletePreconditions(obj, opts, group, kind);
  if (opts.gracePeriodSeconds !== undefined && opts.gracePeriodSeconds < 0) opts.gracePeriodSeconds = 1;
  const meta = obj.metadata;
  if (meta.deletionGracePeriodSeconds !== undefined && meta.deletionGracePeriodSeconds < 0) meta.deletionGracePeriodSeconds = 1;

  if (!strategy.gracePeriodSeconds) return { graceful: false, pending: false };

  if (meta.deletionTimestamp) {
    const current = meta.deletionGracePeriodSeconds;
    // already deleting without a grace period: nothing graceful left to do
    if (current === undefined || current === 0) return { graceful: false, pending: false };
    if (opts.gracePeriodSeconds !== undefined) {
      let period = opts.gracePeriodSeconds;
      // only a shorter grace period changes anything
      if (period >= current) return { graceful: false, pending: true };
      const started = Date.parse(meta.deletionTimestamp) - current * 1000;
      let ts = new Date(started + period * 1000);
      if (ts.getTime() < now.getTime()) {
        ts = now;
        if (period !== 0) period = 1;
      }
      meta.deletionTimestamp = rfc3339(ts);
      meta.deletionGracePeriodSeconds = period;
      opts.gracePeriodSeconds = period;
      return { graceful: true, pending: false };
    }
    opts.gracePeriodSeconds = current;
    return { graceful: false, pending: true };
  }

  const period = strategy.gracePeriodSeconds(obj, opts);
  if (period === undefined) return { graceful: false, pending: false };
  opts.gracePeriodSeconds = period;
  meta.deletionTimestamp = rfc3339(new Date(now.getTime() + period * 1000));
  meta.deletionGracePeriodSeconds = period;
  if ((meta.generation ?? 0) > 0) meta.generation = (meta.generation ?? 0) + 1;
  return { graceful: true, pending: false };
}

function shouldOrphan(policy: GarbageCollectionPolicy, finalizers: string[], opts: DeleteRequestOptions): boolean {
  if (policy === 'Unsupported') return false;
  if (opts.orphanDependents !== undefined) return opts.orphanDependents;
  if (opts.propagationPolicy !== undefined) return opts.propagationPolicy === 'Orphan';
  for (const f of finalizers) {
    if (f === finalizerOrphanDependents) return true;
    if (f === finalizerDeleteDependents) return false;
  }
  return policy === 'OrphanDependents';
}

function shouldDeleteInForeground(policy: GarbageCollectionPolicy, finalizers: string[], opts: DeleteRequestOptions): boolean {
  if (policy === 'Unsupported') return false;
  if (opts.orphanDependents !== undefined) return false;
  if (opts.propagationPolicy !== undefined) return opts.propagationPolicy === 'Foreground';
  for (const f of finalizers) {
    if (f === finalizerDeleteDependents) return true;
    if (f === finalizerOrphanDependents) return false;
  }
  return false;
}

/** The finalizers a delete leaves on the object for the garbage collector; `changed` when
 *  they differ (as a set) from the current ones. */
export function gcFinalizers(
  policy: GarbageCollectionPolicy,
  obj: KubeObject,
  opts: DeleteRequestOptions,
): { changed: boolean; finalizers: string[] } {
  const current = obj.metadata.finalizers ?? [];
  const orphan = shouldOrphan(policy, current, opts);
  const foreground = shouldDeleteInForeground(policy, current, opts);
  const next = current.filter((f) => f !== finalizerOrphanDependents && f !== finalizerDeleteDependents);
  if (orphan) next.push(finalizerOrphanDependents);
  if (foreground) next.push(finalizerDeleteDependents);
  const a = new Set(current);
  const b = new Set(next);
  const changed = a.size !== b.size || [...a].some((f) => !b.has(f));
  return { changed, finalizers: changed ? next : current };
}

/** deletionTimestamp = now (unless an earlier one is set), grace period 0; the generation
 *  grows on the first mark. */
export function markAsDeleting(obj: KubeObject, now: Date): void {
  const meta = obj.metadata;
  if (!meta.deletionTimestamp && (meta.generation ?? 0) > 0) meta.generation = (meta.generation ?? 0) + 1;
  if (!meta.deletionTimestamp || Date.parse(meta.deletionTimestamp) > now.getTime()) meta.deletionTimestamp = rfc3339(now);
  meta.deletionGracePeriodSeconds = 0;
}
