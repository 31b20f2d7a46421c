// The endpoints of one etcd cluster and the unary-call retry policy.
//
// Per endpoint: a connection for unary calls and one for streams (the watch, lease
// keepalives), both gRPC on our own HTTP/2 (channel.ts); calls go to the active endpoint. When an endpoint fails (UNAVAILABLE, or a deadline passed), the next one becomes
// active. Whether the failed call is then tried again depends on what it was:
// - idempotent calls (range, read-only txn, status, member list, lease revoke/keepalive) are
//   retried on the next endpoint;
// - writes (put, delete, txn with writes, compact, lease grant) are retried only when no
//   transport ever carried them (no connection was up, or etcd refused the stream). A write that may have reached etcd is never
//   repeated: the caller gets the error and must re-read to learn the outcome (a put applied
//   twice would bump the revision twice; a txn could even apply its else-branch the second
//   time).

import { GrpcStatus } from './grpc-codes.js';
import { readFileSync } from 'node:fs';
import { EtcdError, asEtcdError, isEndpointFailure } from './errors.js';
import type { Rpc } from './proto.js';
import type { EtcdClientOptions } from './types.js';
import { GrpcChannel, type ChannelTls } from './channel.js';

export interface Endpoint {
  readonly url: string;
  /** every unary call */
  readonly unary: GrpcChannel;
  /** the watch and lease-keepalive streams: a connection of their own, so that a burst of
   *  watch events never queues ahead of a unary call's answer */
  readonly streams: GrpcChannel;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 15_000;
/** how long one call may spend looking for a connected endpoint (etcd restarting, failover) */
const CONNECT_TIMEOUT_MS = 3_000;
/** with several endpoints: how long to wait for one before trying the next */
const PER_ENDPOINT_CONNECT_MS = 1_000;
const MAX_UNSENT_RETRIES = 5;
const RETRY_BACKOFF_MS = 100;

function parseEndpoint(url: string): { target: string; secure: boolean } {
  if (!/^[a-z]+:\/\//i.test(url)) return { target: url, secure: false };
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new Error(`unsupported etcd endpoint scheme: ${url}`);
  }
  const secure = u.protocol === 'https:';
  const port = u.port || '2379';
  // WHATWG URL keeps the brackets of an IPv6 hostname, as an HTTP authority has them
  return { target: `${u.hostname}:${port}`, secure };
}

function readTls(opts: EtcdClientOptions): ChannelTls {
  const read = (file?: string) => (file ? readFileSync(file) : undefined);
  return { ca: read(opts.caFile), cert: read(opts.certFile), key: read(opts.keyFile) };
}

export class EndpointPool {
  readonly endpoints: readonly Endpoint[];
  readonly requestTimeoutMs: number;
  private activeIndex = 0;
  private closed = false;

  constructor(opts: EtcdClientOptions) {
    if (opts.endpoints.length === 0) throw new Error('etcd client needs at least one endpoint');
    this.requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    let tlsFiles: ChannelTls | undefined;
    this.endpoints = opts.endpoints.map((url) => {
      const { target, secure } = parseEndpoint(url);
      const tls = secure ? (tlsFiles ??= readTls(opts)) : null;
      const authority = `${secure ? 'https' : 'http'}://${target}`;
      return {
        url,
        unary: new GrpcChannel(url, authority, tls),
        streams: new GrpcChannel(url, authority, tls),
      };
    });
  }

  get active(): Endpoint {
    return this.endpoints[this.activeIndex]!;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** `ep` failed: make the next endpoint active, unless someone already moved on */
  failed(ep: Endpoint): void {
    if (this.active === ep) this.activeIndex = (this.activeIndex + 1) % this.endpoints.length;
  }

  /** `signal` abandons the call: only reads should pass one (a write cut short may still have
   *  been applied, and the caller could not tell) */
  async call<Res>(rpc: Rpc<Res>, req: object, idempotent: boolean, signal?: AbortSignal): Promise<Res> {
    const n = this.endpoints.length;
    // time allowed for finding a connected endpoint, over all attempts of this call
    const connectDeadline = Date.now() + CONNECT_TIMEOUT_MS;
    let failuresAfterSend = 0;
    for (let attempt = 0; ; attempt++) {
      if (this.closed) throw new EtcdError(GrpcStatus.CANCELLED, 'etcd client closed', '');
      signal?.throwIfAborted();
      const ep = this.active;
      const remaining = Math.max(0, connectDeadline - Date.now());
      if (!ep.unary.ready && !(await ep.unary.connect(n > 1 ? Math.min(remaining, PER_ENDPOINT_CONNECT_MS) : remaining))) {
        this.failed(ep);
        if (Date.now() >= connectDeadline) {
          throw new EtcdError(
            GrpcStatus.UNAVAILABLE,
            `no connection to etcd at ${this.endpoints.map((e) => e.url).join(', ')}`,
            ep.url,
            true,
          );
        }
        continue;
      }
      // the wait for a connection may have outlasted the caller's interest
      signal?.throwIfAborted();
      try {
        return await this.callOnce(ep, rpc, req, signal);
      } catch (raw) {
        signal?.throwIfAborted();
        const err = asEtcdError(raw, ep.url);
        if (this.closed || !isEndpointFailure(err)) throw err;
        this.failed(ep);
        // the connection broke between our check and the call: it never left this process
        if (err.notSent && attempt < MAX_UNSENT_RETRIES) continue;
        if (!idempotent || ++failuresAfterSend > n) throw err;
        await sleep(RETRY_BACKOFF_MS * failuresAfterSend);
      }
    }
  }

  /** waits until `ep`'s stream connection is up (true), or an attempt failed or `timeoutMs`
   *  passed (false) */
  connectStreams(ep: Endpoint, timeoutMs = CONNECT_TIMEOUT_MS): Promise<boolean> {
    return ep.streams.connect(timeoutMs);
  }

  /** one call at the endpoint with this URL, no failover: how that one member is doing */
  async callAt<Res>(url: string, rpc: Rpc<Res>, req: object, timeoutMs: number): Promise<Res> {
    const ep = this.endpoints.find((e) => e.url === url);
    if (!ep) throw new Error(`${url} is not one of this client's endpoints`);
    if (!(await ep.unary.connect(timeoutMs))) throw new EtcdError(GrpcStatus.UNAVAILABLE, `no connection to etcd at ${url}`, url, true);
    return this.callOnce(ep, rpc, req);
  }

  private async callOnce<Res>(ep: Endpoint, rpc: Rpc<Res>, req: object, signal?: AbortSignal): Promise<Res> {
    const res = await ep.unary.call(rpc.path, rpc.serialize(req), this.requestTimeoutMs, signal);
    try {
      return rpc.deserialize(res);
    } catch (err) {
      throw new EtcdError(GrpcStatus.INTERNAL, `etcd response could not be decoded: ${(err as Error).message}`, ep.url);
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const ep of this.endpoints) {
      ep.unary.close();
      ep.streams.close();
    }
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
