// Test support: a Storage that only knows etcd's current revision, for cache tests that write
// straight through etcd and need no store for writes. Everything else refuses loudly.

import type { EtcdClient } from '../etcd/types.js';
import type { Storage } from '../interface.js';

export function revisionOnlyStore(client: EtcdClient): Storage {
  const refuse = (what: string) => () => Promise.reject(new Error(`revisionOnlyStore: ${what} is not available in this test`));
  return {
    revisionSpace: client,
    async currentResourceVersion() {
      // a linearizable read: its header carries the cluster's current revision
      const res = await client.range({ key: Buffer.from('/'), countOnly: true });
      return res.header.revision;
    },
    create: refuse('create'),
    get: refuse('get'),
    getList: refuse('getList'),
    guaranteedUpdate: refuse('guaranteedUpdate'),
    delete: refuse('delete'),
    deleteUnreadable: refuse('deleteUnreadable'),
    watch: refuse('watch'),
    count: refuse('count'),
    ready: true,
    close: async () => {},
  };
}
