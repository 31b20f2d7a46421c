// Namespaces. A new namespace is Active with the `kubernetes` finalizer in spec.finalizers.
// Deleting one marks it (deletionTimestamp, phase Terminating) and keeps it: the namespace
// controller empties it, then clears spec.finalizers through `namespaces/finalize`; the
// namespace leaves storage once spec.finalizers and metadata.finalizers are both empty.

import type { KubeObject } from '../../../storage/interface.js';
import { errors } from '../../machinery/status.js';
import { asArray, clone, ensureObject, isObject, orderObject, rfc3339 } from '../object.js';
import type { DeleteRequestOptions, RequestContext } from '../rest.js';
import { GenericStore } from '../store.js';
import { defaultShouldDeleteDuringUpdate, defineStrategy, keepOldStatus, statusStrategy, type ResourceStrategy } from '../strategy.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { isQualifiedName, nameIsDNSLabel } from '../../machinery/validation/names.js';
import { finalizerDeleteDependents, finalizerOrphanDependents, validateObjectMetaUpdate } from '../validation/object-meta.js';
import { isStorageError } from '../../../storage/errors.js';

export const finalizerKubernetes = 'kubernetes';
export const labelMetadataName = 'kubernetes.io/metadata.name';
/** namespaces that may never be deleted */
export const immortalNamespaces = new Set(['default', 'kube-system', 'kube-public']);

function specFinalizers(obj: KubeObject): string[] {
  return asArray(isObject(obj.spec) ? obj.spec.finalizers : undefined).filter((f): f is string => typeof f === 'string');
}

function validateSpecFinalizers(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  specFinalizers(obj).forEach((f, i) => {
    const p = `spec.finalizers[${i}]`;
    const msgs = isQualifiedName(f);
    for (const m of msgs) errs.push(fieldErrors.invalid(p, f, m));
    if (!msgs.length && !f.includes('/') && f !== finalizerKubernetes) {
      errs.push(fieldErrors.invalid(p, f, 'name is neither a standard finalizer name nor is it fully qualified'));
    }
  });
  return errs;
}

/** the name label every namespace carries (kube's defaulting and canonicalization) */
function setNameLabel(obj: KubeObject): void {
  if (!obj.metadata.name) return;
  obj.metadata.labels = { ...(obj.metadata.labels ?? {}), [labelMetadataName]: obj.metadata.name };
}

export function namespaceStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: false,
    validateName: nameIsDNSLabel,
    hasStatusSubresource: true,
    returnDeletedObject: true,
    initialStatus: () => ({ phase: 'Active' }),
    applyDefaults(obj) {
      setNameLabel(obj);
      if (isObject(obj.status) && !obj.status.phase) obj.status.phase = 'Active';
    },
    prepareCreate(obj) {
      const spec = ensureObject(obj, 'spec');
      const finalizers = specFinalizers(obj);
      if (!finalizers.includes(finalizerKubernetes)) finalizers.push(finalizerKubernetes);
      spec.finalizers = finalizers;
    },
    prepareUpdate(obj, old) {
      const spec = ensureObject(obj, 'spec');
      const oldFinalizers = isObject(old.spec) ? old.spec.finalizers : undefined;
      if (oldFinalizers === undefined) delete spec.finalizers;
      else spec.finalizers = clone(oldFinalizers);
    },
    validateSpec: (obj) => validateSpecFinalizers(obj),
    canonicalize: setNameLabel,
    shouldDeleteDuringUpdate: (obj, existing) => specFinalizers(obj).length === 0 && defaultShouldDeleteDuringUpdate(obj, existing),
  });
}

/** `namespaces/status`: only status changes */
export function namespaceStatusStrategy(base: ResourceStrategy): ResourceStrategy {
  return statusStrategy(base);
}

/** `namespaces/finalize`: only spec.finalizers (and metadata) change */
export function namespaceFinalizeStrategy(base: ResourceStrategy): ResourceStrategy {
  return {
    ...base,
    allowCreateOnUpdate: false,
    prepareForUpdate(obj, old) {
      keepOldStatus(obj, old);
    },
    generationChanged: () => false,
    validateUpdate: (obj, old) => [...validateObjectMetaUpdate(obj.metadata, old.metadata), ...validateSpecFinalizers(obj)],
  };
}

function shouldHaveOrphanFinalizer(opts: DeleteRequestOptions, has: boolean): boolean {
  if (opts.orphanDependents !== undefined) return opts.orphanDependents;
  if (opts.propagationPolicy !== undefined) return opts.propagationPolicy === 'Orphan';
  return has;
}

function shouldHaveDeleteDependentsFinalizer(opts: DeleteRequestOptions, has: boolean): boolean {
  if (opts.orphanDependents !== undefined) return false;
  if (opts.propagationPolicy !== undefined) return opts.propagationPolicy === 'Foreground';
  return has;
}

/** The namespaces store: deletion starts termination instead of removing the namespace. */
export class NamespaceStore extends GenericStore {
  override async delete(
    ctx: RequestContext,
    name: string,
    options: DeleteRequestOptions,
  ): Promise<{ object: KubeObject; deleted: boolean }> {
    if (immortalNamespaces.has(name)) {
      throw errors.forbidden({ group: '', resource: 'namespaces', name }, 'this namespace may not be deleted');
    }
    const key = this.keys.objectKey('', name);
    let current: KubeObject | null;
    try {
      current = await this.storage.get(key);
    } catch (e) {
      throw this.mapError(e, name);
    }
    if (!current) throw errors.notFound(this.ref(name));
    const uid = current.metadata.uid ?? '';
    const pre = options.preconditions ?? {};
    if (pre.uid !== undefined && pre.uid !== uid) {
      throw errors.conflict(this.ref(name), `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${uid}`);
    }
    if (pre.resourceVersion !== undefined && pre.resourceVersion !== current.metadata.resourceVersion) {
      throw errors.conflict(
        this.ref(name),
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion ?? ''}`,
      );
    }
    const preconditions = { uid, resourceVersion: pre.resourceVersion };

    if (!current.metadata.deletionTimestamp) {
      try {
        const out = await this.storage.guaranteedUpdate(
          key,
          async (existing) => {
            if (!existing) throw errors.notFound(this.ref(name));
            await this.validateAdmission(ctx, 'DELETE', null, existing, name);
            const ns = clone(existing);
            if (!ns.metadata.deletionTimestamp) ns.metadata.deletionTimestamp = rfc3339(this.now());
            const status = ensureObject(ns, 'status');
            status.phase = 'Terminating';
            const currentFinalizers = new Set(ns.metadata.finalizers ?? []);
            const want: [string, boolean][] = [
              [finalizerOrphanDependents, shouldHaveOrphanFinalizer(options, currentFinalizers.has(finalizerOrphanDependents))],
              [finalizerDeleteDependents, shouldHaveDeleteDependentsFinalizer(options, currentFinalizers.has(finalizerDeleteDependents))],
            ];
            let changed = false;
            for (const [f, should] of want) {
              if (currentFinalizers.has(f) !== should) changed = true;
              if (should) currentFinalizers.add(f);
              else currentFinalizers.delete(f);
            }
            if (changed) ns.metadata.finalizers = [...currentFinalizers];
            return orderObject(ns);
          },
          { preconditions, dryRun: ctx.dryRun },
        );
        return { object: this.fromStorage(out), deleted: false };
      } catch (e) {
        if (isStorageError(e)) throw this.mapError(e, name);
        throw e;
      }
    }
    // still waiting for the namespace controller
    if (specFinalizers(current).length) return { object: this.fromStorage(current), deleted: false };
    return super.delete(ctx, name, { ...options, preconditions });
  }
}
