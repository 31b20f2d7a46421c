// The consistent reads of one reader that makes several in a row, such as the lookups of one
// request's admission plugins (LimitRanges, PriorityClasses, ResourceQuotas, its namespace).
// Each consistent read of a cache waits for etcd's current revision: a round trip to etcd and
// a wait for the watch to reach it. Through a fence, the first read of a revision space (one
// etcd cluster) does that and keeps the revision; later reads are served from any cache that
// has reached it, with no round trip. Every read through a fence still sees every write that
// completed before the reader's first read began, and all of them see one another's writes in
// order: stronger than kube-apiserver's admission plugins, which read informers.

export class ReadFence {
  private readonly revisions = new Map<object, number>();

  /** the revision this reader's reads of `space` must reach; 0 before its first read there */
  revisionIn(space: object): number {
    return this.revisions.get(space) ?? 0;
  }

  /** a consistent read of `space` found etcd at `revision` */
  observe(space: object, revision: number): void {
    if (revision > this.revisionIn(space)) this.revisions.set(space, revision);
  }
}
