// Hand-written codecs for the etcd messages of every read, write and watch event: Range, Put,
// DeleteRange and Txn requests and responses, and WatchResponse. They replace protobufjs's
// reflective codecs on the hot path (a tenth of the etcd client's CPU per write); the other
// RPCs (leases, members, status, compaction, watch requests) keep protobufjs. Requests are
// read in the shapes client.ts builds and written as protobufjs writes them: a proto3 field
// only when it is not its zero value, a member of Compare's target oneof whenever present. Responses decode to the shapes proto.ts declares, with protobufjs's
// defaults for absent fields. Field numbers are those of etcd's rpc.proto and kv.proto.

import type {
  WireDeleteRangeResponse,
  WireEvent,
  WireHeader,
  WireKeyValue,
  WirePutResponse,
  WireRangeResponse,
  WireResponseOp,
  WireTxnResponse,
  WireWatchResponse,
} from './proto.js';
import { WireError, WireReader, WireWriter } from './wire.js';

const VARINT = 0;
const LENGTH = 2;
const EMPTY = Buffer.alloc(0);

type Fields = Record<string, unknown>;

function has(m: Fields, name: string): boolean {
  const v = m[name];
  return v !== undefined && v !== null;
}

/** present and not proto3's zero value (0, false, empty bytes) */
function nonZero(v: unknown): boolean {
  if (v === undefined || v === null || v === 0 || v === false) return false;
  return !(v instanceof Uint8Array) || v.length > 0;
}

function writeBytes(w: WireWriter, field: number, v: unknown): void {
  w.tag(field, LENGTH);
  w.bytes(v as Uint8Array);
}

function writeInt(w: WireWriter, field: number, v: unknown): void {
  w.tag(field, VARINT);
  w.varint(Number(v));
}

function writeBool(w: WireWriter, field: number, v: unknown): void {
  w.tag(field, VARINT);
  w.varint(v ? 1 : 0);
}

/** a field of a request: its name, number, writer, and whether it is written even when zero
 *  (a member of a oneof) */
type Field = readonly [string, number, typeof writeBytes, boolean?];

/** RangeRequest: key 1, range_end 2, limit 3, revision 4, sort_order 5, sort_target 6,
 *  serializable 7, keys_only 8, count_only 9, min/max mod revision 10/11, min/max create
 *  revision 12/13 */
const RANGE_FIELDS: readonly Field[] = [
  ['key', 1, writeBytes],
  ['rangeEnd', 2, writeBytes],
  ['limit', 3, writeInt],
  ['revision', 4, writeInt],
  ['sortOrder', 5, writeInt],
  ['sortTarget', 6, writeInt],
  ['serializable', 7, writeBool],
  ['keysOnly', 8, writeBool],
  ['countOnly', 9, writeBool],
  ['minModRevision', 10, writeInt],
  ['maxModRevision', 11, writeInt],
  ['minCreateRevision', 12, writeInt],
  ['maxCreateRevision', 13, writeInt],
];

/** PutRequest: key 1, value 2, lease 3, prev_kv 4, ignore_value 5, ignore_lease 6 */
const PUT_FIELDS: readonly Field[] = [
  ['key', 1, writeBytes],
  ['value', 2, writeBytes],
  ['lease', 3, writeInt],
  ['prevKv', 4, writeBool],
  ['ignoreValue', 5, writeBool],
  ['ignoreLease', 6, writeBool],
];

/** DeleteRangeRequest: key 1, range_end 2, prev_kv 3 */
const DELETE_FIELDS: readonly Field[] = [
  ['key', 1, writeBytes],
  ['rangeEnd', 2, writeBytes],
  ['prevKv', 3, writeBool],
];

/** Compare: result 1, target 2, key 3, then the target_union: version 4, create_revision 5,
 *  mod_revision 6, value 7, lease 8; range_end 64 */
const COMPARE_FIELDS: readonly Field[] = [
  ['result', 1, writeInt],
  ['target', 2, writeInt],
  ['key', 3, writeBytes],
  ['version', 4, writeInt, true],
  ['createRevision', 5, writeInt, true],
  ['modRevision', 6, writeInt, true],
  ['value', 7, writeBytes, true],
  ['lease', 8, writeInt, true],
  ['rangeEnd', 64, writeBytes],
];

function writeFields(w: WireWriter, m: Fields, fields: readonly Field[]): void {
  for (const [name, field, write, oneof] of fields) {
    const v = m[name];
    if (oneof ? has(m, name) : nonZero(v)) write(w, field, v);
  }
}

function writeMessage(w: WireWriter, field: number, m: Fields, fields: readonly Field[]): void {
  const at = w.begin(field);
  writeFields(w, m, fields);
  w.end(at);
}

/** RequestOp: request_range 1, request_put 2, request_delete_range 3, request_txn 4 */
function writeRequestOp(w: WireWriter, op: Fields): void {
  if (has(op, 'requestRange')) writeMessage(w, 1, op.requestRange as Fields, RANGE_FIELDS);
  if (has(op, 'requestPut')) writeMessage(w, 2, op.requestPut as Fields, PUT_FIELDS);
  if (has(op, 'requestDeleteRange')) writeMessage(w, 3, op.requestDeleteRange as Fields, DELETE_FIELDS);
  if (has(op, 'requestTxn')) {
    const at = w.begin(4);
    writeTxnFields(w, op.requestTxn as Fields);
    w.end(at);
  }
}

/** TxnRequest: compare 1, success 2, failure 3 */
function writeTxnFields(w: WireWriter, m: Fields): void {
  for (const c of (m.compare as Fields[] | undefined) ?? []) writeMessage(w, 1, c, COMPARE_FIELDS);
  for (const [field, name] of [
    [2, 'success'],
    [3, 'failure'],
  ] as const) {
    for (const op of (m[name] as Fields[] | undefined) ?? []) {
      const at = w.begin(field);
      writeRequestOp(w, op);
      w.end(at);
    }
  }
}

/** a request's bytes, in a buffer of their own (the caller keeps them while the call lasts) */
function encoded(write: (w: WireWriter) => void, sizeHint: number): Buffer {
  const w = new WireWriter(sizeHint);
  write(w);
  return w.finish();
}

function payloadSize(m: Fields): number {
  let n = 64;
  for (const v of Object.values(m)) if (v instanceof Uint8Array) n += v.length;
  return n;
}

export function encodeRangeRequest(m: object): Buffer {
  return encoded((w) => writeFields(w, m as Fields, RANGE_FIELDS), payloadSize(m as Fields));
}

export function encodePutRequest(m: object): Buffer {
  return encoded((w) => writeFields(w, m as Fields, PUT_FIELDS), payloadSize(m as Fields));
}

export function encodeDeleteRangeRequest(m: object): Buffer {
  return encoded((w) => writeFields(w, m as Fields, DELETE_FIELDS), payloadSize(m as Fields));
}

export function encodeTxnRequest(m: object): Buffer {
  let size = 128;
  const txn = m as Fields;
  for (const list of [txn.success, txn.failure] as (Fields[] | undefined)[]) {
    for (const op of list ?? []) for (const inner of Object.values(op)) if (inner) size += payloadSize(inner as Fields);
  }
  return encoded((w) => writeTxnFields(w, txn), size);
}

// ---- responses ----

/** a nested message, read in place by the same reader */
function readMessage<T>(r: WireReader, read: (r: WireReader, end: number) => T): T {
  const length = r.varint();
  const end = r.pos + length;
  if (end > r.end) throw new WireError('truncated message');
  const message = read(r, end);
  if (r.pos !== end) throw new WireError('a field overruns its message');
  return message;
}

/** ResponseHeader: cluster_id 1, member_id 2, revision 3, raft_term 4 */
function readHeader(r: WireReader, end: number): WireHeader {
  const h: WireHeader = { clusterId: 0, memberId: 0, revision: 0, raftTerm: 0 };
  while (r.pos < end) {
    const tag = r.varint();
    switch (tag) {
      case (1 << 3) | VARINT:
        h.clusterId = r.uint64();
        break;
      case (2 << 3) | VARINT:
        h.memberId = r.uint64();
        break;
      case (3 << 3) | VARINT:
        h.revision = r.varint();
        break;
      case (4 << 3) | VARINT:
        h.raftTerm = r.uint64();
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return h;
}

/** mvccpb.KeyValue: key 1, create_revision 2, mod_revision 3, version 4, value 5, lease 6 */
function readKeyValue(r: WireReader, end: number): WireKeyValue {
  const kv: WireKeyValue = { key: EMPTY, createRevision: 0, modRevision: 0, version: 0, value: EMPTY, lease: 0 };
  while (r.pos < end) {
    const tag = r.varint();
    switch (tag) {
      case (1 << 3) | LENGTH:
        kv.key = r.bytes();
        break;
      case (2 << 3) | VARINT:
        kv.createRevision = r.varint();
        break;
      case (3 << 3) | VARINT:
        kv.modRevision = r.varint();
        break;
      case (4 << 3) | VARINT:
        kv.version = r.varint();
        break;
      case (5 << 3) | LENGTH:
        kv.value = r.bytes();
        break;
      case (6 << 3) | VARINT:
        kv.lease = r.varint();
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return kv;
}

/** RangeResponse: header 1, kvs 2, more 3, count 4 */
function readRangeResponse(r: WireReader, end: number): WireRangeResponse {
  const res: WireRangeResponse = { header: null, kvs: [], more: false, count: 0 };
  while (r.pos < end) {
    const tag = r.varint();
    switch (tag) {
      case (1 << 3) | LENGTH:
        res.header = readMessage(r, readHeader);
        break;
      case (2 << 3) | LENGTH:
        res.kvs.push(readMessage(r, readKeyValue));
        break;
      case (3 << 3) | VARINT:
        res.more = r.varint() !== 0;
        break;
      case (4 << 3) | VARINT:
        res.count = r.varint();
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return res;
}

/** PutResponse: header 1, prev_kv 2 */
function readPutResponse(r: WireReader, end: number): WirePutResponse {
  const res: WirePutResponse = { header: null, prevKv: null };
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === ((1 << 3) | LENGTH)) res.header = readMessage(r, readHeader);
    else if (tag === ((2 << 3) | LENGTH)) res.prevKv = readMessage(r, readKeyValue);
    else r.skip(tag & 7);
  }
  return res;
}

/** DeleteRangeResponse: header 1, deleted 2, prev_kvs 3 */
function readDeleteRangeResponse(r: WireReader, end: number): WireDeleteRangeResponse {
  const res: WireDeleteRangeResponse = { header: null, deleted: 0, prevKvs: [] };
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === ((1 << 3) | LENGTH)) res.header = readMessage(r, readHeader);
    else if (tag === ((2 << 3) | VARINT)) res.deleted = r.varint();
    else if (tag === ((3 << 3) | LENGTH)) res.prevKvs.push(readMessage(r, readKeyValue));
    else r.skip(tag & 7);
  }
  return res;
}

/** ResponseOp: response_range 1, response_put 2, response_delete_range 3, response_txn 4 */
function readResponseOp(r: WireReader, end: number): WireResponseOp {
  const op: WireResponseOp = {};
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === ((1 << 3) | LENGTH)) op.responseRange = readMessage(r, readRangeResponse);
    else if (tag === ((2 << 3) | LENGTH)) op.responsePut = readMessage(r, readPutResponse);
    else if (tag === ((3 << 3) | LENGTH)) op.responseDeleteRange = readMessage(r, readDeleteRangeResponse);
    else if (tag === ((4 << 3) | LENGTH)) op.responseTxn = readMessage(r, readTxnResponse);
    else r.skip(tag & 7);
  }
  return op;
}

/** TxnResponse: header 1, succeeded 2, responses 3 */
function readTxnResponse(r: WireReader, end: number): WireTxnResponse {
  const res: WireTxnResponse = { header: null, succeeded: false, responses: [] };
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === ((1 << 3) | LENGTH)) res.header = readMessage(r, readHeader);
    else if (tag === ((2 << 3) | VARINT)) res.succeeded = r.varint() !== 0;
    else if (tag === ((3 << 3) | LENGTH)) res.responses.push(readMessage(r, readResponseOp));
    else r.skip(tag & 7);
  }
  return res;
}

/** mvccpb.Event: type 1, kv 2, prev_kv 3 */
function readEvent(r: WireReader, end: number): WireEvent {
  const ev: WireEvent = { type: 0, kv: null, prevKv: null };
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === ((1 << 3) | VARINT)) ev.type = r.varint();
    else if (tag === ((2 << 3) | LENGTH)) ev.kv = readMessage(r, readKeyValue);
    else if (tag === ((3 << 3) | LENGTH)) ev.prevKv = readMessage(r, readKeyValue);
    else r.skip(tag & 7);
  }
  return ev;
}

/** WatchResponse: header 1, watch_id 2, created 3, canceled 4, compact_revision 5,
 *  cancel_reason 6, fragment 7, events 11 */
function readWatchResponse(r: WireReader, end: number): WireWatchResponse {
  const res: WireWatchResponse = {
    header: null,
    watchId: 0,
    created: false,
    canceled: false,
    compactRevision: 0,
    cancelReason: '',
    fragment: false,
    events: [],
  };
  while (r.pos < end) {
    const tag = r.varint();
    switch (tag) {
      case (1 << 3) | LENGTH:
        res.header = readMessage(r, readHeader);
        break;
      case (2 << 3) | VARINT:
        res.watchId = r.varint();
        break;
      case (3 << 3) | VARINT:
        res.created = r.varint() !== 0;
        break;
      case (4 << 3) | VARINT:
        res.canceled = r.varint() !== 0;
        break;
      case (5 << 3) | VARINT:
        res.compactRevision = r.varint();
        break;
      case (6 << 3) | LENGTH:
        res.cancelReason = r.string();
        break;
      case (7 << 3) | VARINT:
        res.fragment = r.varint() !== 0;
        break;
      case (11 << 3) | LENGTH:
        res.events.push(readMessage(r, readEvent));
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return res;
}

const decoder =
  <T>(read: (r: WireReader, end: number) => T) =>
  (buf: Buffer): T => {
    const r = new WireReader(buf);
    const message = read(r, buf.length);
    if (r.pos !== buf.length) throw new WireError('a field overruns the message');
    return message;
  };

export const decodeRangeResponse = decoder(readRangeResponse);
export const decodePutResponse = decoder(readPutResponse);
export const decodeDeleteRangeResponse = decoder(readDeleteRangeResponse);
export const decodeTxnResponse = decoder(readTxnResponse);
export const decodeWatchResponse = decoder(readWatchResponse);
