// The watch cache of one replica: createCacheFeed() starts the single etcd watch over the key
// prefix; cacherFor() gives the Storage of one resource, served from memory.

import type { EtcdClient } from '../etcd/types.js';
import type { Storage } from '../interface.js';
import { Cacher, CACHER_DEFAULTS } from './cacher.js';
import { WatchFeed, type WatchFeedOptions } from './feed.js';

export { shouldDelegateList, parseResourceVersion, expiredWatch } from './cacher.js';
export { INITIAL_EVENTS_END_ANNOTATION } from './watcher.js';
export { WatchFeed, FEED_DEFAULTS, type WatchFeedOptions, type ResourceCacheStats } from './feed.js';
export { CACHER_DEFAULTS, type CacherTiming } from './cacher.js';

export interface CacheFeedOptions extends WatchFeedOptions {
  /** consistent reads wait at most this long for the cache (then 429, Retry-After 1); 3 s */
  consistentReadTimeoutMs?: number;
  /** reads at a resourceVersion not reached yet wait at most this long (then 504); 3 s */
  tooLargeRvWaitMs?: number;
  /** live events one watcher may have queued before it is ended; 10000 */
  watcherQueueLimit?: number;
  /** how long etcd's answer that a continue token's revision is not compacted serves later
   *  pages without asking again; 1 s */
  uncompactedAnswerMs?: number;
}

export interface CacheFeed {
  /** the cached Storage of one resource, by its key prefix (a slash, the resource's group
   *  and resource names, a slash); the same prefix always gives a cacher over the same cache */
  cacherFor(resourceKeyPrefix: string): Storage;
  /** the revision this replica has seen up to */
  revision(): number;
  /** resolves once the initial list is loaded (for /readyz) */
  readonly ready: Promise<void>;
  readonly synced: boolean;
  /** stops the etcd watch and ends every watcher; the client and the store stay open */
  close(): void;
  /** the feed itself, for tests */
  readonly feed: WatchFeed;
}

/**
 * @param client the etcd client the feed watches with
 * @param store the etcd3 store: writes, and reads the cache cannot answer, go there
 */
export function createCacheFeed(client: EtcdClient, store: Storage, opts: CacheFeedOptions): CacheFeed {
  const feed = new WatchFeed(client, opts);
  const timing = {
    consistentReadTimeoutMs: opts.consistentReadTimeoutMs ?? CACHER_DEFAULTS.consistentReadTimeoutMs,
    tooLargeRvWaitMs: opts.tooLargeRvWaitMs ?? CACHER_DEFAULTS.tooLargeRvWaitMs,
    watcherQueueLimit: opts.watcherQueueLimit ?? CACHER_DEFAULTS.watcherQueueLimit,
    uncompactedAnswerMs: opts.uncompactedAnswerMs ?? CACHER_DEFAULTS.uncompactedAnswerMs,
  };
  const cachers = new Map<string, Storage>();
  return {
    cacherFor(resourceKeyPrefix: string): Storage {
      const cache = feed.cacheFor(resourceKeyPrefix);
      let c = cachers.get(cache.prefix);
      if (!c) cachers.set(cache.prefix, (c = new Cacher(feed, cache, store, timing)));
      return c;
    },
    revision: () => feed.revision,
    ready: feed.ready,
    get synced() {
      return feed.synced;
    },
    close: () => feed.close(),
    feed,
  };
}
