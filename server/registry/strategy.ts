// A ResourceStrategy tells the generic store what is particular to one kind: scope, name
// rule, defaulting, what a create or update may change, validation, graceful deletion and
// garbage-collection defaults. Strategies work on objects in their storage version.
// `defineStrategy` fills in kube-apiserver's defaults so a kind states only what differs.

import type { KubeObject } from '../../storage/interface.js';
import type { ResourceInfo } from '../apis/types.js';
import type { DeleteRequestOptions, RequestContext } from './rest.js';
import { clone, isObject, semanticEqual, specPart, type JsonObject } from './object.js';
import type { FieldError } from '../machinery/validation/field-error.js';
import { nameIsDNSSubdomain, type NameValidator } from '../machinery/validation/names.js';
import { validateObjectMeta, validateObjectMetaUpdate } from './validation/object-meta.js';

export interface StrategyContext {
  readonly request: RequestContext;
  readonly now: Date;
  /** the resource as requested: its version decides e.g. garbage-collection defaults */
  readonly info: ResourceInfo;
}

export type GarbageCollectionPolicy = 'DeleteDependents' | 'OrphanDependents' | 'Unsupported';

/** called once the write is known to have succeeded (true) or failed (false) */
export type FinishFunc = (succeeded: boolean) => Promise<void>;

export interface ResourceStrategy {
  readonly namespaced: boolean;
  /** the rule for metadata.name and generateName (DNS subdomain for most kinds) */
  readonly validateName: NameValidator;
  /** metadata.generation starts at 1 and grows with every change of the spec */
  readonly tracksGeneration: boolean;
  /** a PUT to a missing name creates it */
  readonly allowCreateOnUpdate: boolean;
  /** a PUT without metadata.resourceVersion overwrites whatever is stored */
  readonly allowUnconditionalUpdate: boolean;
  /** DELETE answers with the deleted object instead of a `Status` */
  readonly returnDeletedObject: boolean;
  defaultGarbageCollectionPolicy(c: StrategyContext): GarbageCollectionPolicy;
  /** API defaulting (kube's SetDefaults_*), applied to every object a request writes */
  applyDefaults(obj: KubeObject, c: StrategyContext): void;
  /** normalizes a new object before validation (e.g. resets status) */
  prepareForCreate(obj: KubeObject, c: StrategyContext): void;
  /** restores what this endpoint may not change (e.g. status on the main resource) */
  prepareForUpdate(obj: KubeObject, old: KubeObject, c: StrategyContext): void;
  /** whether an update changes what metadata.generation counts */
  generationChanged(obj: KubeObject, old: KubeObject): boolean;
  validate(obj: KubeObject, c: StrategyContext): FieldError[];
  validateUpdate(obj: KubeObject, old: KubeObject, c: StrategyContext): FieldError[];
  warningsOnCreate(obj: KubeObject, c: StrategyContext): string[];
  warningsOnUpdate(obj: KubeObject, old: KubeObject, c: StrategyContext): string[];
  canonicalize(obj: KubeObject): void;
  /** graceful deletion: the grace period (seconds) a delete gets, or undefined when the kind
   *  has no graceful deletion. May look at the requested gracePeriodSeconds. */
  gracePeriodSeconds?(obj: KubeObject, opts: DeleteRequestOptions): number | undefined;
  /** an update that leaves the object with no finalizers removes it when this says so */
  shouldDeleteDuringUpdate(obj: KubeObject, existing: KubeObject): boolean;
  /** side effects before a create is written (e.g. allocating an IP); finish undoes on failure */
  beginCreate?(obj: KubeObject, c: StrategyContext): Promise<FinishFunc>;
  beginUpdate?(obj: KubeObject, old: KubeObject, c: StrategyContext): Promise<FinishFunc>;
  /** side effects after an object left storage (e.g. releasing its IP) */
  afterDelete?(obj: KubeObject, c: StrategyContext): Promise<void>;
  /** kube's TTLFunc: every create and update of the kind keeps the object this many seconds,
   *  then etcd deletes it (Events, --event-ttl); unset or 0: objects stay */
  readonly ttlSeconds?: number;
}

export interface StrategyOptions extends Partial<ResourceStrategy> {
  namespaced: boolean;
  /** the kind has a `status` subresource: status is reset on create and kept on update */
  hasStatusSubresource?: boolean;
  /** the status a new object gets (kube's zero status as it serializes); default `{}` */
  initialStatus?: (obj: KubeObject) => JsonObject;
  /** extra validation of the kind's own fields, on create and update */
  validateSpec?: (obj: KubeObject, c: StrategyContext) => FieldError[];
  /** extra validation of an update of the kind's own fields (immutability etc.) */
  validateSpecUpdate?: (obj: KubeObject, old: KubeObject, c: StrategyContext) => FieldError[];
  /** kind-specific create preparation, run after the generic one */
  prepareCreate?: (obj: KubeObject, c: StrategyContext) => void;
  /** kind-specific update preparation, run after the generic one */
  prepareUpdate?: (obj: KubeObject, old: KubeObject, c: StrategyContext) => void;
}

export function hasDeletionFinalizers(obj: KubeObject): boolean {
  return (obj.metadata.finalizers ?? []).length > 0;
}

/** kube-apiserver's default: the update emptied the finalizers of an object being deleted
 *  without a pending grace period */
export function defaultShouldDeleteDuringUpdate(obj: KubeObject, existing: KubeObject): boolean {
  if (hasDeletionFinalizers(obj)) return false;
  if (!existing.metadata.deletionTimestamp) return false;
  const grace = existing.metadata.deletionGracePeriodSeconds;
  return grace === undefined || grace === null || grace === 0;
}

/** copies `old.status` over `obj.status` (or removes it when old had none) */
export function keepOldStatus(obj: KubeObject, old: KubeObject): void {
  if (old.status === undefined) delete obj.status;
  else obj.status = clone(old.status);
}

export function defineStrategy(o: StrategyOptions): ResourceStrategy {
  const hasStatus = o.hasStatusSubresource ?? false;
  const initialStatus = o.initialStatus ?? (() => ({}));
  const s: ResourceStrategy = {
    namespaced: o.namespaced,
    validateName: o.validateName ?? nameIsDNSSubdomain,
    tracksGeneration: o.tracksGeneration ?? false,
    allowCreateOnUpdate: o.allowCreateOnUpdate ?? false,
    allowUnconditionalUpdate: o.allowUnconditionalUpdate ?? true,
    returnDeletedObject: o.returnDeletedObject ?? false,
    defaultGarbageCollectionPolicy: o.defaultGarbageCollectionPolicy ?? (() => 'DeleteDependents'),
    applyDefaults: o.applyDefaults ?? (() => {}),
    prepareForCreate:
      o.prepareForCreate ??
      ((obj, c) => {
        if (hasStatus) obj.status = initialStatus(obj);
        o.prepareCreate?.(obj, c);
      }),
    prepareForUpdate:
      o.prepareForUpdate ??
      ((obj, old, c) => {
        if (hasStatus) keepOldStatus(obj, old);
        o.prepareUpdate?.(obj, old, c);
      }),
    generationChanged: o.generationChanged ?? ((obj, old) => !semanticEqual(specPart(obj), specPart(old))),
    validate:
      o.validate ?? ((obj, c) => [...validateObjectMeta(obj.metadata, o.namespaced, s.validateName), ...(o.validateSpec?.(obj, c) ?? [])]),
    validateUpdate:
      o.validateUpdate ??
      ((obj, old, c) => [
        ...validateObjectMetaUpdate(obj.metadata, old.metadata),
        ...(o.validateSpec?.(obj, c) ?? []),
        ...(o.validateSpecUpdate?.(obj, old, c) ?? []),
      ]),
    warningsOnCreate: o.warningsOnCreate ?? (() => []),
    warningsOnUpdate: o.warningsOnUpdate ?? (() => []),
    canonicalize: o.canonicalize ?? (() => {}),
    gracePeriodSeconds: o.gracePeriodSeconds,
    shouldDeleteDuringUpdate: o.shouldDeleteDuringUpdate ?? defaultShouldDeleteDuringUpdate,
    beginCreate: o.beginCreate,
    beginUpdate: o.beginUpdate,
    afterDelete: o.afterDelete,
    ttlSeconds: o.ttlSeconds,
  };
  return s;
}

/** How the status subresource of a kind behaves (kube's <kind>StatusStrategy). */
export interface StatusStrategyOptions {
  /** status writes may not change labels (apps workloads) */
  keepLabels?: boolean;
  /** status writes may not change owner references (pods) */
  keepOwnerReferences?: boolean;
  validateStatus?: (obj: KubeObject, old: KubeObject, c: StrategyContext) => FieldError[];
}

/** The strategy of `<resource>/status`: only status (and most metadata) may change. */
export function statusStrategy(base: ResourceStrategy, o: StatusStrategyOptions = {}): ResourceStrategy {
  return {
    ...base,
    allowCreateOnUpdate: false,
    prepareForUpdate(obj, old) {
      const meta = obj.metadata;
      const status = obj.status;
      for (const k of Object.keys(obj)) delete obj[k];
      Object.assign(obj, clone(old));
      obj.metadata = meta;
      if (status === undefined) delete obj.status;
      else obj.status = status;
      if (o.keepLabels) {
        if (old.metadata.labels === undefined) delete obj.metadata.labels;
        else obj.metadata.labels = clone(old.metadata.labels);
      }
      if (o.keepOwnerReferences) {
        if (old.metadata.ownerReferences === undefined) delete obj.metadata.ownerReferences;
        else obj.metadata.ownerReferences = clone(old.metadata.ownerReferences);
      }
    },
    generationChanged: () => false,
    validateUpdate(obj, old, c) {
      return [...validateObjectMetaUpdate(obj.metadata, old.metadata), ...(o.validateStatus?.(obj, old, c) ?? [])];
    },
  };
}

/** the string at obj.a.b.c, or '' */
export function stringAt(obj: unknown, ...path: string[]): string {
  const v = valueAt(obj, ...path);
  return typeof v === 'string' ? v : '';
}

/** the value at obj.a.b.c (undefined when any step is missing) */
export function valueAt(obj: unknown, ...path: string[]): unknown {
  let cur: unknown = obj;
  for (const p of path) {
    if (!isObject(cur)) return undefined;
    cur = cur[p];
  }
  return cur;
}
