// A watch that starts on the store and moves to the cache. A watch from a resourceVersion
// older than this replica's history (typically: every client re-watching after the replica
// restarted) is served by an etcd watch through the store, which still has the changes,
// instead of answering 410 and making every client relist. Once the store watch has delivered
// everything up to a revision the cache's history covers, the rest comes from the cache and
// the etcd watch is stopped.
//
// The hand-over happens at a revision boundary, at the revision of the last event passed on:
// - when the store delivers an event of a newer revision, every event up to the last one's
//   revision has been delivered, whole revisions included. The newer event is not passed on:
//   the cache watch, started from the last revision, delivers it;
// - when the store delivers a BOOKMARK: etcd sends all events of one revision in one response,
//   and the bookmark was queued after the response that held the last event passed on, so
//   that revision is complete too.
// So each event is delivered once, in order.
//
// The store's BOOKMARKs themselves are never passed on. The store makes them only from
// etcd's ordered per-watch progress notifications, but a bookmark is a resume point a client
// relies on, and etcd 3.4 answers progress requests on a shared stream ahead of events still
// on their way to a catching-up watch (etcd-io/etcd#15220): should an unordered one ever get
// through, a client would resume after events it never saw. Nothing is lost by waiting: the
// cache sends bookmarks of its own once it serves the watch.

import type { Watch, WatchEvent } from '../interface.js';

/** starts a cache watch delivering the changes after `revision`; undefined when the cache
 *  cannot (its history does not reach back that far yet) */
export type HandOver = (revision: number) => Watch | undefined;

export class CatchUpWatch implements Watch {
  private source: Watch;
  private it: AsyncIterator<WatchEvent>;
  private onCache = false;
  private stopped = false;
  /** the revision of the last event passed on (or the revision the watch started from) */
  private lastRevision: number;

  constructor(
    storeWatch: Watch,
    fromRevision: number,
    private readonly handOver: HandOver,
  ) {
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
      if (e.type === 'BOOKMARK') {
        // a revision boundary (see above), and nothing a client may rely on
        this.tryHandOver();
        continue;
      }
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
