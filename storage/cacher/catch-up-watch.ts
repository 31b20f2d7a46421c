// A watch that starts on the store and moves to the cache. A watch from a resourceVersion
// older than this replica's history (typically: every client re-watching after the replica
// restarted) is served by an etcd watch through the store, which still has the changes,
// instead of answering 410 and making every client relist. Once the store watch has delivered
// everything up to a revision the cache's history covers, the rest comes from the cache and
// the etcd watch is stopped.
//
// The hand-over happens at a revision boundary: when the store delivers an event of a newer
// revision than the last one it delivered, every event up to that last revision has been
// delivered, whole revisions included. The newer event is not passed on: the cache watch,
// started from the last revision, delivers it. So each event is delivered once, in order.
// BOOKMARKs of the store are passed on but are no hand-over point: the store makes them from
// etcd progress notifications, which etcd 3.4 may send ahead of events (etcd-io/etcd#15220).

import type { Watch, WatchEvent } from '../interface.js';

/** starts a cache watch delivering the changes after `revision`; undefined when the cache
 *  cannot (its history does not reach back that far yet) */
export type HandOver = (revision: number) => Watch | undefined;

export class CatchUpWatch implements Watch {
  private source: Watch;
  private it: AsyncIterator<WatchEvent>;
  private onCache = false;
  private stopped = false;
  /** the revision of the last event or bookmark passed on */
  private lastRevision: number;

  constructor(storeWatch: Watch, fromRevision: number, private readonly handOver: HandOver) {
    this.source = storeWatch;
    this.it = storeWatch[Symbol.asyncIterator]();
    this.lastRevision = fromRevision;
  }

  /** true once the cache serves this watch */
  get servedByCache(): boolean {
    return this.onCache;
  }

  stop(): void {
    this.stopped = true;
    this.source.stop();
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
    return {
      next: () => this.next(),
      return: async () => {
        this.stop();
        return { done: true, value: undefined };
      },
    };
  }

  private async next(): Promise<IteratorResult<WatchEvent>> {
    for (;;) {
      if (this.stopped) return { done: true, value: undefined };
      const r = await this.it.next();
      if (r.done || this.onCache || this.stopped) return r;
      const e = r.value;
      if (e.type === 'ERROR') return r;
      const rev = Number(e.object.metadata?.resourceVersion);
      if (!Number.isSafeInteger(rev)) return r;
      if (e.type === 'BOOKMARK') return r;
      if (rev > this.lastRevision && this.tryHandOver()) continue; // the cache delivers `e`
      if (rev > this.lastRevision) this.lastRevision = rev;
      return r;
    }
  }

  private tryHandOver(): boolean {
    const cacheWatch = this.handOver(this.lastRevision);
    if (!cacheWatch) return false;
    this.source.stop();
    this.source = cacheWatch;
    this.it = cacheWatch[Symbol.asyncIterator]();
    this.onCache = true;
    return true;
  }
}
