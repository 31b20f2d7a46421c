// Writes with a TTL against a real etcd: creates and updates attach a lease (etcd's own range
// shows it on the key), writes without one attach none (and an update without one drops it,
// as kube-apiserver's put does), and when the lease runs out etcd deletes the key: a store
// watch and the watch cache both report it DELETED like any other delete.
// Expiry is awaited by polling with a generous deadline, never asserted on timing.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startEtcd, type EtcdProcess } from '../testing/etcd-server.js';
import { createEtcdClient } from '../etcd/client.js';
import type { EtcdClient } from '../etcd/types.js';
import { everything, type KubeObject, type Storage } from '../interface.js';
import { isStorageError } from '../errors.js';
import { WatchReader } from '../testing/watch-reader.js';
import { createCacheFeed, type CacheFeed } from '../cacher/index.js';
import { createEtcd3Store } from './store.js';

const prefix = '/registry';
let etcd: EtcdProcess;
let client: EtcdClient;
let store: Storage;
let feed: CacheFeed;

before(async () => {
  etcd = await startEtcd();
  client = createEtcdClient({ endpoints: [etcd.endpoint] });
  store = createEtcd3Store(client, { prefix, leaseReuseDurationSeconds: 60 });
  feed = createCacheFeed(client, store, { prefix });
});

after(async () => {
  feed.close();
  await store.close();
  client.close();
  await etcd.stop();
});

function event(namespace: string, name: string, message = 'hello'): KubeObject {
  return { apiVersion: 'v1', kind: 'Event', metadata: { name, namespace }, message };
}

/** the lease etcd has on the key, read straight from etcd */
async function leaseOf(key: string): Promise<number> {
  const res = await client.range({ key: Buffer.from(prefix + key) });
  assert.equal(res.kvs.length, 1, `${key} exists`);
  return res.kvs[0]!.lease;
}

test('create and update with a TTL attach a lease; writes without one do not', async () => {
  await store.create('/events/ns1/with-ttl', event('ns1', 'with-ttl'), { ttlSeconds: 3600 });
  const lease = await leaseOf('/events/ns1/with-ttl');
  assert.notEqual(lease, 0);
  // the lease keeps the object for the TTL plus the reuse window (min(60 s, 5% of 3600 s))
  assert.equal(await client.leaseKeepAliveOnce(lease), 3660);

  // the next write within the window shares the lease
  await store.create('/events/ns1/second', event('ns1', 'second'), { ttlSeconds: 3600 });
  assert.equal(await leaseOf('/events/ns1/second'), lease);

  await store.create('/configmaps/ns1/plain', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain', namespace: 'ns1' } });
  assert.equal(await leaseOf('/configmaps/ns1/plain'), 0);

  // an update with the TTL writes with a lease again (kube refreshes the TTL on every update)
  await store.guaranteedUpdate('/events/ns1/with-ttl', (cur) => ({ ...cur!, message: 'changed' }), { ttlSeconds: 3600 });
  assert.notEqual(await leaseOf('/events/ns1/with-ttl'), 0);

  // an update that changes nothing writes nothing: the lease stays as it was
  const before = await leaseOf('/events/ns1/second');
  await store.guaranteedUpdate('/events/ns1/second', (cur) => cur!, {});
  assert.equal(await leaseOf('/events/ns1/second'), before);

  // an update without a TTL puts the key without a lease
  await store.guaranteedUpdate('/events/ns1/second', (cur) => ({ ...cur!, message: 'no ttl' }), {});
  assert.equal(await leaseOf('/events/ns1/second'), 0);

  // a dry run writes nothing, lease or not
  await store.create('/events/ns1/dry', event('ns1', 'dry'), { ttlSeconds: 3600, dryRun: true });
  assert.equal(await store.get('/events/ns1/dry', { ignoreNotFound: true }), null);
});

test('a lease etcd no longer has is replaced by a fresh one', async () => {
  await store.create('/events/ns2/a', event('ns2', 'a'), { ttlSeconds: 3600 });
  const lease = await leaseOf('/events/ns2/a');
  // revoking the lease deletes what it carries, and leaves the store's cached id dangling
  await client.leaseRevoke(lease);
  assert.equal(await store.get('/events/ns2/a', { ignoreNotFound: true }), null);

  await store.create('/events/ns2/b', event('ns2', 'b'), { ttlSeconds: 3600 });
  const fresh = await leaseOf('/events/ns2/b');
  assert.notEqual(fresh, 0);
  assert.notEqual(fresh, lease);
  await store.guaranteedUpdate('/events/ns2/b', (cur) => ({ ...cur!, message: 'again' }), { ttlSeconds: 3600 });
  assert.equal(await leaseOf('/events/ns2/b'), fresh);
});

test('an expired lease deletes the object: the store watch and the watch cache see DELETED', async () => {
  const events = feed.cacherFor('/events');
  await feed.ready;
  const direct = new WatchReader(
    await store.watch('/events/ns3', {
      recursive: true,
      resourceVersion: String(await store.currentResourceVersion()),
      predicate: everything,
    }),
    60_000,
  );
  const cached = new WatchReader(
    await events.watch('/events/ns3', {
      recursive: true,
      resourceVersion: String(await store.currentResourceVersion()),
      predicate: everything,
    }),
    60_000,
  );
  try {
    const kept = await store.create('/configmaps/ns3/kept', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kept', namespace: 'ns3' },
    });
    const created = await events.create('/events/ns3/short', event('ns3', 'short'), { ttlSeconds: 2 });
    assert.notEqual(await leaseOf('/events/ns3/short'), 0);

    for (const w of [direct, cached]) {
      const added = await w.change('ADDED');
      assert.equal(added.type, 'ADDED');
      assert.equal(added.object.metadata.name, 'short');
      const deleted = await w.change('DELETED after the lease expired');
      assert.equal(deleted.type, 'DELETED');
      assert.equal(deleted.object.metadata.name, 'short');
      assert.equal(deleted.object.message, 'hello', 'DELETED carries the last state');
      assert.ok(Number(deleted.object.metadata.resourceVersion) > Number(created.metadata.resourceVersion));
    }
    const err = await events.get('/events/ns3/short').then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(isStorageError(err, 'KeyNotFound'), 'a consistent read through the cache finds it gone');
    const list = await events.getList('/events/ns3', { recursive: true, predicate: everything });
    assert.deepEqual(list.items, []);
    assert.equal((await store.get('/configmaps/ns3/kept'))!.metadata.resourceVersion, kept.metadata.resourceVersion, 'the ConfigMap stays');
  } finally {
    direct.stop();
    cached.stop();
  }
});
