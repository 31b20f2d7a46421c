// Integration tests of the watch cache against a real etcd. Objects are written straight
// through etcd (another replica, as far as the cache can tell), and the store behind the
// cache refuses everything but currentResourceVersion, so every read here is proven to be
// served from memory (except where a test says otherwise).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { createEtcdClient } from '../etcd/client.js';
import type { EtcdClient } from '../etcd/types.js';
import { everything, type KubeObject, type Storage, type Watch, type WatchEvent } from '../interface.js';
import { isStorageError } from '../errors.js';
import { startEtcd, type EtcdProcess } from '../testing/etcd-server.js';
import { END, WatchReader, describeEvent } from '../testing/watch-reader.js';
import { labelPredicate, makePod, names, storageErrorCode } from '../testing/fixtures.js';
import { createCacheFeed, type CacheFeed, type CacheFeedOptions } from './index.js';
import { revisionOnlyStore } from './test-support.js';
import { CatchUpWatch } from './catch-up-watch.js';
import { MAX_CONDITION_COMPARES, ReadFence } from '../read-fence.js';
import { createEtcd3Store } from '../etcd3/store.js';

/** the store, recording what it reads: 'one key' (the revision probe), or a page's limit */
function recordingReads(store: Storage): { storeReads: (number | 'one key')[]; recording: Storage } {
  const storeReads: (number | 'one key')[] = [];
  const recording: Storage = Object.assign(Object.create(store) as Storage, {
    getList: (key: string, opts: Parameters<Storage['getList']>[1]) => {
      storeReads.push(opts.recursive ? (opts.limit ?? 0) : 'one key');
      return store.getList(key, opts);
    },
  });
  return { storeReads, recording };
}

/** the revision-only store, counting its revision probes */
function probeCountingStore(client: EtcdClient): { store: Storage; probes: () => number } {
  const base = revisionOnlyStore(client);
  let probes = 0;
  const store: Storage = Object.assign(Object.create(base) as Storage, {
    currentResourceVersion: () => {
      probes++;
      return base.currentResourceVersion();
    },
  });
  return { store, probes: () => probes };
}

describe('watch cache over etcd', () => {
  let etcd: EtcdProcess;
  let client: EtcdClient;
  let other: EtcdClient; // "another replica" writing to the same etcd
  const feeds: CacheFeed[] = [];
  const readers: WatchReader[] = [];
  let prefixCounter = 0;

  before(async () => {
    etcd = await startEtcd();
    client = createEtcdClient({ endpoints: [etcd.endpoint] });
    other = createEtcdClient({ endpoints: [etcd.endpoint] });
  });
  after(async () => {
    for (const r of readers) r.stop();
    for (const f of feeds) f.close();
    client?.close();
    other?.close();
    await etcd?.stop();
  });

  /** a fresh etcd prefix per test, so tests never see each other's keys */
  const newPrefix = () => `/cacher-test-${++prefixCounter}`;

  async function startFeed(prefix: string, opts: Partial<CacheFeedOptions> = {}, store?: Storage): Promise<CacheFeed> {
    const feed = createCacheFeed(client, store ?? revisionOnlyStore(client), { prefix, ...opts });
    feeds.push(feed);
    await feed.ready;
    return feed;
  }

  async function put(prefix: string, obj: KubeObject, resource = 'pods'): Promise<number> {
    const key = `${prefix}/${resource}/${obj.metadata.namespace}/${obj.metadata.name}`;
    const res = await other.put(Buffer.from(key), Buffer.from(JSON.stringify(obj)));
    return res.header.revision;
  }

  async function del(prefix: string, ns: string, name: string, resource = 'pods'): Promise<number> {
    const res = await other.deleteRange(Buffer.from(`${prefix}/${resource}/${ns}/${name}`));
    return res.header.revision;
  }

  function read(w: Watch): WatchReader {
    const r = new WatchReader(w);
    readers.push(r);
    return r;
  }

  test('loads what etcd holds, then becomes ready and synced', async () => {
    const prefix = newPrefix();
    await put(prefix, makePod('ns', 'a'));
    await put(prefix, makePod('ns', 'b'));
    await put(prefix, { metadata: { name: 'd', namespace: 'ns' } }, 'apps/deployments');
    const feed = await startFeed(prefix);
    assert.equal(feed.synced, true);
    const pods = feed.cacherFor('/pods/');
    assert.equal(pods.ready, true);
    const list = await pods.getList('/pods/', { recursive: true, predicate: everything, resourceVersion: '0' });
    assert.deepEqual(names(list.items), ['a', 'b']);
    // a cacher created after the initial load adopts what the feed already holds
    const deployments = feed.cacherFor('/apps/deployments');
    const dl = await deployments.getList('/apps/deployments/', { recursive: true, predicate: everything, resourceVersion: '0' });
    assert.deepEqual(names(dl.items), ['d']);
    assert.equal(await pods.count('/pods/ns'), 2);
  });

  test('keys under a prefix that is not ASCII are cut after its UTF-8 bytes', async () => {
    const prefix = `${newPrefix()}-ñé`;
    await put(prefix, makePod('ns', 'a'));
    const feed = await startFeed(prefix);
    const pods = feed.cacherFor('/pods/');
    await put(prefix, makePod('ns', 'b'));
    const list = await pods.getList('/pods/', { recursive: true, predicate: everything });
    assert.deepEqual(names(list.items), ['a', 'b']);
    assert.equal((await pods.get('/pods/ns/b'))?.metadata.name, 'b');
  });

  test('consistent reads include a write made by another client just before', async () => {
    const prefix = newPrefix();
    const feed = await startFeed(prefix);
    const pods = feed.cacherFor('/pods/');
    for (let i = 0; i < 50; i++) {
      const rev = await put(prefix, makePod('ns', `p${String(i).padStart(2, '0')}`));
      const list = await pods.getList('/pods/ns/', { recursive: true, predicate: everything });
      assert.equal(list.items.length, i + 1);
      assert.ok(Number(list.resourceVersion) >= rev);
      const got = await pods.get(`/pods/ns/p${String(i).padStart(2, '0')}`);
      assert.equal(got?.metadata.resourceVersion, String(rev));
    }
  });

  test('consistent reads through one fence: one revision probe for all, each seeing what was written before the first', async () => {
    const prefix = newPrefix();
    const { store: counting, probes: probeCount } = probeCountingStore(client);
    const feed = await startFeed(prefix, { progressMarkerDelayMs: 20 }, counting);
    const pods = feed.cacherFor('/pods/');
    const deployments = feed.cacherFor('/apps/deployments');
    const podRev = await put(prefix, makePod('ns', 'a'));
    const deployRev = await put(prefix, { metadata: { name: 'd', namespace: 'ns' } }, 'apps/deployments');
    const fence = new ReadFence();
    const before = probeCount();
    const list = await pods.getList('/pods/ns/', { recursive: true, predicate: everything, fence });
    assert.deepEqual(names(list.items), ['a']);
    assert.ok(fence.revisionIn(counting.revisionSpace) >= Math.max(podRev, deployRev));
    const got = await deployments.get('/apps/deployments/ns/d', { fence });
    assert.equal(got?.metadata.resourceVersion, String(deployRev));
    const again = await pods.getList('/pods/', { recursive: true, predicate: everything, fence });
    assert.deepEqual(names(again.items), ['a']);
    assert.equal(probeCount() - before, 1, 'only the first read through the fence asks etcd');
    // a read without the fence is consistent on its own: it asks etcd again
    await put(prefix, makePod('ns', 'b'));
    const fresh = await pods.getList('/pods/ns/', { recursive: true, predicate: everything });
    assert.deepEqual(names(fresh.items), ['a', 'b']);
    assert.equal(probeCount() - before, 2);
    // revisions of another etcd cluster are not this one's: a fence keeps them apart
    const elsewhere = new ReadFence();
    elsewhere.observe({}, Number.MAX_SAFE_INTEGER);
    await pods.getList('/pods/ns/', { recursive: true, predicate: everything, fence: elsewhere });
    assert.equal(probeCount() - before, 3);
  });

  test("optimistic reads become conditions of the reader's write, up to what one transaction can check", async () => {
    const prefix = newPrefix();
    const { store: counting, probes: probeCount } = probeCountingStore(client);
    const feed = await startFeed(prefix, { progressMarkerDelayMs: 20 }, counting);
    const pods = feed.cacherFor('/pods/');
    let last = 0;
    for (let i = 0; i < MAX_CONDITION_COMPARES; i++) last = await put(prefix, makePod('many', `p${String(i).padStart(3, '0')}`));
    await put(prefix, makePod('few', 'a'));
    // the cache has seen them all (a consistent read), then reads are counted
    await pods.getList('/pods/', { recursive: true, predicate: everything });
    assert.ok(feed.revision() >= last);
    const fence = new ReadFence();
    fence.readOptimisticallyIn(counting.revisionSpace);
    const before = probeCount();
    const few = await pods.getList('/pods/few/', { recursive: true, predicate: everything, fence });
    assert.deepEqual(names(few.items), ['a']);
    const absent = await pods.get('/pods/few/b', { fence, ignoreNotFound: true });
    assert.equal(absent, null);
    assert.equal(probeCount() - before, 0, 'optimistic reads wait for no revision');
    assert.deepEqual(
      fence.conditions.map((c) => [c.key, c.recursive, c.objects.map(([k, rv]) => [k, rv > 0])]),
      [
        ['/pods/few/', true, [['/pods/few/a', true]]],
        ['/pods/few/b', false, [['/pods/few/b', false]]],
      ],
    );
    // 64 objects and the range would take the write past its compares: read strictly instead
    const many = await pods.getList('/pods/many/', { recursive: true, predicate: everything, fence });
    assert.equal(many.items.length, MAX_CONDITION_COMPARES);
    assert.equal(probeCount() - before, 1);
    assert.equal(fence.conditions.length, 2);
    // a strict read paid for the revision: the fence's later reads are strict too, and free
    await pods.getList('/pods/few/', { recursive: true, predicate: everything, fence });
    assert.equal(probeCount() - before, 1);
    assert.equal(fence.conditions.length, 2);
  });

  test('consistent reads after writes outside the prefix are settled by a progress marker', async () => {
    const prefix = newPrefix();
    const feed = await startFeed(prefix, { progressMarkerDelayMs: 20 });
    const pods = feed.cacherFor('/pods/');
    await put(prefix, makePod('ns', 'a'));
    for (let i = 0; i < 3; i++) {
      const res = await other.put(Buffer.from(`${prefix}-elsewhere/${i}`), Buffer.from('x'));
      const list = await pods.getList('/pods/', { recursive: true, predicate: everything });
      assert.ok(Number(list.resourceVersion) >= res.header.revision);
      assert.ok(feed.revision() >= res.header.revision);
    }
  });

  test('a feed catching up never takes an answer to a progress request as its revision (etcd-io/etcd#15220)', async () => {
    // etcd 3.4 answers a progress request on the shared stream with its current revision
    // while the feed's watch may still be replaying older events. If the feed took that
    // revision, a read or a new watcher registered in between would be placed after events
    // the cache has not applied yet, and would never get them.
    const prefix = newPrefix();
    await put(prefix, makePod('ns', 'p0'));
    const feed = await startFeed(prefix);
    const pods = feed.cacherFor('/pods/');
    feed.feed.suspendWatchForTest();
    const pad = 'x'.repeat(1500);
    let last = 0;
    for (let i = 0; i < 1500; i++) last = await put(prefix, { ...makePod('ns', `p${i % 30}`), pad } as KubeObject);
    const probe = client.watch({ key: Buffer.from(`${prefix}-probe`), startRevision: 0 }, () => {});
    const asking = setInterval(() => probe.requestProgress(), 1);
    try {
      feed.feed.resumeWatchForTest();
      for (let newest = 0; newest < last; ) {
        // rv=0: whatever the cache holds, at the revision it claims to have seen
        const list = await pods.getList('/pods/', { recursive: true, predicate: everything, resourceVersion: '0' });
        newest = Math.max(0, ...list.items.map((p) => Number(p.metadata.resourceVersion)));
        assert.equal(Number(list.resourceVersion), newest, 'the cache claims a revision whose change it has not applied');
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      clearInterval(asking);
      probe.cancel();
    }
  });

  test('a progress marker is written only once etcd has reached what a read waits for', async () => {
    const prefix = newPrefix();
    const feed = await startFeed(prefix, { tooLargeRvWaitMs: 300, progressMarkerDelayMs: 10 });
    const pods = feed.cacherFor('/pods/');
    const rev = await put(prefix, makePod('ns', 'a'));
    const err = await pods.get('/pods/ns/a', { resourceVersion: String(rev + 5) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(isStorageError(err, 'TooLargeResourceVersion'), String(err));
    const marker = await other.range({ key: Buffer.from(`${prefix}/kapi/progress-marker`) });
    assert.equal(marker.kvs.length, 0, 'no marker may move etcd towards a resourceVersion nobody wrote');
    // a revision moved by a write elsewhere: the marker settles the read
    const elsewhere = await other.put(Buffer.from(`${prefix}-elsewhere`), Buffer.from('x'));
    const got = await pods.get('/pods/ns/a', { resourceVersion: String(elsewhere.header.revision) });
    assert.equal(got?.metadata.name, 'a');
    assert.ok(feed.revision() > elsewhere.header.revision);
    const after = await other.range({ key: Buffer.from(`${prefix}/kapi/progress-marker`) });
    assert.equal(after.kvs.length, 1);
  });

  test('a consistent read that the cache cannot serve in time is refused with 429, never stale', async () => {
    const prefix = newPrefix();
    const feed = await startFeed(prefix, { consistentReadTimeoutMs: 300 });
    const pods = feed.cacherFor('/pods/');
    feed.feed.suspendWatchForTest();
    await put(prefix, makePod('ns', 'late'));
    const err = await pods.getList('/pods/', { recursive: true, predicate: everything }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(isStorageError(err, 'TooManyRequests'), String(err));
    assert.equal(err.retryAfterSeconds, 1);
    feed.feed.resumeWatchForTest();
    const list = await pods.getList('/pods/', { recursive: true, predicate: everything });
    assert.deepEqual(names(list.items), ['late']);
  });

  test('a resourceVersion the cache does not reach in time: TooLargeResourceVersion with the current revision', async () => {
    const prefix = newPrefix();
    const feed = await startFeed(prefix, { tooLargeRvWaitMs: 200 });
    const pods = feed.cacherFor('/pods/');
    const rev = await put(prefix, makePod('ns', 'a'));
    await pods.get('/pods/ns/a');
    const err = await pods.get('/pods/ns/a', { resourceVersion: String(rev + 1000) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(isStorageError(err, 'TooLargeResourceVersion'), String(err));
    assert.equal(err.message, `Too large resource version: ${rev + 1000}, current: ${feed.revision()}`);
    assert.equal(err.retryAfterSeconds, 1);
    // a revision reached while waiting is served. etcd's revision is shared: a write of an
    // earlier test's feed (a progress marker) may take the awaited revision first, and the read
    // is then answered without the pod; such a round is tried again under another name
    let decided = false;
    for (let round = 0; round < 5 && !decided; round++) {
      const name = `b${round}`;
      const next = (await other.range({ key: Buffer.from(`${prefix}/none`) })).header.revision + 1;
      const pending = pods.get(`/pods/ns/${name}`, { resourceVersion: String(next) }).then(
        (obj) => obj?.metadata.name,
        (e: unknown) => (isStorageError(e, 'KeyNotFound') ? undefined : Promise.reject(e)),
      );
      const written = await put(prefix, makePod('ns', name));
      const got = await pending;
      if (written !== next) continue;
      decided = true;
      assert.equal(got, name);
    }
    assert.ok(decided, 'every round lost its revision to another write');
  });

  test('2000 watchers on one resource all receive an event, sharing one object', async () => {
    const prefix = newPrefix();
    const feed = await startFeed(prefix);
    const pods = feed.cacherFor('/pods/');
    const start = String(feed.revision());
    const watchers = await Promise.all(
      Array.from({ length: 2000 }, (_, i) =>
        pods.watch(i % 2 ? '/pods/' : '/pods/ns/', { recursive: true, predicate: everything, resourceVersion: start }),
      ),
    );
    const rs = watchers.map(read);
    const rev = await put(prefix, makePod('ns', 'hello'));
    const events = await Promise.all(rs.map((r) => r.change()));
    for (const e of events) assert.equal(describeEvent(e), `ADDED hello@${rev}`);
    assert.ok(
      events.every((e) => e.object === events[0]!.object),
      'one decoded object shared by all watchers',
    );
    for (const r of rs) r.stop();
  });

  test('a stored value that does not decode is left out of a replay and of the initial state, with a warning', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      for (const sendInitialEvents of [false, true]) {
        const prefix = newPrefix();
        const feed = await startFeed(prefix);
        const pods = feed.cacherFor('/pods/');
        const start = String(feed.revision());
        // no watcher yet: the replay (or the initial state) is the first to decode the bad value
        await other.put(Buffer.from(`${prefix}/pods/ns/bad`), Buffer.from('{not json'));
        const good = await put(prefix, makePod('ns', 'good'));
        await feed.feed.waitForRevision(good, 5000);
        const w = read(
          await pods.watch('/pods/', {
            recursive: true,
            predicate: everything,
            resourceVersion: sendInitialEvents ? undefined : start,
            sendInitialEvents,
            allowWatchBookmarks: sendInitialEvents,
          }),
        );
        assert.equal(describeEvent(await w.change()), `ADDED good@${good}`);
        await new Promise((r) => setImmediate(r));
        assert.ok(
          warnings.some((m) => m.includes('cannot deliver a change of /pods/ns/bad')),
          `no warning (sendInitialEvents=${sendInitialEvents}): ${JSON.stringify(warnings)}`,
        );
        warnings.length = 0;
        w.stop();
      }
    } finally {
      process.off('warning', onWarning);
    }
  });

  test('predicates filter per watcher; single-key watches see only their key', async () => {
    const prefix = newPrefix();
    const feed = await startFeed(prefix);
    const pods = feed.cacherFor('/pods/');
    const start = String(feed.revision());
    const web = read(await pods.watch('/pods/', { recursive: true, predicate: labelPredicate({ app: 'web' }), resourceVersion: start }));
    const one = read(await pods.watch('/pods/ns/b', { recursive: false, predicate: everything, resourceVersion: start }));
    await put(prefix, makePod('ns', 'a', { app: 'db' }));
    const b = await put(prefix, makePod('ns', 'b', { app: 'web' }));
    const b2 = await put(prefix, makePod('ns', 'b', { app: 'db' }));
    assert.equal(describeEvent(await web.change()), `ADDED b@${b}`);
    assert.equal(describeEvent(await web.change()), `DELETED b@${b2}`);
    assert.equal(describeEvent(await one.change()), `ADDED b@${b}`);
    assert.equal(describeEvent(await one.change()), `MODIFIED b@${b2}`);
  });

  test('a metadata-only watcher gets live changes as metadata, beside a whole-object watcher of the same change', async () => {
    const prefix = newPrefix();
    const feed = await startFeed(prefix);
    const pods = feed.cacherFor('/pods/');
    const start = String(feed.revision());
    const meta = await pods.watch('/pods/', { recursive: true, predicate: everything, resourceVersion: start, metadataOnly: true });
    const whole = await pods.watch('/pods/', { recursive: true, predicate: everything, resourceVersion: start });
    const rev = await put(prefix, makePod('ns', 'm', { app: 'web' }));
    const next = async (w: typeof meta) => (await w[Symbol.asyncIterator]().next()).value as WatchEvent;
    const m = await next(meta);
    const w = await next(whole);
    assert.equal(m.type, 'ADDED');
    assert.equal(m.object.metadata.resourceVersion, String(rev));
    assert.deepEqual(m.object.metadata.labels, { app: 'web' });
    assert.equal(m.object.spec, undefined);
    assert.ok(w.object.spec);
    meta.stop();
    whole.stop();
  });

  test('a watcher that does not read is ended once its queue is full; it gets what was queued', async () => {
    const prefix = newPrefix();
    const feed = await startFeed(prefix, { watcherQueueLimit: 5 });
    const pods = feed.cacherFor('/pods/');
    const start = String(feed.revision());
    const slow = read(await pods.watch('/pods/', { recursive: true, predicate: everything, resourceVersion: start }));
    const fast = read(await pods.watch('/pods/', { recursive: true, predicate: everything, resourceVersion: start }));
    const revs: number[] = [];
    for (let i = 0; i < 12; i++) {
      revs.push(await put(prefix, makePod('ns', `p${i}`)));
      await fast.change();
    }
    const got: string[] = [];
    for (;;) {
      const e = await slow.next();
      if (e === END) break;
      got.push(describeEvent(e));
    }
    assert.deepEqual(
      got,
      revs.slice(0, 5).map((r, i) => `ADDED p${i}@${r}`),
    );
    // the fast one is still live
    const rev = await put(prefix, makePod('ns', 'last'));
    assert.equal(describeEvent(await fast.change()), `ADDED last@${rev}`);
  });

  test('periodic bookmarks carry the revision the feed has seen', async () => {
    const prefix = newPrefix();
    const feed = await startFeed(prefix, { bookmarkIntervalMs: 50 });
    const pods = feed.cacherFor('/pods/');
    feed.cacherFor('/secrets/');
    const w = read(
      await pods.watch('/pods/', {
        recursive: true,
        predicate: everything,
        resourceVersion: String(feed.revision()),
        allowWatchBookmarks: true,
      }),
    );
    // a change of another resource moves the revision without an event for this watcher
    const rev = await put(prefix, { metadata: { name: 's', namespace: 'ns' } }, 'secrets');
    for (;;) {
      const e = await w.event('a bookmark at the secret write');
      assert.equal(e.type, 'BOOKMARK');
      assert.equal(e.object.metadata.annotations, undefined);
      if (Number(e.object.metadata.resourceVersion) >= rev) break;
    }
  });

  test('watch replays the history; sendInitialEvents from the cache ends with the annotated bookmark', async () => {
    const prefix = newPrefix();
    const feed = await startFeed(prefix);
    const pods = feed.cacherFor('/pods/');
    const r1 = await put(prefix, makePod('ns', 'a'));
    const r2 = await put(prefix, makePod('ns', 'b'));
    const r3 = await del(prefix, 'ns', 'a');
    await pods.get('/pods/ns/b'); // the cache has seen everything
    const replay = read(await pods.watch('/pods/', { recursive: true, predicate: everything, resourceVersion: String(r1) }));
    assert.deepEqual((await replay.changes(2)).map(describeEvent), [`ADDED b@${r2}`, `DELETED a@${r3}`]);
    const list = read(
      await pods.watch('/pods/', {
        recursive: true,
        predicate: everything,
        sendInitialEvents: true,
        allowWatchBookmarks: true,
        resourceVersion: String(r2),
      }),
    );
    assert.equal(describeEvent(await list.event()), `ADDED b@${r2}`);
    const bm = await list.event();
    assert.equal(bm.type, 'BOOKMARK');
    assert.equal(bm.object.metadata.annotations?.['k8s.io/initial-events-end'], 'true');
    assert.ok(Number(bm.object.metadata.resourceVersion) >= r3);
  });

  test('list with limit from the cache: pages, continue token, remainingItemCount', async () => {
    const prefix = newPrefix();
    const feed = await startFeed(prefix);
    const pods = feed.cacherFor('/pods/');
    for (const n of ['a', 'b', 'c']) await put(prefix, makePod('ns', n));
    const page = await pods.getList('/pods/ns', { recursive: true, predicate: everything, limit: 2 });
    assert.deepEqual(names(page.items), ['a', 'b']);
    assert.equal(page.remainingItemCount, 1);
    const token = JSON.parse(Buffer.from(page.continue, 'base64url').toString()) as Record<string, unknown>;
    assert.deepEqual(token, { v: 'meta.k8s.io/v1', rv: Number(page.resourceVersion), start: 'c' });
  });

  test("continue pages: etcd's answer that a revision is not compacted serves the later pages of a list", async () => {
    const prefix = newPrefix();
    const store = createEtcd3Store(client, { prefix });
    const { storeReads, recording } = recordingReads(store);
    try {
      const feed = await startFeed(prefix, { uncompactedAnswerMs: 600_000 }, recording);
      const pods = feed.cacherFor('/pods/');
      for (const n of ['a', 'b', 'c', 'd', 'e', 'f', 'g']) await put(prefix, makePod('ns', n));
      const list = { recursive: true, predicate: everything, limit: 2 } as const;
      const pages = [await pods.getList('/pods/ns', list)];
      while (pages.at(-1)!.continue) pages.push(await pods.getList('/pods/ns', { ...list, continue: pages.at(-1)!.continue }));
      assert.deepEqual(
        pages.map((p) => names(p.items)),
        [['a', 'b'], ['c', 'd'], ['e', 'f'], ['g']],
      );
      assert.deepEqual(storeReads, ['one key'], 'the first continue page asked etcd, the others took its word');
      // a list begun later is at a later revision, which the same answer covers
      await put(prefix, makePod('other', 'x'));
      storeReads.length = 0;
      const later = await pods.getList('/pods/ns', list);
      const next = await pods.getList('/pods/ns', { ...list, continue: later.continue });
      assert.deepEqual(names(next.items), ['c', 'd']);
      assert.deepEqual(storeReads, []);
      assert.deepEqual(next.items, (await store.getList('/pods/ns', { ...list, continue: later.continue })).items);
    } finally {
      await store.close();
    }
  });

  test('continue pages: from the cache while the rest of the range is unchanged since the token, from etcd after a change', async () => {
    const prefix = newPrefix();
    const store = createEtcd3Store(client, { prefix });
    const { storeReads, recording } = recordingReads(store);
    try {
      // every continue page asks etcd about its revision
      const feed = await startFeed(prefix, { uncompactedAnswerMs: 0 }, recording);
      const pods = feed.cacherFor('/pods/');
      for (const n of ['a', 'b', 'c', 'd', 'e']) await put(prefix, makePod('ns', n, { v: '1' }));
      const list = { recursive: true, predicate: everything, limit: 2 } as const;
      const first = await pods.getList('/pods/ns', list);
      const second = await pods.getList('/pods/ns', { ...list, continue: first.continue });
      assert.deepEqual(names(second.items), ['c', 'd']);
      assert.equal(second.resourceVersion, first.resourceVersion);
      assert.equal(second.remainingItemCount, 1);
      assert.deepEqual(storeReads, ['one key'], 'the cache answered the page; the store only checked the revision');
      // as etcd answers the same page
      const fromEtcd = await store.getList('/pods/ns', { ...list, continue: first.continue });
      assert.deepEqual(second.items, fromEtcd.items);

      // a change after the token's revision in the rest of the range: etcd's state at the
      // token's revision, not the cache's
      await put(prefix, makePod('ns', 'd', { v: '2' }));
      await pods.getList('/pods/ns', { recursive: true, predicate: everything });
      storeReads.length = 0;
      const third = await pods.getList('/pods/ns', { ...list, continue: first.continue });
      assert.deepEqual(storeReads, [2]);
      assert.deepEqual(
        third.items.map((p) => p.metadata.labels?.v),
        ['1', '1'],
      );
      assert.deepEqual(third.items, fromEtcd.items);

      // a change before the start key leaves the rest of the range as it was
      await put(prefix, makePod('ns', 'a', { v: '2' }));
      const page = await pods.getList('/pods/ns', list);
      storeReads.length = 0;
      const next = await pods.getList('/pods/ns', { ...list, continue: page.continue });
      assert.deepEqual(storeReads, ['one key']);
      assert.deepEqual(names(next.items), ['c', 'd']);
      assert.equal(next.items[1]!.metadata.labels?.v, '2');

      // a token whose revision etcd compacted is expired, even though the cache could answer it
      await put(prefix, makePod('other', 'f'));
      const current = await store.currentResourceVersion();
      await client.compact(current, true);
      await assert.rejects(pods.getList('/pods/ns', { ...list, continue: page.continue }), (err: unknown) =>
        isStorageError(err, 'ContinueExpired'),
      );
    } finally {
      await store.close();
    }
  });

  test('after losing its etcd watch past a compaction, the feed relists; its watchers end, and a watch from before is 410', async () => {
    // The changes in the gap are gone from etcd: there is no way to tell a watcher about them
    // as events with their own resourceVersions (two deletions would share one, and a client
    // that resumed between them would lose the second). So, as kube-apiserver's watch cache
    // does when its reflector relists, every watcher ends; a client watching again from its
    // resourceVersion gets 410 (or, on a replica that did not lose its watch, carries on).
    const prefix = newPrefix();
    const store = createEtcd3Store(client, { prefix });
    try {
      const feed = await startFeed(prefix, {}, store);
      const pods = feed.cacherFor('/pods/');
      await put(prefix, makePod('ns', 'keep'));
      await put(prefix, makePod('ns', 'change', { v: '1' }));
      await put(prefix, makePod('ns', 'remove1'));
      await put(prefix, makePod('ns', 'remove2'));
      await pods.get('/pods/ns/remove2');
      const from = feed.revision();
      const w = read(
        await pods.watch('/pods/', { recursive: true, predicate: everything, resourceVersion: String(from), allowWatchBookmarks: true }),
      );
      feed.feed.suspendWatchForTest();
      await put(prefix, makePod('ns', 'change', { v: '2' }));
      await put(prefix, makePod('ns', 'new'));
      await del(prefix, 'ns', 'remove1');
      await del(prefix, 'ns', 'remove2');
      const compactAt = (await other.range({ key: Buffer.from('/') })).header.revision;
      await other.compact(compactAt, true);
      feed.feed.resumeWatchForTest();

      // the watcher ends; whatever it got before has strictly increasing resourceVersions
      const got: string[] = [];
      let last = from;
      for (;;) {
        const e = await w.next('the end of the watch');
        if (e === END) break;
        const rv = Number(e.object.metadata.resourceVersion);
        got.push(describeEvent(e));
        assert.ok(rv > last || (e.type === 'BOOKMARK' && rv >= last), `${got.join(', ')}: not increasing`);
        last = rv;
      }
      // watching again from there: 410 Expired, as the client then relists
      const again = read(await pods.watch('/pods/', { recursive: true, predicate: everything, resourceVersion: String(last) }));
      const expired = await again.event();
      assert.equal(expired.type, 'ERROR');
      assert.equal((expired.object as unknown as { code: number }).code, 410);
      // the relist: the state as etcd has it, and a watch from it goes on
      const list = await pods.getList('/pods/', { recursive: true, predicate: everything });
      assert.deepEqual(names(list.items), ['change', 'keep', 'new']);
      assert.deepEqual(list.items[0]!.metadata.labels, { v: '2' });
      const w2 = read(await pods.watch('/pods/', { recursive: true, predicate: everything, resourceVersion: list.resourceVersion }));
      const later = await put(prefix, makePod('ns', 'later'));
      assert.equal(describeEvent(await w2.change()), `ADDED later@${later}`);
    } finally {
      await store.close();
    }
  });

  test('a malformed resourceVersion is rejected', async () => {
    const prefix = newPrefix();
    const feed = await startFeed(prefix);
    const pods = feed.cacherFor('/pods/');
    assert.equal(await storageErrorCode(pods.get('/pods/ns/a', { resourceVersion: '1x' })), 'InvalidResourceVersion');
    assert.equal(
      await storageErrorCode(pods.watch('/pods/', { recursive: true, predicate: everything, resourceVersion: 'abc' })),
      'InvalidResourceVersion',
    );
  });

  test('a watch catching up through etcd never gets a bookmark ahead of its events (etcd 3.4 progress answers)', async () => {
    // etcd 3.4 answers a progress request (the feed sends them on the shared etcd stream while
    // consistent reads wait) with its current revision, even to a watch still replaying old
    // events (etcd-io/etcd#15220). A client must never get that revision as a bookmark before
    // the events below it: it would resume from there and lose them.
    const prefix = newPrefix();
    const store = createEtcd3Store(client, { prefix });
    const pad = 'x'.repeat(1500);
    try {
      const first = await put(prefix, { ...makePod('ns', 'p0'), pad } as KubeObject);
      let last = first;
      for (let i = 1; i < 2000; i++) last = await put(prefix, { ...makePod('ns', `p${i % 40}`), pad } as KubeObject);
      const feed = await startFeed(prefix, {}, store);
      const pods = feed.cacherFor('/pods/');
      const probe = client.watch({ key: Buffer.from(`${prefix}-probe`), startRevision: 0 }, () => {});
      const asking = setInterval(() => probe.requestProgress(), 1);
      try {
        const w = await pods.watch('/pods/', {
          recursive: true,
          predicate: everything,
          resourceVersion: String(first),
          allowWatchBookmarks: true,
        });
        assert.ok(w instanceof CatchUpWatch);
        const r = read(w);
        let bookmark = 0;
        let seen = first;
        while (seen < last) {
          const e = await r.event();
          const rv = Number(e.object.metadata.resourceVersion);
          if (e.type === 'BOOKMARK') {
            assert.ok(rv >= seen, `bookmark at ${rv} after an event at ${seen}`);
            bookmark = rv;
            continue;
          }
          assert.ok(rv > bookmark, `${describeEvent(e)} after a bookmark at ${bookmark}`);
          assert.equal(rv, seen + 1, `${describeEvent(e)} follows ${seen}: every revision is a change of this watch`);
          seen = rv;
        }
      } finally {
        clearInterval(asking);
        probe.cancel();
      }
    } finally {
      await store.close();
    }
  });

  test('after a restart, a watch from an old resourceVersion is served by etcd, then handed to the cache', async () => {
    const prefix = newPrefix();
    const store = createEtcd3Store(client, { prefix });
    try {
      const ra = await put(prefix, makePod('ns', 'a'));
      const rb = await put(prefix, makePod('ns', 'b'));
      // a new replica: its history starts after both writes
      const traced: string[] = [];
      const feed = await startFeed(prefix, { trace: (message, fields) => traced.push(`${message} from ${fields.resourceVersion}`) }, store);
      const pods = feed.cacherFor('/pods/');
      assert.ok(feed.revision() >= rb);
      const w = await pods.watch('/pods/', { recursive: true, predicate: everything, resourceVersion: String(ra) });
      assert.ok(w instanceof CatchUpWatch);
      const r = read(w);
      assert.equal(describeEvent(await r.change()), `ADDED b@${rb}`);
      const later: number[] = [];
      for (const n of ['c', 'd', 'e']) later.push(await put(prefix, makePod('ns', n)));
      assert.deepEqual((await r.changes(3)).map(describeEvent), [`ADDED c@${later[0]}`, `ADDED d@${later[1]}`, `ADDED e@${later[2]}`]);
      assert.equal(w.servedByCache, true);
      const f = await put(prefix, makePod('ns', 'f'));
      assert.equal(describeEvent(await r.change()), `ADDED f@${f}`);
      // -v 3 tells how it was served
      assert.deepEqual(traced, [
        `watch cache: watch by etcd until the history covers it from ${ra}`,
        `watch cache: watch handed over to the cache from ${rb}`,
      ]);
    } finally {
      await store.close();
    }
  });
});
