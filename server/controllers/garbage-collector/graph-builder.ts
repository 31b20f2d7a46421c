// Keeps the dependency graph in step with what the watches report and decides what the
// collector must look at: objects whose owners may be gone (attemptToDelete), owners being
// deleted with the `orphan` finalizer (attemptToOrphan), owners being deleted in foreground
// together with their dependents. It never talks to the API; every decision it queues is
// verified by the collector against live objects. All of it is synchronous, so events are
// applied one at a time, in the order they are handed in.

import type { AbsentOwnerCache } from './absent-owners.js';
import { type DependencyGraph, GraphNode } from './graph.js';
import {
  beingDeleted,
  foregroundFinalizer,
  hasFinalizer,
  orphanFinalizer,
  sameCoordinates,
  sameIdentity,
  sameOwnerReference,
  type ObjectIdentity,
  type ObjectMetaSnapshot,
  type OwnerReference,
} from './types.js';

export type GraphEventType = 'add' | 'update' | 'delete';

export interface GraphEvent {
  type: GraphEventType;
  /** made up by the collector after a live lookup found nothing; not seen by a watch */
  virtual?: boolean;
  /** the version and kind of the resource the object was watched (or looked up) as */
  apiVersion: string;
  kind: string;
  object: ObjectMetaSnapshot;
  /** the state before an update, when the watch knew one */
  old?: ObjectMetaSnapshot;
}

/** where the builder hands work to the collector; keys are uids */
export interface CollectorQueues {
  attemptToDelete(uid: string, opts?: { rateLimited?: boolean }): void;
  attemptToOrphan(uid: string): void;
}

/** told about a dependent whose owner reference cannot be right (an owner in another namespace) */
export type InvalidOwnerReporter = (dependent: ObjectIdentity, owner: OwnerReference) => void;

export class GraphBuilder {
  constructor(
    readonly graph: DependencyGraph,
    private readonly queues: CollectorQueues,
    private readonly absentOwners: AbsentOwnerCache,
    private readonly reportInvalidOwner: InvalidOwnerReporter = () => undefined,
  ) {}

  process(ev: GraphEvent): void {
    const uid = ev.object.uid;
    if (!uid) return;
    const existing = this.graph.get(uid);
    if (existing && !ev.virtual && existing.virtual) this.markObserved(existing, identityFromEvent(ev));

    if (ev.type === 'delete') {
      if (existing) this.processDeletion(ev, existing);
      return;
    }
    if (!existing) {
      const node = new GraphNode(identityFromEvent(ev), false);
      node.owners = ev.object.ownerReferences;
      node.beingDeleted = beingDeleted(ev.object);
      node.deletingDependents = node.beingDeleted && hasFinalizer(ev.object, foregroundFinalizer);
      this.graph.set(node);
      this.addDependentToOwners(node, node.owners);
      // a watch may report an object first when it is already being deleted
      this.processTransitions(ev.old, ev.object, node);
      return;
    }
    if (!ev.virtual && (existing.identity.apiVersion !== ev.apiVersion || existing.identity.kind !== ev.kind)) {
      existing.identity = { ...existing.identity, apiVersion: ev.apiVersion, kind: ev.kind };
    }
    const { added, removed, changed } = referencesDiff(existing.owners, ev.object.ownerReferences);
    if (added.length || removed.length || changed.length) {
      this.queueUnblockedOwners(removed, changed);
      existing.owners = ev.object.ownerReferences;
      this.addDependentToOwners(existing, added);
      this.removeDependentFromOwners(existing, removed);
    }
    if (beingDeleted(ev.object)) existing.beingDeleted = true;
    this.processTransitions(ev.old, ev.object, existing);
  }

  /** a virtual node's object was seen by a watch: take the identity the watch reports */
  private markObserved(node: GraphNode, observed: ObjectIdentity): void {
    if (!sameIdentity(observed, node.identity)) {
      // dependents that named this owner by other coordinates may hold a wrong reference;
      // the collector checks them (a no-op for those whose owners are still there)
      const { nonmatching } = partitionDependents([...node.dependents], observed);
      for (const dep of nonmatching) {
        if (observed.namespace && dep.identity.namespace !== observed.namespace) this.reportInvalid(dep, observed.uid);
        this.queues.attemptToDelete(dep.identity.uid);
      }
      node.identity = observed;
    }
    node.virtual = false;
  }

  private processDeletion(ev: GraphEvent, existing: GraphNode): void {
    let remove = true;
    if (ev.virtual) {
      const deleted = identityFromEvent(ev);
      if (existing.virtual) {
        // not sure of a virtual node's coordinates: its dependents may disagree about them
        const { matching, nonmatching } = partitionDependents([...existing.dependents], deleted);
        if (nonmatching.length > 0) {
          remove = false;
          if (matching.length > 0) {
            this.absentOwners.add(deleted);
            for (const dep of matching) this.queues.attemptToDelete(dep.identity.uid);
          }
          if (sameIdentity(existing.identity, deleted)) {
            const replacement = alternateOwnerIdentity(nonmatching, deleted);
            if (replacement) {
              existing.identity = replacement;
              this.queues.attemptToDelete(existing.identity.uid, { rateLimited: true });
            }
          }
        }
      } else if (!sameIdentity(existing.identity, deleted)) {
        // a lookup by other coordinates found nothing, but a watch has seen this object:
        // only the dependents that used those coordinates lost their owner
        remove = false;
        const { matching } = partitionDependents([...existing.dependents], deleted);
        if (matching.length > 0) {
          this.absentOwners.add(deleted);
          for (const dep of matching) this.queues.attemptToDelete(dep.identity.uid);
        }
      }
    }
    if (!remove) return;
    this.graph.delete(existing.identity.uid);
    this.removeDependentFromOwners(existing, existing.owners);
    if (existing.dependents.size > 0) this.absentOwners.add(identityFromEvent(ev));
    for (const dep of existing.dependents) this.queues.attemptToDelete(dep.identity.uid);
    for (const owner of existing.owners) {
      // an owner deleting in foreground may have been waiting for this one
      const ownerNode = this.graph.get(owner.uid);
      if (ownerNode?.deletingDependents) this.queues.attemptToDelete(ownerNode.identity.uid);
    }
  }

  private processTransitions(old: ObjectMetaSnapshot | undefined, cur: ObjectMetaSnapshot, node: GraphNode): void {
    if (deletionStartsWith(old, cur, orphanFinalizer)) {
      this.queues.attemptToOrphan(node.identity.uid);
      return;
    }
    if (deletionStartsWith(old, cur, foregroundFinalizer)) {
      node.deletingDependents = true;
      for (const dep of node.dependents) this.queues.attemptToDelete(dep.identity.uid);
      this.queues.attemptToDelete(node.identity.uid);
    }
  }

  /**
   * Links `n` to each owner's node, creating a virtual node (and asking the collector to
   * verify it) for owners not in the graph. A reference that disagrees with an owner already
   * seen (another namespace, other coordinates) sends `n` to the collector for a check.
   */
  private addDependentToOwners(n: GraphNode, owners: readonly OwnerReference[]): void {
    let potentiallyInvalid = false;
    for (const owner of owners) {
      let ownerNode = this.graph.get(owner.uid);
      const known = ownerNode !== undefined;
      if (!ownerNode) {
        ownerNode = new GraphNode(
          { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid, namespace: n.identity.namespace },
          true,
        );
        this.graph.set(ownerNode);
      }
      ownerNode.addDependent(n);
      if (!known) {
        this.queues.attemptToDelete(ownerNode.identity.uid);
        continue;
      }
      if (potentiallyInvalid) continue;
      const ownerIsNamespaced = ownerNode.identity.namespace.length > 0;
      if (ownerIsNamespaced && ownerNode.identity.namespace !== n.identity.namespace) {
        if (!ownerNode.virtual) this.reportInvalid(n, owner.uid);
        potentiallyInvalid = true;
      } else if (!sameCoordinates(owner, ownerNode.identity)) {
        potentiallyInvalid = true;
      } else if (!ownerIsNamespaced && ownerNode.identity.namespace !== n.identity.namespace && ownerNode.virtual) {
        // a virtual cluster-scoped owner named from a namespace: perhaps a namespaced kind
        // referenced from a cluster-scoped object; let the collector look
        potentiallyInvalid = true;
      }
    }
    if (potentiallyInvalid) this.queues.attemptToDelete(n.identity.uid);
  }

  private removeDependentFromOwners(n: GraphNode, owners: readonly OwnerReference[]): void {
    for (const owner of owners) this.graph.get(owner.uid)?.removeDependent(n);
  }

  /** owners waiting in foreground may proceed once a blocking reference is gone or unblocked */
  private queueUnblockedOwners(removed: OwnerReference[], changed: Array<{ old: OwnerReference; cur: OwnerReference }>): void {
    for (const ref of removed) {
      if (ref.blockOwnerDeletion === true && this.graph.get(ref.uid)) this.queues.attemptToDelete(ref.uid);
    }
    for (const { old, cur } of changed) {
      if (old.blockOwnerDeletion === true && cur.blockOwnerDeletion !== true && this.graph.get(cur.uid)) {
        this.queues.attemptToDelete(cur.uid);
      }
    }
  }

  private reportInvalid(dependent: GraphNode, ownerUid: string): void {
    const ref = dependent.owners.find((o) => o.uid === ownerUid);
    if (ref) this.reportInvalidOwner(dependent.identity, ref);
  }
}

function identityFromEvent(ev: GraphEvent): ObjectIdentity {
  return { apiVersion: ev.apiVersion, kind: ev.kind, name: ev.object.name, uid: ev.object.uid, namespace: ev.object.namespace };
}

/** the object is being deleted with `finalizer` now, and was not at the previous state */
function deletionStartsWith(old: ObjectMetaSnapshot | undefined, cur: ObjectMetaSnapshot, finalizer: string): boolean {
  if (!beingDeleted(cur) || !hasFinalizer(cur, finalizer)) return false;
  return !old || !beingDeleted(old) || !hasFinalizer(old, finalizer);
}

export function referencesDiff(
  old: readonly OwnerReference[],
  cur: readonly OwnerReference[],
): { added: OwnerReference[]; removed: OwnerReference[]; changed: Array<{ old: OwnerReference; cur: OwnerReference }> } {
  const oldByUid = new Map(old.map((r) => [r.uid, r]));
  const added: OwnerReference[] = [];
  const changed: Array<{ old: OwnerReference; cur: OwnerReference }> = [];
  for (const r of cur) {
    const before = oldByUid.get(r.uid);
    if (!before) {
      added.push(r);
      continue;
    }
    if (!sameOwnerReference(before, r)) changed.push({ old: before, cur: r });
    oldByUid.delete(r.uid);
  }
  return { added, removed: [...oldByUid.values()], changed };
}

/**
 * Splits dependents into those whose reference to `owner.uid` matches `owner`'s coordinates
 * (and namespace, for a namespaced owner) and those that name the uid otherwise. A dependent
 * with several references to the uid can land in both.
 */
export function partitionDependents(dependents: GraphNode[], owner: ObjectIdentity): { matching: GraphNode[]; nonmatching: GraphNode[] } {
  const matching: GraphNode[] = [];
  const nonmatching: GraphNode[] = [];
  const ownerIsNamespaced = owner.namespace.length > 0;
  for (const dep of dependents) {
    let match = false;
    let mismatch = false;
    if (ownerIsNamespaced && owner.namespace !== dep.identity.namespace) {
      mismatch = true;
    } else {
      for (const ref of dep.owners) {
        if (ref.uid !== owner.uid) continue;
        if (sameCoordinates(ref, owner)) match = true;
        else mismatch = true;
      }
    }
    if (match) matching.push(dep);
    if (mismatch) nonmatching.push(dep);
  }
  return { matching, nonmatching };
}

/** kind and apiVersion first, so that kinds order the same whatever their scope */
function compareIdentities(a: ObjectIdentity, b: ObjectIdentity): number {
  for (const k of ['kind', 'apiVersion', 'namespace', 'name', 'uid'] as const) {
    if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  }
  return 0;
}

/**
 * Another identity the dependents give the uid of an owner verified absent under `absent`:
 * the first one ordered after it, else the first one. Undefined when there is none.
 */
export function alternateOwnerIdentity(dependents: GraphNode[], absent: ObjectIdentity): ObjectIdentity | undefined {
  const absentIsClusterScoped = absent.namespace === '';
  const key = (id: ObjectIdentity) => JSON.stringify([id.apiVersion, id.kind, id.name, id.uid, id.namespace]);
  const seen = new Set<string>([key(absent)]);
  let first: ObjectIdentity | undefined;
  let firstFollowing: ObjectIdentity | undefined;
  for (const dep of dependents) {
    for (const ref of dep.owners) {
      if (ref.uid !== absent.uid) continue;
      if (sameCoordinates(ref, absent) && (absentIsClusterScoped || absent.namespace === dep.identity.namespace)) continue;
      const candidate: ObjectIdentity = {
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        name: ref.name,
        uid: ref.uid,
        namespace: dep.identity.namespace,
      };
      // the absent identity proved this apiVersion/kind cluster-scoped
      if (absentIsClusterScoped && candidate.apiVersion === absent.apiVersion && candidate.kind === absent.kind) candidate.namespace = '';
      const k = key(candidate);
      if (seen.has(k)) continue;
      seen.add(k);
      if (!first || compareIdentities(candidate, first) < 0) first = candidate;
      if (compareIdentities(absent, candidate) < 0 && (!firstFollowing || compareIdentities(candidate, firstFollowing) < 0)) {
        firstFollowing = candidate;
      }
    }
  }
  return firstFollowing ?? first;
}
