// Watch frames shared between watchers: every stream that receives the same change in the
// same encoding writes the same bytes, encoded once; frames made for one stream (bookmarks,
// Table headers) are never shared; the bytes are those the unshared path writes.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createEtcdClient } from '../../storage/etcd/client.js';
import type { EtcdClient } from '../../storage/etcd/types.js';
import { createEtcd3Store } from '../../storage/etcd3/store.js';
import { createCacheFeed, type CacheFeed } from '../../storage/cacher/index.js';
import type { KubeObject, WatchEvent } from '../../storage/interface.js';
import { startEtcd, type EtcdProcess } from '../../storage/testing/etcd-server.js';
import { loadCatalog } from '../apis/catalog.js';
import { encodeJson } from '../request/encode.js';
import type { OutputMediaType } from '../request/negotiation.js';
import { protobufWatchFrame } from '../protobuf/http.js';
import { createRegistry } from '../registry/registry.js';
import type { RESTResource } from '../registry/rest.js';
import { ctx } from '../registry/testing/harness.js';
import type { Scope } from './scope.js';
import type { TableConvertor } from './table.js';
import { WatchEventEncoder } from './watch.js';

const JSON_MEDIA: OutputMediaType = { format: 'json', contentType: 'application/json', pretty: false };
const PROTOBUF_MEDIA: OutputMediaType = {
  format: 'protobuf',
  contentType: 'application/vnd.kubernetes.protobuf;stream=watch',
  pretty: false,
};
const TABLE_MEDIA: OutputMediaType = {
  format: 'json',
  contentType: 'application/json',
  pretty: false,
  convert: { kind: 'Table', group: 'meta.k8s.io', version: 'v1' },
};
const METADATA_MEDIA: OutputMediaType = {
  format: 'json',
  contentType: 'application/json',
  pretty: false,
  convert: { kind: 'PartialObjectMetadata', group: 'meta.k8s.io', version: 'v1' },
};

const names: TableConvertor = {
  columns: [{ name: 'Name', type: 'string', format: 'name', description: 'the name', priority: 0 }],
  cells: (obj) => [obj.metadata.name],
};

/** the part of a Scope the encoder reads */
const scope = {
  kind: { group: '', version: 'v1', kind: 'ConfigMap' },
  config: { tableConvertorFor: () => names },
} as unknown as Scope;

function configMapEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', name = 'a'): WatchEvent {
  const object: KubeObject = {
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: { name, namespace: 'ns', resourceVersion: '7', annotations: { note: '<&>' } },
    data: { k: 'v' },
  };
  return { type, object };
}

const text = (frame: string | Buffer) => (typeof frame === 'string' ? frame : frame.toString('utf8'));

describe('WatchEventEncoder frames', () => {
  test('one change in JSON: every stream gets the same bytes, encoded once, as the unshared path writes them', () => {
    const event = configMapEvent('MODIFIED');
    const frames = Array.from({ length: 3 }, () => new WatchEventEncoder(scope, JSON_MEDIA, undefined).encode(event));
    assert.ok(Buffer.isBuffer(frames[0]));
    assert.equal(frames[1], frames[0]);
    assert.equal(frames[2], frames[0]);
    assert.equal(text(frames[0]!), encodeJson({ type: 'MODIFIED', object: event.object }));
    assert.match(text(frames[0]!), /\\u003c\\u0026\\u003e/);
  });

  test('protobuf and JSON of one change are kept apart', () => {
    const event = configMapEvent('ADDED');
    const json = new WatchEventEncoder(scope, JSON_MEDIA, undefined).encode(event);
    const pb1 = new WatchEventEncoder(scope, PROTOBUF_MEDIA, undefined).encode(event);
    const pb2 = new WatchEventEncoder(scope, PROTOBUF_MEDIA, undefined).encode(event);
    assert.equal(pb2, pb1);
    assert.notEqual(pb1, json);
    assert.deepEqual(pb1, protobufWatchFrame('ADDED', event.object, scope.kind));
    assert.equal(text(json), encodeJson({ type: 'ADDED', object: event.object }));
  });

  test('different events with one object (ADDED to one watcher, MODIFIED to another) are different frames', () => {
    const modified = configMapEvent('MODIFIED');
    const added: WatchEvent = { type: 'ADDED', object: modified.object };
    const enc = new WatchEventEncoder(scope, JSON_MEDIA, undefined);
    assert.match(text(enc.encode(modified)), /^\{"type":"MODIFIED"/);
    assert.match(text(enc.encode(added)), /^\{"type":"ADDED"/);
  });

  test('PartialObjectMetadata frames are shared among metadata watchers, apart from full objects', () => {
    const event = configMapEvent('MODIFIED');
    const full = new WatchEventEncoder(scope, JSON_MEDIA, undefined).encode(event);
    const meta1 = new WatchEventEncoder(scope, METADATA_MEDIA, undefined).encode(event);
    const meta2 = new WatchEventEncoder(scope, METADATA_MEDIA, undefined).encode(event);
    assert.equal(meta2, meta1);
    assert.match(text(meta1), /"kind":"PartialObjectMetadata"/);
    assert.doesNotMatch(text(meta1), /"data"/);
    assert.match(text(full), /"data"/);
  });

  test('a Table stream keeps its own frames: column headers in its first event only', () => {
    const event = configMapEvent('MODIFIED');
    const opts = { includeObject: 'None' as const, noHeaders: false };
    const first = new WatchEventEncoder(scope, TABLE_MEDIA, opts);
    const second = new WatchEventEncoder(scope, TABLE_MEDIA, opts);
    assert.match(text(first.encode(event)), /"columnDefinitions":\[/);
    assert.match(text(first.encode(event)), /"columnDefinitions":null/);
    assert.match(text(second.encode(event)), /"columnDefinitions":\[/);
  });

  test('a bookmark is encoded for its own stream, never taken from a cache', () => {
    const bookmark: WatchEvent = { type: 'BOOKMARK', object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '5' } } };
    const enc = new WatchEventEncoder(scope, JSON_MEDIA, undefined);
    assert.match(text(enc.encode(bookmark)), /"resourceVersion":"5"/);
    bookmark.object.metadata.resourceVersion = '6';
    assert.match(text(enc.encode(bookmark)), /"resourceVersion":"6"/);
  });
});

describe('watchers of one resource over the watch cache', () => {
  let etcd: EtcdProcess;
  let client: EtcdClient;
  let feed: CacheFeed;
  let configmaps: RESTResource;

  before(async () => {
    etcd = await startEtcd();
    client = createEtcdClient({ endpoints: [etcd.endpoint] });
    const store = createEtcd3Store(client, { prefix: '/registry' });
    feed = createCacheFeed(client, store, { prefix: '/registry' });
    const registry = createRegistry({ resources: loadCatalog().resources(), storageFor: (prefix) => feed.cacherFor(prefix) });
    await feed.ready;
    const found = registry.lookup('', 'v1', 'configmaps');
    assert.ok(found);
    configmaps = found;
    await registry.lookup('', 'v1', 'namespaces')!.create(ctx(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'frames' } });
  });

  after(async () => {
    feed?.close();
    client?.close();
    await etcd?.stop();
  });

  test('receive one event object per change and selection outcome, so its bytes are encoded once', async () => {
    const list = await configmaps.list(ctx('frames'), {});
    const rv = list.metadata.resourceVersion;
    const everything = [
      await configmaps.watch(ctx('frames'), { resourceVersion: rv }),
      await configmaps.watch(ctx('frames'), { resourceVersion: rv }),
    ];
    const selected = await configmaps.watch(ctx('frames'), { resourceVersion: rv, labelSelector: 'keep=yes' });
    const its = [...everything, selected].map((w) => w[Symbol.asyncIterator]());
    try {
      await configmaps.create(ctx('frames'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { keep: 'yes' } } });
      const added = await Promise.all(its.map(async (it) => (await it.next()).value as WatchEvent));
      assert.equal(added[0]!.type, 'ADDED');
      assert.equal(added[1], added[0]);
      assert.equal(added[2], added[0]);
      assert.equal(added[0]!.object.kind, 'ConfigMap');

      // the label goes: a change to two watchers, a deletion to the selecting one
      await configmaps.update(ctx('frames'), 'c', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { keep: 'no' } } }), {
        allowCreate: false,
      });
      const next = await Promise.all(its.map(async (it) => (await it.next()).value as WatchEvent));
      assert.equal(next[0]!.type, 'MODIFIED');
      assert.equal(next[1], next[0]);
      assert.equal(next[2]!.type, 'DELETED');
      assert.notEqual(next[2]!.object, next[0]!.object);
      const frames = next.map((e) => new WatchEventEncoder(scope, JSON_MEDIA, undefined).encode(e));
      assert.equal(frames[1], frames[0]);
      assert.match(text(frames[2]!), /^\{"type":"DELETED","object":\{"kind":"ConfigMap","apiVersion":"v1"/);
    } finally {
      for (const w of [...everything, selected]) w.stop();
    }
  });
});
