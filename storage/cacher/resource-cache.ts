// The cache of one resource (one key prefix such as `/pods/`): the current objects in key
// order, the bounded history of changes, and the watchers to deliver changes to. It is fed
// by the WatchFeed, synchronously, one change at a time, in revision order; it knows nothing
// of etcd.

import type { KubeObject, SelectionPredicate, WatchEvent } from '../interface.js';
import { DecodedEvent } from './decoded-event.js';
import { decodeEntry, type StoredEntry } from './entry.js';
import { EventHistory, type CacheEvent } from './history.js';
import { SortedKeys } from './sorted-keys.js';
import type { CacheWatcher } from './watcher.js';

export interface ResourceCacheLimits {
  maxHistoryEvents: number;
  historyWindowMs: number;
}

export class ResourceCache {
  private readonly items = new Map<string, StoredEntry>();
  private readonly keys = new SortedKeys();
  private readonly history: EventHistory;
  private readonly watchers = new Set<CacheWatcher>();
  /** recursive watchers by their key prefix (ending with '/') */
  private readonly byPrefix = new Map<string, Set<CacheWatcher>>();
  /** single-key watchers by key */
  private readonly byKey = new Map<string, Set<CacheWatcher>>();
  private warnedUndecodable = false;
  /** BOOKMARK events queued for watchers so far (the status page shows it) */
  private bookmarks = 0;

  constructor(
    /** the resource's key prefix, ending with '/' */
    readonly prefix: string,
    startRevision: number,
    limits: ResourceCacheLimits,
  ) {
    this.history = new EventHistory(startRevision, limits.maxHistoryEvents, limits.historyWindowMs);
  }

  /** replaces the contents without events (initial fill); history starts at `revision` */
  load(entries: Iterable<StoredEntry>, revision: number): void {
    this.items.clear();
    this.keys.clear();
    for (const e of entries) {
      this.items.set(e.key, e);
      this.keys.add(e.key);
    }
    this.history.reset(revision);
  }

  get size(): number {
    return this.items.size;
  }

  get historyStartRevision(): number {
    return this.history.startRevision;
  }

  /** how many changes changesSince(revision) holds */
  countChangesSince(revision: number): number | undefined {
    return this.history.countSince(revision);
  }

  get(key: string): StoredEntry | undefined {
    return this.items.get(key);
  }

  /** the entries a list or an initial-state watch covers, in key order (`start`: inclusive);
   *  the first `max` of them when given */
  snapshot(key: string, recursive: boolean, start?: string, max?: number): StoredEntry[] {
    if (!recursive) {
      const e = this.items.get(key);
      return e ? [e] : [];
    }
    return this.keys.range(key, start, max).map((k) => this.items.get(k)!);
  }

  /** how many entries snapshot(key, recursive, start) holds */
  countRange(key: string, recursive: boolean, start?: string): number {
    if (!recursive) return this.items.has(key) ? 1 : 0;
    return this.keys.countRange(key, start);
  }

  count(prefix: string): number {
    return this.keys.countPrefix(prefix);
  }

  /** the recorded changes after `revision`, or undefined when the history no longer has them */
  changesSince(revision: number): CacheEvent[] | undefined {
    return this.history.since(revision);
  }

  /** one change seen by the feed: recorded, then delivered to the watchers it concerns */
  apply(key: string, cur: StoredEntry | undefined, revision: number, now: number): void {
    const prev = this.items.get(key);
    if (cur) {
      this.items.set(key, cur);
      if (!prev) this.keys.add(key);
    } else {
      if (!prev) return; // deletion of something never seen: nothing changes for anyone
      this.items.delete(key);
      this.keys.delete(key);
    }
    const event: CacheEvent = { revision, key, cur, prev, recordedAt: now };
    this.history.push(event);
    this.dispatch(event);
  }

  /**
   * A relist after the feed lost its etcd watch past a compaction. The changes in the gap are
   * gone from etcd, so watchers cannot be told about them as events with their own
   * resourceVersions (several deletions would share the relist's, and a client resuming
   * between them would lose the rest). As kube-apiserver's watch cache does when its
   * reflector relists, every watcher ends (after what it has queued); its client watches
   * again from its last resourceVersion, which this cache no longer covers: etcd then answers
   * 410 and the client relists, or another replica still has the history. The contents are
   * replaced and the history restarts at `revision`.
   */
  reload(entries: Iterable<StoredEntry>, revision: number): void {
    this.close();
    this.load(entries, revision);
  }

  evictHistory(now: number, windowMs: number): void {
    this.history.evictOlderThan(now - windowMs);
  }

  addWatcher(w: CacheWatcher): void {
    this.watchers.add(w);
    const index = w.recursive ? this.byPrefix : this.byKey;
    let set = index.get(w.key);
    if (!set) index.set(w.key, (set = new Set()));
    set.add(w);
    w.onDetach = (x) => this.removeWatcher(x);
  }

  get watcherCount(): number {
    return this.watchers.size;
  }

  get bookmarksSent(): number {
    return this.bookmarks;
  }

  /** a BOOKMARK at `revision` to every watcher that asked for bookmarks and is behind it */
  bookmark(revision: number): void {
    for (const w of this.watchers) {
      if (w.allowBookmarks && w.open && revision > w.lastRevision && w.pushBookmark(revision)) this.bookmarks++;
    }
  }

  /** ends every watcher (shutdown) */
  close(): void {
    for (const w of [...this.watchers]) w.end();
  }

  private removeWatcher(w: CacheWatcher): void {
    this.watchers.delete(w);
    const index = w.recursive ? this.byPrefix : this.byKey;
    const set = index.get(w.key);
    if (set) {
      set.delete(w);
      if (set.size === 0) index.delete(w.key);
    }
  }

  private dispatch(event: CacheEvent): void {
    if (this.watchers.size === 0) return;
    const decoded = new DecodedEvent(event);
    // readers of metadata (of this change) go last: when another watcher needed the whole
    // object decoded, theirs is cut from it instead of parsed again
    let metadataReaders: CacheWatcher[] | undefined;
    const send = (w: CacheWatcher, metadataOnly: boolean) => {
      let out: WatchEvent | undefined;
      try {
        out = decoded.forPredicate(w.predicate, metadataOnly);
      } catch (err) {
        this.warnUndecodable(event.key, err);
        return;
      }
      if (out) w.push(out, event.revision);
    };
    const deliver = (w: CacheWatcher) => {
      if (!w.open || event.revision <= w.startRevision) return;
      if (w.readsMetadataOnly(event.key)) (metadataReaders ??= []).push(w);
      else send(w, false);
    };
    this.byKey.get(event.key)?.forEach(deliver);
    // every recursive watcher whose prefix is a '/'-bounded prefix of the key
    const key = event.key;
    for (let i = key.indexOf('/'); i >= 0; i = key.indexOf('/', i + 1)) {
      this.byPrefix.get(key.slice(0, i + 1))?.forEach(deliver);
    }
    metadataReaders?.forEach((w) => send(w, true));
  }

  /** an object a watcher is not sent because it does not decode: said once per cache, never
   *  silently (a live change, a replayed one and the initial state alike) */
  private warnUndecodable(key: string, err: unknown): void {
    if (this.warnedUndecodable) return;
    this.warnedUndecodable = true;
    process.emitWarning(`watch cache: cannot deliver a change of ${key}: ${(err as Error)?.message ?? String(err)}`);
  }

  /** the initial state as ADDED events, decoded as the client reads them */
  *initialEvents(entries: StoredEntry[], predicate: SelectionPredicate): Generator<WatchEvent> {
    for (const e of entries) {
      let obj: KubeObject;
      try {
        obj = decodeEntry(e);
      } catch (err) {
        this.warnUndecodable(e.key, err);
        continue;
      }
      if (predicate.matches(obj)) yield { type: 'ADDED', object: obj };
    }
  }

  /** recorded changes as a watcher covering `covers` and `predicate` sees them */
  *replayedEvents(events: CacheEvent[], covers: (key: string) => boolean, predicate: SelectionPredicate): Generator<WatchEvent> {
    for (const e of events) {
      if (!covers(e.key)) continue;
      let out: WatchEvent | undefined;
      try {
        out = new DecodedEvent(e).forPredicate(predicate);
      } catch (err) {
        this.warnUndecodable(e.key, err);
        continue;
      }
      if (out) yield out;
    }
  }
}
