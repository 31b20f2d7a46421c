import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import protobuf from 'protobufjs';
import descriptor from './generated/etcd-proto.json' with { type: 'json' };
import { rpc, rpcs } from './proto.js';
import { Uint64 } from './wire.js';

const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
const b = (s: string) => Buffer.from(s);

/** a decoded message as plain data: ints as decimal strings, bytes as base64, absent
 *  (null) fields left out; protobufjs's messages are first made plain by its toObject */
function normal(v: unknown): unknown {
  if (typeof v === 'number') return String(v);
  if (v instanceof Uint64) return v.toString();
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (Array.isArray(v)) return v.map(normal);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(v)) if (value !== null && value !== undefined) out[key] = normal(value);
    return out;
  }
  return v;
}

function plain(type: protobuf.Type, bytes: Buffer): unknown {
  return normal(type.toObject(type.decode(bytes), { defaults: true, longs: String, bytes: String, arrays: true }));
}

describe('hand-written etcd codecs', () => {
  it('write requests byte for byte as protobufjs does', () => {
    const cases: Array<[keyof typeof rpcs, string, string, object]> = [
      [
        'range',
        'KV',
        'Range',
        { key: b('/registry/pods/'), rangeEnd: b('/registry/pods0'), limit: 500, revision: 123456789, keysOnly: true },
      ],
      ['range', 'KV', 'Range', { key: b('/a'), serializable: true, countOnly: true, sortOrder: 1, sortTarget: 2, minModRevision: 3 }],
      ['put', 'KV', 'Put', { key: b('/k'), value: Buffer.alloc(3000, 7), lease: 2 ** 40 + 5, prevKv: true }],
      ['deleteRange', 'KV', 'DeleteRange', { key: b('/k'), rangeEnd: b('/l'), prevKv: true }],
      [
        'txn',
        'KV',
        'Txn',
        {
          compare: [
            { result: 0, target: 2, key: b('/registry/configmaps/ns/a'), modRevision: 0 },
            { result: 0, target: 3, key: b('/x'), value: b('{"a":1}') },
            { result: 2, target: 0, key: b('/y'), version: 300, rangeEnd: b('/z') },
          ],
          success: [
            { requestPut: { key: b('/registry/configmaps/ns/a'), value: Buffer.alloc(200_000, 1) } },
            { requestRange: { key: b('/q') } },
          ],
          failure: [
            { requestRange: { key: b('/registry/configmaps/ns/a') } },
            { requestDeleteRange: { key: b('/d') } },
            { requestTxn: { compare: [], success: [{ requestPut: { key: b('/n'), value: b('v') } }], failure: [] } },
          ],
        },
      ],
      ['txn', 'KV', 'Txn', { compare: [], success: [], failure: [] }],
    ];
    for (const [name, service, method, message] of cases) {
      assert.deepEqual(
        rpcs[name].serialize(message),
        rpc(service, method).serialize(message),
        `${name} ${JSON.stringify(Object.keys(message))}`,
      );
    }
  });

  it('read responses as protobufjs does, ids past 2^53 exactly', () => {
    const header = { clusterId: '18446744073709551557', memberId: '9007199254740993', revision: 987654321, raftTerm: 7 };
    const kv = (key: string, value: Buffer, rev: number) => ({
      key: b(key),
      value,
      createRevision: rev - 2,
      modRevision: rev,
      version: 3,
      lease: 0,
    });
    const cases: Array<[keyof typeof rpcs, string, object]> = [
      [
        'range',
        'etcdserverpb.RangeResponse',
        { header, kvs: [kv('/a', b('{}'), 10), kv('/b', Buffer.alloc(70_000, 2), 11)], more: true, count: 4 },
      ],
      ['range', 'etcdserverpb.RangeResponse', { header, count: 0 }],
      // int64 fields are signed: a negative one takes ten bytes on the wire
      ['range', 'etcdserverpb.RangeResponse', { header: { ...header, revision: -3 }, count: -1 }],
      ['put', 'etcdserverpb.PutResponse', { header, prevKv: kv('/a', b('old'), 9) }],
      ['deleteRange', 'etcdserverpb.DeleteRangeResponse', { header, deleted: 2, prevKvs: [kv('/a', b('x'), 3), kv('/b', b('y'), 4)] }],
      [
        'txn',
        'etcdserverpb.TxnResponse',
        {
          header,
          succeeded: true,
          responses: [
            { responsePut: { header } },
            { responseRange: { header, kvs: [kv('/r', b('v'), 5)], count: 1 } },
            { responseDeleteRange: { header, deleted: 1 } },
            { responseTxn: { header, succeeded: false, responses: [{ responsePut: { header } }] } },
          ],
        },
      ],
      [
        'watch',
        'etcdserverpb.WatchResponse',
        {
          header,
          watchId: 3,
          created: true,
          fragment: true,
          compactRevision: 44,
          cancelReason: 'gone',
          events: [
            { type: 0, kv: kv('/a', b('{"x":1}'), 20) },
            { type: 1, kv: { key: b('/b'), modRevision: 21 }, prevKv: kv('/b', b('{}'), 19) },
          ],
        },
      ],
    ];
    for (const [name, typeName, message] of cases) {
      const type = root.lookupType(typeName);
      const bytes = Buffer.from(type.encode(type.fromObject(message)).finish());
      // an unknown field on the wire is skipped, as protobufjs skips it
      const withUnknown = Buffer.concat([bytes, Buffer.from([0xf8, 0x07, 0x01, 0xfa, 0x07, 0x02, 0x61, 0x62])]);
      for (const wire of [bytes, withUnknown]) {
        assert.deepEqual(normal(rpcs[name].deserialize(wire)), plain(type, wire), name);
      }
    }
    const h = (
      rpcs.range.deserialize(Buffer.from(root.lookupType('etcdserverpb.RangeResponse').encode({ header }).finish())) as {
        header: { clusterId: unknown };
      }
    ).header;
    assert.equal(String(h.clusterId), '18446744073709551557');
    assert.equal((h.clusterId as Uint64).toString(16), 'ffffffffffffffc5');
  });

  it('refuses truncated messages', () => {
    const type = root.lookupType('etcdserverpb.RangeResponse');
    const bytes = Buffer.from(type.encode(type.fromObject({ kvs: [{ key: b('/a'), value: b('xyz') }] })).finish());
    assert.throws(() => rpcs.range.deserialize(bytes.subarray(0, bytes.length - 2)));
  });
});
