import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { everything, type MetadataOnly, type SelectionPredicate, type WatchEvent } from '../interface.js';
import { isStorageError } from '../errors.js';
import { DecodedEvent } from './decoded-event.js';
import { EventHistory, type CacheEvent } from './history.js';
import { SortedKeys, prefixEnd } from './sorted-keys.js';
import { CacheWatcher } from './watcher.js';
import { ResourceCache } from './resource-cache.js';
import { parseResourceVersion, shouldDelegateList } from './cacher.js';
import { decodeEntry, decodeEntryMetadata, storedEntry, type StoredEntry } from './entry.js';

const entry = (key: string, rev: number, labels: Record<string, string> = {}): StoredEntry =>
  storedEntry(key, JSON.stringify({ kind: 'Pod', metadata: { name: key.split('/').pop(), labels }, spec: { rev } }), rev);
const event = (revision: number, key: string, cur?: StoredEntry, prev?: StoredEntry, recordedAt = 0): CacheEvent => ({
  revision,
  key,
  cur,
  prev,
  recordedAt,
});
const app = (v: string): SelectionPredicate => ({ isEverything: false, matches: (o) => o.metadata.labels?.app === v });

describe('SortedKeys', () => {
  test('keeps keys ordered and answers prefix ranges', () => {
    const k = new SortedKeys();
    for (const key of ['/pods/b/x', '/pods/a/y', '/pods/a/x', '/pods/ab/z', '/pods/a/x']) k.add(key);
    assert.equal(k.size, 4);
    assert.deepEqual(k.range('/pods/a/'), ['/pods/a/x', '/pods/a/y']);
    assert.deepEqual(k.range('/pods/'), ['/pods/a/x', '/pods/a/y', '/pods/ab/z', '/pods/b/x']);
    assert.deepEqual(k.range('/pods/', '/pods/ab/z'), ['/pods/ab/z', '/pods/b/x']);
    assert.equal(k.countPrefix('/pods/a/'), 2);
    k.delete('/pods/a/x');
    k.delete('/pods/none');
    assert.deepEqual(k.range('/pods/a/'), ['/pods/a/y']);
    assert.equal(prefixEnd('/pods/'), '/pods0');
  });

  test('agrees with one sorted array through many adds and deletes across blocks', () => {
    const k = new SortedKeys();
    const reference = new Set<string>();
    // a small deterministic generator: the same keys on every run
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
    const keyOf = () => `/pods/ns${next() % 7}/p${next() % 3000}`;
    for (let step = 0; step < 12000; step++) {
      const key = keyOf();
      if (next() % 4 === 0) {
        k.delete(key);
        reference.delete(key);
      } else {
        k.add(key);
        reference.add(key);
      }
      if (step % 1000 !== 999) continue;
      const sorted = [...reference].sort();
      assert.equal(k.size, sorted.length);
      assert.deepEqual(k.range('/pods/'), sorted);
      for (const ns of ['/pods/ns0/', '/pods/ns3/', '/pods/ns6/', '/pods/nsx/']) {
        const inNs = sorted.filter((s) => s.startsWith(ns));
        assert.deepEqual(k.range(ns), inNs);
        assert.equal(k.countPrefix(ns), inNs.length);
        const start = `${ns}p2`;
        const fromStart = inNs.filter((s) => s >= start);
        assert.deepEqual(k.range(ns, start, 700), fromStart.slice(0, 700));
        assert.equal(k.countRange(ns, start), fromStart.length);
      }
    }
    for (const key of [...reference]) k.delete(key);
    assert.equal(k.size, 0);
    assert.deepEqual(k.range(''), []);
  });
});

describe('EventHistory', () => {
  test('replays events after a revision, and forgets by count and by age', () => {
    const h = new EventHistory(10, 3, 1000);
    h.push(event(11, '/a', entry('/a', 11), undefined, 100));
    h.push(event(12, '/b', entry('/b', 12), undefined, 200));
    assert.deepEqual(
      h.since(10)?.map((e) => e.revision),
      [11, 12],
    );
    assert.deepEqual(
      h.since(11)?.map((e) => e.revision),
      [12],
    );
    assert.deepEqual(h.since(50), []);
    assert.equal(h.since(9), undefined);
    h.push(event(13, '/c', entry('/c', 13), undefined, 300));
    h.push(event(14, '/d', entry('/d', 14), undefined, 400));
    // the fourth event pushed out the first: revision 10 is no longer replayable
    assert.equal(h.startRevision, 11);
    assert.equal(h.since(10), undefined);
    assert.deepEqual(
      h.since(11)?.map((e) => e.revision),
      [12, 13, 14],
    );
    h.push(event(15, '/e', entry('/e', 15), undefined, 1350));
    // older than 1350 - 1000 = 350: 12 and 13 are gone
    assert.equal(h.startRevision, 13);
    assert.deepEqual(
      h.since(13)?.map((e) => e.revision),
      [14, 15],
    );
    h.reset(20);
    assert.equal(h.since(15), undefined);
    assert.deepEqual(h.since(20), []);
  });
});

describe('DecodedEvent', () => {
  test('decodes once, shares frozen objects, and turns predicate transitions into ADDED/DELETED', () => {
    const prev = entry('/pods/ns/x', 5, { app: 'a' });
    const cur = entry('/pods/ns/x', 7, { app: 'b' });
    const d = new DecodedEvent(event(7, prev.key, cur, prev));
    const all1 = d.forPredicate(everything)!;
    const all2 = d.forPredicate(everything)!;
    assert.equal(all1.type, 'MODIFIED');
    assert.equal(all1, all2);
    assert.ok(Object.isFrozen(all1.object) && Object.isFrozen(all1.object.metadata));
    assert.equal(all1.object.metadata.resourceVersion, '7');
    const leaving = d.forPredicate(app('a'))!;
    assert.equal(leaving.type, 'DELETED');
    assert.deepEqual(leaving.object.metadata.labels, { app: 'a' });
    assert.equal(leaving.object.metadata.resourceVersion, '7');
    assert.equal(d.forPredicate(app('b'))!.type, 'ADDED');
    assert.equal(d.forPredicate(app('c')), undefined);
    const del = new DecodedEvent(event(9, prev.key, undefined, cur)).forPredicate(everything)!;
    assert.equal(del.type, 'DELETED');
    assert.equal(del.object.metadata.resourceVersion, '9');
    assert.deepEqual(del.object.spec, { rev: 7 });
  });

  test('a predicate that rules the key out is answered without decoding the object', () => {
    const broken = storedEntry('/configmaps/ns/other', '{"not json', 7);
    const byName = (name: string): SelectionPredicate => ({
      isEverything: false,
      matches: (obj) => obj.metadata.name === name,
      keyMayMatch: (key) => key.endsWith(`/${name}`),
    });
    const d = new DecodedEvent(event(7, broken.key, broken, undefined));
    assert.equal(d.forPredicate(byName('wanted')), undefined);
    // a key that may match is decoded (and this one does not decode)
    assert.throws(() => d.forPredicate(byName('other')));
  });
});

describe('metadata-only events', () => {
  const text = (obj: object) => JSON.stringify(obj);
  test('a reader of metadata gets kind, apiVersion and metadata parsed from the start of the text', () => {
    const stored = storedEntry(
      '/configmaps/ns/m',
      text({
        kind: 'ConfigMap',
        apiVersion: 'v1',
        metadata: { name: 'm', namespace: 'ns', annotations: { 'a}"{': 'x\\"}{[' }, ownerReferences: [{ uid: 'u', name: 'o' }] },
        data: { big: 'y'.repeat(5000) },
      }),
      11,
    );
    const meta = decodeEntryMetadata(stored);
    assert.deepEqual(meta, {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: {
        name: 'm',
        namespace: 'ns',
        resourceVersion: '11',
        annotations: { 'a}"{': 'x\\"}{[' },
        ownerReferences: [{ uid: 'u', name: 'o' }],
      },
    });
    // texts written another way are decoded whole and cut down
    for (const other of [
      text({ data: { a: 1 }, metadata: { name: 'late' }, kind: 'X', apiVersion: 'v1' }),
      text({ kind: 'X', metadata: 'not an object' }),
      text({ kind: 'X', apiVersion: 'v1', spec: {} }),
    ]) {
      const e = storedEntry('/x/ns/late', other, 4);
      const whole = decodeEntry(e);
      assert.deepEqual(decodeEntryMetadata(e), {
        ...(whole.kind ? { kind: whole.kind } : {}),
        ...(whole.apiVersion ? { apiVersion: whole.apiVersion } : {}),
        metadata: whole.metadata,
      });
    }
  });

  test('a reader of metadata gets it without managedFields, wherever that member is', () => {
    const managedFields = [{ manager: 'm', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { '.': {}, 'f:x': {} } } }];
    const rest = { generation: 3, finalizers: ['a', 'b]'], deletionGracePeriodSeconds: 0, labels: { l: '}' } };
    const orders: Record<string, unknown>[] = [
      { name: 'n', ...rest, managedFields },
      { managedFields, name: 'n', ...rest },
      { name: 'n', managedFields, ...rest },
      { managedFields },
      { name: 'n', ...rest },
    ];
    for (const metadata of orders) {
      const e = storedEntry('/x/ns/n', text({ kind: 'X', apiVersion: 'v1', metadata, spec: { managedFields: 'kept' } }), 9);
      const expected: Record<string, unknown> = { ...metadata, resourceVersion: '9' };
      delete expected.managedFields;
      const got = decodeEntryMetadata(e);
      assert.deepEqual(Object.keys(got), ['kind', 'apiVersion', 'metadata']);
      assert.deepEqual({ ...got.metadata }, expected, JSON.stringify(metadata));
    }
  });

  test('DecodedEvent: metadata-only events are shared, frozen, and cut from the whole object once it is decoded', () => {
    const prev = entry('/pods/ns/x', 5, { app: 'a' });
    const cur = entry('/pods/ns/x', 7, { app: 'b' });
    const onlyMeta = new DecodedEvent(event(7, prev.key, cur, prev));
    const m1 = onlyMeta.forPredicate(everything, true)!;
    assert.equal(m1, onlyMeta.forPredicate(everything, true));
    assert.equal(m1.type, 'MODIFIED');
    assert.deepEqual(m1.object, { kind: 'Pod', metadata: { name: 'x', labels: { app: 'b' }, resourceVersion: '7' } });
    assert.ok(Object.isFrozen(m1.object) && Object.isFrozen(m1.object.metadata));
    // the whole object is still there for other watchers
    assert.deepEqual(onlyMeta.forPredicate(everything)!.object.spec, { rev: 7 });

    const wholeFirst = new DecodedEvent(event(7, prev.key, cur, prev));
    const whole = wholeFirst.forPredicate(everything)!;
    const cut = wholeFirst.forPredicate(everything, true)!;
    assert.equal(cut.object.metadata, whole.object.metadata);
    assert.equal(cut.object.spec, undefined);
    // a selector is matched against the whole object; a deletion carries the last state
    const leaving = wholeFirst.forPredicate(app('a'), true)!;
    assert.equal(leaving.type, 'DELETED');
    assert.deepEqual(leaving.object.metadata.labels, { app: 'a' });
    assert.equal(leaving.object.metadata.resourceVersion, '7');
    const del = new DecodedEvent(event(9, prev.key, undefined, cur)).forPredicate(everything, true)!;
    assert.equal(del.type, 'DELETED');
    assert.equal(del.object.metadata.resourceVersion, '9');
    assert.equal(del.object.spec, undefined);
  });
});

describe('metadata-only by key', () => {
  const next = async (w: CacheWatcher) => (await w[Symbol.asyncIterator]().next()).value as WatchEvent;
  /** a watcher of every pod added to `cache` */
  const watcherOf = (cache: ResourceCache, metadataOnly: MetadataOnly): CacheWatcher => {
    const w = new CacheWatcher({
      key: '/pods/',
      recursive: true,
      predicate: everything,
      allowBookmarks: false,
      startRevision: 1,
      queueLimit: 10,
      metadataOnly,
    });
    cache.addWatcher(w);
    return w;
  };

  test('a watcher gets metadata alone for the keys it says so of, whole objects for the others, from one shared decode', async () => {
    const cache = new ResourceCache('/pods/', 1, { maxHistoryEvents: 100, historyWindowMs: 60_000 });
    const watcher = (metadataOnly: MetadataOnly) => watcherOf(cache, metadataOnly);
    const asked: string[] = [];
    // added first: delivered first, but for a key it reads as metadata it must wait for the
    // whole object the next watcher needs and get its metadata cut from it
    const perKey = watcher((key) => {
      asked.push(key);
      return !key.startsWith('/pods/whole/');
    });
    const whole = watcher(false);
    const throws = watcher(() => {
      throw new Error('no answer');
    });
    cache.apply('/pods/whole/a', entry('/pods/whole/a', 2), 2, 0);
    cache.apply('/pods/slim/b', entry('/pods/slim/b', 3), 3, 0);
    assert.deepEqual(asked, ['/pods/whole/a', '/pods/slim/b']);

    const [wa, wb] = [await next(whole), await next(whole)];
    const [pa, pb] = [await next(perKey), await next(perKey)];
    assert.deepEqual(wa.object.spec, { rev: 2 });
    assert.equal(pa, wa, 'a key it wants whole: the very event the whole-object watcher gets');
    assert.equal(pb.type, 'ADDED');
    assert.equal(pb.object.spec, undefined);
    assert.equal(pb.object.metadata.name, 'b');
    assert.equal(pb.object.metadata.resourceVersion, '3');
    assert.equal(pb.object.metadata, wb.object.metadata, 'cut from the whole object decoded for the other watcher');
    // a function that cannot answer gets whole objects
    assert.equal(await next(throws), wa);
    assert.equal(await next(throws), wb);
    for (const w of [perKey, whole, throws]) w.stop();
  });

  test('with no watcher wanting the object whole, a key read as metadata is not decoded whole', async () => {
    const cache = new ResourceCache('/pods/', 1, { maxHistoryEvents: 100, historyWindowMs: 60_000 });
    const w = watcherOf(cache, (key) => key.startsWith('/pods/slim/'));
    // a text whose body would not parse: only its head up to the end of the metadata is read
    const head = JSON.stringify({ kind: 'Pod', metadata: { name: 'b' } }).slice(0, -1);
    cache.apply('/pods/slim/b', storedEntry('/pods/slim/b', `${head},"spec":{"broken":}`, 2), 2, 0);
    cache.apply('/pods/whole/a', entry('/pods/whole/a', 3), 3, 0);
    const b = await next(w);
    assert.deepEqual(b.object, { kind: 'Pod', metadata: { name: 'b', resourceVersion: '2' } });
    assert.deepEqual((await next(w)).object.spec, { rev: 3 });
    w.stop();
  });
});

describe('CacheWatcher', () => {
  const ev = (n: number): WatchEvent => ({ type: 'ADDED', object: { metadata: { name: `o${n}`, resourceVersion: String(n) } } });
  test('delivers the backlog first, then queued events; ends after a full queue is drained', async () => {
    const w = new CacheWatcher({
      key: '/pods/',
      recursive: true,
      predicate: everything,
      allowBookmarks: false,
      startRevision: 10,
      queueLimit: 2,
      backlog: [ev(1), ev(2)][Symbol.iterator](),
    });
    let detached = false;
    w.onDetach = () => {
      detached = true;
    };
    assert.equal(w.push(ev(11), 11), true);
    assert.equal(w.push(ev(12), 12), true);
    assert.equal(w.push(ev(13), 13), false);
    assert.equal(detached, true);
    const got: string[] = [];
    for await (const e of w) got.push(e.object.metadata.name!);
    assert.deepEqual(got, ['o1', 'o2', 'o11', 'o12']);
  });

  test('a waiting reader gets a pushed event; stop() ends a pending read', async () => {
    const w = new CacheWatcher({
      key: '/pods/a',
      recursive: false,
      predicate: everything,
      allowBookmarks: true,
      startRevision: 0,
      queueLimit: 10,
    });
    const it = w[Symbol.asyncIterator]();
    const pending = it.next();
    w.pushBookmark(5, true);
    const first = await pending;
    assert.equal(first.done, false);
    assert.equal(first.value.type, 'BOOKMARK');
    assert.deepEqual(first.value.object.metadata, { resourceVersion: '5', annotations: { 'k8s.io/initial-events-end': 'true' } });
    const next = it.next();
    w.stop();
    assert.equal((await next).done, true);
    assert.equal(w.coversKey('/pods/a'), true);
    assert.equal(w.coversKey('/pods/ab'), false);
  });
});

describe('stored entries', () => {
  test('keep a copy of the stored bytes, not the message they came in, and give the text back', () => {
    const message = Buffer.from('xx{"kind":"Pod","metadata":{"name":"é"}}yy');
    const json = message.subarray(2, message.length - 2);
    const e = storedEntry('/pods/ns/a', json, 7);
    message.fill(0);
    assert.equal(e.data, '{"kind":"Pod","metadata":{"name":"é"}}');
    assert.equal(e.size, Buffer.byteLength(e.data));
    assert.deepEqual(decodeEntry(e).metadata, { name: 'é', resourceVersion: '7' });
    assert.equal(storedEntry('/pods/ns/a', e.data, 7).size, e.size);
  });
});

describe('request decisions', () => {
  test('shouldDelegateList: exact reads and continuations go to etcd', () => {
    const base = { recursive: true, predicate: everything };
    assert.equal(shouldDelegateList({ ...base }), false);
    assert.equal(shouldDelegateList({ ...base, resourceVersion: '0' }), false);
    assert.equal(shouldDelegateList({ ...base, resourceVersion: '5' }), false);
    assert.equal(shouldDelegateList({ ...base, limit: 5 }), false);
    assert.equal(shouldDelegateList({ ...base, resourceVersion: '0', limit: 5 }), false);
    assert.equal(shouldDelegateList({ ...base, resourceVersion: '5', limit: 5 }), true);
    assert.equal(shouldDelegateList({ ...base, resourceVersion: '5', limit: 5, resourceVersionMatch: 'NotOlderThan' }), false);
    assert.equal(shouldDelegateList({ ...base, resourceVersion: '5', resourceVersionMatch: 'Exact' }), true);
    assert.equal(shouldDelegateList({ ...base, limit: 5, continue: 'x' }), true);
  });

  test('parseResourceVersion', () => {
    assert.equal(parseResourceVersion(undefined, '/k'), undefined);
    assert.equal(parseResourceVersion('', '/k'), undefined);
    assert.equal(parseResourceVersion('0', '/k'), 0);
    assert.equal(parseResourceVersion('42', '/k'), 42);
    assert.throws(
      () => parseResourceVersion('x1', '/k'),
      (e: unknown) => isStorageError(e, 'InvalidResourceVersion'),
    );
    assert.throws(
      () => parseResourceVersion('-1', '/k'),
      (e: unknown) => isStorageError(e, 'InvalidResourceVersion'),
    );
  });
});
