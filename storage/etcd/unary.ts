// Unary gRPC calls on node:http2 directly, one connection per etcd endpoint.
//
// grpc-js runs every unary call through resolving, retrying, load-balancing and subchannel
// call objects, filter stacks, metadata copies and per-layer timers: in a profile of
// ConfigMap creates that machinery cost more CPU than anything else in the storage path. A
// unary call needs none of it: one HTTP/2 stream carrying one length-prefixed message each
// way, and the status in the trailers. Watches and lease keepalives (bidirectional streams)
// stay on grpc-js.
//
// The wire contract (gRPC over HTTP/2): POST to /package.Service/Method with
// `content-type: application/grpc` and `te: trailers`; each message is a 1-byte compressed
// flag and a 4-byte big-endian length before the protobuf bytes; the outcome is
// `grpc-status` (and a percent-encoded `grpc-message`) in the trailers, or in the headers
// of a response without a body.

import http2 from 'node:http2';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { EtcdError } from './errors.js';

export interface UnaryTls {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

const INITIAL_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 1_000;
// detect a silently dead connection (etcd's server-side minimum ping interval is 5 s)
const KEEPALIVE_INTERVAL_MS = 30_000;
const KEEPALIVE_TIMEOUT_MS = 10_000;
const FRAME_HEADER_BYTES = 5;

const {
  HTTP2_HEADER_METHOD,
  HTTP2_HEADER_PATH,
  HTTP2_HEADER_STATUS,
  HTTP2_HEADER_CONTENT_TYPE,
  HTTP2_HEADER_TE,
  NGHTTP2_CANCEL,
  NGHTTP2_REFUSED_STREAM,
  NGHTTP2_ENHANCE_YOUR_CALM,
  NGHTTP2_INADEQUATE_SECURITY,
} = http2.constants;

/** what a gRPC client makes of an HTTP status that came without a grpc-status */
function codeOfHttpStatus(status: number): number {
  switch (status) {
    case 400:
      return GrpcStatus.INTERNAL;
    case 401:
      return GrpcStatus.UNAUTHENTICATED;
    case 403:
      return GrpcStatus.PERMISSION_DENIED;
    case 404:
      return GrpcStatus.UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return GrpcStatus.UNAVAILABLE;
    default:
      return GrpcStatus.UNKNOWN;
  }
}

function codeOfResetStream(rstCode: number): number {
  if (rstCode === NGHTTP2_REFUSED_STREAM) return GrpcStatus.UNAVAILABLE;
  if (rstCode === NGHTTP2_CANCEL) return GrpcStatus.CANCELLED;
  if (rstCode === NGHTTP2_ENHANCE_YOUR_CALM) return GrpcStatus.RESOURCE_EXHAUSTED;
  if (rstCode === NGHTTP2_INADEQUATE_SECURITY) return GrpcStatus.PERMISSION_DENIED;
  return GrpcStatus.INTERNAL;
}

function grpcMessage(raw: string | string[] | undefined): string {
  const text = Array.isArray(raw) ? raw.join(',') : (raw ?? '');
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function frame(message: Buffer): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  message.copy(out, FRAME_HEADER_BYTES);
  return out;
}

/** the one message of a unary response body */
function unframe(chunks: Buffer[], length: number): Buffer | string {
  const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length);
  if (body.length < FRAME_HEADER_BYTES) return 'response without a message';
  // no grpc-encoding is offered, so a compressed message is a protocol violation
  if (body[0] !== 0) return 'compressed response message that was not asked for';
  const size = body.readUInt32BE(1);
  if (body.length !== FRAME_HEADER_BYTES + size) return 'response body is not exactly one message';
  return body.subarray(FRAME_HEADER_BYTES);
}

/** the unary-call connection to one endpoint; opened when first needed, re-opened after it
 *  fails or the server sends GOAWAY */
export class UnaryChannel {
  private session: http2.ClientHttp2Session | null = null;
  private opening: Promise<boolean> | null = null;
  private retryAt = 0;
  private backoffMs = INITIAL_BACKOFF_MS;
  private closed = false;

  constructor(
    private readonly endpoint: string,
    private readonly authority: string,
    private readonly tls: UnaryTls | null,
  ) {}

  get ready(): boolean {
    const s = this.session;
    return s !== null && !s.connecting && !s.closed && !s.destroyed;
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
      const session = http2.connect(this.authority, {
        ...(this.tls ?? {}),
        settings: { enablePush: false },
        // node refuses new streams once this much is buffered per session (default 10 MB):
        // many concurrent pages of a big range can hold more
        maxSessionMemory: 64,
      });
      this.session = session;
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
        if (this.session === session) this.session = null;
      };
      session.once('connect', () => {
        settle(true);
        keepalive = setInterval(() => this.ping(session), KEEPALIVE_INTERVAL_MS);
        keepalive.unref();
      });
      session.on('error', () => {
        retire();
        settle(false);
      });
      session.once('goaway', () => {
        // calls in flight finish on this connection; new ones open another
        retire();
        session.close();
      });
      session.once('close', () => {
        clearInterval(keepalive);
        retire();
        settle(false);
      });
    });
    return attempt;
  }

  private ping(session: http2.ClientHttp2Session): void {
    if (session.closed || session.destroyed) return;
    const timer = setTimeout(() => session.destroy(), KEEPALIVE_TIMEOUT_MS);
    timer.unref();
    const sent = session.ping((err) => {
      clearTimeout(timer);
      if (err) session.destroy();
    });
    if (!sent) clearTimeout(timer);
  }

  /** one unary call: the response message's bytes, or an EtcdError. `notSent` is set only
   *  when the request certainly never reached etcd. */
  call(path: string, message: Buffer, timeoutMs: number, signal?: AbortSignal): Promise<Buffer> {
    const session = this.session;
    if (!session || !this.ready) {
      return Promise.reject(new EtcdError(GrpcStatus.UNAVAILABLE, 'No connection established', this.endpoint, true));
    }
    if (signal?.aborted) return Promise.reject(new EtcdError(GrpcStatus.CANCELLED, 'Cancelled on client', this.endpoint, true));
    let stream: http2.ClientHttp2Stream;
    try {
      stream = session.request({
        [HTTP2_HEADER_METHOD]: 'POST',
        [HTTP2_HEADER_PATH]: path,
        [HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
        [HTTP2_HEADER_TE]: 'trailers',
        'grpc-timeout': `${Math.max(1, Math.ceil(timeoutMs))}m`,
      });
    } catch (err) {
      // the session was closing or destroyed: nothing was sent
      return Promise.reject(
        new EtcdError(GrpcStatus.UNAVAILABLE, `No connection established: ${(err as Error).message}`, this.endpoint, true),
      );
    }
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let length = 0;
      let httpStatus = 0;
      let grpcStatus: number | undefined;
      let grpcDetails = '';
      let streamError: Error | undefined;
      let settled = false;

      const finish = (err: EtcdError | null, res?: Buffer): void => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        signal?.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve(res!);
      };
      const fail = (code: number, details: string, notSent = false): void => {
        finish(new EtcdError(code, details, this.endpoint, notSent));
      };
      const readStatus = (headers: http2.IncomingHttpHeaders): void => {
        const raw = headers['grpc-status'];
        if (raw === undefined) return;
        grpcStatus = Number(raw);
        grpcDetails = grpcMessage(headers['grpc-message']);
      };

      const deadline = setTimeout(() => {
        fail(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded');
        stream.close(NGHTTP2_CANCEL);
      }, timeoutMs);
      const onAbort = (): void => {
        fail(GrpcStatus.CANCELLED, 'Cancelled on client');
        stream.close(NGHTTP2_CANCEL);
      };
      signal?.addEventListener('abort', onAbort, { once: true });

      stream.on('response', (headers) => {
        httpStatus = Number(headers[HTTP2_HEADER_STATUS]);
        readStatus(headers);
      });
      stream.on('trailers', readStatus);
      stream.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        length += chunk.length;
      });
      stream.on('error', (err) => {
        streamError = err;
      });
      stream.on('close', () => {
        if (settled) return;
        if (grpcStatus !== undefined) {
          if (grpcStatus !== GrpcStatus.OK) return fail(grpcStatus, grpcDetails);
          const res = unframe(chunks, length);
          return typeof res === 'string' ? fail(GrpcStatus.INTERNAL, res) : finish(null, res);
        }
        if (httpStatus !== 0 && httpStatus !== 200) {
          return fail(codeOfHttpStatus(httpStatus), `Received HTTP status code ${httpStatus}`);
        }
        const rst = stream.rstCode ?? 0;
        if (rst === NGHTTP2_REFUSED_STREAM) {
          // the server refused the stream before processing anything on it
          return fail(GrpcStatus.UNAVAILABLE, 'Stream refused by server', true);
        }
        // a connection that broke closes its streams with CANCEL: that is no cancellation
        if (streamError || rst === 0 || session.destroyed || session.closed) {
          return fail(GrpcStatus.UNAVAILABLE, `Connection to etcd lost${streamError ? `: ${streamError.message}` : ''}`);
        }
        return fail(codeOfResetStream(rst), `Received RST_STREAM with code ${rst}`);
      });
      stream.end(frame(message));
    });
  }

  close(): void {
    this.closed = true;
    this.session?.destroy();
    this.session = null;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
