// The WatchFeed: ONE etcd watch over the whole key prefix per replica, fanned out by key
// prefix into one ResourceCache per resource.
//
// Why one watch and not one per resource: the feed then sees every change under the prefix,
// in revision order, so "the revision of the last event" is exactly how far this replica has
// seen, for all resources at once. kapi keeps every key it writes under the prefix, so every
// etcd revision is an event on this watch, and a consistent read (wait until the feed has
// seen etcd's current revision) needs nothing but events.
//
// Revisions the watch does not show: etcd's revision also moves when someone else writes
// outside the prefix, so a read waiting for etcd's current revision could wait forever. etcd's
// answer to a progress request cannot settle that on the etcd this project targets: Debian's
// 3.4.23 has etcd issue #15220 (the answer carries the store's current revision and can
// overtake events still on their way to this watch, queued on the stream or held back while
// etcd has the watch in its unsynced set), and a revision trusted too early loses events for
// good: a watcher registered at it skips them, a client lists at it and resumes after them.
// No waiting period makes that answer safe on a loaded machine. So the feed trusts only what
// comes in order on its own watch: events, and etcd's periodic per-watch progress
// notification (sent behind the watch's events, and only while it is in sync). When a read
// waits and the watch has gone quiet, the feed writes a progress marker, one key under the
// prefix (`kapi/progress-marker`): its event proves that everything before it was delivered.
// The marker is written only once etcd's revision has reached what someone waits for, so a
// read at a resourceVersion etcd has not reached yet still ends as TooLargeResourceVersion.
// With only kapi writing under the prefix (the usual case) no marker is ever needed.
//
// The watch does not ask for prev_kv: the cache holds the previous state of every key (it saw
// every change), so etcd would only send each value twice.

import type { EtcdClient, EtcdWatcher, KeyValue, WatchMessage } from '../etcd/types.js';
import { prefixEnd } from '../etcd/types.js';
import { storedEntry, unreadableEntry, type StoredEntry } from './entry.js';
import { readStored, type TransformerLookup } from '../value/transformer.js';
import { ResourceCache, type ResourceCacheLimits } from './resource-cache.js';
import { storedJson, storedText } from '../etcd3/codec.js';

/** the key (under the prefix) of the progress marker; no resource lives there (no
 *  resource is named `kapi`) */
export const PROGRESS_MARKER_KEY = ['', 'kapi', 'progress-marker'].join('/');

/** what the watch cache tells of how it serves each watch and keeps up with etcd, for a
 *  look after the fact (kapi logs it at -v 3) */
export type WatchCacheTrace = (message: string, fields: Record<string, string | number>) => void;

export interface WatchFeedOptions {
  /** the etcd key prefix (kube's default is the registry prefix): an object's key is the
   *  prefix, then its resource's prefix, namespace and name */
  prefix: string;
  historyWindowMs?: number;
  maxHistoryEvents?: number;
  bookmarkIntervalMs?: number;
  /** how long the watch must have been quiet while a read waits before the feed writes a
   *  progress marker (see above); checked again at this interval while anyone waits */
  progressMarkerDelayMs?: number;
  /** page size of the initial list and of relists */
  listPageSize?: number;
  /** encryption at rest: values are read through their key's transformer; undefined: they
   *  are plaintext */
  transformers?: TransformerLookup;
  trace?: WatchCacheTrace;
}

export interface ResourceCacheStats {
  /** the resource's key prefix below the etcd prefix (its group and resource names) */
  prefix: string;
  objects: number;
  /** the oldest revision a watch can still start from in this cache */
  historyStartRevision: number;
  watchers: number;
  bookmarksSent: number;
}

export const FEED_DEFAULTS = {
  historyWindowMs: 5 * 60_000,
  maxHistoryEvents: 10_000,
  bookmarkIntervalMs: 60_000,
  progressMarkerDelayMs: 50,
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
  /** the prefix's length in the keys' UTF-8 bytes */
  private readonly etcdPrefixBytes: number;
  private readonly limits: ResourceCacheLimits;
  private readonly caches = new Map<string, ResourceCache>();
  /** keys under the prefix that no resource cache claims (yet) */
  private readonly unclaimed = new Map<string, StoredEntry>();

  private watcher: EtcdWatcher | undefined;
  /** bumped whenever the etcd watch is replaced: messages of an old watch are ignored */
  private watchGeneration = 0;
  private lastEventRevision = 0;
  /** from etcd's ordered (per-watch) progress notifications */
  private trustedProgressRevision = 0;
  /** event messages received so far: tells whether the watch was quiet between two looks */
  private eventMessages = 0;
  private markerInFlight = false;
  /** the revision of the last marker written: until the watch delivers it, another marker
   *  would prove nothing more (the watch is stalled, not quiet) */
  private lastMarkerRevision = 0;

  private waiters: RevisionWaiter[] = [];
  private markerTimer: NodeJS.Timeout | undefined;
  private readonly bookmarkTimer: NodeJS.Timeout;
  private retryTimer: NodeJS.Timeout | undefined;
  private backoffMs: number = FEED_DEFAULTS.retryBackoffMs.initial;
  /** test hook: while set, a lost etcd watch is not re-created */
  private suspended = false;
  private warnedLateEvent = false;

  private readonly opts: Required<Omit<WatchFeedOptions, 'prefix' | 'transformers' | 'trace'>>;
  private readonly transformers: TransformerLookup | undefined;
  readonly trace: WatchCacheTrace | undefined;

  constructor(
    private readonly client: EtcdClient,
    options: WatchFeedOptions,
  ) {
    this.etcdPrefix = options.prefix.replace(/\/+$/, '');
    this.etcdPrefixBytes = Buffer.byteLength(this.etcdPrefix);
    this.opts = {
      historyWindowMs: options.historyWindowMs ?? FEED_DEFAULTS.historyWindowMs,
      maxHistoryEvents: options.maxHistoryEvents ?? FEED_DEFAULTS.maxHistoryEvents,
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? FEED_DEFAULTS.bookmarkIntervalMs,
      progressMarkerDelayMs: options.progressMarkerDelayMs ?? FEED_DEFAULTS.progressMarkerDelayMs,
      listPageSize: options.listPageSize ?? FEED_DEFAULTS.listPageSize,
    };
    this.transformers = options.transformers;
    this.trace = options.trace;
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

  /** what each resource cache holds and serves now; computed only when asked */
  cacheStats(): ResourceCacheStats[] {
    return [...this.caches.values()].map((c) => ({
      prefix: c.prefix,
      objects: c.size,
      historyStartRevision: c.historyStartRevision,
      watchers: c.watcherCount,
      bookmarksSent: c.bookmarksSent,
    }));
  }

  /** the cache for one resource prefix; created on first use */
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
  /** true once the feed has reached `target`; false after `timeoutMs` or when closed; rejects
   *  with the signal's reason when the caller stops waiting (nothing of the wait remains) */
  waitForRevision(target: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.revision >= target) return Promise.resolve(true);
    if (this.closed) return Promise.resolve(false);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const forget = (): void => {
        clearTimeout(waiter.timer);
        signal?.removeEventListener('abort', abandon);
        this.waiters = this.waiters.filter((w) => w !== waiter);
      };
      const abandon = (): void => {
        forget();
        reject(signal?.reason);
      };
      const waiter: RevisionWaiter = {
        target,
        resolve: (reached) => {
          signal?.removeEventListener('abort', abandon);
          resolve(reached);
        },
        timer: setTimeout(() => {
          forget();
          resolve(false);
        }, timeoutMs),
      };
      signal?.addEventListener('abort', abandon, { once: true });
      this.waiters.push(waiter);
      this.scheduleMarkerCheck(this.eventMessages);
    });
  }

  /** reads waiting for a revision the feed has not reached (for tests and /status) */
  get pendingWaits(): number {
    return this.waiters.length;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.watchGeneration++;
    this.watcher?.cancel();
    this.watcher = undefined;
    clearInterval(this.bookmarkTimer);
    if (this.markerTimer) clearTimeout(this.markerTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
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
    this.watcher = this.client.watch({ key, rangeEnd: prefixEnd(key), startRevision: fromRevision, progressNotify: true }, (msg) => {
      if (gen === this.watchGeneration) this.onMessage(msg);
    });
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
          const cur = e.type === 'PUT' ? this.entryOf(e.kv, key) : undefined;
          const cache = this.route(key);
          if (cache) cache.apply(key, cur, rev, now);
          else if (cur) this.unclaimed.set(key, cur);
          else this.unclaimed.delete(key);
        }
        if (msg.revision > this.lastEventRevision) this.lastEventRevision = msg.revision;
        this.eventMessages++;
        this.resolveWaiters();
        return;
      }
      case 'progress':
        // an unordered one (someone's progress request on the shared stream) proves nothing
        if (msg.ordered && msg.revision > this.trustedProgressRevision) {
          if (msg.revision > this.lastEventRevision) {
            this.trace?.('watch cache: progress from etcd', { revision: msg.revision, lastEventRevision: this.lastEventRevision });
          }
          this.trustedProgressRevision = msg.revision;
          this.resolveWaiters();
        }
        return;
      case 'canceled':
        this.watcher = undefined;
        this.watchGeneration++;
        if (this.closed || this.suspended) return;
        if (msg.compactRevision > 0) {
          void this.relist();
        } else {
          process.emitWarning(`watch cache: etcd watch ended (${msg.reason}); re-creating it`);
          this.trace?.('watch cache: etcd watch ended', { reason: msg.reason, lastEventRevision: this.lastEventRevision });
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
    this.trace?.('watch cache: relisted after a compaction', { revision, lastEventRevision: this.lastEventRevision });
    if (revision > this.lastEventRevision) this.lastEventRevision = revision;
    this.startWatch(revision + 1);
    this.resolveWaiters();
  }

  // ---- revisions, waiters, progress ----

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

  /** while anyone waits: if no event came since the last look, write a progress marker */
  private scheduleMarkerCheck(eventMessagesBefore: number): void {
    if (this.markerTimer || this.waiters.length === 0 || this.closed) return;
    this.markerTimer = setTimeout(() => {
      this.markerTimer = undefined;
      if (this.waiters.length === 0 || this.closed) return;
      const quiet = this.eventMessages === eventMessagesBefore;
      if (quiet && !this.markerInFlight && this.revision >= this.lastMarkerRevision) void this.writeProgressMarker();
      this.scheduleMarkerCheck(this.eventMessages);
    }, this.opts.progressMarkerDelayMs);
    this.markerTimer.unref();
  }

  private async writeProgressMarker(): Promise<void> {
    this.markerInFlight = true;
    try {
      const key = Buffer.from(`${this.etcdPrefix}${PROGRESS_MARKER_KEY}`);
      const target = Math.min(...this.waiters.map((w) => w.target));
      // a linearizable read: etcd's revision now
      const { header } = await this.client.range({ key, keysOnly: true, limit: 1 });
      if (header.revision < target || this.revision >= target || this.closed) return;
      const put = await this.client.put(key, Buffer.from(new Date().toISOString()));
      this.lastMarkerRevision = put.header.revision;
    } catch {
      // etcd unreachable: the waiters time out, and the next look tries again
    } finally {
      this.markerInFlight = false;
    }
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

  /** decoded from after the prefix: slicing the decoded whole key instead made a view that
   *  kept the whole key alive beside it, for every cached object */
  private relativeKey(key: Buffer): string {
    return key.toString('utf8', this.etcdPrefixBytes);
  }

  /** `key`: kv's key relative to the prefix (one string for the entry and the indexes) */
  private entryOf(kv: KeyValue, key: string = this.relativeKey(kv.key)): StoredEntry {
    if (this.transformers) return this.decryptedEntryOf(kv, key, this.transformers);
    return storedEntry(key, storedJson(kv.value), kv.modRevision);
  }

  /** an entry read through its key's transformer; one that cannot be read keeps the error
   *  (reads of that object fail with it, every other object is served as usual) */
  private decryptedEntryOf(kv: KeyValue, key: string, transformers: TransformerLookup): StoredEntry {
    const read = (): string => {
      const t = transformers.forKey(key);
      return storedText(t ? readStored(t, kv.value, kv.key.toString('utf8'), key).data : kv.value);
    };
    try {
      return storedEntry(key, read(), kv.modRevision);
    } catch (err) {
      return unreadableEntry(key, kv.modRevision, (err as Error).message, read);
    }
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
    process.emitWarning(`watch cache: an event at revision ${rev} arrived after progress to ${trusted} was trusted (etcd issue 15220?)`);
  }
}
