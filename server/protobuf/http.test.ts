import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeObject, decodeWatchEvents } from './codec.js';
import { decodeProtobufBody, kindOf, protobufBody, protobufWatchFrame, servesProtobuf, UnsupportedProtobufKind } from './http.js';

describe('protobuf at the HTTP layer', () => {
  it('objects name their kind; lists, Status and metadata-only forms have protobuf bodies', () => {
    assert.deepEqual(kindOf({ kind: 'Deployment', apiVersion: 'apps/v1' }), { group: 'apps', version: 'v1', kind: 'Deployment' });
    assert.equal(kindOf({ kind: 'Pod' }), undefined);
    assert.equal(servesProtobuf({ group: '', version: 'v1', kind: 'Pod' }), true);
    assert.equal(servesProtobuf({ group: 'stable.example.com', version: 'v1', kind: 'CronTab' }), false);
    const list = protobufBody({
      kind: 'PartialObjectMetadataList',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: '3' },
      items: [{ metadata: { name: 'a' } }],
    });
    assert.ok(list);
    assert.deepEqual(decodeObject(list).object.items, [{ metadata: { name: 'a' } }]);
    assert.equal(protobufBody({ kind: 'CronTab', apiVersion: 'stable.example.com/v1', metadata: {} }), undefined);
    assert.equal(protobufBody({ kind: 'Table', apiVersion: 'meta.k8s.io/v1', rows: [] }), undefined);
    // data that does not fit the message is answered in JSON instead of failing
    assert.equal(protobufBody({ kind: 'Pod', apiVersion: 'v1', metadata: { creationTimestamp: 'yesterday' } }), undefined);
  });

  it('watch frames: bookmarks without kind take the endpoint kind; unencodable objects become ERROR events', () => {
    const frames = Buffer.concat([
      protobufWatchFrame('BOOKMARK', { metadata: { resourceVersion: '7' } }, { group: '', version: 'v1', kind: 'ConfigMap' }),
      protobufWatchFrame('ADDED', { kind: 'CronTab', apiVersion: 'stable.example.com/v1', metadata: {} }),
    ]);
    const { events } = decodeWatchEvents(frames);
    assert.equal(events[0].type, 'BOOKMARK');
    assert.equal(events[0].kind, 'ConfigMap');
    assert.equal(events[1].type, 'ERROR');
    assert.equal(events[1].object.code, 500);
  });

  it('request bodies: custom kinds are UnsupportedProtobufKind, garbage is a ProtobufError', () => {
    const typeMeta = Buffer.concat([
      Buffer.from([0x0a, 20]),
      Buffer.from('stable.example.com/v'),
      Buffer.from([0x12, 7]),
      Buffer.from('CronTab'),
    ]);
    const crd = Buffer.concat([Buffer.from('k8s\0'), Buffer.from([0x0a, typeMeta.length]), typeMeta]);
    assert.throws(() => decodeProtobufBody(crd), UnsupportedProtobufKind);
    assert.throws(
      () => decodeProtobufBody(Buffer.from('{}')),
      (e: Error) => !(e instanceof UnsupportedProtobufKind),
    );
  });
});
