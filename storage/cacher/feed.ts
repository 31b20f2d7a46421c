// The WatchFeed: ONE etcd watch over the whole key prefix per replica, fanned out by key
// prefix into one ResourceCache per resource.
//
// Why one watch and not one per resource: the feed then sees every change under the prefix,
// in revision order, so "the revision of the last event" is exactly how far this replica has
// seen, for all resources at once. kapi keeps every key it writes under the prefix, so every
// etcd revision is an event on this watch, and a consistent read (wait until the feed has
// seen etcd's current revision) needs nothing but events.
//
// Progress notifications are needed only when etcd's revision moved without an event under
// the prefix (another etcd user writes elsewhere). Debian's etcd 3.4.23 has
// etcd-io/etcd#15220: a requested progress notification carries the store's current
// revision and can overtake events still on their way to this watch, either queued on the
// stream or not yet sent because etcd moved the watcher to its unsynced set (a slow reader,
// or a watch still catching up) and sends them on its next sync pass (every 100 ms). So a
// progress revision is a candidate only; it is trusted once no event has arrived for
// `progressQuietMs` after it (longer than etcd's sync period). An event arriving inside that
// window shows that the watch was not caught up, and the candidate is dropped. Fixed etcd
// versions (3.4.31+, 3.5.13+) only answer when the watch is synced, which this rule
// accepts too, at the cost of the quiet window. A late event at or below a trusted revision
// would be a violation of this reasoning: it is still applied, and reported with a warning.
//
// The watch does not ask for prev_kv: the cache holds the previous state of every key (it saw
// every change), so etcd would only send each value twice.

import type { EtcdClient, EtcdWatcher, KeyValue, WatchMessage } from '../etcd/types.js';
import { prefixEnd } from '../etcd/types.js';
import type { StoredEntry } from './entry.js';
import { ResourceCache, type ResourceCacheLimits } from './resource-cache.js';

export interface WatchFeedOptions {
  /** the etcd key prefix, e.g. `/registry`: keys are `prefix + '/pods/ns/name'` */
  prefix: string;
  historyWindowMs?: number;
  maxHistoryEvents?: number;
  bookmarkIntervalMs?: number;
  /** how long a consistent read waits for events before asking etcd for progress */
  progressRequestDelayMs?: number;
  /** how often progress is asked for again while reads wait */
  progressRequestIntervalMs?: number;
  /** the quiet period that makes a progress revision trusted (see above) */
  progressQuietMs?: number;
  /** page size of the initial list and of relists */
  listPageSize?: number;
}

export const FEED_DEFAULTS = {
  historyWindowMs: 5 * 60_000,
  maxHistoryEvents: 10_000,
  bookmarkIntervalMs: 60_000,
  progressRequestDelayMs: 20,
  progressRequestIntervalMs: 100,
  progressQuietMs: 200,
  listPageSize: 1000,
  retryBackoffMs: { initial: 100, max: 5_000 },
} as const;

interface RevisionWaiter {
  target: number;
  resolve(reached: boolean): void;
  timer: NodeJS.Timeout;
}

export class WatchFeed {
  readonly ready: Promise<void>;
  private resolveReady!: () => void;
  private syncedFlag = false;
  private closed = false;

  private readonly etcdPrefix: string;
  private readonly limits: ResourceCacheLimits;
  private readonly caches = new Map<string, ResourceCache>();
  /** keys under the prefix that no resource cache claims (yet) */
  private readonly unclaimed = new Map<string, StoredEntry>();

  private watcher: EtcdWatcher | undefined;
  /** bumped whenever the etcd watch is replaced: messages of an old watch are ignored */
  private watchGeneration = 0;
  private lastEventRevision = 0;
  private trustedProgressRevision = 0;
  private candidate: { revision: number; timer: NodeJS.Timeout; eventsSince: boolean } | undefined;

  private waiters: RevisionWaiter[] = [];
  private progressTimer: NodeJS.Timeout | undefined;
  private readonly bookmarkTimer: NodeJS.Timeout;
  private retryTimer: NodeJS.Timeout | undefined;
  private backoffMs: number = FEED_DEFAULTS.retryBackoffMs.initial;
  /** test hook: while set, a lost etcd watch is not re-created */
  private suspended = false;
  private warnedLateEvent = false;

  private readonly opts: Required<Omit<WatchFeedOptions, 'prefix'>>;

  constructor(
    private readonly client: EtcdClient,
    options: WatchFeedOptions,
  ) {
    this.etcdPrefix = options.prefix.replace(/\/+$/, '');
    this.opts = {
      historyWindowMs: options.historyWindowMs ?? FEED_DEFAULTS.historyWindowMs,
      maxHistoryEvents: options.maxHistoryEvents ?? FEED_DEFAULTS.maxHistoryEvents,
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? FEED_DEFAULTS.bookmarkIntervalMs,
      progressRequestDelayMs: options.progressRequestDelayMs ?? FEED_DEFAULTS.progressRequestDelayMs,
      progressRequestIntervalMs: options.progressRequestIntervalMs ?? FEED_DEFAULTS.progressRequestIntervalMs,
      progressQuietMs: options.progressQuietMs ?? FEED_DEFAULTS.progressQuietMs,
      listPageSize: options.listPageSize ?? FEED_DEFAULTS.listPageSize,
    };
    this.limits = { maxHistoryEvents: this.opts.maxHistoryEvents, historyWindowMs: this.opts.historyWindowMs };
    this.ready = new Promise((resolve) => {
      this.resolveReady = resolve;
    });
    this.bookmarkTimer = setInterval(() => this.onBookmarkTick(), this.opts.bookmarkIntervalMs);
    this.bookmarkTimer.unref();
    void this.initialLoad();
  }

  /** true once the initial list is loaded and the watch is running */
  get synced(): boolean {
    return this.syncedFlag;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** how far this replica has seen: every change up to this revision has been applied */
  get revision(): number {
    return Math.max(this.lastEventRevision, this.trustedProgressRevision);
  }

  /** the cache for one resource prefix (e.g. `/pods/`); created on first use */
  cacheFor(resourcePrefix: string): ResourceCache {
    const prefix = resourcePrefix.endsWith('/') ? resourcePrefix : `${resourcePrefix}/`;
    let cache = this.caches.get(prefix);
    if (cache) return cache;
    for (const other of this.caches.keys()) {
      // a key belongs to exactly one cache; nested prefixes would make that ambiguous
      if (other.startsWith(prefix) || prefix.startsWith(other)) {
        throw new Error(`watch cache: resource prefix ${prefix} overlaps ${other}`);
      }
    }
    cache = new ResourceCache(prefix, this.revision, this.limits);
    if (this.syncedFlag) {
      // adopt what the feed already holds for this prefix
      const mine: StoredEntry[] = [];
      for (const [key, e] of this.unclaimed) {
        if (key.startsWith(prefix)) {
          mine.push(e);
          this.unclaimed.delete(key);
        }
      }
      cache.load(mine, this.revision);
    }
    this.caches.set(prefix, cache);
    return cache;
  }

  /** resolves true once the feed has seen `target`, false when `timeoutMs` passed first */
  waitForRevision(target: number, timeoutMs: number): Promise<boolean> {
    if (this.revision >= target) return Promise.resolve(true);
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter: RevisionWaiter = {
        target,
        resolve,
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          resolve(false);
        }, timeoutMs),
      };
      this.waiters.push(waiter);
      this.scheduleProgressRequest(this.opts.progressRequestDelayMs);
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.watchGeneration++;
    this.watcher?.cancel();
    this.watcher = undefined;
    clearInterval(this.bookmarkTimer);
    if (this.progressTimer) clearTimeout(this.progressTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.candidate) clearTimeout(this.candidate.timer);
    for (const w of this.waiters) {
      clearTimeout(w.timer);
      w.resolve(false);
    }
    this.waiters = [];
    for (const c of this.caches.values()) c.close();
  }

  // ---- test hooks: simulate a replica whose etcd watch is lost for a while ----

  /** cancels the etcd watch and does not re-create it until resumeWatchForTest() */
  suspendWatchForTest(): void {
    this.suspended = true;
    this.watchGeneration++;
    this.watcher?.cancel();
    this.watcher = undefined;
  }

  /** re-creates the etcd watch from the revision after the last event, as after a lost
   *  connection; if that revision was compacted meanwhile, the feed relists */
  resumeWatchForTest(): void {
    this.suspended = false;
    this.startWatch(this.lastEventRevision + 1);
  }

  // ---- loading and watching ----

  private async initialLoad(): Promise<void> {
    const loaded = await this.listAll();
    if (!loaded) return;
    const { revision, entries } = loaded;
    const perCache = this.partition(entries);
    for (const [cache, list] of perCache) cache.load(list, revision);
    for (const c of this.caches.values()) if (!perCache.has(c)) c.load([], revision);
    this.lastEventRevision = revision;
    this.startWatch(revision + 1);
    this.syncedFlag = true;
    this.resolveReady();
    this.resolveWaiters();
  }

  /** lists everything under the prefix at one revision, retrying until it works or the
   *  feed is closed (undefined) */
  private async listAll(): Promise<{ revision: number; entries: StoredEntry[] } | undefined> {
    const key = Buffer.from(`${this.etcdPrefix}/`);
    let backoff: number = FEED_DEFAULTS.retryBackoffMs.initial;
    while (!this.closed) {
      try {
        const res = await this.client.rangeAll({ key, rangeEnd: prefixEnd(key), pageSize: this.opts.listPageSize });
        return { revision: res.header.revision, entries: res.kvs.map((kv) => this.entryOf(kv)) };
      } catch (err) {
        if (this.closed) return undefined;
        process.emitWarning(`watch cache: listing ${this.etcdPrefix}/ failed, retrying: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, FEED_DEFAULTS.retryBackoffMs.max);
      }
    }
    return undefined;
  }

  /** groups entries by the cache they belong to; the rest become unclaimed */
  private partition(entries: StoredEntry[]): Map<ResourceCache, StoredEntry[]> {
    const out = new Map<ResourceCache, StoredEntry[]>();
    this.unclaimed.clear();
    for (const e of entries) {
      const cache = this.route(e.key);
      if (!cache) {
        this.unclaimed.set(e.key, e);
        continue;
      }
      let list = out.get(cache);
      if (!list) out.set(cache, (list = []));
      list.push(e);
    }
    return out;
  }

  private startWatch(fromRevision: number): void {
    if (this.closed || this.suspended) return;
    const gen = ++this.watchGeneration;
    const key = Buffer.from(`${this.etcdPrefix}/`);
    this.watcher = this.client.watch(
      { key, rangeEnd: prefixEnd(key), startRevision: fromRevision, progressNotify: true },
      (msg) => {
        if (gen === this.watchGeneration) this.onMessage(msg);
      },
    );
  }

  private onMessage(msg: WatchMessage): void {
    switch (msg.kind) {
      case 'events': {
        this.backoffMs = FEED_DEFAULTS.retryBackoffMs.initial;
        const now = Date.now();
        const trusted = this.revision;
        for (const e of msg.events) {
          const rev = e.kv.modRevision;
          if (rev <= this.lastEventRevision) continue; // never expected: the client drops repeats
          if (rev <= trusted) this.warnLateEvent(rev, trusted);
          const key = this.relativeKey(e.kv.key);
          const cur = e.type === 'PUT' ? this.entryOf(e.kv) : undefined;
          const cache = this.route(key);
          if (cache) cache.apply(key, cur, rev, now);
          else if (cur) this.unclaimed.set(key, cur);
          else this.unclaimed.delete(key);
        }
        if (msg.revision > this.lastEventRevision) this.lastEventRevision = msg.revision;
        if (this.candidate) this.candidate.eventsSince = true;
        this.resolveWaiters();
        return;
      }
      case 'progress':
        this.onProgress(msg.revision);
        return;
      case 'canceled':
        this.watcher = undefined;
        this.watchGeneration++;
        if (this.closed || this.suspended) return;
        if (msg.compactRevision > 0) {
          void this.relist();
        } else {
          process.emitWarning(`watch cache: etcd watch ended (${msg.reason}); re-creating it`);
          this.retryTimer = setTimeout(() => {
            this.retryTimer = undefined;
            this.startWatch(this.lastEventRevision + 1);
          }, this.backoffMs);
          this.retryTimer.unref();
          this.backoffMs = Math.min(this.backoffMs * 2, FEED_DEFAULTS.retryBackoffMs.max);
        }
        return;
    }
  }

  /** the watch fell behind compaction: list again; every watcher ends (see ResourceCache.reload) */
  private async relist(): Promise<void> {
    const loaded = await this.listAll();
    if (!loaded || this.closed) return;
    const { revision, entries } = loaded;
    const perCache = this.partition(entries);
    for (const cache of this.caches.values()) cache.reload(perCache.get(cache) ?? [], revision);
    if (revision > this.lastEventRevision) this.lastEventRevision = revision;
    this.startWatch(revision + 1);
    this.resolveWaiters();
  }

  // ---- revisions, waiters, progress ----

  private onProgress(revision: number): void {
    if (revision <= this.revision) return;
    if (this.candidate) clearTimeout(this.candidate.timer);
    const candidate = {
      revision,
      eventsSince: false,
      timer: setTimeout(() => {
        if (this.candidate !== candidate) return;
        this.candidate = undefined;
        if (candidate.eventsSince) {
          // the watch was still delivering: ask again if someone waits
          this.scheduleProgressRequest(0);
          return;
        }
        if (candidate.revision > this.trustedProgressRevision) this.trustedProgressRevision = candidate.revision;
        this.resolveWaiters();
      }, this.opts.progressQuietMs),
    };
    candidate.timer.unref();
    this.candidate = candidate;
  }

  private resolveWaiters(): void {
    if (this.waiters.length === 0) return;
    const rev = this.revision;
    const still: RevisionWaiter[] = [];
    for (const w of this.waiters) {
      if (w.target <= rev) {
        clearTimeout(w.timer);
        w.resolve(true);
      } else {
        still.push(w);
      }
    }
    this.waiters = still;
  }

  private scheduleProgressRequest(delayMs: number): void {
    if (this.progressTimer || this.waiters.length === 0 || this.closed) return;
    this.progressTimer = setTimeout(() => {
      this.progressTimer = undefined;
      if (this.waiters.length === 0) return;
      // while a candidate sits out its quiet window, asking again would only restart it
      if (!this.candidate) this.watcher?.requestProgress();
      this.scheduleProgressRequest(this.opts.progressRequestIntervalMs);
    }, delayMs);
    this.progressTimer.unref();
  }

  private onBookmarkTick(): void {
    if (!this.syncedFlag || this.closed) return;
    const now = Date.now();
    const rev = this.revision;
    for (const c of this.caches.values()) {
      c.evictHistory(now, this.opts.historyWindowMs);
      c.bookmark(rev);
    }
  }

  // ---- keys ----

  private relativeKey(key: Buffer): string {
    return key.toString('utf8').slice(this.etcdPrefix.length);
  }

  private entryOf(kv: KeyValue): StoredEntry {
    return { key: this.relativeKey(kv.key), data: kv.value.toString('utf8'), modRevision: kv.modRevision };
  }

  /** the cache with the longest prefix of `key`, if any */
  private route(key: string): ResourceCache | undefined {
    for (let i = key.lastIndexOf('/', key.length - 2); i > 0; i = key.lastIndexOf('/', i - 1)) {
      const cache = this.caches.get(key.slice(0, i + 1));
      if (cache) return cache;
    }
    return undefined;
  }

  private warnLateEvent(rev: number, trusted: number): void {
    if (this.warnedLateEvent) return;
    this.warnedLateEvent = true;
    process.emitWarning(
      `watch cache: an event at revision ${rev} arrived after progress to ${trusted} was trusted (etcd-io/etcd#15220?)`,
    );
  }
}
