// The storage conformance suite once more, with the pods resource encrypted at rest (aesgcm
// first, identity second so that the suite's plaintext writes straight into etcd still
// read): against the etcd3 store, and against the cacher over it.

import { createEtcdClient } from '../etcd/client.js';
import { createEtcd3Store } from '../etcd3/store.js';
import { createCacheFeed, type CacheFeed } from '../cacher/index.js';
import type { Storage } from '../interface.js';
import { startEtcd } from '../testing/etcd-server.js';
import { runStorageConformance } from '../testing/conformance.js';
import { aesGcmProvider, identityProvider, lookupForPrefix } from './testing.js';

const transformers = lookupForPrefix('/pods/', [aesGcmProvider([{ name: 'key1', key: Buffer.alloc(32, 7) }]), identityProvider]);

runStorageConformance('etcd3 store, aesgcm at rest', async () => {
  const etcd = await startEtcd();
  const client = createEtcdClient({ endpoints: [etcd.endpoint] });
  const prefix = '/registry';
  const storage = createEtcd3Store(client, { prefix, tooLargeResourceVersionWaitMs: 300, transformers });
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
});

runStorageConformance('cacher over etcd3, aesgcm at rest', async () => {
  const etcd = await startEtcd();
  const client = createEtcdClient({ endpoints: [etcd.endpoint] });
  const prefix = '/registry';
  const store = createEtcd3Store(client, { prefix, transformers });
  const feeds: CacheFeed[] = [];
  const open = async (): Promise<Storage> => {
    const feed = createCacheFeed(client, store, {
      prefix,
      bookmarkIntervalMs: 200,
      tooLargeRvWaitMs: 500,
      progressMarkerDelayMs: 20,
      transformers,
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
});
