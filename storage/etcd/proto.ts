// The etcd v3 wire format: one codec per RPC, and conversions from decoded messages to the
// plain types of types.ts. The RPCs of every read, write and watch event use the hand-written
// codecs of hot-codec.ts; the rest use the generated descriptor
// (scripts/generate-etcd-proto.mjs) loaded into protobufjs, whose int64 fields decode as Long
// objects. Either way they become JS numbers here (revisions stay far below 2^53); member and
// cluster ids stay exact as hex strings.

import protobuf from 'protobufjs';
import descriptor from './generated/etcd-proto.json' with { type: 'json' };
import {
  decodeDeleteRangeResponse,
  decodePutResponse,
  decodeRangeResponse,
  decodeTxnResponse,
  decodeWatchResponse,
  encodeDeleteRangeRequest,
  encodePutRequest,
  encodeRangeRequest,
  encodeTxnRequest,
} from './hot-codec.js';
import type { KeyValue, ResponseHeader, CompareTarget, CompareResult } from './types.js';

const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);

/** an int64/uint64 as decoded: a number, or past 2^53 a Long-like pair of halves (protobufjs
 *  with the `long` package, or hot-codec.ts's Uint64) */
export type WireInt = number | { toNumber(): number; toString(radix?: number): string };
/** a bytes field as decoded: a Buffer, or the prototype default (an empty array) when absent */
export type WireBytes = Uint8Array | number[];

export interface WireKeyValue {
  key: WireBytes;
  createRevision: WireInt;
  modRevision: WireInt;
  version: WireInt;
  value: WireBytes;
  lease: WireInt;
}

export interface WireHeader {
  clusterId: WireInt;
  memberId: WireInt;
  revision: WireInt;
  raftTerm: WireInt;
}

export interface WireRangeResponse {
  header: WireHeader | null;
  kvs: WireKeyValue[];
  more: boolean;
  count: WireInt;
}

export interface WirePutResponse {
  header: WireHeader | null;
  prevKv: WireKeyValue | null;
}

export interface WireDeleteRangeResponse {
  header: WireHeader | null;
  deleted: WireInt;
  prevKvs: WireKeyValue[];
}

export interface WireResponseOp {
  responseRange?: WireRangeResponse | null;
  responsePut?: WirePutResponse | null;
  responseDeleteRange?: WireDeleteRangeResponse | null;
  responseTxn?: WireTxnResponse | null;
}

export interface WireTxnResponse {
  header: WireHeader | null;
  succeeded: boolean;
  responses: WireResponseOp[];
}

export interface WireEvent {
  type: number;
  kv: WireKeyValue | null;
  prevKv: WireKeyValue | null;
}

export interface WireWatchResponse {
  header: WireHeader | null;
  watchId: WireInt;
  created: boolean;
  canceled: boolean;
  compactRevision: WireInt;
  cancelReason: string;
  fragment: boolean;
  events: WireEvent[];
}

export interface WireMember {
  ID: WireInt;
  name: string;
  peerURLs: string[];
  clientURLs: string[];
  isLearner: boolean;
}

export interface WireStatusResponse {
  header: WireHeader | null;
  version: string;
  dbSize: WireInt;
  leader: WireInt;
  raftIndex: WireInt;
  raftTerm: WireInt;
}

/** an RPC: its gRPC path and the codecs of its request and response messages */
export interface Rpc<Res> {
  path: string;
  serialize(req: object): Buffer;
  deserialize(buf: Buffer): Res;
}

/** an RPC with protobufjs's codecs (exported for hot-codec.test.ts, which compares) */
export function rpc<Res>(service: string, method: string): Rpc<Res> {
  const svc = root.lookupService(`etcdserverpb.${service}`);
  const m = svc.methods[method];
  if (!m) throw new Error(`etcd descriptor lacks ${service}.${method}`);
  const reqType = root.lookupType(m.requestType);
  const resType = root.lookupType(m.responseType);
  return {
    path: `/etcdserverpb.${service}/${method}`,
    serialize(req) {
      const bytes = reqType.encode(req).finish();
      return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
    deserialize(buf) {
      return resType.decode(buf) as unknown as Res;
    },
  };
}

/** an RPC of hot-codec.ts's messages (the watch: its responses; its requests stay protobufjs's) */
function hotRpc<Res>(
  service: string,
  method: string,
  serialize: ((req: object) => Buffer) | null,
  deserialize: (buf: Buffer) => Res,
): Rpc<Res> {
  const generated = rpc<Res>(service, method);
  return { path: generated.path, serialize: serialize ?? generated.serialize, deserialize };
}

export const rpcs = {
  range: hotRpc('KV', 'Range', encodeRangeRequest, decodeRangeResponse),
  put: hotRpc('KV', 'Put', encodePutRequest, decodePutResponse),
  deleteRange: hotRpc('KV', 'DeleteRange', encodeDeleteRangeRequest, decodeDeleteRangeResponse),
  txn: hotRpc('KV', 'Txn', encodeTxnRequest, decodeTxnResponse),
  compact: rpc<{ header: WireHeader | null }>('KV', 'Compact'),
  watch: hotRpc('Watch', 'Watch', null, decodeWatchResponse),
  leaseGrant: rpc<{ header: WireHeader | null; ID: WireInt; TTL: WireInt; error: string }>('Lease', 'LeaseGrant'),
  leaseRevoke: rpc<{ header: WireHeader | null }>('Lease', 'LeaseRevoke'),
  leaseKeepAlive: rpc<{ header: WireHeader | null; ID: WireInt; TTL: WireInt }>('Lease', 'LeaseKeepAlive'),
  memberList: rpc<{ header: WireHeader | null; members: WireMember[] }>('Cluster', 'MemberList'),
  status: rpc<WireStatusResponse>('Maintenance', 'Status'),
};

function enumValues(name: string): Record<string, number> {
  return root.lookupEnum(name).values;
}

function enumValue<K extends string>(values: Record<string, number>, key: K): number {
  const v = values[key];
  if (v === undefined) throw new Error(`etcd descriptor lacks enum value ${key}`);
  return v;
}

const compareTargets = enumValues('etcdserverpb.Compare.CompareTarget');
const compareResults = enumValues('etcdserverpb.Compare.CompareResult');
const eventTypes = enumValues('mvccpb.Event.EventType');

export function compareTargetNumber(t: CompareTarget): number {
  return enumValue(compareTargets, t);
}
export function compareResultNumber(r: CompareResult): number {
  return enumValue(compareResults, r);
}
export const EVENT_PUT = enumValue(eventTypes, 'PUT');
export const EVENT_DELETE = enumValue(eventTypes, 'DELETE');

const EMPTY = Buffer.alloc(0);

export function num(v: WireInt | null | undefined): number {
  if (v === null || v === undefined) return 0;
  return typeof v === 'number' ? v : v.toNumber();
}

export function hexId(v: WireInt | null | undefined): string {
  if (v === null || v === undefined) return '0';
  return v.toString(16);
}

export function bytes(v: WireBytes | null | undefined): Buffer {
  if (!v || v.length === 0) return EMPTY;
  if (Buffer.isBuffer(v)) return v;
  return v instanceof Uint8Array ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : Buffer.from(v);
}

export function keyValue(kv: WireKeyValue): KeyValue {
  return {
    key: bytes(kv.key),
    value: bytes(kv.value),
    createRevision: num(kv.createRevision),
    modRevision: num(kv.modRevision),
    version: num(kv.version),
    lease: num(kv.lease),
  };
}

export function header(h: WireHeader | null | undefined): ResponseHeader {
  if (!h) return { clusterId: '0', memberId: '0', revision: 0, raftTerm: 0 };
  return {
    clusterId: hexId(h.clusterId),
    memberId: hexId(h.memberId),
    revision: num(h.revision),
    raftTerm: num(h.raftTerm),
  };
}
