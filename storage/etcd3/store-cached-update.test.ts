// guaranteedUpdate starting from a cache's object (kube's cachedExistingObject): a current one
// saves the read of etcd; a stale one is found out (failed update function or precondition, a
// write that changes nothing, a lost compare) and the update starts over on what etcd holds.
// Also: what create and update answer is what a read of the key gives.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startEtcd, type EtcdProcess } from '../testing/etcd-server.js';
import { createEtcdClient } from '../etcd/client.js';
import type { EtcdClient } from '../etcd/types.js';
import type { CachedObject, KubeObject, Storage } from '../interface.js';
import { makePod, podKey, rvOf, storageErrorCode } from '../testing/fixtures.js';
import { createEtcd3Store } from './store.js';
import { decodeObject } from './codec.js';

let etcd: EtcdProcess;
let client: EtcdClient;
let store: Storage;
/** range calls the store made since the last reset */
let ranges = 0;
const prefix = '/registry';

before(async () => {
  etcd = await startEtcd();
  client = createEtcdClient({ endpoints: [etcd.endpoint] });
  // the store's own client, with its range calls counted (etcd answers them)
  const counted = new Proxy(client, {
    get(target, prop) {
      const v = Reflect.get(target, prop) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        if (prop === 'range') ranges++;
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  store = createEtcd3Store(counted, { prefix });
});

after(async () => {
  await store.close();
  client.close();
  await etcd.stop();
});

/** what a cache would hold for the key now */
async function cachedNow(key: string): Promise<CachedObject> {
  const kv = (await client.range({ key: Buffer.from(prefix + key) })).kvs[0]!;
  return { object: decodeObject(kv.value, kv.modRevision, key), text: kv.value, modRevision: kv.modRevision };
}

const withLabel = (obj: KubeObject, k: string, v: string): KubeObject => ({
  ...obj,
  metadata: { ...obj.metadata, labels: { ...obj.metadata.labels, [k]: v } },
});

async function etcdRevision(): Promise<number> {
  return (await client.range({ key: Buffer.from(prefix + '/'), countOnly: true })).header.revision;
}

test('a current cached object: the update reads nothing from etcd and writes', async () => {
  const key = podKey('cached', 'current');
  await store.create(key, makePod('cached', 'current'));
  const cached = await cachedNow(key);
  ranges = 0;
  const seen: number[] = [];
  const out = await store.guaranteedUpdate(
    key,
    async (cur) => {
      seen.push(rvOf(cur));
      return withLabel(cur!, 'a', '1');
    },
    { cached },
  );
  assert.equal(ranges, 0);
  assert.deepEqual(seen, [cached.modRevision]);
  assert.ok(rvOf(out) > cached.modRevision);
  assert.deepEqual(out, await store.get(key));
});

test('a stale cached object: a lost compare starts over on what etcd holds', async () => {
  const key = podKey('cached', 'lost');
  await store.create(key, makePod('cached', 'lost'));
  const stale = await cachedNow(key);
  const newer = await store.guaranteedUpdate(key, async (cur) => withLabel(cur!, 'other', 'x'));
  const seen: number[] = [];
  const out = await store.guaranteedUpdate(
    key,
    async (cur) => {
      seen.push(rvOf(cur));
      return withLabel(cur!, 'a', '1');
    },
    { cached: stale },
  );
  assert.deepEqual(seen, [stale.modRevision, rvOf(newer)]);
  // the other writer's change survives
  assert.deepEqual(out.metadata.labels, { other: 'x', a: '1' });
  assert.deepEqual(out, await store.get(key));
});

test('a stale cached object: a failing update function is called again on what etcd holds', async () => {
  const key = podKey('cached', 'fails');
  await store.create(key, makePod('cached', 'fails'));
  const stale = await cachedNow(key);
  const newer = await store.guaranteedUpdate(key, async (cur) => withLabel(cur!, 'other', 'x'));
  // as a PUT whose resourceVersion is newer than the cache's object
  const out = await store.guaranteedUpdate(
    key,
    async (cur) => {
      if (cur!.metadata.resourceVersion !== newer.metadata.resourceVersion) throw new Error('conflict');
      return withLabel(cur!, 'a', '1');
    },
    { cached: stale },
  );
  assert.deepEqual(out.metadata.labels, { other: 'x', a: '1' });
});

test('a current cached object: a failing update function fails after one read that confirms it', async () => {
  const key = podKey('cached', 'fails-current');
  await store.create(key, makePod('cached', 'fails-current'));
  const cached = await cachedNow(key);
  ranges = 0;
  let calls = 0;
  await assert.rejects(
    store.guaranteedUpdate(
      key,
      async () => {
        calls++;
        throw new Error('refused');
      },
      { cached },
    ),
    /refused/,
  );
  assert.equal(calls, 1);
  assert.equal(ranges, 1);
});

test('a stale cached object: a precondition it fails is checked again on what etcd holds', async () => {
  const key = podKey('cached', 'precondition');
  await store.create(key, makePod('cached', 'precondition'));
  const stale = await cachedNow(key);
  const newer = await store.guaranteedUpdate(key, async (cur) => withLabel(cur!, 'other', 'x'));
  const out = await store.guaranteedUpdate(key, async (cur) => withLabel(cur!, 'a', '1'), {
    cached: stale,
    preconditions: { resourceVersion: newer.metadata.resourceVersion },
  });
  assert.deepEqual(out.metadata.labels, { other: 'x', a: '1' });
  // a precondition that etcd's object fails too stands
  const code = await storageErrorCode(
    store.guaranteedUpdate(key, async (cur) => cur!, {
      cached: stale,
      preconditions: { resourceVersion: stale.object.metadata.resourceVersion },
    }),
  );
  assert.equal(code, 'ResourceVersionConflict');
});

test('an update that changes nothing: no write, answered at the revision etcd holds, stale cache or not', async () => {
  const key = podKey('cached', 'noop');
  await store.create(key, makePod('cached', 'noop'));
  const stale = await cachedNow(key);
  const newer = await store.guaranteedUpdate(key, async (cur) => withLabel(cur!, 'other', 'x'));
  const before = await etcdRevision();
  // unchanged from the stale object: a change after all, written over etcd's
  const undone = await store.guaranteedUpdate(
    key,
    async (cur) => (rvOf(cur) === stale.modRevision ? cur! : { ...cur!, metadata: { ...cur!.metadata, labels: {} } }),
    {
      cached: stale,
    },
  );
  assert.ok(rvOf(undone) > rvOf(newer));
  const current = await cachedNow(key);
  const revision = await etcdRevision();
  // unchanged from the current object: no write at all
  const same = await store.guaranteedUpdate(key, async (cur) => cur!, { cached: current });
  assert.equal(rvOf(same), current.modRevision);
  assert.equal(await etcdRevision(), revision);
  // unchanged from a stale object that etcd's differs from: decided on etcd's
  const noop = await store.guaranteedUpdate(key, async (cur) => cur!, { cached: stale });
  assert.equal(rvOf(noop), current.modRevision);
  assert.equal(await etcdRevision(), revision);
  assert.ok(revision > before);
});

test('create answers what a read of the key gives, and the caller may change it', async () => {
  const key = podKey('answer', 'a');
  const obj = makePod('answer', 'a', { app: 'x' });
  const created = await store.create(key, obj);
  assert.deepEqual(created, await store.get(key));
  created.metadata.labels!.changed = 'yes';
  created.metadata.name = 'other';
  assert.equal((await store.get(key))!.metadata.name, 'a');
});
