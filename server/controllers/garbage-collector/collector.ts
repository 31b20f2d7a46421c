// The collector's two kinds of work, each item a uid from the graph:
// - attemptToDelete: is this object garbage? It is when every owner it names is gone (by a
//   live lookup: same name, same uid), and it then deletes it, in foreground if an owner
//   waits for it in foreground and it has dependents itself. References to absent owners
//   are removed from an object that still has an owner. An owner deleting in foreground
//   loses its foregroundDeletion finalizer once no dependent blocks it.
// - attemptToOrphan: an owner deleted with the `orphan` finalizer: its references are
//   removed from every dependent, then the finalizer from the owner.

import type { KubeObject } from '../../../storage/interface.js';
import type { Logger } from '../types.js';
import { errorMessage, isNotFound } from '../util.js';
import type { AbsentOwnerCache } from './absent-owners.js';
import type { GraphBuilder } from './graph-builder.js';
import type { GraphNode } from './graph.js';
import type { ApiOperations, PropagationPolicy } from './operations.js';
import { UnknownKindError } from './resources.js';
import {
  beingDeleted,
  describeIdentity,
  foregroundFinalizer,
  orphanFinalizer,
  ownerReferencesOf,
  snapshotOf,
  type ObjectIdentity,
  type OwnerReference,
} from './types.js';

const orphanBatchSize = 50;

/** what to do with a queue item after a pass */
export type Outcome = 'forget' | 'requeue';

/** a cluster-scoped object naming a namespaced owner: retrying cannot help */
class NamespacedOwnerOfClusterScopedObject extends Error {}
/** the object was not found; the graph has been told */
class VirtualDeleteEnqueued extends Error {}

export class Collector {
  constructor(
    private readonly builder: GraphBuilder,
    private readonly api: ApiOperations,
    private readonly absentOwners: AbsentOwnerCache,
    private readonly queueDelete: (uid: string) => void,
    private readonly log: Logger,
  ) {}

  private get graph() {
    return this.builder.graph;
  }

  async attemptToDelete(uid: string): Promise<Outcome> {
    const node = this.graph.get(uid);
    // gone from the graph: deleted, or found absent since it was queued
    if (!node) return 'forget';
    try {
      await this.attemptToDeleteItem(node);
    } catch (err) {
      if (err instanceof VirtualDeleteEnqueued || err instanceof NamespacedOwnerOfClusterScopedObject) return 'forget';
      const level = err instanceof UnknownKindError ? 'v' : 'warn';
      if (level === 'warn')
        this.log.warn('garbage collector: processing failed, retrying', { item: describeIdentity(node.identity), err: errorMessage(err) });
      else
        this.log
          .v(2)
          .info('garbage collector: unknown owner kind, retrying', { item: describeIdentity(node.identity), err: errorMessage(err) });
      return 'requeue';
    }
    // a virtual node that exists is looked at again until a watch reports it, so that one
    // created and deleted while the watches were re-established cannot stay in the graph
    if (this.graph.get(uid)?.virtual) return 'requeue';
    return 'forget';
  }

  private async attemptToDeleteItem(item: GraphNode): Promise<void> {
    // being deleted is a one-way trip: its dependents are handled when it is gone
    if (item.beingDeleted && !item.deletingDependents) return;

    const latest = await this.getLive(item.identity);
    if (item.deletingDependents) return this.processDeletingDependents(item);

    const owners = ownerReferencesOf(latest);
    if (owners.length === 0) return;
    const { solid, dangling, waiting } = await this.classifyReferences(item, owners);
    const rv = latest.metadata.resourceVersion ?? '';

    if (solid.length > 0) {
      if (dangling.length === 0 && waiting.length === 0) return;
      // references to owners deleting in foreground go too: otherwise those owners would
      // wait forever for a dependent that another owner keeps
      const uids = [...dangling, ...waiting].map((r) => r.uid);
      this.log
        .v(2)
        .info('garbage collector: removing references to absent owners', { item: describeIdentity(item.identity), owners: uids.join(',') });
      const r = await this.api.removeOwnerReferences(item.identity, uids);
      if (r === 'gone') this.virtualDelete(item.identity);
      return;
    }

    if (waiting.length > 0 && item.dependents.size > 0) {
      // this item's own dependents must go before it; if one of them is also deleting in
      // foreground there may be a cycle of blocking references: unblock ours first
      if ([...item.dependents].some((d) => d.deletingDependents)) {
        this.log.v(2).info('garbage collector: unblocking owner references to avoid a cycle', { item: describeIdentity(item.identity) });
        const r = await this.api.unblockOwnerReferences(item.identity);
        if (r === 'gone') this.virtualDelete(item.identity);
      }
      await this.deleteItem(item, rv, owners, 'Foreground');
      return;
    }

    // no owner left: garbage. An orphan or foreground finalizer it already has decides how.
    const snap = snapshotOf(latest);
    const policy: PropagationPolicy = snap.finalizers.includes(orphanFinalizer)
      ? 'Orphan'
      : snap.finalizers.includes(foregroundFinalizer)
        ? 'Foreground'
        : 'Background';
    await this.deleteItem(item, rv, owners, policy);
  }

  /** the live object with the item's uid; otherwise the graph is told it is gone */
  private async getLive(id: ObjectIdentity): Promise<KubeObject> {
    let latest: KubeObject;
    try {
      latest = await this.api.get(id);
    } catch (err) {
      if (isNotFound(err)) this.virtualDelete(id);
      throw err;
    }
    if (latest.metadata.uid !== id.uid) this.virtualDelete(id);
    return latest;
  }

  private async deleteItem(
    item: GraphNode,
    resourceVersion: string,
    owners: readonly OwnerReference[],
    policy: PropagationPolicy,
  ): Promise<void> {
    this.log.v(2).info('garbage collector: deleting', { item: describeIdentity(item.identity), propagationPolicy: policy });
    try {
      await this.api.delete(item.identity, resourceVersion, owners, policy);
    } catch (err) {
      if (isNotFound(err)) this.virtualDelete(item.identity);
      throw err;
    }
  }

  /** removes the foregroundDeletion finalizer once no dependent blocks; else pushes them along */
  private async processDeletingDependents(item: GraphNode): Promise<void> {
    const blocking = item.blockingDependents();
    if (blocking.length === 0) {
      this.log
        .v(2)
        .info('garbage collector: dependents gone, removing the foregroundDeletion finalizer', { item: describeIdentity(item.identity) });
      const r = await this.api.removeFinalizer(item.identity, foregroundFinalizer);
      if (r === 'gone') this.virtualDelete(item.identity);
      return;
    }
    for (const dep of blocking) {
      if (!dep.deletingDependents) this.queueDelete(dep.identity.uid);
    }
  }

  private async classifyReferences(
    item: GraphNode,
    refs: readonly OwnerReference[],
  ): Promise<{ solid: OwnerReference[]; dangling: OwnerReference[]; waiting: OwnerReference[] }> {
    const solid: OwnerReference[] = [];
    const dangling: OwnerReference[] = [];
    const waiting: OwnerReference[] = [];
    for (const ref of refs) {
      const owner = await this.ownerOf(ref, item);
      if (!owner) {
        dangling.push(ref);
        continue;
      }
      const meta = snapshotOf(owner);
      if (beingDeleted(meta) && meta.finalizers.includes(foregroundFinalizer)) waiting.push(ref);
      else solid.push(ref);
    }
    return { solid, dangling, waiting };
  }

  /**
   * The live owner `ref` names, or undefined when it is absent: not found by name, or found
   * with another uid (an owner deleted and created again is another owner). A namespaced
   * owner is looked for in the dependent's namespace; a cluster-scoped dependent cannot
   * have one.
   */
  private async ownerOf(ref: OwnerReference, item: GraphNode): Promise<KubeObject | undefined> {
    const coords = { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid };
    if (this.absentOwners.has({ ...coords, namespace: '' })) return undefined;
    if (this.absentOwners.has({ ...coords, namespace: item.identity.namespace })) return undefined;
    const { resource } = this.api.locate({ ...coords, namespace: item.identity.namespace });
    const namespaced = resource.info.namespaced;
    if (namespaced && item.identity.namespace === '') {
      this.log.v(2).info('garbage collector: a cluster-scoped object names a namespaced owner', {
        item: describeIdentity(item.identity),
        owner: `${ref.kind} ${ref.name}`,
      });
      throw new NamespacedOwnerOfClusterScopedObject();
    }
    const id: ObjectIdentity = { ...coords, namespace: namespaced ? item.identity.namespace : '' };
    let owner: KubeObject;
    try {
      owner = await this.api.get(id);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.absentOwners.add(id);
      return undefined;
    }
    if (owner.metadata.uid !== ref.uid) {
      this.absentOwners.add(id);
      return undefined;
    }
    return owner;
  }

  /** tells the graph that the object with this identity does not exist */
  private virtualDelete(id: ObjectIdentity): never {
    this.builder.process({
      type: 'delete',
      virtual: true,
      apiVersion: id.apiVersion,
      kind: id.kind,
      object: { uid: id.uid, name: id.name, namespace: id.namespace, resourceVersion: '', ownerReferences: [], finalizers: [] },
    });
    throw new VirtualDeleteEnqueued();
  }

  async attemptToOrphan(uid: string): Promise<Outcome> {
    const owner = this.graph.get(uid);
    if (!owner) return 'forget';
    const dependents = [...owner.dependents];
    const failed: string[] = [];
    // a bounded number of writes at a time: an owner may have thousands of dependents
    for (let i = 0; i < dependents.length; i += orphanBatchSize) {
      const batch = dependents.slice(i, i + orphanBatchSize);
      const results = await Promise.allSettled(batch.map((d) => this.api.removeOwnerReferences(d.identity, [uid])));
      results.forEach((r, j) => {
        if (r.status === 'rejected') failed.push(`${describeIdentity(batch[j]!.identity)}: ${errorMessage(r.reason)}`);
      });
    }
    if (failed.length) {
      this.log.warn('garbage collector: orphaning dependents failed, retrying', {
        owner: describeIdentity(owner.identity),
        errors: failed.join('; '),
      });
      return 'requeue';
    }
    try {
      await this.api.removeFinalizer(owner.identity, orphanFinalizer);
    } catch (err) {
      this.log.warn('garbage collector: removing the orphan finalizer failed, retrying', {
        owner: describeIdentity(owner.identity),
        err: errorMessage(err),
      });
      return 'requeue';
    }
    return 'forget';
  }
}
