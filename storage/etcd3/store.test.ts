// etcd3 store behaviour beyond the shared conformance suite (conformance.test.ts): storage
// format, continue-token compatibility with kube-apiserver, messages of compaction errors,
// paging, waiting for a resourceVersion, watch queue bounds and bookmarks.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startEtcd, freePort, type EtcdProcess } from '../testing/etcd-server.js';
import { createEtcdClient } from '../etcd/client.js';
import type { EtcdClient } from '../etcd/types.js';
import { everything, type Storage, type WatchEvent } from '../interface.js';
import { isStorageError, type StorageError } from '../errors.js';
import { makePod, names, podKey, rvOf, storageErrorCode } from '../testing/fixtures.js';
import { WatchReader, END } from '../testing/watch-reader.js';
import { createEtcd3Store } from './store.js';
import { compactNow } from './compactor.js';

let etcd: EtcdProcess;
let client: EtcdClient;
let store: Storage;
const prefix = '/registry';

before(async () => {
  etcd = await startEtcd();
  client = createEtcdClient({ endpoints: [etcd.endpoint] });
  store = createEtcd3Store(client, { prefix, pagingPageSize: 3, tooLargeResourceVersionWaitMs: 3000 });
});

after(async () => {
  await store.close();
  client.close();
  await etcd.stop();
});

async function rejection(p: Promise<unknown>): Promise<StorageError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(isStorageError(err), `expected a StorageError, got ${String(err)}`);
  return err;
}

const token = (obj: object) => Buffer.from(JSON.stringify(obj)).toString('base64url');

test('stored JSON has no resourceVersion; reads put it back after uid', async () => {
  const created = await store.create(podKey('fmt', 'a'), {
    ...makePod('fmt', 'a', { app: 'x' }),
    metadata: {
      name: 'a',
      namespace: 'fmt',
      uid: 'u1',
      resourceVersion: '999',
      creationTimestamp: '2024-01-01T00:00:00Z',
      labels: { app: 'x' },
    },
  });
  const raw = (await client.range({ key: Buffer.from('/registry/pods/fmt/a') })).kvs[0]!;
  const stored = JSON.parse(raw.value.toString());
  assert.equal('resourceVersion' in stored.metadata, false);
  assert.deepEqual(Object.keys(stored), ['apiVersion', 'kind', 'metadata', 'spec']);
  assert.deepEqual(Object.keys(created.metadata), ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp', 'labels']);
  assert.equal(created.metadata.resourceVersion, String(raw.modRevision));
  const got = await store.get(podKey('fmt', 'a'));
  assert.deepEqual(Object.keys(got!.metadata), Object.keys(created.metadata));
});

test('concurrent creates of one key: exactly one wins', async () => {
  const results = await Promise.allSettled(Array.from({ length: 8 }, () => store.create(podKey('race', 'a'), makePod('race', 'a'))));
  assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
  for (const r of results) if (r.status === 'rejected') assert.ok(isStorageError(r.reason, 'KeyExists'));
  assert.equal((await rejection(store.create(podKey('race', 'a'), makePod('race', 'a'), { dryRun: true }))).code, 'KeyExists');
  const dry = await store.create(
    podKey('race', 'b'),
    { ...makePod('race', 'b'), metadata: { name: 'b', resourceVersion: '5' } },
    { dryRun: true },
  );
  assert.equal(dry.metadata.resourceVersion, undefined);
});

test('undecodable stored bytes are InvalidObject', async () => {
  await client.put(Buffer.from('/registry/pods/bad/x'), Buffer.from('{not json'));
  assert.equal(await storageErrorCode(store.get(podKey('bad', 'x'))), 'InvalidObject');
  assert.equal(await storageErrorCode(store.getList('/pods/bad/', { recursive: true, predicate: everything })), 'InvalidObject');
});

test('delete answers the last state at the deletion revision; watchers see the same', async () => {
  const a = await store.create(podKey('del', 'a'), makePod('del', 'a'));
  const w = new WatchReader(
    await store.watch('/pods/del/', { recursive: true, resourceVersion: a.metadata.resourceVersion, predicate: everything }),
  );
  try {
    const deleted = await store.delete(podKey('del', 'a'));
    assert.ok(rvOf(deleted) > rvOf(a));
    assert.equal(rvOf(deleted), await store.currentResourceVersion());
    const e = await w.change();
    assert.equal(e.type, 'DELETED');
    assert.equal(e.object.metadata.resourceVersion, deleted.metadata.resourceVersion);
  } finally {
    w.stop();
  }
});

test('continue tokens: kube-apiserver format, tokens of kube-apiserver accepted, bad ones rejected', async () => {
  for (const name of ['a', 'b', 'c', 'd']) await store.create(podKey('tok', name), makePod('tok', name));
  const p1 = await store.getList('/pods/tok/', { recursive: true, predicate: everything, limit: 2 });
  assert.deepEqual(names(p1.items), ['a', 'b']);
  assert.equal(p1.remainingItemCount, 2);
  const decoded = Buffer.from(p1.continue, 'base64url').toString();
  assert.equal(decoded, `{"v":"meta.k8s.io/v1","rv":${p1.resourceVersion},"start":"b\\u0000"}`);
  assert.doesNotMatch(p1.continue, /[=+/]/);

  // a token as kube-apiserver writes it for an all-namespaces list continues here
  const all = await store.getList('/pods/', {
    recursive: true,
    predicate: everything,
    limit: 2,
    continue: token({ v: 'meta.k8s.io/v1', rv: Number(p1.resourceVersion), start: 'tok/b\u0000' }),
  });
  assert.deepEqual(names(all.items), ['c', 'd']);
  assert.equal(all.resourceVersion, p1.resourceVersion);
  // rv -1 (kube-apiserver's "continue at the latest revision") reads the latest state
  await store.create(podKey('tok', 'e'), makePod('tok', 'e'));
  const latest = await store.getList('/pods/tok/', {
    recursive: true,
    predicate: everything,
    limit: 5,
    continue: token({ v: 'meta.k8s.io/v1', rv: -1, start: 'c' }),
  });
  assert.deepEqual(names(latest.items), ['c', 'd', 'e']);
  assert.ok(Number(latest.resourceVersion) > Number(p1.resourceVersion));

  for (const bad of [
    token({ v: 'meta.k8s.io/v2', rv: 5, start: 'a' }),
    token({ v: 'meta.k8s.io/v1', rv: 0, start: 'a' }),
    token({ v: 'meta.k8s.io/v1', rv: 5, start: '' }),
    token({ v: 'meta.k8s.io/v1', rv: 5, start: '../secrets/x' }),
    token({ v: 'meta.k8s.io/v1', rv: 5, start: 'a/../../b' }),
    'e30=',
    '!!',
  ]) {
    const err = await rejection(store.getList('/pods/tok/', { recursive: true, predicate: everything, limit: 1, continue: bad }));
    assert.equal(err.code, 'InvalidContinue', bad);
    assert.match(err.message, /^invalid continue token: /);
  }
  const withRv = await rejection(
    store.getList('/pods/tok/', { recursive: true, predicate: everything, limit: 1, continue: p1.continue, resourceVersion: '5' }),
  );
  assert.equal(withRv.code, 'InvalidContinue');
  // resourceVersion 0 with a token: the token decides
  const zero = await store.getList('/pods/tok/', {
    recursive: true,
    predicate: everything,
    limit: 2,
    continue: p1.continue,
    resourceVersion: '0',
  });
  assert.deepEqual(names(zero.items), ['c', 'd']);
  assert.equal(zero.resourceVersion, p1.resourceVersion);
});

test('an unpaged list reads in pages at one revision', async () => {
  for (let i = 0; i < 10; i++) await store.create(podKey('pages', `p${i}`), makePod('pages', `p${i}`));
  let writing = true;
  const racer = (async () => {
    for (let i = 0; writing; i++) await store.create(podKey('pages', `z${i}`), makePod('pages', `z${i}`));
  })();
  const list = await store.getList('/pods/pages/', { recursive: true, predicate: everything });
  writing = false;
  await racer;
  assert.ok(list.items.length >= 10);
  for (const item of list.items) assert.ok(rvOf(item) <= Number(list.resourceVersion));
  const exact = await store.getList('/pods/pages/', {
    recursive: true,
    predicate: everything,
    resourceVersion: list.resourceVersion,
    resourceVersionMatch: 'Exact',
  });
  assert.deepEqual(names(exact.items), names(list.items));
});

test('compaction: messages name the requested and the compacted revision', async () => {
  const a = await store.create(podKey('cmp', 'a'), makePod('cmp', 'a'));
  await store.create(podKey('cmp', 'b'), makePod('cmp', 'b'));
  const p1 = await store.getList('/pods/cmp/', { recursive: true, predicate: everything, limit: 1 });
  // etcd still serves the compaction revision itself: compact past the list's revision
  await store.create(podKey('cmp', 'c'), makePod('cmp', 'c'));
  const compacted = await compactNow(client, prefix);

  const exact = await rejection(
    store.getList('/pods/cmp/', {
      recursive: true,
      predicate: everything,
      resourceVersion: a.metadata.resourceVersion,
      resourceVersionMatch: 'Exact',
    }),
  );
  assert.equal(exact.code, 'ResourceVersionTooOld');
  assert.equal(exact.message, `too old resource version: ${a.metadata.resourceVersion} (${compacted})`);
  assert.equal(exact.oldestAvailable, compacted);

  const cont = await rejection(store.getList('/pods/cmp/', { recursive: true, predicate: everything, limit: 1, continue: p1.continue }));
  assert.equal(cont.code, 'ContinueExpired');
  assert.match(
    cont.message,
    /^The provided continue parameter is too old to display a consistent list result\. .*use the continue token in this response/,
  );
  // the offered token resumes after the same key, at the latest revision
  const resumed = await store.getList('/pods/cmp/', { recursive: true, predicate: everything, limit: 10, continue: cont.continueToken });
  const firstPage = p1.items.map((o) => o.metadata.name);
  assert.ok(resumed.items.every((o) => !firstPage.includes(o.metadata.name)));

  const w = new WatchReader(
    await store.watch('/pods/cmp/', { recursive: true, resourceVersion: a.metadata.resourceVersion, predicate: everything }),
  );
  const e = await w.event();
  assert.deepEqual(e, {
    type: 'ERROR',
    object: {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `too old resource version: ${a.metadata.resourceVersion} (${compacted})`,
      reason: 'Expired',
      code: 410,
    },
  });
  assert.equal(await w.next(), END);
});

test('a read at a resourceVersion etcd reaches while waiting succeeds; one it never reaches is TooLargeResourceVersion', async () => {
  const now = await store.currentResourceVersion();
  const pending = store.get(podKey('wait', 'a'), { resourceVersion: String(now + 1) });
  await store.create(podKey('wait', 'a'), makePod('wait', 'a'));
  const got = await pending;
  assert.equal(rvOf(got), now + 1);
  const list = store.getList('/pods/wait/', { recursive: true, predicate: everything, limit: 1, resourceVersion: String(now + 2) });
  await store.create(podKey('wait', 'b'), makePod('wait', 'b'));
  assert.equal((await list).resourceVersion, String(now + 2));

  const far = (await store.currentResourceVersion()) + 1000;
  const err = await rejection(store.get(podKey('wait', 'a'), { resourceVersion: String(far) }));
  assert.equal(err.code, 'TooLargeResourceVersion');
  assert.match(err.message, new RegExp(`^Too large resource version: ${far}, current: \\d+$`));
  assert.equal(err.retryAfterSeconds, 1);
});

test('a direct watch whose consumer falls too far behind delivers what it queued, then ends', async () => {
  const limited = createEtcd3Store(client, { prefix, watchQueueLimit: 5 });
  try {
    const start = await limited.currentResourceVersion();
    const w = new WatchReader(
      await limited.watch('/pods/slow/', { recursive: true, resourceVersion: String(start), predicate: everything }),
    );
    const written: string[] = [];
    for (let i = 0; i < 30; i++)
      written.push((await limited.create(podKey('slow', `p${String(i).padStart(2, '0')}`), makePod('slow', `p${i}`))).metadata.name!);
    const got: WatchEvent[] = [];
    for (;;) {
      const e = await w.next();
      if (e === END) break;
      got.push(e);
    }
    // the watch ended by itself (END above: nothing stopped it) after the events it queued,
    // a prefix of the writes in order; etcd may have sent all thirty in one message
    assert.ok(got.length > 0 && got.length <= written.length, `${got.length} events`);
    assert.deepEqual(names(got.map((e) => e.object)), written.slice(0, got.length));
  } finally {
    await limited.close();
  }
});

test('store errors: an unreachable etcd is Unavailable; keys cannot climb out of the prefix', async () => {
  const dead = createEtcdClient({ endpoints: [`http://127.0.0.1:${await freePort()}`] });
  try {
    const s = createEtcd3Store(dead, { prefix });
    assert.equal(await storageErrorCode(s.get(podKey('x', 'y'))), 'Unavailable');
  } finally {
    dead.close();
  }
  await assert.rejects(store.get('/pods/../secrets/x'), /invalid key/);
});

test('bookmarks: etcd progress notifications become BOOKMARK events', async () => {
  const own = await startEtcd({ extraArgs: ['--experimental-watch-progress-notify-interval=200ms'] });
  const c = createEtcdClient({ endpoints: [own.endpoint] });
  const s = createEtcd3Store(c, { prefix });
  try {
    const a = await s.create(podKey('bm', 'a'), makePod('bm', 'a'));
    const w = new WatchReader(
      await s.watch('/pods/bm/', {
        recursive: true,
        resourceVersion: a.metadata.resourceVersion,
        allowWatchBookmarks: true,
        predicate: everything,
      }),
    );
    const e = await w.event('a bookmark');
    assert.equal(e.type, 'BOOKMARK');
    assert.ok(rvOf(e.object) >= rvOf(a));
    assert.deepEqual(Object.keys(e.object.metadata), ['resourceVersion']);
    w.stop();
  } finally {
    await s.close();
    c.close();
    await own.stop();
  }
});

test('create conditions: made while the reads it relied on hold, ReadConditionFailed once one changed', async () => {
  const ns = 'conditions';
  const range = `/limitranges/${ns}/`;
  const before = await store.create(podKey(ns, 'seen'), makePod(ns, 'seen'));
  const readAt = rvOf(before);
  // a list of an empty range and a read object, both as they were at readAt
  const empty = { key: range, recursive: true, revision: readAt, objects: [] };
  const seen = { key: podKey(ns, 'seen'), recursive: false, revision: readAt, objects: [[podKey(ns, 'seen'), readAt]] as const };
  const made = await store.create(podKey(ns, 'a'), makePod(ns, 'a'), { conditions: [empty, seen] });
  assert.ok(rvOf(made) > readAt);
  // something appears in the range after the read: the create is not made
  await client.put(Buffer.from(`${prefix}${range}lr`), Buffer.from('{}'));
  const failed = await rejection(store.create(podKey(ns, 'b'), makePod(ns, 'b'), { conditions: [empty] }));
  assert.equal(failed.code, 'ReadConditionFailed');
  assert.equal(await store.get(podKey(ns, 'b'), { ignoreNotFound: true }), null);
  // an object read is deleted: not made either
  await store.delete(podKey(ns, 'seen'));
  assert.equal((await rejection(store.create(podKey(ns, 'c'), makePod(ns, 'c'), { conditions: [seen] }))).code, 'ReadConditionFailed');
  // a key that exists is still AlreadyExists, conditions or not
  assert.equal((await rejection(store.create(podKey(ns, 'a'), makePod(ns, 'a'), { conditions: [seen] }))).code, 'KeyExists');
});

test('create conditions beyond the cluster --max-txn-ops: ReadConditionFailed (the writer then reads strictly), not a failed write', async () => {
  const small = await startEtcd({ extraArgs: ['--max-txn-ops', '2'] });
  const smallClient = createEtcdClient({ endpoints: [small.endpoint] });
  const smallStore = createEtcd3Store(smallClient, { prefix });
  try {
    const seen = await smallStore.create(podKey('ops', 'seen'), makePod('ops', 'seen'));
    const objects = [[podKey('ops', 'seen'), rvOf(seen)] as const];
    const conditions = [1, 2, 3].map(() => ({ key: podKey('ops', 'seen'), recursive: false, revision: rvOf(seen), objects }));
    assert.equal((await rejection(smallStore.create(podKey('ops', 'a'), makePod('ops', 'a'), { conditions }))).code, 'ReadConditionFailed');
    const made = await smallStore.create(podKey('ops', 'a'), makePod('ops', 'a'));
    assert.ok(rvOf(made) > rvOf(seen));
  } finally {
    await smallStore.close();
    smallClient.close();
    await small.stop();
  }
});
