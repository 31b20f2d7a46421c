// The etcd3 store, the compactor and the watch cache: the Storage each resource prefix gets.

import type { Storage } from '../../../storage/interface.js';
import type { EtcdClient } from '../../../storage/etcd/types.js';
import { createEtcd3Store } from '../../../storage/etcd3/store.js';
import { startCompactor } from '../../../storage/etcd3/compactor.js';
import { createCacheFeed, type CacheFeed } from '../../../storage/cacher/index.js';
import type { Catalog } from '../../apis/catalog.js';
import { watchCacheEnabled } from '../../config/watch-cache-sizes.js';
import type { Encryption } from '../../encryption/index.js';
import { instrumentStoreClient } from '../../metrics/index.js';
import { keyPrefixFor } from '../../registry/registry.js';
import { createLogger, getVerbosity } from '../../log.js';
import type { StorageOptions } from '../options/storage.js';
import type { StopStack } from '../lifecycle.js';

const log = createLogger('kapi');

export interface StorageLayer {
  /** etcd directly, for what must not read a cache */
  store: Storage;
  /** undefined with --watch-cache=false */
  feed?: CacheFeed;
  /** the cacher of a resource prefix, or the store where the watch cache is off for it */
  storageFor(keyPrefix: string): Storage;
  /** the API names (`resource[.group]`) stored under each prefix */
  apiNamesByPrefix: ReadonlyMap<string, ReadonlySet<string>>;
}

function apiNamesByPrefixOf(catalog: Catalog): Map<string, Set<string>> {
  const names = new Map<string, Set<string>>();
  for (const info of catalog.resources()) {
    const prefix = keyPrefixFor(info);
    if (!names.has(prefix)) names.set(prefix, new Set());
    names.get(prefix)!.add(info.group ? `${info.resource}.${info.group}` : info.resource);
  }
  return names;
}

export function startStorage(
  options: StorageOptions,
  catalog: Catalog,
  etcd: EtcdClient,
  encryption: Encryption | undefined,
  stack: StopStack,
): StorageLayer {
  const prefix = options.etcd.prefix;
  // the store's etcd calls are timed for etcd_request_duration_seconds
  const store = createEtcd3Store(instrumentStoreClient(etcd, prefix, catalog.resources()), {
    prefix,
    leaseReuseDurationSeconds: options.leaseReuseDurationSeconds,
    transformers: encryption?.transformers,
    storageFormat: options.storageFormat,
  });
  stack.push('etcd3 store', () => store.close());
  const compactor = startCompactor(etcd, {
    prefix,
    intervalMs: options.etcd.compactionIntervalMs,
    onRound: (round) => {
      if (round.won && round.compacted > 0) log.v(1).info('compacted etcd', { revision: round.compacted });
    },
    onError: (err) => log.warn('etcd compaction round failed', { error: (err as Error).message }),
  });
  stack.push('compactor', () => compactor.stop());
  const feed = options.watchCache.enabled
    ? createCacheFeed(etcd, store, {
        prefix,
        transformers: encryption?.transformers,
        // -v 3: how each watch is served and how the cache keeps up with etcd
        trace: getVerbosity() >= 3 ? (message, fields) => log.info(message, fields) : undefined,
      })
    : undefined;
  if (feed) stack.push('watch cache', () => feed.close());
  const apiNamesByPrefix = apiNamesByPrefixOf(catalog);
  const { sizes, defaultSize } = options.watchCache;
  return {
    store,
    feed,
    storageFor: (keyPrefix) =>
      feed && watchCacheEnabled(apiNamesByPrefix.get(keyPrefix) ?? [], sizes, defaultSize) ? feed.cacherFor(keyPrefix) : store,
    apiNamesByPrefix,
  };
}
