// The garbage collector's view of objects: only what decides ownership and deletion
// (identity, ownerReferences, finalizers, deletionTimestamp), never the rest of an object,
// so the graph of a large cluster stays small.

import { BoundedMemo } from '../../machinery/bounded-memo.js';
import type { KubeObject } from '../../../storage/interface.js';

/** the finalizer a delete with propagationPolicy=Orphan (or orphanDependents) leaves */
export const orphanFinalizer = 'orphan';
/** the finalizer a delete with propagationPolicy=Foreground leaves */
export const foregroundFinalizer = 'foregroundDeletion';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** an object as the graph knows it: an owner reference's coordinates plus a namespace */
export interface ObjectIdentity {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  /** '' for cluster-scoped objects */
  namespace: string;
}

/** the metadata the garbage collector keeps of every object it watches */
export interface ObjectMetaSnapshot {
  uid: string;
  name: string;
  namespace: string;
  resourceVersion: string;
  ownerReferences: readonly OwnerReference[];
  finalizers: readonly string[];
  deletionTimestamp?: string;
}

/** what a snapshot without owners or finalizers holds (most objects): one shared empty array,
 *  not two of its own */
const NONE: readonly never[] = Object.freeze([]);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** the well-formed owner references of an object (validation rejects others on write) */
export function ownerReferencesOf(obj: KubeObject): readonly OwnerReference[] {
  const refs = obj.metadata?.ownerReferences;
  if (!Array.isArray(refs) || refs.length === 0) return NONE;
  const out: OwnerReference[] = [];
  for (const r of refs) {
    if (!isRecord(r)) continue;
    const { apiVersion, kind, name, uid, controller, blockOwnerDeletion } = r;
    if (typeof apiVersion !== 'string' || typeof kind !== 'string' || typeof name !== 'string' || typeof uid !== 'string') continue;
    const ref: OwnerReference = { apiVersion, kind, name, uid };
    if (typeof controller === 'boolean') ref.controller = controller;
    if (typeof blockOwnerDeletion === 'boolean') ref.blockOwnerDeletion = blockOwnerDeletion;
    out.push(ref);
  }
  return out.length === 1 ? sharedSingleOwner(out[0]!) : out;
}

/** single-owner lists by the owner's uid: the Pods of one ReplicaSet (thousands of them) hold
 *  one list between them, not a list, a reference and its four strings each */
const singleOwners = new BoundedMemo<readonly OwnerReference[]>(4096);

function sharedSingleOwner(ref: OwnerReference): readonly OwnerReference[] {
  const known = singleOwners.peek(ref.uid);
  if (known && sameReference(known[0]!, ref)) return known;
  const frozen = Object.freeze([Object.freeze(ref)]);
  singleOwners.set(ref.uid, frozen);
  return frozen;
}

function sameReference(a: OwnerReference, b: OwnerReference): boolean {
  return sameCoordinates(a, b) && a.controller === b.controller && a.blockOwnerDeletion === b.blockOwnerDeletion;
}

export function snapshotOf(obj: KubeObject): ObjectMetaSnapshot {
  const m = obj.metadata ?? {};
  const snap: ObjectMetaSnapshot = {
    uid: m.uid ?? '',
    name: m.name ?? '',
    namespace: m.namespace ?? '',
    resourceVersion: m.resourceVersion ?? '',
    ownerReferences: ownerReferencesOf(obj),
    finalizers:
      Array.isArray(m.finalizers) && m.finalizers.length > 0 ? m.finalizers.filter((f): f is string => typeof f === 'string') : NONE,
  };
  if (m.deletionTimestamp) snap.deletionTimestamp = m.deletionTimestamp;
  return snap;
}

export function beingDeleted(meta: ObjectMetaSnapshot): boolean {
  return meta.deletionTimestamp !== undefined;
}

export function hasFinalizer(meta: ObjectMetaSnapshot, finalizer: string): boolean {
  return meta.finalizers.includes(finalizer);
}

/** the same object by uid, apiVersion, kind and name (what an owner reference names) */
export function sameCoordinates(
  a: Pick<OwnerReference, 'apiVersion' | 'kind' | 'name' | 'uid'>,
  b: Pick<OwnerReference, 'apiVersion' | 'kind' | 'name' | 'uid'>,
): boolean {
  return a.uid === b.uid && a.name === b.name && a.kind === b.kind && a.apiVersion === b.apiVersion;
}

export function sameIdentity(a: ObjectIdentity, b: ObjectIdentity): boolean {
  return sameCoordinates(a, b) && a.namespace === b.namespace;
}

/** an owner reference's fields that matter to equality, in a fixed order */
function refKey(r: OwnerReference): string {
  return JSON.stringify([r.apiVersion, r.kind, r.name, r.uid, r.controller ?? null, r.blockOwnerDeletion ?? null]);
}

export function sameOwnerReference(a: OwnerReference, b: OwnerReference): boolean {
  return refKey(a) === refKey(b);
}

export function sameOwnerReferences(a: readonly OwnerReference[], b: readonly OwnerReference[]): boolean {
  return a.length === b.length && a.every((r, i) => sameOwnerReference(r, b[i]!));
}

/** did anything the graph depends on change between two states of one object */
export function relevantChange(old: ObjectMetaSnapshot, cur: ObjectMetaSnapshot): boolean {
  return (
    old.uid !== cur.uid ||
    beingDeleted(old) !== beingDeleted(cur) ||
    old.finalizers.length !== cur.finalizers.length ||
    old.finalizers.some((f, i) => f !== cur.finalizers[i]) ||
    !sameOwnerReferences(old.ownerReferences, cur.ownerReferences)
  );
}

export function describeIdentity(id: ObjectIdentity): string {
  const where = id.namespace ? `${id.namespace}/` : '';
  return `${id.kind}.${id.apiVersion} ${where}${id.name} (uid ${id.uid})`;
}

/** `apps/v1` -> {group: 'apps', version: 'v1'}; `v1` -> core */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  if (slash < 0) return { group: '', version: apiVersion };
  return { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}
