// The etcd3 store and the watch cache with encryption at rest, over a real etcd: what etcd
// holds, what a value no provider opens does (an error for that object only), and how a
// rewrite after a key rotation re-encrypts an unchanged object.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createEtcdClient } from '../etcd/client.js';
import type { EtcdClient } from '../etcd/types.js';
import { createEtcd3Store } from '../etcd3/store.js';
import { createCacheFeed } from '../cacher/index.js';
import { everything, type Storage } from '../interface.js';
import { isStorageError } from '../errors.js';
import { startEtcd, type EtcdProcess } from '../testing/etcd-server.js';
import { makePod, podKey } from '../testing/fixtures.js';
import { aesGcmProvider, identityProvider, lookupForPrefix } from './testing.js';
import type { TransformerLookup } from './transformer.js';

const PREFIX = '/registry';
const OLD = { name: 'old', key: Buffer.alloc(32, 1) };
const NEW = { name: 'new', key: Buffer.alloc(32, 2) };

let etcd: EtcdProcess;
let client: EtcdClient;

before(async () => {
  etcd = await startEtcd();
  client = createEtcdClient({ endpoints: [etcd.endpoint] });
});
after(async () => {
  client.close();
  await etcd.stop();
});

/** a lookup whose providers a test can swap, as automatic reload does */
function swappable(initial: TransformerLookup): { lookup: TransformerLookup; set(next: TransformerLookup): void } {
  let current = initial;
  return { lookup: { forKey: (k) => current.forKey(k) }, set: (next) => (current = next) };
}

async function raw(key: string): Promise<string> {
  const r = await client.range({ key: Buffer.from(PREFIX + key) });
  return r.kvs[0]!.value.toString('latin1');
}

function rejectsNamingKey(p: Promise<unknown>, etcdKey: string): Promise<void> {
  return assert.rejects(p, (err: unknown) => {
    assert.ok(isStorageError(err, 'InvalidObject'), String(err));
    assert.match((err as Error).message, new RegExp(`^unable to transform key "${etcdKey}": `));
    return true;
  });
}

test('the store writes ciphertext, reads plaintext, and plain keys outside resources stay plain', async () => {
  const store = createEtcd3Store(client, { prefix: PREFIX, transformers: lookupForPrefix('/pods/', [aesGcmProvider([NEW])]) });
  const pod = makePod('enc-a', 'p1', {}, { secretValue: 'top-secret-value' });
  const created = await store.create(podKey('enc-a', 'p1'), pod);
  const stored = await raw(podKey('enc-a', 'p1'));
  assert.ok(stored.startsWith('k8s:enc:aesgcm:v1:new:'), stored.slice(0, 40));
  assert.equal(stored.includes('top-secret-value'), false);
  const got = await store.get(podKey('enc-a', 'p1'));
  assert.equal((got!.spec as { secretValue: string }).secretValue, 'top-secret-value');
  assert.equal(got!.metadata.resourceVersion, created.metadata.resourceVersion);
  const list = await store.getList('/pods/enc-a/', { recursive: true, predicate: everything });
  assert.deepEqual(
    list.items.map((o) => o.metadata.name),
    ['p1'],
  );
  await store.create('/configmaps/enc-a/c1', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1', namespace: 'enc-a' } });
  assert.ok((await raw('/configmaps/enc-a/c1')).startsWith('{'));
  await store.close();
});

test('a value no provider opens: that object fails with InternalError naming its key, the others are served', async () => {
  const writer = createEtcd3Store(client, { prefix: PREFIX, transformers: lookupForPrefix('/pods/', [aesGcmProvider([OLD])]) });
  await writer.create(podKey('enc-b', 'lost'), makePod('enc-b', 'lost'));
  await writer.close();
  const t = swappable(lookupForPrefix('/pods/', [aesGcmProvider([NEW])]));
  const transformers = t.lookup;
  const store = createEtcd3Store(client, { prefix: PREFIX, transformers });
  await store.create(podKey('enc-b', 'fine'), makePod('enc-b', 'fine'));
  const lostKey = `${PREFIX}/pods/enc-b/lost`;
  await rejectsNamingKey(store.get(podKey('enc-b', 'lost')), lostKey);
  assert.equal((await store.get(podKey('enc-b', 'fine')))!.metadata.name, 'fine');
  await rejectsNamingKey(store.getList('/pods/enc-b/', { recursive: true, predicate: everything }), lostKey);

  // the watch cache: the undecryptable entry does not keep the cache from loading or serving
  const feed = createCacheFeed(client, store, { prefix: PREFIX, transformers });
  try {
    await feed.ready;
    const cacher: Storage = feed.cacherFor('/pods/');
    assert.equal((await cacher.get(podKey('enc-b', 'fine')))!.metadata.name, 'fine');
    await assert.rejects(cacher.get(podKey('enc-b', 'lost')), (err: unknown) => {
      assert.ok(isStorageError(err, 'InvalidObject'));
      assert.match((err as Error).message, /unable to transform key ".*\/pods\/enc-b\/lost": no matching key was found/);
      return true;
    });
    // a watch sees later changes of readable objects
    const w = await cacher.watch('/pods/enc-b/', {
      recursive: true,
      resourceVersion: String(await store.currentResourceVersion()),
      predicate: everything,
    });
    const it = w[Symbol.asyncIterator]();
    await store.create(podKey('enc-b', 'later'), makePod('enc-b', 'later'));
    const ev = await it.next();
    assert.equal(ev.value?.type, 'ADDED');
    assert.equal(ev.value?.object.metadata.name, 'later');
    w.stop();
    // the store's own watch ends with an error Status naming the key when it meets the value
    const direct = await store.watch('/pods/enc-b/', { recursive: true, predicate: everything });
    const events = [];
    for await (const e of direct) events.push(e);
    const last = events.at(-1)!;
    assert.equal(last.type, 'ERROR');
    assert.equal(last.object.code, 500);
    assert.match(String(last.object.message), /^Internal error occurred: unable to transform key ".*\/pods\/enc-b\/lost"/);

    // once the old key is back (a reload), the cached entry reads again, without a change to it
    t.set(lookupForPrefix('/pods/', [aesGcmProvider([NEW, OLD])]));
    assert.equal((await cacher.get(podKey('enc-b', 'lost')))!.metadata.name, 'lost');
    const names = (await cacher.getList('/pods/enc-b/', { recursive: true, predicate: everything })).items.map((o) => o.metadata.name);
    assert.deepEqual(names, ['fine', 'later', 'lost']);
  } finally {
    feed.close();
    await store.close();
  }
});

test('after a rotation (new key first, old second) an unchanged update re-encrypts with the new key', async () => {
  const t = swappable(lookupForPrefix('/pods/', [aesGcmProvider([OLD]), identityProvider]));
  const store = createEtcd3Store(client, { prefix: PREFIX, transformers: t.lookup });
  const created = await store.create(podKey('enc-c', 'p'), makePod('enc-c', 'p'));
  assert.ok((await raw(podKey('enc-c', 'p'))).startsWith('k8s:enc:aesgcm:v1:old:'));
  // unchanged and not stale: no write
  const same = await store.guaranteedUpdate(podKey('enc-c', 'p'), (cur) => cur!);
  assert.equal(same.metadata.resourceVersion, created.metadata.resourceVersion);

  t.set(lookupForPrefix('/pods/', [aesGcmProvider([NEW, OLD]), identityProvider]));
  const rewritten = await store.guaranteedUpdate(podKey('enc-c', 'p'), (cur) => cur!);
  assert.ok(Number(rewritten.metadata.resourceVersion) > Number(created.metadata.resourceVersion));
  assert.ok((await raw(podKey('enc-c', 'p'))).startsWith('k8s:enc:aesgcm:v1:new:'));
  // now current: the next unchanged update writes nothing
  const again = await store.guaranteedUpdate(podKey('enc-c', 'p'), (cur) => cur!);
  assert.equal(again.metadata.resourceVersion, rewritten.metadata.resourceVersion);
  await store.close();
});
