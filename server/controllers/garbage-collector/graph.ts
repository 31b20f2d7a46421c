// The dependency graph: one node per object uid, linked to the nodes of its owners (by the
// owner references it carries) and of its dependents. A node is "virtual" while it stands
// only for an owner some dependent names and has not been seen by a watch; the collector
// verifies such owners with a live lookup.

import type { ObjectIdentity, OwnerReference } from './types.js';

export class GraphNode {
  readonly dependents = new Set<GraphNode>();
  owners: OwnerReference[] = [];
  /** deletionTimestamp set and the foregroundDeletion finalizer present */
  deletingDependents = false;
  /** deletionTimestamp set: a one-way trip */
  beingDeleted = false;

  constructor(
    public identity: ObjectIdentity,
    /** true until a watch reports the object itself */
    public virtual: boolean,
  ) {}

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
