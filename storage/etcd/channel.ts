// gRPC calls on our own HTTP/2 connection (h2-connection.ts) to one etcd endpoint: unary
// calls here, streaming calls (the watch, lease keepalives) in streaming-call.ts.
//
// The client began on grpc-js, which runs every unary call through resolving, retrying,
// load-balancing and subchannel call objects, filter stacks, metadata copies and per-layer
// timers: in a profile of ConfigMap creates that machinery cost more CPU than anything else in
// the storage path. A unary call needs none of it: one HTTP/2 stream carrying one
// length-prefixed message each way, and the status in the trailers. node:http2 was the next
// step down, but its per-stream machinery (async-context binding, header objects, a Duplex
// with listeners) still cost more CPU per write than the rest of the client. A watch stream
// carries the events of every write: through grpc-js and node:http2 they cost more than the
// watch's own work, so streams take a channel of this kind too (one of their own per
// endpoint, so that a burst of events never queues ahead of a write's answer), and grpc-js is
// gone.
//
// The wire contract (gRPC over HTTP/2): POST to /package.Service/Method with
// `content-type: application/grpc` and `te: trailers`; each message is a 1-byte compressed
// flag and a 4-byte big-endian length before the protobuf bytes; the outcome is
// `grpc-status` (and a percent-encoded `grpc-message`) in the trailers, or in the headers
// of a response without a body.

import { GrpcStatus } from './grpc-codes.js';
import { EtcdError } from './errors.js';
import { CallListener, type CallFailure } from './grpc-status.js';
import { GRPC_MESSAGE_PREFIX_BYTES, H2Connection, type H2Stream, type H2Tls } from './h2-connection.js';
import { encodeLiteral, encodeStaticIndexed } from './hpack.js';
import { StreamingCall, type StreamingCallHandlers } from './streaming-call.js';

export type ChannelTls = H2Tls;

const INITIAL_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 1_000;
// detect a silently dead connection (etcd's server-side minimum ping interval is 5 s)
const KEEPALIVE_INTERVAL_MS = 30_000;
const KEEPALIVE_TIMEOUT_MS = 10_000;
/** header blocks kept per channel (one per method and timeout; a handful in practice) */
const MAX_CACHED_HEADER_BLOCKS = 256;

/** the one message of a unary response body */
function unframe(chunks: Buffer[], length: number): Buffer | string {
  const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length);
  if (body.length < GRPC_MESSAGE_PREFIX_BYTES) return 'response without a message';
  // no grpc-encoding is offered, so a compressed message is a protocol violation
  if (body[0] !== 0) return 'compressed response message that was not asked for';
  const size = body.readUInt32BE(1);
  if (body.length !== GRPC_MESSAGE_PREFIX_BYTES + size) return 'response body is not exactly one message';
  return body.subarray(GRPC_MESSAGE_PREFIX_BYTES);
}

/** the bytes of a unary response that are kept: a small message is copied out of the
 *  socket's read buffer rather than keeping that whole buffer alive */
function detached(message: Buffer): Buffer {
  return message.buffer.byteLength > 2 * message.length + 4096 ? Buffer.from(message) : message;
}

/** the outcome of one unary call, built from its stream's events */
class UnaryCall extends CallListener {
  private chunks: Buffer[] = [];
  private length = 0;
  protected over = false;
  private stream: H2Stream | null = null;
  private deadline: NodeJS.Timeout | undefined;
  private signal: AbortSignal | undefined;

  constructor(
    private readonly endpoint: string,
    private readonly connection: H2Connection,
    private readonly resolve: (res: Buffer) => void,
    private readonly reject: (err: EtcdError) => void,
  ) {
    super();
  }

  start(block: Buffer, message: Buffer, timeoutMs: number, signal: AbortSignal | undefined): void {
    this.stream = this.connection.startUnary(block, message, this);
    this.deadline = setTimeout(this.onDeadline, timeoutMs);
    if (signal) {
      this.signal = signal;
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  private readonly onDeadline = (): void => {
    this.fail(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded');
    this.connection.cancel(this.stream!);
  };

  private readonly onAbort = (): void => {
    this.fail(GrpcStatus.CANCELLED, 'Cancelled on client');
    this.connection.cancel(this.stream!);
  };

  /** the call's outcome is known: any further stream event is ignored */
  private finish(err: EtcdError | null, res?: Buffer): void {
    if (this.over) return;
    this.over = true;
    clearTimeout(this.deadline);
    this.signal?.removeEventListener('abort', this.onAbort);
    if (err) this.reject(err);
    else this.resolve(res!);
  }

  private fail(code: number, details: string, notSent = false): void {
    this.finish(new EtcdError(code, details, this.endpoint, notSent));
  }

  protected failWith(f: CallFailure): void {
    this.fail(f.code, f.details, f.notSent);
  }

  onData(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  onEnd(): void {
    if (this.over) return;
    const failed = this.status.ended();
    if (failed) return this.failWith(failed);
    const res = unframe(this.chunks, this.length);
    return typeof res === 'string' ? this.fail(GrpcStatus.INTERNAL, res) : this.finish(null, detached(res));
  }
}

/** the HTTP/2 connection to one endpoint; opened when first needed, re-opened after it
 *  fails, the server sends GOAWAY or its stream ids run out */
export class GrpcChannel {
  private connection: H2Connection | null = null;
  private opening: Promise<boolean> | null = null;
  private retryAt = 0;
  private backoffMs = INITIAL_BACKOFF_MS;
  private closed = false;
  /** the header fields every request carries first (:method, :scheme, :authority) */
  private readonly pseudoHeaders: Buffer;
  private readonly grpcHeaders: Buffer;
  private readonly headerBlocks = new Map<string, Buffer>();

  constructor(
    private readonly endpoint: string,
    private readonly authority: string,
    private readonly tls: ChannelTls | null,
  ) {
    const url = new URL(authority);
    this.pseudoHeaders = Buffer.concat([
      encodeStaticIndexed(':method', 'POST'),
      encodeStaticIndexed(':scheme', url.protocol === 'https:' ? 'https' : 'http'),
      encodeLiteral(':authority', url.host),
    ]);
    this.grpcHeaders = Buffer.concat([encodeLiteral('content-type', 'application/grpc'), encodeLiteral('te', 'trailers')]);
  }

  get ready(): boolean {
    return this.connection !== null && this.connection.acceptsStreams;
  }

  /** calls (or streams) waiting for their answer on the current connection */
  get callsInFlight(): number {
    return this.connection?.openStreams ?? 0;
  }

  /** true once a connection is up; false when an attempt failed or `timeoutMs` passed */
  async connect(timeoutMs: number): Promise<boolean> {
    if (this.closed) return false;
    if (this.ready) return true;
    const deadline = Date.now() + timeoutMs;
    if (!this.opening) {
      const wait = this.retryAt - Date.now();
      if (wait > 0) {
        // after a failed attempt, wait out the backoff before the next one
        await sleep(Math.min(wait, timeoutMs));
        if (this.closed || Date.now() < this.retryAt) return false;
      }
      if (this.ready) return true;
      this.opening ??= this.open();
    }
    const left = deadline - Date.now();
    if (left <= 0) return false;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), left);
    });
    try {
      return await Promise.race([this.opening, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  private open(): Promise<boolean> {
    const attempt = new Promise<boolean>((resolve) => {
      let keepalive: NodeJS.Timeout | undefined;
      let pending = true;
      const settle = (ok: boolean): void => {
        if (!pending) return;
        pending = false;
        if (this.opening === attempt) this.opening = null;
        if (ok) {
          this.backoffMs = INITIAL_BACKOFF_MS;
        } else {
          this.retryAt = Date.now() + this.backoffMs;
          this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
        }
        resolve(ok);
      };
      const retire = (): void => {
        if (this.connection === connection) this.connection = null;
      };
      const connection = new H2Connection(this.authority, this.tls, {
        onReady: () => {
          settle(true);
          keepalive = setInterval(() => connection.ping(KEEPALIVE_TIMEOUT_MS), KEEPALIVE_INTERVAL_MS);
          keepalive.unref();
        },
        // calls in flight finish on this connection; new ones open another
        onGoaway: retire,
        onClose: () => {
          clearInterval(keepalive);
          retire();
          settle(false);
        },
      });
      this.connection = connection;
    });
    return attempt;
  }

  /** the header block of a call to `path` with the `extra` fields, made once per `key` */
  private headerBlock(key: string, path: string, extra: Record<string, string>): Buffer {
    let block = this.headerBlocks.get(key);
    if (!block) {
      const fields = Object.entries(extra).map(([name, value]) => encodeLiteral(name, value));
      // pseudo-header fields come before the others (RFC 9113 section 8.3)
      block = Buffer.concat([this.pseudoHeaders, encodeLiteral(':path', path), this.grpcHeaders, ...fields]);
      if (this.headerBlocks.size < MAX_CACHED_HEADER_BLOCKS) this.headerBlocks.set(key, block);
    }
    return block;
  }

  /** one unary call: the response message's bytes, or an EtcdError. `notSent` is set only
   *  when the request certainly never reached etcd. */
  call(path: string, message: Buffer, timeoutMs: number, signal?: AbortSignal): Promise<Buffer> {
    const connection = this.connection;
    if (!connection || !connection.acceptsStreams) {
      return Promise.reject(new EtcdError(GrpcStatus.UNAVAILABLE, 'No connection established', this.endpoint, true));
    }
    if (signal?.aborted) return Promise.reject(new EtcdError(GrpcStatus.CANCELLED, 'Cancelled on client', this.endpoint, true));
    const timeout = `${Math.max(1, Math.ceil(timeoutMs))}m`;
    const block = this.headerBlock(`${timeout} ${path}`, path, { 'grpc-timeout': timeout });
    return new Promise((resolve, reject) => {
      new UnaryCall(this.endpoint, connection, resolve, reject).start(block, message, timeoutMs, signal);
    });
  }

  /** starts a streaming call (no deadline; `metadata`: extra header fields, lower-case);
   *  undefined while there is no connection */
  openStream<Req, Res>(
    path: string,
    metadata: Record<string, string>,
    serialize: (req: Req) => Buffer,
    deserialize: (bytes: Buffer) => Res,
    handlers: StreamingCallHandlers<Res>,
  ): StreamingCall<Req, Res> | undefined {
    const connection = this.connection;
    if (!connection || !connection.acceptsStreams) return undefined;
    const block = this.headerBlock(`${path} ${JSON.stringify(metadata)}`, path, metadata);
    const call = new StreamingCall(this.endpoint, connection, serialize, deserialize, handlers);
    call.start(block);
    return call;
  }

  close(): void {
    this.closed = true;
    this.connection?.destroy();
    this.connection = null;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
