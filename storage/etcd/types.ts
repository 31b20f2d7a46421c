// The surface of kapi's own etcd v3 client (storage/etcd/client.ts implements it: gRPC on
// its own HTTP/2, hand-written codecs and protobufjs). Keys and values are Buffers: etcd keys
// are bytes.
// Revisions are JS numbers: etcd revisions are int64 but stay far below 2^53.

export interface KeyValue {
  key: Buffer;
  value: Buffer;
  createRevision: number;
  modRevision: number;
  version: number;
  lease: number;
}

export interface ResponseHeader {
  clusterId: string;
  memberId: string;
  revision: number;
  raftTerm: number;
}

export interface RangeRequest {
  key: Buffer;
  /** exclusive end; omit for a single key. Use prefixEnd(key) for a prefix. */
  rangeEnd?: Buffer;
  limit?: number;
  /** 0 or omitted: current revision */
  revision?: number;
  keysOnly?: boolean;
  countOnly?: boolean;
  /** serializable (local member) instead of linearizable read */
  serializable?: boolean;
  /** abandons the read (the gRPC call is cancelled) when the caller no longer wants it */
  signal?: AbortSignal;
}

export interface RangeResponse {
  header: ResponseHeader;
  kvs: KeyValue[];
  more: boolean;
  count: number;
}

export type CompareTarget = 'VERSION' | 'CREATE' | 'MOD' | 'VALUE' | 'LEASE';
export type CompareResult = 'EQUAL' | 'GREATER' | 'LESS' | 'NOT_EQUAL';

export interface Compare {
  key: Buffer;
  target: CompareTarget;
  result: CompareResult;
  /** the number for VERSION/CREATE/MOD/LEASE, the bytes for VALUE */
  value: number | Buffer;
  /** compare every key in [key, rangeEnd) (an empty range compares as one absent key) */
  rangeEnd?: Buffer;
}

export type TxnOp =
  | { put: { key: Buffer; value: Buffer; lease?: number; prevKv?: boolean } }
  | { range: RangeRequest }
  | { deleteRange: { key: Buffer; rangeEnd?: Buffer; prevKv?: boolean } };

export type TxnOpResponse =
  | { put: { header: ResponseHeader; prevKv?: KeyValue } }
  | { range: RangeResponse }
  | { deleteRange: { header: ResponseHeader; deleted: number; prevKvs: KeyValue[] } };

export interface TxnRequest {
  compare: Compare[];
  success: TxnOp[];
  failure: TxnOp[];
}

export interface TxnResponse {
  header: ResponseHeader;
  succeeded: boolean;
  responses: TxnOpResponse[];
}

export interface EtcdEvent {
  type: 'PUT' | 'DELETE';
  kv: KeyValue;
  /** present when the watch asked for prevKv and etcd still had it */
  prevKv?: KeyValue;
}

/** One message delivered to a watch's listener. */
export type WatchMessage =
  /** `revision` is the mod revision of the last event: everything up to it has been
   *  delivered (etcd's header revision promises less for a catching-up watcher) */
  | { kind: 'events'; revision: number; events: EtcdEvent[] }
  /** a progress notification. ordered: etcd sent it on this watch's own channel behind its
   *  events, so everything up to `revision` has been delivered. Unordered: the answer to a
   *  progress request, broadcast to every watch of the stream; it says only that etcd's
   *  revision reached `revision`, and etcd before 3.4.31 / 3.5.13 can send it ahead of events
   *  still on their way to a catching-up watch (etcd-io/etcd#15220). */
  | { kind: 'progress'; revision: number; ordered: boolean }
  /** the watch ended for good. compactRevision > 0: the start revision was compacted
   *  (the caller must relist); otherwise `reason` says why. */
  | { kind: 'canceled'; compactRevision: number; reason: string };

export interface WatchRequest {
  key: Buffer;
  rangeEnd?: Buffer;
  /** first revision to deliver; omitted: from now */
  startRevision?: number;
  prevKv?: boolean;
  progressNotify?: boolean;
}

/** A watch multiplexed on the client's shared watch stream. After a broken connection the
 *  client re-creates it from (last delivered revision + 1): no event is lost or repeated. */
export interface EtcdWatcher {
  /** asks etcd for a progress notification on the shared stream. etcd 3.4 answers at once
   *  (possibly ahead of events still queued for a catching-up watcher, etcd-io/etcd#15220);
   *  3.5 answers only while every watcher of the stream is in sync: ask again if no
   *  `progress` message comes. */
  requestProgress(): void;
  cancel(): void;
}

export interface LeaseGrant {
  /** chosen by the client below 2^48, so it stays exact as a JS number */
  id: number;
  ttlSeconds: number;
}

export interface Member {
  id: string;
  name: string;
  peerURLs: string[];
  clientURLs: string[];
  isLearner: boolean;
}

export interface MemberStatus {
  header: ResponseHeader;
  version: string;
  dbSize: number;
  leader: string;
  raftIndex: number;
  raftTerm: number;
}

/** one endpoint's own answer to Status, or why it gave none */
export interface EndpointStatus {
  endpoint: string;
  status?: MemberStatus;
  error?: string;
}

export interface EtcdClient {
  range(req: RangeRequest): Promise<RangeResponse>;
  /** range over a prefix in pages of `pageSize`, all at one revision (no 4 MiB failures) */
  rangeAll(req: RangeRequest & { pageSize?: number }): Promise<RangeResponse>;
  put(key: Buffer, value: Buffer, opts?: { lease?: number; prevKv?: boolean }): Promise<{ header: ResponseHeader; prevKv?: KeyValue }>;
  deleteRange(
    key: Buffer,
    opts?: { rangeEnd?: Buffer; prevKv?: boolean },
  ): Promise<{ header: ResponseHeader; deleted: number; prevKvs: KeyValue[] }>;
  txn(req: TxnRequest): Promise<TxnResponse>;
  /** physical compaction up to `revision` */
  compact(revision: number, physical?: boolean): Promise<ResponseHeader>;
  watch(req: WatchRequest, listener: (msg: WatchMessage) => void): EtcdWatcher;
  leaseGrant(ttlSeconds: number): Promise<LeaseGrant>;
  leaseRevoke(id: number): Promise<void>;
  /** renews once; resolves the new TTL in seconds, 0 when the lease does not exist */
  leaseKeepAliveOnce(id: number): Promise<number>;
  memberList(): Promise<Member[]>;
  status(): Promise<MemberStatus>;
  /** every endpoint asked on its own, without failover (only clients that know their
   *  endpoints have it) */
  endpointStatuses?(timeoutMs: number): Promise<EndpointStatus[]>;
  close(): void;
}

export interface EtcdClientOptions {
  /** e.g. ['http://127.0.0.1:2379', 'https://10.0.0.2:2379']; the client fails over among them */
  endpoints: string[];
  /** PEM; needed for https endpoints with a private CA */
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  /** per-call deadline for unary calls */
  requestTimeoutMs?: number;
}

/** the smallest key greater than every key starting with `prefix` */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i] = end[i]! + 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}
