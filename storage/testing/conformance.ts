// The one storage conformance suite. Every Storage implementation (the etcd3 store, the
// cacher in front of it) registers it with its own setup; the behaviour it pins down is
// kube-apiserver's storage contract as clients observe it through the API.
//
// Conventions: every key lives under `/pods/<namespace>/<name>` (a cacher is per resource, so
// the setup gives a storage for the `/pods/` prefix) and every test uses its own namespace,
// so tests never see each other's objects. Writes made "directly through etcd" store the
// object as JSON under `prefix + key`, the way the etcd3 store does.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import type { EtcdClient } from '../etcd/types.js';
import type { KubeObject, Storage, WatchEvent, WatchOptions } from '../interface.js';
import { everything } from '../interface.js';
import { isStorageError } from '../errors.js';
import { WatchReader, END, describeEvent } from './watch-reader.js';
import { everythingInDisguise, labelPredicate, makePod, names, podKey, rvOf, storageErrorCode } from './fixtures.js';

export interface ConformanceContext {
  storage: Storage;
  etcd: EtcdClient;
  /** the etcd key prefix the storage writes under (keys are `prefix + key`) */
  prefix: string;
  teardown(): Promise<void>;
  /** a fresh instance over the same etcd, as after a replica restart; used by the tests
   *  that need a revision older than anything the storage has seen. Defaults to `storage`.
   *  The suite does not close it: teardown does. */
  reopen?(): Promise<Storage>;
}

const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

export function runStorageConformance(name: string, setup: () => Promise<ConformanceContext>): void {
  describe(`storage conformance: ${name}`, () => {
    let ctx: ConformanceContext;
    let s: Storage;
    const readers: WatchReader[] = [];
    let nsCounter = 0;
    /** a namespace no other test uses */
    const ns = (hint: string) => `${hint}-${++nsCounter}`;

    before(async () => {
      ctx = await setup();
      s = ctx.storage;
    });
    after(async () => {
      for (const r of readers) r.stop();
      await ctx?.teardown();
    });

    async function watch(key: string, opts: Partial<WatchOptions> = {}, storage: Storage = s): Promise<WatchReader> {
      const w = await storage.watch(key, { recursive: true, predicate: everything, ...opts });
      const r = new WatchReader(w);
      readers.push(r);
      return r;
    }
    const create = (n: string, name: string, labels: Record<string, string> = {}, spec: Record<string, unknown> = {}) =>
      s.create(podKey(n, name), makePod(n, name, labels, spec));
    const etcdKey = (key: string) => Buffer.from(ctx.prefix + key);
    async function modRevision(key: string): Promise<number | undefined> {
      const r = await ctx.etcd.range({ key: etcdKey(key) });
      return r.kvs[0]?.modRevision;
    }
    async function compactNow(): Promise<number> {
      // a write first, so that the compaction covers every revision a test has seen
      const w = await s.create(podKey('compaction', `c-${Date.now()}-${nsCounter++}`), makePod('compaction', 'x'));
      await ctx.etcd.compact(rvOf(w), true);
      return rvOf(w);
    }

    describe('create, get, delete', () => {
      test('create returns the stored object with resourceVersion = mod revision', async () => {
        const n = ns('create');
        const created = await create(n, 'a', { app: 'x' });
        assert.equal(created.metadata.name, 'a');
        assert.deepEqual(created.metadata.labels, { app: 'x' });
        assert.equal(rvOf(created), await modRevision(podKey(n, 'a')));
        const got = await s.get(podKey(n, 'a'));
        assert.ok(got);
        assert.equal(got.metadata.resourceVersion, created.metadata.resourceVersion);
        assert.deepEqual(got.spec, created.spec);
      });

      test('create ignores a resourceVersion in the object', async () => {
        const n = ns('create-rv');
        const obj = makePod(n, 'a');
        obj.metadata.resourceVersion = '12345678';
        const created = await s.create(podKey(n, 'a'), obj);
        assert.equal(rvOf(created), await modRevision(podKey(n, 'a')));
      });

      test('create of an existing key fails with KeyExists and changes nothing', async () => {
        const n = ns('exists');
        const first = await create(n, 'a', { v: '1' });
        assert.equal(await storageErrorCode(create(n, 'a', { v: '2' })), 'KeyExists');
        const got = await s.get(podKey(n, 'a'));
        assert.deepEqual(got?.metadata.labels, { v: '1' });
        assert.equal(got?.metadata.resourceVersion, first.metadata.resourceVersion);
      });

      test('get of a missing key fails with KeyNotFound, or null with ignoreNotFound', async () => {
        const n = ns('missing');
        assert.equal(await storageErrorCode(s.get(podKey(n, 'nope'))), 'KeyNotFound');
        assert.equal(await s.get(podKey(n, 'nope'), { ignoreNotFound: true }), null);
      });

      test('get at resourceVersion 0 and not-older-than a write', async () => {
        const n = ns('get-rv');
        const a = await create(n, 'a');
        const notOlder = await s.get(podKey(n, 'a'), { resourceVersion: a.metadata.resourceVersion });
        assert.equal(notOlder?.metadata.resourceVersion, a.metadata.resourceVersion);
        // the consistent read above means any cache has seen the create
        const any = await s.get(podKey(n, 'a'), { resourceVersion: '0' });
        assert.equal(any?.metadata.name, 'a');
      });

      test('get with a malformed resourceVersion fails with InvalidResourceVersion', async () => {
        const n = ns('bad-rv');
        await create(n, 'a');
        assert.equal(await storageErrorCode(s.get(podKey(n, 'a'), { resourceVersion: 'abc' })), 'InvalidResourceVersion');
      });

      test('dry-run create writes nothing', async () => {
        const n = ns('dry-create');
        const out = await s.create(podKey(n, 'a'), makePod(n, 'a'), { dryRun: true });
        assert.equal(out.metadata.name, 'a');
        assert.equal(await modRevision(podKey(n, 'a')), undefined);
        assert.equal(await s.get(podKey(n, 'a'), { ignoreNotFound: true }), null);
      });

      test('delete returns the last state; the key is gone', async () => {
        const n = ns('delete');
        const a = await create(n, 'a', { keep: 'me' });
        const deleted = await s.delete(podKey(n, 'a'));
        assert.equal(deleted.metadata.name, 'a');
        assert.deepEqual(deleted.metadata.labels, { keep: 'me' });
        assert.ok(rvOf(deleted) >= rvOf(a));
        assert.equal(await modRevision(podKey(n, 'a')), undefined);
        assert.equal(await storageErrorCode(s.get(podKey(n, 'a'))), 'KeyNotFound');
        assert.equal(await storageErrorCode(s.delete(podKey(n, 'a'))), 'KeyNotFound');
      });

      test('delete preconditions: uid and resourceVersion mismatches conflict', async () => {
        const n = ns('delete-pre');
        const a = await create(n, 'a');
        const key = podKey(n, 'a');
        assert.equal(await storageErrorCode(s.delete(key, { preconditions: { uid: 'other' } })), 'ResourceVersionConflict');
        await s.guaranteedUpdate(key, (cur) => ({ ...cur!, spec: { changed: true } }));
        assert.equal(
          await storageErrorCode(s.delete(key, { preconditions: { resourceVersion: a.metadata.resourceVersion } })),
          'ResourceVersionConflict',
        );
        assert.ok(await s.get(key));
        const cur = await s.get(key);
        await s.delete(key, { preconditions: { uid: a.metadata.uid, resourceVersion: cur!.metadata.resourceVersion } });
        assert.equal(await modRevision(key), undefined);
      });

      test('validateDeletion can abort a delete; dry-run delete keeps the object', async () => {
        const n = ns('delete-validate');
        const key = podKey(n, 'a');
        await create(n, 'a');
        let seen: KubeObject | undefined;
        await assert.rejects(
          s.delete(key, {
            validateDeletion: (cur) => {
              seen = cur;
              throw new Error('not allowed');
            },
          }),
          /not allowed/,
        );
        assert.equal(seen?.metadata.name, 'a');
        const dry = await s.delete(key, { dryRun: true });
        assert.equal(dry.metadata.name, 'a');
        assert.ok(await modRevision(key));
      });

      test('count counts the objects under a prefix', async () => {
        const n = ns('count');
        await create(n, 'a');
        await create(n, 'b');
        const last = await create(n, 'c');
        // a consistent read, so a cache has caught up before counting
        await s.get(podKey(n, 'c'), { resourceVersion: last.metadata.resourceVersion });
        assert.equal(await s.count(`/pods/${n}/`), 3);
      });

      test('currentResourceVersion is at least the last write', async () => {
        const n = ns('current');
        const a = await create(n, 'a');
        assert.ok((await s.currentResourceVersion()) >= rvOf(a));
      });

      test('ready is true once set up', () => {
        assert.equal(s.ready, true);
      });
    });

    describe('guaranteedUpdate', () => {
      test('updates and returns the new state with the new mod revision', async () => {
        const n = ns('update');
        const a = await create(n, 'a');
        const key = podKey(n, 'a');
        const updated = await s.guaranteedUpdate(key, (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), nodeName: 'n1' } }));
        assert.ok(rvOf(updated) > rvOf(a));
        assert.equal(rvOf(updated), await modRevision(key));
        assert.equal((updated.spec as { nodeName?: string }).nodeName, 'n1');
        const got = await s.get(key);
        assert.equal((got?.spec as { nodeName?: string }).nodeName, 'n1');
      });

      test('retries under concurrent writers; no increment is lost', async () => {
        const n = ns('update-race');
        const key = podKey(n, 'counter');
        await s.create(key, makePod(n, 'counter', {}, { counter: 0 }));
        const writers = 10;
        await Promise.all(
          Array.from({ length: writers }, () =>
            s.guaranteedUpdate(key, (cur) => {
              const spec = cur!.spec as { counter: number };
              return { ...cur!, spec: { ...spec, counter: spec.counter + 1 } };
            }),
          ),
        );
        const got = await s.get(key);
        assert.equal((got?.spec as { counter: number }).counter, writers);
      });

      test('a stale current object is retried with fresh state', async () => {
        const n = ns('update-stale');
        const key = podKey(n, 'a');
        await create(n, 'a');
        let calls = 0;
        const out = await s.guaranteedUpdate(key, async (cur) => {
          calls++;
          if (calls === 1) {
            // another writer gets in between our read and our write
            await s.guaranteedUpdate(key, (c) => ({ ...c!, metadata: { ...c!.metadata, labels: { other: 'writer' } } }));
          }
          return { ...cur!, spec: { mine: true } };
        });
        assert.ok(calls >= 2);
        assert.deepEqual(out.metadata.labels, { other: 'writer' });
        assert.deepEqual(out.spec, { mine: true });
      });

      test('preconditions: stale resourceVersion or other uid conflict without retrying', async () => {
        const n = ns('update-pre');
        const key = podKey(n, 'a');
        const a = await create(n, 'a');
        await s.guaranteedUpdate(key, (cur) => ({ ...cur!, spec: { v: 2 } }));
        assert.equal(
          await storageErrorCode(
            s.guaranteedUpdate(key, (cur) => ({ ...cur!, spec: { v: 3 } }), {
              preconditions: { resourceVersion: a.metadata.resourceVersion },
            }),
          ),
          'ResourceVersionConflict',
        );
        assert.equal(
          await storageErrorCode(
            s.guaranteedUpdate(key, (cur) => ({ ...cur!, spec: { v: 3 } }), { preconditions: { uid: 'someone-else' } }),
          ),
          'ResourceVersionConflict',
        );
        const got = await s.get(key);
        assert.deepEqual(got?.spec, { v: 2 });
        const ok = await s.guaranteedUpdate(key, (cur) => ({ ...cur!, spec: { v: 3 } }), {
          preconditions: { uid: a.metadata.uid, resourceVersion: got!.metadata.resourceVersion },
        });
        assert.deepEqual(ok.spec, { v: 3 });
      });

      test('a no-op update keeps the resourceVersion and writes nothing', async () => {
        const n = ns('update-noop');
        const key = podKey(n, 'a');
        const a = await create(n, 'a');
        const out = await s.guaranteedUpdate(key, (cur) => cur!);
        assert.equal(out.metadata.resourceVersion, a.metadata.resourceVersion);
        assert.equal(await modRevision(key), rvOf(a));
        const again = await s.guaranteedUpdate(key, (cur) => structuredClone(cur!));
        assert.equal(again.metadata.resourceVersion, a.metadata.resourceVersion);
        assert.equal(await modRevision(key), rvOf(a));
      });

      test('missing key: KeyNotFound, or created with allowCreate (called with null)', async () => {
        const n = ns('update-create');
        const key = podKey(n, 'a');
        assert.equal(await storageErrorCode(s.guaranteedUpdate(key, (cur) => cur ?? makePod(n, 'a'))), 'KeyNotFound');
        let seen: KubeObject | null | undefined;
        const out = await s.guaranteedUpdate(
          key,
          (cur) => {
            seen = cur;
            return makePod(n, 'a', { made: 'yes' });
          },
          { allowCreate: true },
        );
        assert.equal(seen, null);
        assert.equal(rvOf(out), await modRevision(key));
        assert.deepEqual(out.metadata.labels, { made: 'yes' });
      });

      test('an update function that throws aborts with its error; dry run writes nothing', async () => {
        const n = ns('update-abort');
        const key = podKey(n, 'a');
        const a = await create(n, 'a');
        await assert.rejects(
          s.guaranteedUpdate(key, () => {
            throw new Error('invalid');
          }),
          /invalid/,
        );
        const dry = await s.guaranteedUpdate(key, (cur) => ({ ...cur!, spec: { dry: true } }), { dryRun: true });
        assert.deepEqual(dry.spec, { dry: true });
        assert.equal(await modRevision(key), rvOf(a));
        assert.deepEqual((await s.get(key))?.spec, a.spec);
      });
    });

    describe('getList', () => {
      test('recursive list: key order, only the prefix, filtered by a predicate', async () => {
        const n = ns('list');
        await create(n, 'c', { app: 'web' });
        await create(n, 'a', { app: 'web' });
        await create(n, 'b', { app: 'db' });
        await create(`${n}x`, 'a', { app: 'web' }); // a sibling namespace sharing the name prefix
        const last = await create(n, 'd', { app: 'web' });
        const all = await s.getList(`/pods/${n}/`, { recursive: true, predicate: everything });
        assert.deepEqual(names(all.items), ['a', 'b', 'c', 'd']);
        assert.ok(Number(all.resourceVersion) >= rvOf(last));
        assert.equal(all.continue, '');
        for (const item of all.items) assert.equal(rvOf(item), await modRevision(podKey(n, item.metadata.name!)));
        const web = await s.getList(`/pods/${n}/`, { recursive: true, predicate: labelPredicate({ app: 'web' }) });
        assert.deepEqual(names(web.items), ['a', 'c', 'd']);
        // without the trailing slash the prefix still means this namespace only
        const noSlash = await s.getList(`/pods/${n}`, { recursive: true, predicate: everything });
        assert.deepEqual(names(noSlash.items), ['a', 'b', 'c', 'd']);
      });

      test('non-recursive list is the one key or nothing', async () => {
        const n = ns('list-one');
        await create(n, 'a');
        await create(n, 'ab');
        const one = await s.getList(podKey(n, 'a'), { recursive: false, predicate: everything });
        assert.deepEqual(names(one.items), ['a']);
        const none = await s.getList(podKey(n, 'zz'), { recursive: false, predicate: everything });
        assert.deepEqual(none.items, []);
      });

      test('consistent list sees every write acknowledged before it', async () => {
        const n = ns('list-consistent');
        const created: string[] = [];
        for (let i = 0; i < 20; i++) {
          await create(n, `p${String(i).padStart(2, '0')}`);
          created.push(`p${String(i).padStart(2, '0')}`);
          const list = await s.getList(`/pods/${n}/`, { recursive: true, predicate: everything });
          assert.deepEqual(names(list.items), created);
        }
      });

      test('limit/continue pages at one revision; remainingItemCount only when unfiltered', async () => {
        const n = ns('paging');
        for (const name of ['a', 'b', 'c', 'd', 'e']) await create(n, name);
        const key = `/pods/${n}/`;
        const p1 = await s.getList(key, { recursive: true, predicate: everything, limit: 2 });
        assert.deepEqual(names(p1.items), ['a', 'b']);
        assert.notEqual(p1.continue, '');
        assert.equal(p1.remainingItemCount, 3);
        // changes after the first page are not seen by the following pages
        await create(n, 'ca');
        await s.delete(podKey(n, 'e'));
        await s.guaranteedUpdate(podKey(n, 'd'), (cur) => ({ ...cur!, spec: { changed: true } }));
        const p2 = await s.getList(key, { recursive: true, predicate: everything, limit: 2, continue: p1.continue });
        assert.deepEqual(names(p2.items), ['c', 'd']);
        assert.equal(p2.resourceVersion, p1.resourceVersion);
        assert.notDeepEqual(p2.items[1]!.spec, { changed: true });
        assert.equal(p2.remainingItemCount, 1);
        const p3 = await s.getList(key, { recursive: true, predicate: everything, limit: 2, continue: p2.continue });
        assert.deepEqual(names(p3.items), ['e']);
        assert.equal(p3.resourceVersion, p1.resourceVersion);
        assert.equal(p3.continue, '');
        assert.equal(p3.remainingItemCount, undefined);

        const f1 = await s.getList(key, { recursive: true, predicate: everythingInDisguise, limit: 2 });
        assert.equal(f1.items.length, 2);
        assert.notEqual(f1.continue, '');
        assert.equal(f1.remainingItemCount, undefined);
      });

      test('limit with a filter still fills pages and returns continue while more may exist', async () => {
        const n = ns('paging-filter');
        for (let i = 0; i < 9; i++) await create(n, `p${i}`, { odd: String(i % 2 === 1) });
        const key = `/pods/${n}/`;
        const pred = labelPredicate({ odd: 'true' });
        const seen: string[] = [];
        let token = '';
        let rv: string | undefined;
        for (let pages = 0; pages < 10; pages++) {
          const page = await s.getList(key, { recursive: true, predicate: pred, limit: 2, continue: token || undefined });
          assert.ok(page.items.length <= 2);
          rv ??= page.resourceVersion;
          assert.equal(page.resourceVersion, rv);
          seen.push(...names(page.items));
          token = page.continue;
          if (!token) break;
        }
        assert.deepEqual(seen, ['p1', 'p3', 'p5', 'p7']);
      });

      test('Exact list at an older revision, and limit with a non-zero resourceVersion', async () => {
        const n = ns('exact');
        const a = await create(n, 'a', { v: 'old' });
        await create(n, 'b');
        await s.guaranteedUpdate(podKey(n, 'a'), (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { v: 'new' } } }));
        const key = `/pods/${n}/`;
        const exact = await s.getList(key, {
          recursive: true,
          predicate: everything,
          resourceVersion: a.metadata.resourceVersion,
          resourceVersionMatch: 'Exact',
        });
        assert.equal(exact.resourceVersion, a.metadata.resourceVersion);
        assert.deepEqual(names(exact.items), ['a']);
        assert.deepEqual(exact.items[0]!.metadata.labels, { v: 'old' });
        const limited = await s.getList(key, {
          recursive: true,
          predicate: everything,
          resourceVersion: a.metadata.resourceVersion,
          limit: 10,
        });
        assert.equal(limited.resourceVersion, a.metadata.resourceVersion);
        assert.deepEqual(names(limited.items), ['a']);
      });

      test('NotOlderThan list and resourceVersion 0', async () => {
        const n = ns('not-older');
        const a = await create(n, 'a');
        const key = `/pods/${n}/`;
        const list = await s.getList(key, {
          recursive: true,
          predicate: everything,
          resourceVersion: a.metadata.resourceVersion,
          resourceVersionMatch: 'NotOlderThan',
        });
        assert.ok(Number(list.resourceVersion) >= rvOf(a));
        assert.deepEqual(names(list.items), ['a']);
        const implicit = await s.getList(key, { recursive: true, predicate: everything, resourceVersion: a.metadata.resourceVersion });
        assert.deepEqual(names(implicit.items), ['a']);
        const any = await s.getList(key, { recursive: true, predicate: everything, resourceVersion: '0' });
        assert.match(any.resourceVersion, /^[0-9]+$/);
        const anyLimited = await s.getList(key, { recursive: true, predicate: everything, resourceVersion: '0', limit: 5 });
        assert.match(anyLimited.resourceVersion, /^[0-9]+$/);
      });

      test('malformed continue tokens and resourceVersion with continue are rejected', async () => {
        const n = ns('bad-continue');
        await create(n, 'a');
        await create(n, 'b');
        const key = `/pods/${n}/`;
        assert.equal(
          await storageErrorCode(s.getList(key, { recursive: true, predicate: everything, limit: 1, continue: 'not-a-token' })),
          'InvalidContinue',
        );
        const p1 = await s.getList(key, { recursive: true, predicate: everything, limit: 1 });
        const code = await storageErrorCode(
          s.getList(key, { recursive: true, predicate: everything, limit: 1, continue: p1.continue, resourceVersion: p1.resourceVersion }),
        );
        assert.ok(code === 'InvalidContinue' || code === 'InvalidResourceVersion', code);
      });

      test('resourceVersion far in the future: TooLargeResourceVersion', async () => {
        const n = ns('future');
        await create(n, 'a');
        const future = String((await s.currentResourceVersion()) + 1_000_000);
        assert.equal(await storageErrorCode(s.get(podKey(n, 'a'), { resourceVersion: future })), 'TooLargeResourceVersion');
        assert.equal(
          await storageErrorCode(s.getList(`/pods/${n}/`, { recursive: true, predicate: everything, resourceVersion: future })),
          'TooLargeResourceVersion',
        );
        assert.equal(
          await storageErrorCode(
            s.getList(`/pods/${n}/`, {
              recursive: true,
              predicate: everything,
              resourceVersion: future,
              resourceVersionMatch: 'NotOlderThan',
            }),
          ),
          'TooLargeResourceVersion',
        );
      });

      test('after compaction: continue token -> ContinueExpired, Exact list -> ResourceVersionTooOld', async () => {
        const n = ns('compacted');
        const a = await create(n, 'a');
        await create(n, 'b');
        const key = `/pods/${n}/`;
        const p1 = await s.getList(key, { recursive: true, predicate: everything, limit: 1 });
        assert.notEqual(p1.continue, '');
        await compactNow();
        const err = await s.getList(key, { recursive: true, predicate: everything, limit: 1, continue: p1.continue }).then(
          () => undefined,
          (e: unknown) => e,
        );
        assert.ok(isStorageError(err, 'ContinueExpired'), String(err));
        assert.equal(
          await storageErrorCode(
            s.getList(key, {
              recursive: true,
              predicate: everything,
              resourceVersion: a.metadata.resourceVersion,
              resourceVersionMatch: 'Exact',
            }),
          ),
          'ResourceVersionTooOld',
        );
        // a fresh list works
        const fresh = await s.getList(key, { recursive: true, predicate: everything });
        assert.deepEqual(names(fresh.items), ['a', 'b']);
      });
    });

    describe('watch', () => {
      test('from a resourceVersion: only later changes, no initial events', async () => {
        const n = ns('watch-from');
        const a = await create(n, 'a');
        const w = await watch(`/pods/${n}/`, { resourceVersion: a.metadata.resourceVersion });
        const a2 = await s.guaranteedUpdate(podKey(n, 'a'), (cur) => ({ ...cur!, spec: { v: 2 } }));
        const b = await create(n, 'b');
        await s.delete(podKey(n, 'a'));
        const deletedAt = await s.currentResourceVersion();
        const [e1, e2, e3] = await w.changes(3);
        assert.equal(describeEvent(e1!), `MODIFIED a@${a2.metadata.resourceVersion}`);
        assert.deepEqual(e1!.object.spec, { v: 2 });
        assert.equal(describeEvent(e2!), `ADDED b@${b.metadata.resourceVersion}`);
        // DELETED carries the last state, at the deletion revision
        assert.equal(describeEvent(e3!), `DELETED a@${deletedAt}`);
        assert.deepEqual(e3!.object.spec, { v: 2 });
      });

      test('from a resourceVersion in the past replays what happened since', async () => {
        const n = ns('watch-replay');
        const a = await create(n, 'a');
        const b = await create(n, 'b');
        const a2 = await s.guaranteedUpdate(podKey(n, 'a'), (cur) => ({ ...cur!, spec: { v: 2 } }));
        const w = await watch(`/pods/${n}/`, { resourceVersion: a.metadata.resourceVersion });
        const events = await w.changes(2);
        assert.deepEqual(events.map(describeEvent), [`ADDED b@${b.metadata.resourceVersion}`, `MODIFIED a@${a2.metadata.resourceVersion}`]);
      });

      test('from a resourceVersion in the future: nothing until it is passed', async () => {
        const n = ns('watch-future');
        const now = await s.currentResourceVersion();
        const w = await watch(`/pods/${n}/`, { resourceVersion: String(now + 2) });
        await create(n, 'x1'); // at now + 1
        await create(n, 'x2'); // at now + 2: not after the watch's revision
        const x3 = await create(n, 'x3');
        assert.equal(describeEvent(await w.change()), `ADDED x3@${x3.metadata.resourceVersion}`);
      });

      test('resourceVersion unset: initial ADDED events at a consistent read, then changes', async () => {
        const n = ns('watch-unset');
        await create(n, 'a');
        await create(n, 'b');
        const w = await watch(`/pods/${n}/`);
        const initial = await w.changes(2);
        assert.deepEqual(
          initial.map((e) => e.type),
          ['ADDED', 'ADDED'],
        );
        assert.deepEqual(names(initial.map((e) => e.object)).sort(), ['a', 'b']);
        const c = await create(n, 'c');
        assert.equal(describeEvent(await w.change()), `ADDED c@${c.metadata.resourceVersion}`);
      });

      test('resourceVersion 0: initial ADDED events first', async () => {
        const n = ns('watch-zero');
        await create(n, 'a');
        await create(n, 'b');
        await s.get(podKey(n, 'b')); // a consistent read, so that any cache has both
        const w = await watch(`/pods/${n}/`, { resourceVersion: '0' });
        const initial = await w.changes(2);
        assert.deepEqual(
          initial.map((e) => e.type),
          ['ADDED', 'ADDED'],
        );
        assert.deepEqual(names(initial.map((e) => e.object)).sort(), ['a', 'b']);
        const c = await create(n, 'c');
        assert.equal(describeEvent(await w.change()), `ADDED c@${c.metadata.resourceVersion}`);
      });

      test('sendInitialEvents=false with resourceVersion unset: only new changes', async () => {
        const n = ns('watch-no-initial');
        await create(n, 'a');
        const w = await watch(`/pods/${n}/`, { sendInitialEvents: false });
        const b = await create(n, 'b');
        assert.equal(describeEvent(await w.change()), `ADDED b@${b.metadata.resourceVersion}`);
      });

      for (const rv of ['', '0', 'first-write']) {
        test(`sendInitialEvents + allowWatchBookmarks (resourceVersion ${JSON.stringify(rv)}): ADDED..., then the initial-events-end BOOKMARK`, async () => {
          const n = ns('watch-list');
          const a = await create(n, 'a');
          const b = await create(n, 'b');
          await s.get(podKey(n, 'b')); // a consistent read: even a resourceVersion=0 watch knows b
          const resourceVersion = rv === 'first-write' ? a.metadata.resourceVersion : rv;
          const w = await watch(`/pods/${n}/`, {
            resourceVersion,
            sendInitialEvents: true,
            allowWatchBookmarks: true,
          });
          const initial = await w.changes(2, 'initial events');
          assert.deepEqual(
            initial.map((e) => e.type),
            ['ADDED', 'ADDED'],
          );
          assert.deepEqual(names(initial.map((e) => e.object)).sort(), ['a', 'b']);
          const bookmark = await w.event('the initial-events-end bookmark');
          assert.equal(bookmark.type, 'BOOKMARK');
          assert.equal(bookmark.object.metadata.annotations?.[INITIAL_EVENTS_END], 'true');
          const syncedRv = rvOf(bookmark.object);
          if (rv !== '0') assert.ok(syncedRv >= rvOf(b), `bookmark ${syncedRv} before the last write ${rvOf(b)}`);
          const c = await create(n, 'c');
          const e = await w.change();
          assert.equal(describeEvent(e), `ADDED c@${c.metadata.resourceVersion}`);
          assert.ok(rvOf(c) > syncedRv);
        });
      }

      test('sendInitialEvents sees a write made directly through etcd just before', async () => {
        const n = ns('watch-list-direct');
        const put = await ctx.etcd.put(etcdKey(podKey(n, 'direct')), Buffer.from(JSON.stringify(makePod(n, 'direct'))));
        const w = await watch(`/pods/${n}/`, { sendInitialEvents: true, allowWatchBookmarks: true });
        const e = await w.change();
        assert.equal(describeEvent(e), `ADDED direct@${put.header.revision}`);
        const bookmark = await w.event();
        assert.equal(bookmark.type, 'BOOKMARK');
        assert.ok(rvOf(bookmark.object) >= put.header.revision);
      });

      test('predicate transitions: entering is ADDED, leaving is DELETED', async () => {
        const n = ns('watch-pred');
        const start = await create(n, 'start');
        const w = await watch(`/pods/${n}/`, { resourceVersion: start.metadata.resourceVersion, predicate: labelPredicate({ app: 'a' }) });
        const key = podKey(n, 'x');
        await s.create(key, makePod(n, 'x', { app: 'b' }));
        const entered = await s.guaranteedUpdate(key, (cur) => ({
          ...cur!,
          metadata: { ...cur!.metadata, labels: { app: 'a' } },
          spec: { v: 'in' },
        }));
        const left = await s.guaranteedUpdate(key, (cur) => ({
          ...cur!,
          metadata: { ...cur!.metadata, labels: { app: 'b' } },
          spec: { v: 'out' },
        }));
        await s.delete(key); // not matching before or after: no event
        const marker = await create(n, 'marker', { app: 'a' });
        const [e1, e2, e3] = await w.changes(3);
        assert.equal(describeEvent(e1!), `ADDED x@${entered.metadata.resourceVersion}`);
        assert.equal(describeEvent(e2!), `DELETED x@${left.metadata.resourceVersion}`);
        // the DELETED of a transition carries the last state that matched
        assert.deepEqual(e2!.object.metadata.labels, { app: 'a' });
        assert.deepEqual(e2!.object.spec, { v: 'in' });
        assert.equal(describeEvent(e3!), `ADDED marker@${marker.metadata.resourceVersion}`);
      });

      test('a single-key watch sees only that key', async () => {
        const n = ns('watch-one');
        const start = await create(n, 'a');
        const w = await watch(podKey(n, 'a'), { recursive: false, resourceVersion: start.metadata.resourceVersion });
        await create(n, 'ab');
        await create(n, 'b');
        const a2 = await s.guaranteedUpdate(podKey(n, 'a'), (cur) => ({ ...cur!, spec: { v: 2 } }));
        assert.equal(describeEvent(await w.change()), `MODIFIED a@${a2.metadata.resourceVersion}`);
      });

      test('a namespace watch does not see a sibling namespace with the same name prefix', async () => {
        const n = ns('watch-ns');
        const start = await create(n, 'a');
        const w = await watch(`/pods/${n}`, { resourceVersion: start.metadata.resourceVersion });
        await create(`${n}0`, 'a');
        const b = await create(n, 'b');
        assert.equal(describeEvent(await w.change()), `ADDED b@${b.metadata.resourceVersion}`);
      });

      test('stop() ends the iteration', async () => {
        const n = ns('watch-stop');
        const w = await watch(`/pods/${n}/`, { resourceVersion: String(await s.currentResourceVersion()) });
        w.stop();
        assert.equal(await w.next(), END);
      });

      test('a watch from a compacted resourceVersion: one ERROR event (410 Expired), then the end', async () => {
        const n = ns('watch-compacted');
        const a = await create(n, 'a');
        await create(n, 'b');
        const compactedAt = await compactNow();
        const fresh = ctx.reopen ? await ctx.reopen() : s;
        const w = await watch(`/pods/${n}/`, { resourceVersion: a.metadata.resourceVersion }, fresh);
        const e = await w.event();
        assert.equal(e.type, 'ERROR');
        const status = e.object as unknown as Record<string, unknown>;
        assert.equal(status.kind, 'Status');
        assert.equal(status.apiVersion, 'v1');
        assert.equal(status.status, 'Failure');
        assert.equal(status.reason, 'Expired');
        assert.equal(status.code, 410);
        assert.match(String(status.message), /^too old resource version: /);
        assert.ok(compactedAt > rvOf(a));
        assert.equal(await w.next(), END);
      });

      test('events of many writes arrive in order, each once', async () => {
        const n = ns('watch-order');
        const start = await s.currentResourceVersion();
        const w = await watch(`/pods/${n}/`, { resourceVersion: String(start) });
        const expected: string[] = [];
        const writes = [];
        for (let i = 0; i < 30; i++) writes.push(create(n, `p${i}`));
        const objs = await Promise.all(writes);
        for (const o of objs.sort((x, y) => rvOf(x) - rvOf(y))) expected.push(`ADDED ${o.metadata.name}@${o.metadata.resourceVersion}`);
        const got: WatchEvent[] = await w.changes(30);
        assert.deepEqual(got.map(describeEvent), expected);
      });
    });

    describe('consistency with other writers', () => {
      test('consistent get and list see a write made directly through etcd just before', async () => {
        const n = ns('direct');
        for (let i = 0; i < 5; i++) {
          const key = podKey(n, `d${i}`);
          const put = await ctx.etcd.put(etcdKey(key), Buffer.from(JSON.stringify(makePod(n, `d${i}`, { round: String(i) }))));
          const got = await s.get(key);
          assert.equal(rvOf(got), put.header.revision);
          const list = await s.getList(`/pods/${n}/`, { recursive: true, predicate: everything });
          assert.equal(list.items.length, i + 1);
          assert.ok(Number(list.resourceVersion) >= put.header.revision);
        }
        const del = await ctx.etcd.deleteRange(etcdKey(podKey(n, 'd0')));
        assert.equal(del.deleted, 1);
        assert.equal(await s.get(podKey(n, 'd0'), { ignoreNotFound: true }), null);
        const list = await s.getList(`/pods/${n}/`, { recursive: true, predicate: everything });
        assert.deepEqual(names(list.items), ['d1', 'd2', 'd3', 'd4']);
      });

      test('a write outside the storage prefix does not stall consistent reads', async () => {
        const n = ns('outside');
        await create(n, 'a');
        const put = await ctx.etcd.put(Buffer.from(`/kapi-conformance-outside/${n}`), Buffer.from('x'));
        const list = await s.getList(`/pods/${n}/`, { recursive: true, predicate: everything });
        assert.deepEqual(names(list.items), ['a']);
        assert.ok(Number(list.resourceVersion) >= put.header.revision);
        await ctx.etcd.deleteRange(Buffer.from(`/kapi-conformance-outside/${n}`));
      });
    });
  });
}
