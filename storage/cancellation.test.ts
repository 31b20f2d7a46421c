// A request that times out or whose client goes away stops its storage work: a wait for a
// revision ends and leaves nothing behind, an abandoned etcd read is cancelled, and an update
// that lost a race is not tried again. Real etcd, real cache.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { createEtcdClient } from './etcd/client.js';
import type { EtcdClient } from './etcd/types.js';
import { everything, type KubeObject } from './interface.js';
import { startEtcd, type EtcdProcess } from './testing/etcd-server.js';
import { createCacheFeed, type CacheFeed } from './cacher/index.js';
import { createEtcd3Store } from './etcd3/store.js';

const configMap = (name: string, data: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns' },
  data,
});

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError');
}

describe('cancellation of storage work', () => {
  let etcd: EtcdProcess;
  let client: EtcdClient;
  const feeds: CacheFeed[] = [];
  let n = 0;

  before(async () => {
    etcd = await startEtcd();
    client = createEtcdClient({ endpoints: [etcd.endpoint] });
  });
  after(async () => {
    for (const f of feeds) f.close();
    client?.close();
    await etcd?.stop();
  });

  const setup = async () => {
    const prefix = `/cancel-${++n}`;
    const store = createEtcd3Store(client, { prefix });
    const feed = createCacheFeed(client, store, { prefix });
    feeds.push(feed);
    await feed.ready;
    return { store, feed, cacher: feed.cacherFor('/configmaps/') };
  };

  test('a read waiting for a resourceVersion not reached yet ends when its request does, leaving no waiter', async () => {
    const { store, feed, cacher } = await setup();
    const created = await store.create('/configmaps/ns/a', configMap('a'));
    const ahead = String(Number(created.metadata.resourceVersion) + 1000);
    const request = new AbortController();
    const get = cacher.get('/configmaps/ns/a', { resourceVersion: ahead, signal: request.signal });
    const list = cacher.getList('/configmaps/ns', {
      recursive: true,
      resourceVersion: ahead,
      predicate: everything,
      signal: request.signal,
    });
    // both are waiting for the revision (the wait would last 3 s)
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(feed.feed.pendingWaits, 2);
    request.abort();
    await assert.rejects(get, isAbort);
    await assert.rejects(list, isAbort);
    assert.equal(feed.feed.pendingWaits, 0, 'the aborted reads left waiters behind');
  });

  test('an already aborted request starts no etcd read and no wait', async () => {
    const { cacher, store, feed } = await setup();
    const signal = AbortSignal.abort();
    // the cache reads its signal only when it has to wait (a request's signal is made when first
    // read): a read ahead of the cache would wait
    await assert.rejects(cacher.get('/configmaps/ns/x', { resourceVersion: '999999', signal }), isAbort);
    assert.equal(feed.feed.pendingWaits, 0);
    await assert.rejects(store.get('/configmaps/ns/x', { signal }), isAbort);
    await assert.rejects(store.getList('/configmaps/ns', { recursive: true, predicate: everything, limit: 1, signal }), isAbort);
  });

  test('the store stops waiting for a future revision when the request ends', async () => {
    const { store } = await setup();
    const created = await store.create('/configmaps/ns/b', configMap('b'));
    const ahead = String(Number(created.metadata.resourceVersion) + 1000);
    const request = new AbortController();
    const started = Date.now();
    const get = store.get('/configmaps/ns/b', { resourceVersion: ahead, signal: request.signal });
    setTimeout(() => request.abort(), 100);
    await assert.rejects(get, isAbort);
    // not a timing assertion on the server: the store's own wait is 3 s, and an abort that
    // did not reach it would only end with TooLargeResourceVersion
    assert.ok(Date.now() - started < 3000);
  });

  test('an update that lost a race is not tried again for a request that has gone', async () => {
    const { store } = await setup();
    await store.create('/configmaps/ns/c', configMap('c', { v: '0' }));
    const request = new AbortController();
    let attempts = 0;
    const update = store.guaranteedUpdate(
      '/configmaps/ns/c',
      async (current) => {
        attempts++;
        if (attempts === 1) {
          // another writer wins the race, and the client goes away meanwhile
          await store.guaranteedUpdate('/configmaps/ns/c', (cur) => ({ ...cur!, data: { v: 'other' } }));
          request.abort();
        }
        return { ...current!, data: { v: 'mine' } };
      },
      { signal: request.signal },
    );
    await assert.rejects(update, isAbort);
    assert.equal(attempts, 1);
    const stored = await store.get('/configmaps/ns/c');
    assert.deepEqual(stored?.data, { v: 'other' });
  });
});
