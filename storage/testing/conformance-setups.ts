// The set-ups the storage conformance suite runs against: a real etcd, and over it the etcd3
// store, or the watch cache over the store (optionally with values transformed at rest).

import { createEtcdClient } from '../etcd/client.js';
import { createEtcd3Store, type Etcd3StoreOptions } from '../etcd3/store.js';
import { createCacheFeed, type CacheFeed } from '../cacher/index.js';
import type { Storage } from '../interface.js';
import type { TransformerLookup } from '../value/transformer.js';
import type { ConformanceContext } from './conformance.js';
import { startEtcd } from './etcd-server.js';

const prefix = '/registry';

/** the etcd3 store; a short wait keeps the TooLargeResourceVersion cases quick */
export function etcd3Setup(opts: Partial<Etcd3StoreOptions> = {}): () => Promise<ConformanceContext> {
  return async () => {
    const etcd = await startEtcd();
    const client = createEtcdClient({ endpoints: [etcd.endpoint] });
    const storage = createEtcd3Store(client, { prefix, tooLargeResourceVersionWaitMs: 300, ...opts });
    return {
      storage,
      etcd: client,
      prefix,
      async teardown() {
        await storage.close();
        client.close();
        await etcd.stop();
      },
    };
  };
}

/** the watch cache of `/pods/` over the etcd3 store; `reopen` starts another replica's cache */
export function cacherSetup(opts: { transformers?: TransformerLookup } = {}): () => Promise<ConformanceContext> {
  return async () => {
    const etcd = await startEtcd();
    const client = createEtcdClient({ endpoints: [etcd.endpoint] });
    const store = createEtcd3Store(client, { prefix, ...opts });
    const feeds: CacheFeed[] = [];
    const open = async (): Promise<Storage> => {
      const feed = createCacheFeed(client, store, {
        prefix,
        bookmarkIntervalMs: 200,
        tooLargeRvWaitMs: 500,
        progressMarkerDelayMs: 20,
        ...opts,
      });
      feeds.push(feed);
      await feed.ready;
      return feed.cacherFor('/pods/');
    };
    const storage = await open();
    return {
      storage,
      etcd: client,
      prefix,
      reopen: open,
      async teardown() {
        for (const f of feeds) f.close();
        await store.close();
        client.close();
        await etcd.stop();
      },
    };
  };
}
