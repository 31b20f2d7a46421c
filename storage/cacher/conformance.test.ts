// The storage conformance suite against the cacher: a watch cache over the etcd3 store,
// over a real etcd.

import { createEtcdClient } from '../etcd/client.js';
import { createEtcd3Store } from '../etcd3/store.js';
import type { Storage } from '../interface.js';
import { startEtcd } from '../testing/etcd-server.js';
import { runStorageConformance } from '../testing/conformance.js';
import { createCacheFeed, type CacheFeed } from './index.js';

runStorageConformance('cacher over etcd3', async () => {
  const etcd = await startEtcd();
  const client = createEtcdClient({ endpoints: [etcd.endpoint] });
  const prefix = '/registry';
  const store = createEtcd3Store(client, { prefix });
  const feeds: CacheFeed[] = [];
  const open = async (): Promise<Storage> => {
    const feed = createCacheFeed(client, store, {
      prefix,
      bookmarkIntervalMs: 200,
      tooLargeRvWaitMs: 500,
      progressMarkerDelayMs: 20,
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
