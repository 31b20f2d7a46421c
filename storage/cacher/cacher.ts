// The per-resource cacher: a Storage whose writes go to the etcd3 store and whose reads and
// watches are served from the replica's watch cache, following the resourceVersion tables of
// the API (unset: consistent; "0": anything cached; N: not older than N; Exact, limit with N,
// continue: etcd).

import type {
  CachedObject,
  Cancellable,
  CreateOptions,
  DeleteOptions,
  Fenced,
  GetOptions,
  KubeObject,
  ListOptions,
  ListResult,
  Storage,
  StoredList,
  StoredObject,
  StoredObjectText,
  UnreadableDeletion,
  UpdateFunction,
  UpdateOptions,
  Watch,
  WatchEvent,
  WatchOptions,
} from '../interface.js';
import { everything, throwIfCancelled } from '../interface.js';
import { StorageError, isStorageError } from '../errors.js';
import { decodeContinue, encodeContinue } from '../etcd3/continue.js';
import { decodeEntry, type StoredEntry } from './entry.js';
import type { WatchFeed } from './feed.js';
import type { ResourceCache } from './resource-cache.js';
import { CacheWatcher } from './watcher.js';
import { CatchUpWatch } from './catch-up-watch.js';
import type { ReadFence } from '../read-fence.js';

export interface CacherTiming {
  /** how long a consistent read waits for the cache to reach etcd's revision (then 429) */
  consistentReadTimeoutMs: number;
  /** how long a read at a resourceVersion the cache has not reached waits (then 504) */
  tooLargeRvWaitMs: number;
  /** live events a watcher may have queued before it is ended */
  watcherQueueLimit: number;
  /** how long etcd's answer that a revision is not compacted stands for later pages: a
   *  client's pages share their token's revision and follow each other within milliseconds; a
   *  page served this long after a compaction is one that could have arrived that much earlier */
  uncompactedAnswerMs: number;
}

export const CACHER_DEFAULTS: CacherTiming = {
  consistentReadTimeoutMs: 3_000,
  tooLargeRvWaitMs: 3_000,
  watcherQueueLimit: 10_000,
  uncompactedAnswerMs: 1_000,
};

/**
 * Must this list be answered by etcd rather than by the cache? Exact reads need history the
 * cache does not keep: resourceVersionMatch=Exact, a limit with a non-zero resourceVersion
 * (Exact per the API's table), and continue tokens (exact at the token's revision; the
 * cacher still answers those whose state it holds, see continuedList).
 */
export function shouldDelegateList(opts: ListOptions): boolean {
  if (opts.continue) return true;
  if (opts.resourceVersionMatch === 'Exact') return true;
  const rv = opts.resourceVersion ?? '';
  const hasLimit = (opts.limit ?? 0) > 0;
  return hasLimit && rv !== '' && rv !== '0' && opts.resourceVersionMatch !== 'NotOlderThan';
}

/** undefined: unset (most recent); 0: any; N: not older than N */
export function parseResourceVersion(rv: string | undefined, key: string): number | undefined {
  if (rv === undefined || rv === '') return undefined;
  if (!/^[0-9]+$/.test(rv) || !Number.isSafeInteger(Number(rv))) {
    throw new StorageError('InvalidResourceVersion', key, `invalid resource version: "${rv}"`);
  }
  return Number(rv);
}

function normalizePrefix(key: string): string {
  return key.endsWith('/') ? key : `${key}/`;
}

/** what the cache's stored texts decode to (every text it hands out is one of its entries) */
const decodeStoredEntry = (item: StoredObjectText): KubeObject => decodeEntry(item as StoredEntry);

export class Cacher implements Storage {
  /** the last token revision etcd said was not compacted, and when (performance.now()) */
  private uncompacted = { revision: Number.MAX_SAFE_INTEGER, at: 0 };

  constructor(
    private readonly feed: WatchFeed,
    private readonly cache: ResourceCache,
    private readonly store: Storage,
    private readonly timing: CacherTiming,
  ) {}

  get ready(): boolean {
    return this.feed.synced;
  }

  // ---- writes go to etcd ----

  create(key: string, obj: KubeObject, opts?: CreateOptions): Promise<KubeObject> {
    return this.store.create(key, obj, opts);
  }

  /** starts from the cached object, as kube's cacher does (a dry run reads etcd, as kube's) */
  guaranteedUpdate(key: string, tryUpdate: UpdateFunction, opts?: UpdateOptions): Promise<KubeObject> {
    const cached = opts?.dryRun ? undefined : this.cachedObject(key);
    return this.store.guaranteedUpdate(key, tryUpdate, cached ? new CachedUpdateOptions(opts ?? {}, cached) : opts);
  }

  private cachedObject(key: string): CachedObject | undefined {
    if (!this.feed.synced || !this.covers(key)) return undefined;
    const entry = this.cache.get(key);
    if (!entry || entry.error !== undefined) return undefined;
    try {
      // the entry makes its text from its bytes on every read: once here
      const data = entry.data;
      const object = decodeEntry({ key: entry.key, data, size: entry.size, modRevision: entry.modRevision });
      // the entry's own bytes where it keeps them (only compared), not a copy of its text
      const bytes = entry.bytes;
      const text = bytes ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length) : Buffer.from(data);
      return { object, text, modRevision: entry.modRevision };
    } catch {
      // a text that does not decode: the store reads and reports it
      return undefined;
    }
  }

  deleteUnreadable(key: string): Promise<UnreadableDeletion> {
    return this.store.deleteUnreadable(key);
  }

  delete(key: string, opts?: DeleteOptions): Promise<KubeObject> {
    return this.store.delete(key, opts);
  }

  get revisionSpace(): object {
    return this.store.revisionSpace;
  }

  currentResourceVersion(): Promise<number> {
    return this.store.currentResourceVersion();
  }

  async count(key: string): Promise<number> {
    if (!this.feed.synced || !this.covers(key)) return this.store.count(key);
    return this.cache.count(normalizePrefix(key));
  }

  async close(): Promise<void> {
    this.cache.close();
  }

  // ---- reads from the cache ----

  async get(key: string, opts: GetOptions = {}): Promise<KubeObject | null> {
    const stored = await this.getStored(key, opts);
    if (stored === undefined) return this.store.get(key, opts);
    return stored && decodeEntry(stored.item);
  }

  /** the object from the cache's text, not decoded */
  async getStored(key: string, opts: GetOptions = {}): Promise<StoredObject | null | undefined> {
    const rv = parseResourceVersion(opts.resourceVersion, key);
    if (!this.feed.synced || !this.covers(key)) return undefined;
    const optimistic = this.readsOptimistically(rv, opts.fence);
    if (!optimistic) await this.waitFor(rv, key, opts);
    let entry = this.cache.get(key);
    if (
      optimistic &&
      !optimistic.record({ key, recursive: false, revision: this.feed.revision, objects: [[key, entry?.modRevision ?? 0]] })
    ) {
      await this.waitFor(rv, key, opts);
      entry = this.cache.get(key);
    }
    if (!entry) {
      if (opts.ignoreNotFound) return null;
      throw new StorageError('KeyNotFound', key, `key not found: ${key}`);
    }
    return { item: entry, decode: decodeStoredEntry };
  }

  async getList(key: string, opts: ListOptions): Promise<ListResult> {
    const stored = await this.getStoredList(key, opts);
    if (!stored) return this.store.getList(key, opts);
    const result: ListResult = {
      items: stored.items.map((e, i) => stored.decoded[i] ?? stored.decode(e)),
      resourceVersion: stored.resourceVersion,
      continue: stored.continue,
    };
    if (stored.remainingItemCount !== undefined) result.remainingItemCount = stored.remainingItemCount;
    return result;
  }

  /** the list from the cache's texts: nothing is decoded unless the predicate must see it */
  async getStoredList(key: string, opts: ListOptions): Promise<StoredList | undefined> {
    throwIfCancelled(opts);
    if (opts.continue) return this.continuedList(key, opts);
    const rv = parseResourceVersion(opts.resourceVersion, key);
    if (!this.feed.synced || !this.covers(key) || shouldDelegateList(opts)) return undefined;
    const optimistic = this.readsOptimistically(rv, opts.fence);
    if (!optimistic) await this.waitFor(rv, key, opts);
    // from here on synchronous: the entries and the revision belong together
    const prefix = opts.recursive ? normalizePrefix(key) : key;
    const list = this.page(prefix, opts.recursive, undefined, this.feed.revision, opts);
    if (!optimistic) return list;
    const objects: [string, number][] = list.items.map((item) => [item.key, item.modRevision]);
    // a single key read and found absent must still be absent
    if (!opts.recursive && objects.length === 0) objects.push([key, 0]);
    if (optimistic.record({ key: prefix, recursive: opts.recursive, revision: this.feed.revision, objects })) return list;
    // too much for the write to check: read as any consistent read
    await this.waitFor(rv, key, opts);
    return this.page(prefix, opts.recursive, undefined, this.feed.revision, opts);
  }

  /** the fence of a consistent read that is served as the cache stands, as a condition of the
   *  reader's write (read-fence.ts); undefined for a read that waits as usual */
  private readsOptimistically(rv: number | undefined, fence: ReadFence | undefined): ReadFence | undefined {
    return rv === undefined && fence?.optimisticIn(this.store.revisionSpace) ? fence : undefined;
  }

  /**
   * A page after the first, read at its continue token's revision. etcd answers it unless the
   * cache holds that very state: the token's revision is within the cache's history and no
   * change since touched the rest of the range (a client paging through a quiet resource). The
   * store first reads one key at that revision, so that a compacted revision still answers 410
   * Expired; it reads the range's own key, not the range (etcd counts the rest of a range on
   * every read of it, a whole paged list's worth of work per page), and once per token
   * revision: later pages within `uncompactedAnswerMs` take etcd's word for it.
   */
  private async continuedList(key: string, opts: ListOptions): Promise<StoredList | undefined> {
    if (!this.feed.synced || !this.covers(key) || !opts.recursive) return undefined;
    if ((opts.resourceVersion ?? '') !== '' || opts.resourceVersionMatch !== undefined) return undefined;
    const prefix = normalizePrefix(key);
    let position: { startKey: string; revision: number };
    try {
      position = decodeContinue(opts.continue!, prefix);
    } catch {
      return undefined;
    }
    if (!this.holdsStateAt(prefix, position.startKey, position.revision)) return undefined;
    if (!this.knownUncompacted(position.revision)) {
      const checkedAt = performance.now();
      try {
        await this.store.getList(key, {
          recursive: false,
          resourceVersion: String(position.revision),
          resourceVersionMatch: 'Exact',
          predicate: everything,
          signal: opts.signal,
        });
      } catch (err) {
        // compacted: the store answers the page itself, with its 410 and inconsistent continue
        if (isStorageError(err) && err.code === 'ResourceVersionTooOld') return undefined;
        throw err;
      }
      this.uncompacted = { revision: position.revision, at: checkedAt };
    }
    // synchronous from here: the history is checked again after the wait
    if (!this.holdsStateAt(prefix, position.startKey, position.revision)) return undefined;
    return this.page(prefix, true, position.startKey, position.revision, opts);
  }

  /** a compaction to C removes every revision below C: a later revision than one etcd still
   *  had is still there too, as long as the answer is recent */
  private knownUncompacted(revision: number): boolean {
    return revision >= this.uncompacted.revision && performance.now() - this.uncompacted.at < this.timing.uncompactedAnswerMs;
  }

  /** is the cache's state of the keys from `startKey` on under `prefix` the state at `revision`? */
  private holdsStateAt(prefix: string, startKey: string, revision: number): boolean {
    if (revision > this.feed.revision) return false;
    const changes = this.cache.changesSince(revision);
    return changes !== undefined && !changes.some((c) => c.key.startsWith(prefix) && c.key >= startKey);
  }

  /** up to opts.limit of the cache's entries under `prefix` (from `start` on) the predicate
   *  selects, as read at `revision`. Selecting everything, only the entries the page holds
   *  (and the next one's key) are taken from the cache, not the rest of the range. */
  private page(prefix: string, recursive: boolean, start: string | undefined, revision: number, opts: ListOptions): StoredList {
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    const selectsAll = opts.predicate.isEverything;
    const entries = this.cache.snapshot(prefix, recursive, start, selectsAll ? limit + 1 : undefined);
    const items: StoredEntry[] = [];
    const decoded: Array<KubeObject | undefined> = [];
    let i = 0;
    for (; i < entries.length && items.length < limit; i++) {
      const entry = entries[i]!;
      if (selectsAll) {
        items.push(entry);
        decoded.push(undefined);
        continue;
      }
      if (opts.predicate.keyMayMatch && !opts.predicate.keyMayMatch(entry.key)) continue;
      const obj = decodeEntry(entry);
      if (!opts.predicate.matches(obj)) continue;
      items.push(entry);
      decoded.push(obj);
    }
    let next = '';
    let remainingItemCount: number | undefined;
    if (i < entries.length && opts.recursive) {
      // the next page is read at this same revision
      next = encodeContinue(entries[i]!.key, prefix, revision);
      if (selectsAll) remainingItemCount = this.cache.countRange(prefix, true, start) - i;
    }
    return {
      items,
      decoded,
      resourceVersion: String(revision),
      continue: next,
      ...(remainingItemCount === undefined ? {} : { remainingItemCount }),
      decode: decodeStoredEntry,
    };
  }

  // ---- watches ----

  async watch(key: string, opts: WatchOptions): Promise<Watch> {
    throwIfCancelled(opts);
    const rv = parseResourceVersion(opts.resourceVersion, key);
    if (!this.covers(key)) return this.store.watch(key, opts);
    await this.whenSynced(key);
    const watchKey = opts.recursive ? normalizePrefix(key) : key;
    const base = this.watcherBase(watchKey, opts);
    const wantsInitialState = opts.sendInitialEvents ?? (rv === undefined || rv === 0);

    if (wantsInitialState) {
      await this.waitFor(rv, key, opts);
      // synchronous from here: the snapshot and the registration see the same revision
      const revision = this.feed.revision;
      const entries = this.cache.snapshot(watchKey, opts.recursive);
      const w = new CacheWatcher({ ...base, startRevision: revision, backlog: this.cache.initialEvents(entries, opts.predicate) });
      if (opts.sendInitialEvents === true && opts.allowWatchBookmarks) w.pushBookmark(revision, true);
      this.cache.addWatcher(w);
      this.traceStart('initial state', watchKey, rv, w.startRevision);
      return w;
    }

    if (rv === undefined || rv === 0) {
      // sendInitialEvents=false: changes from now on (unset: from a consistent "now")
      if (rv === undefined) await this.waitFor(undefined, key, opts);
      const w = new CacheWatcher({ ...base, startRevision: this.feed.revision });
      this.cache.addWatcher(w);
      this.traceStart('from now', watchKey, rv, w.startRevision);
      return w;
    }

    const w = this.watchAfter(watchKey, opts, rv);
    if (w) {
      this.traceStart(w.startRevision === rv ? 'after a revision not reached' : 'replayed from the history', watchKey, rv, w.startRevision);
      return w;
    }
    this.traceStart('by etcd until the history covers it', watchKey, rv, undefined);
    // older than this replica's history (e.g. it restarted): etcd may still have it
    return this.storeWatch(key, opts, rv);
  }

  /** a cache watch of the changes after `rv` (replayed from the history, or future ones);
   *  undefined when the history does not reach back to `rv`. Synchronous: nothing can
   *  happen between reading the history and registering the watcher. */
  private watchAfter(watchKey: string, opts: WatchOptions, rv: number): CacheWatcher | undefined {
    const base = this.watcherBase(watchKey, opts);
    let w: CacheWatcher;
    if (rv >= this.feed.revision) {
      // a revision not reached yet: the changes after it, once they happen
      w = new CacheWatcher({ ...base, startRevision: rv });
    } else {
      const changes = this.cache.changesSince(rv);
      if (!changes) return undefined;
      const covers = (k: string) => (opts.recursive ? k.startsWith(watchKey) : k === watchKey);
      w = new CacheWatcher({
        ...base,
        startRevision: this.feed.revision,
        backlog: this.cache.replayedEvents(changes, covers, opts.predicate),
      });
    }
    this.cache.addWatcher(w);
    return w;
  }

  /** a watch served by the store until the cache can take over; a compacted revision becomes
   *  the ERROR event clients expect */
  private async storeWatch(key: string, opts: WatchOptions, rv: number): Promise<Watch> {
    let w: Watch;
    try {
      w = await this.store.watch(key, { ...opts, sendInitialEvents: false });
    } catch (err) {
      if (!isStorageError(err, 'ResourceVersionTooOld')) throw err;
      return expiredWatch(rv, err.oldestAvailable);
    }
    const watchKey = opts.recursive ? normalizePrefix(key) : key;
    return new CatchUpWatch(w, rv, (from) => {
      const cached = this.feed.isClosed ? undefined : this.watchAfter(watchKey, opts, from);
      if (cached) this.traceStart('handed over to the cache', watchKey, from, cached.startRevision);
      return cached;
    });
  }

  /** how a watch is served, with what the cache held then (see WatchCacheTrace) */
  private traceStart(how: string, key: string, rv: number | undefined, startRevision: number | undefined): void {
    if (!this.feed.trace) return;
    this.feed.trace(`watch cache: watch ${how}`, {
      key,
      resourceVersion: rv ?? '',
      startRevision: startRevision ?? '',
      feedRevision: this.feed.revision,
      historyStart: this.cache.historyStartRevision,
      changesSince: rv === undefined ? '' : (this.cache.countChangesSince(rv) ?? 'evicted'),
    });
  }

  // ---- helpers ----

  private watcherBase(watchKey: string, opts: WatchOptions) {
    return {
      key: watchKey,
      recursive: opts.recursive,
      predicate: opts.predicate,
      allowBookmarks: opts.allowWatchBookmarks === true,
      metadataOnly: opts.metadataOnly ?? false,
      queueLimit: this.timing.watcherQueueLimit,
    };
  }

  /** is `key` inside this cache's resource prefix? (anything else goes to the store) */
  private covers(key: string): boolean {
    return key.startsWith(this.cache.prefix) || normalizePrefix(key) === this.cache.prefix;
  }

  private async whenSynced(key: string): Promise<void> {
    if (this.feed.synced) return;
    await Promise.race([this.feed.ready, new Promise((r) => setTimeout(r, this.timing.consistentReadTimeoutMs))]);
    if (!this.feed.synced) {
      throw new StorageError('TooManyRequests', key, 'the watch cache is not initialized yet; try again', {
        retryAfterSeconds: 1,
      });
    }
  }

  /** waits as the resourceVersion asks: unset -> consistent, 0 -> not at all, N -> not older
   *  than N; the signal in `opts` is read only if the cache is behind */
  private async waitFor(rv: number | undefined, key: string, opts: Cancellable & Fenced): Promise<void> {
    if (rv === 0) return;
    if (rv === undefined) {
      const fence = opts.fence;
      const fenced = fence?.revisionIn(this.store.revisionSpace) ?? 0;
      // the reader read etcd's revision before: the cache need only have reached it
      const current = fenced > 0 ? fenced : await this.store.currentResourceVersion();
      if (fence && fenced === 0) fence.observe(this.store.revisionSpace, current);
      if (this.feed.revision >= current) return;
      if (await this.feed.waitForRevision(current, this.timing.consistentReadTimeoutMs, opts.signal)) return;
      throw new StorageError(
        'TooManyRequests',
        key,
        `Too many requests: the watch cache has not caught up with revision ${current} (at ${this.feed.revision}); try again`,
        { retryAfterSeconds: 1 },
      );
    }
    if (await this.feed.waitForRevision(rv, this.timing.tooLargeRvWaitMs, opts.signal)) return;
    throw new StorageError('TooLargeResourceVersion', key, `Too large resource version: ${rv}, current: ${this.feed.revision}`, {
      retryAfterSeconds: 1,
    });
  }
}

/** a watch that yields one ERROR event with the 410 Expired Status, then ends */
export function expiredWatch(rv: number, oldestAvailable: number | undefined): Watch {
  const status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `too old resource version: ${rv} (${oldestAvailable ?? rv + 1})`,
    reason: 'Expired',
    code: 410,
  };
  let sent = false;
  let stopped = false;
  return {
    stop() {
      stopped = true;
    },
    [Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
      return {
        next: async () => {
          if (sent || stopped) return { done: true, value: undefined };
          sent = true;
          return { done: false, value: { type: 'ERROR', object: status as unknown as KubeObject } };
        },
        return: async () => {
          stopped = true;
          return { done: true, value: undefined };
        },
      };
    },
  };
}

/** the caller's update options with the cached object: read through, not copied, so that a
 *  lazy signal stays unmade (a spread would read it) */
class CachedUpdateOptions implements UpdateOptions {
  constructor(
    private readonly base: UpdateOptions,
    readonly cached: CachedObject,
  ) {}

  get preconditions(): UpdateOptions['preconditions'] {
    return this.base.preconditions;
  }

  get allowCreate(): boolean | undefined {
    return this.base.allowCreate;
  }

  get dryRun(): boolean | undefined {
    return this.base.dryRun;
  }

  get ttlSeconds(): number | undefined {
    return this.base.ttlSeconds;
  }

  get signal(): AbortSignal | undefined {
    return this.base.signal;
  }

  get cancelled(): boolean | undefined {
    return this.base.cancelled;
  }
}
