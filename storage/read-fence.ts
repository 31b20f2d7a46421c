// The consistent reads of one reader that makes several in a row, such as the lookups of one
// request's admission plugins (LimitRanges, PriorityClasses, ResourceQuotas, its namespace).
//
// Strict reads: each consistent read of a cache waits for etcd's current revision, a round trip
// to etcd and a wait for the watch to reach it. Through a fence, the first read of a revision
// space (one etcd cluster and key prefix) does that and keeps the revision; later reads are
// served by any cache that has reached it, with no round trip. Every read through a fence
// still sees every write that completed before the reader's first read began.
//
// Optimistic reads: a writer whose write goes to etcd anyway may read without waiting at all.
// Such a read is served by the cache as it is and becomes a condition of the write: nothing
// in the range read was created or changed after the cache's revision, and each object read
// still has the revision it was read at (which also catches deletions). The etcd transaction of
// the write checks them all; if one fails, nothing is written and the writer reads again,
// strictly. The reads the write relied on are then still true when it is applied: stronger
// than kube-apiserver's admission plugins, which read informers.

/** one read a write relies on, in keys relative to the storage's prefix */
export interface ReadCondition {
  /** an object's key, or a collection's prefix (ending in '/') when `recursive` */
  readonly key: string;
  readonly recursive: boolean;
  /** the cache's revision when it answered: nothing in the range may be newer */
  readonly revision: number;
  /** each object read and its revision; a key read but absent has revision 0 */
  readonly objects: readonly (readonly [key: string, modRevision: number])[];
}

/** compares a write may carry for its reads: well below etcd's default --max-txn-ops (128);
 *  a read beyond it is made strictly instead */
export const MAX_CONDITION_COMPARES = 64;

/** the compares that check one condition */
export function comparesOf(condition: ReadCondition): number {
  return (condition.recursive ? 1 : 0) + condition.objects.length;
}

export class ReadFence {
  private readonly revisions = new Map<object, number>();
  private optimisticSpace: object | undefined;
  private readonly recorded: ReadCondition[] = [];
  private compares = 0;

  /** the revision this reader's strict reads of `space` must reach; 0 before its first one */
  revisionIn(space: object): number {
    return this.revisions.get(space) ?? 0;
  }

  /** a strict read of `space` found etcd at `revision` */
  observe(space: object, revision: number): void {
    if (revision > this.revisionIn(space)) this.revisions.set(space, revision);
  }

  /** From now on, consistent reads of `space` that no strict read has paid for yet are
   *  optimistic (undefined: strict again); the conditions recorded so far are dropped. */
  readOptimisticallyIn(space: object | undefined): void {
    this.optimisticSpace = space;
    this.recorded.length = 0;
    this.compares = 0;
  }

  /** whether a consistent read of `space` may be optimistic */
  optimisticIn(space: object): boolean {
    return this.optimisticSpace === space && this.revisionIn(space) === 0;
  }

  /** An optimistic read, which the write must check; false when the write cannot carry its
   *  compares too (the read must then be made strictly). */
  record(condition: ReadCondition): boolean {
    const compares = comparesOf(condition);
    if (this.compares + compares > MAX_CONDITION_COMPARES) return false;
    this.compares += compares;
    this.recorded.push(condition);
    return true;
  }

  /** the conditions of the optimistic reads since readOptimisticallyIn */
  get conditions(): readonly ReadCondition[] {
    return this.recorded;
  }

  /** where the conditions stand, for withdraw */
  mark(): number {
    return this.recorded.length;
  }

  /** Drops the conditions recorded since `mark`: for a reader that is about to change what it
   *  read (its write would break its own condition); it must read that again strictly. */
  withdraw(mark: number): void {
    for (const c of this.recorded.splice(mark)) this.compares -= comparesOf(c);
  }
}
