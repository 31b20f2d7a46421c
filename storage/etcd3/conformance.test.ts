// The storage conformance suite against the etcd3 store over a real etcd.

import { createEtcdClient } from '../etcd/client.js';
import { startEtcd } from '../testing/etcd-server.js';
import { runStorageConformance } from '../testing/conformance.js';
import { createEtcd3Store } from './store.js';

runStorageConformance('etcd3 store', async () => {
  const etcd = await startEtcd();
  const client = createEtcdClient({ endpoints: [etcd.endpoint] });
  const prefix = '/registry';
  // a short wait keeps the TooLargeResourceVersion cases quick
  const storage = createEtcd3Store(client, { prefix, tooLargeResourceVersionWaitMs: 300 });
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
