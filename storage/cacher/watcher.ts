// One client watch served from the cache. Events come from two places: a backlog produced
// lazily on demand (the initial state or the replayed history, decoded only as the client
// reads it) and then a bounded queue of live events pushed by the cache. A watcher whose
// queue fills up is detached from the cache and ends once the client has read what is
// queued: the client then resumes from the last resourceVersion it saw, instead of this
// replica buffering without bound for a reader that cannot keep up.

import type { MetadataOnly, SelectionPredicate, Watch, WatchEvent } from '../interface.js';

export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

export interface CacheWatcherOptions {
  /** for a recursive watch: the key prefix, ending with '/'; otherwise the exact key */
  key: string;
  recursive: boolean;
  predicate: SelectionPredicate;
  allowBookmarks: boolean;
  /** live events may carry objects of kind, apiVersion and metadata only (all of them, or
   *  those of the keys a function answers true for) */
  metadataOnly?: MetadataOnly;
  /** live changes at or below this revision are not delivered (already covered, or the
   *  client asked for changes after a future revision) */
  startRevision: number;
  queueLimit: number;
  /** delivered before any live event */
  backlog?: Iterator<WatchEvent>;
}

type State = 'open' | 'draining' | 'stopped';

export class CacheWatcher implements Watch {
  readonly key: string;
  readonly recursive: boolean;
  readonly predicate: SelectionPredicate;
  readonly allowBookmarks: boolean;
  private readonly metadataOnly: MetadataOnly;
  readonly startRevision: number;
  /** everything up to this revision has been queued (or is in the backlog) */
  lastRevision: number;
  private readonly queueLimit: number;
  private backlog: Iterator<WatchEvent> | undefined;
  private queue: WatchEvent[] = [];
  private head = 0;
  private state: State = 'open';
  /** next() calls waiting for an event, oldest first */
  private waiting: ((r: IteratorResult<WatchEvent>) => void)[] = [];
  /** set by the cache that dispatches to this watcher */
  onDetach: ((w: CacheWatcher) => void) | undefined;

  constructor(opts: CacheWatcherOptions) {
    this.key = opts.key;
    this.recursive = opts.recursive;
    this.predicate = opts.predicate;
    this.allowBookmarks = opts.allowBookmarks;
    this.metadataOnly = opts.metadataOnly ?? false;
    this.startRevision = opts.startRevision;
    this.lastRevision = opts.startRevision;
    this.queueLimit = opts.queueLimit;
    this.backlog = opts.backlog;
  }

  get open(): boolean {
    return this.state === 'open';
  }

  get queued(): number {
    return this.queue.length - this.head;
  }

  /** queues a live event; false when the watcher was ended because its queue was full */
  push(event: WatchEvent, revision: number): boolean {
    if (this.state !== 'open') return false;
    if (revision > this.lastRevision) this.lastRevision = revision;
    if (this.waiting.length > 0) {
      // someone waits only when the backlog and the queue are empty
      this.waiting.shift()!({ done: false, value: event });
      return true;
    }
    if (this.queued >= this.queueLimit) {
      this.end();
      return false;
    }
    this.queue.push(event);
    return true;
  }

  pushBookmark(revision: number, initialEventsEnd = false): boolean {
    const metadata: Record<string, unknown> = { resourceVersion: String(revision) };
    if (initialEventsEnd) metadata.annotations = { [INITIAL_EVENTS_END_ANNOTATION]: 'true' };
    return this.push({ type: 'BOOKMARK', object: { metadata } }, revision);
  }

  /** no more events: the client reads what is queued, then the iteration ends */
  end(): void {
    if (this.state !== 'open') return;
    this.state = 'draining';
    this.detach();
    if (this.waiting.length > 0) this.finish();
  }

  stop(): void {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    this.detach();
    this.queue = [];
    this.head = 0;
    this.backlog = undefined;
    this.finish();
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

  private next(): Promise<IteratorResult<WatchEvent>> {
    if (this.state === 'stopped') return Promise.resolve({ done: true, value: undefined });
    if (this.backlog) {
      const r = this.backlog.next();
      if (!r.done) return Promise.resolve({ done: false, value: r.value });
      this.backlog = undefined;
    }
    if (this.queued > 0) {
      const value = this.queue[this.head]!;
      this.queue[this.head++] = undefined as unknown as WatchEvent;
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      return Promise.resolve({ done: false, value });
    }
    if (this.state === 'draining') return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve) => {
      this.waiting.push(resolve);
    });
  }

  private finish(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve({ done: true, value: undefined });
  }

  private detach(): void {
    const cb = this.onDetach;
    this.onDetach = undefined;
    cb?.(this);
  }

  /** may a live change of `key` reach this watcher as metadata alone? An answer that cannot
   *  be had is no: whole objects are always correct */
  readsMetadataOnly(key: string): boolean {
    const m = this.metadataOnly;
    if (typeof m === 'boolean') return m;
    try {
      return m(key) === true;
    } catch {
      return false;
    }
  }

  /** does a change of `key` concern this watcher (before looking at the object)? */
  coversKey(key: string): boolean {
    return this.recursive ? key.startsWith(this.key) : key === this.key;
  }
}
