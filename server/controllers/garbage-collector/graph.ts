// The dependency graph: one node per object uid, linked to the nodes of its owners (by the
// owner references it carries) and of its dependents. A node is "virtual" while it stands
// only for an owner some dependent names and has not been seen by a watch; the collector
// verifies such owners with a live lookup.

import type { ObjectIdentity, OwnerReference } from './types.js';

const NO_DEPENDENTS: ReadonlySet<GraphNode> = new Set();

export class GraphNode {
  /** made with the first dependent: most objects (every Pod) have none, and an empty Set with
   *  its hash table weighs about 180 bytes */
  private dependentSet: Set<GraphNode> | undefined = undefined;
  owners: readonly OwnerReference[] = [];
  /** deletionTimestamp set and the foregroundDeletion finalizer present */
  deletingDependents = false;
  /** deletionTimestamp set: a one-way trip */
  beingDeleted = false;

  constructor(
    public identity: ObjectIdentity,
    /** true until a watch reports the object itself */
    public virtual: boolean,
  ) {}

  get dependents(): ReadonlySet<GraphNode> {
    return this.dependentSet ?? NO_DEPENDENTS;
  }

  addDependent(dependent: GraphNode): void {
    (this.dependentSet ??= new Set()).add(dependent);
  }

  removeDependent(dependent: GraphNode): void {
    if (this.dependentSet?.delete(dependent) && this.dependentSet.size === 0) this.dependentSet = undefined;
  }

  /** dependents that hold this node's deletion while it deletes them in foreground */
  blockingDependents(): GraphNode[] {
    const uid = this.identity.uid;
    return [...this.dependents].filter((d) => d.owners.some((o) => o.uid === uid && o.blockOwnerDeletion === true));
  }
}

export class DependencyGraph {
  private readonly nodes = new Map<string, GraphNode>();

  get(uid: string): GraphNode | undefined {
    return this.nodes.get(uid);
  }

  set(node: GraphNode): void {
    this.nodes.set(node.identity.uid, node);
  }

  delete(uid: string): void {
    this.nodes.delete(uid);
  }

  get size(): number {
    return this.nodes.size;
  }

  values(): IterableIterator<GraphNode> {
    return this.nodes.values();
  }
}
