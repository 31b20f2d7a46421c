// One HTTP/1.1 connection: request heads and bodies framed off the socket, one request served
// at a time (a pipelined request waits, buffered, until the response before it is out), the
// connection kept for the next request or closed as the request and response say. A request
// asking to upgrade hands the socket, and whatever followed its head, to the handler.
//
// As Go's server answers kube-apiserver's clients: a head over the limit gets 431, one that
// cannot be parsed 400 (or 501, 505), each with `Connection: close`; a head begun and not
// finished within the read-header timeout closes the connection. A response that ends before
// its request's body was read closes the connection after it, reading for a moment first so the
// client sees the answer rather than a reset.

import type { TLSSocket } from 'node:tls';
import type { HttpRequest, HttpResponse, UpgradeSocket } from '../request/types.js';
import { H1Request, H1Response, type BodyFlow, type ResponseOwner } from './h1-exchange.js';
import { ChunkedDecoder } from './h1-chunked.js';
import { HeadError, parseRequestHead, type RequestHead } from './h1-head.js';
import { goClientErrorResponse, HTTP1_MAX_HEADER_BYTES } from './header-limits.js';

export interface Http1Options {
  handler: (req: HttpRequest, res: HttpResponse, upgrade?: UpgradeSocket) => void;
  /** how long a request head, once begun, may take to arrive */
  readHeaderTimeoutMs: number;
  /** the connection left HTTP (an upgrade): its handler owns it now */
  upgraded(socket: TLSSocket): void;
}

const CRLF_CRLF = Buffer.from('\r\n\r\n');
/** pipelined bytes kept while a response is in progress before the socket stops being read */
const PIPELINE_HIGH_WATER_BYTES = 256 * 1024;
/** the smallest own buffer a connection keeps unfinished bytes in */
const STORE_MIN_BYTES = 16 * 1024;
/** the most unread body a connection reads and drops after the response to keep going */
const DRAIN_LIMIT_BYTES = 256 * 1024;
/** how long a connection closed under an unread body keeps reading (Go: 500 ms) */
const LINGER_MS = 500;

type Phase = 'head' | 'body' | 'served' | 'closed' | 'upgraded';

export function serveHttp1(socket: TLSSocket, opts: Http1Options): void {
  new Http1Connection(socket, opts);
}

class Http1Connection implements ResponseOwner, BodyFlow {
  private phase: Phase = 'head';
  /** bytes read and not yet taken */
  private pending: Buffer | undefined;
  /** the connection's own buffer `pending` may lie in, and where its used part ends */
  private store: Buffer | undefined;
  private storeEnd = 0;
  /** how far `pending` was searched for the end of a head */
  private searched = 0;
  private headTimer: NodeJS.Timeout | undefined;
  private req: H1Request | undefined;
  private res: H1Response | undefined;
  private bodyLeft = 0;
  private chunked: ChunkedDecoder | undefined;
  private pausedFor = new Set<'body' | 'pipeline'>();
  /** the response is out while the request's body is still coming */
  private answered = false;
  private readonly onData = (chunk: Buffer): void => this.received(chunk);

  constructor(
    private readonly socket: TLSSocket,
    private readonly opts: Http1Options,
  ) {
    socket.on('data', this.onData);
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.closed());
    socket.on('drain', () => this.res?.emit('drain'));
    // A client that ends its side (it left, or half-closed after its requests) is answered as
    // Go's server answers it: the socket stays open for the answers (node's TLS socket would end
    // with the client's side), the request in flight is cancelled (Go cancels its context: a
    // client that left must not have its work done), and the connection ends once what the
    // client sent has been answered. One whose request body the end cut short ends at once.
    (socket as { allowHalfOpen: boolean }).allowHalfOpen = true;
    socket.on('end', () => {
      this.clientEnded = true;
      if (this.phase !== 'body') this.req?.onClientEnded?.();
      this.endIfIdle();
    });
  }

  /** the client ended its side: nothing more comes from it */
  private clientEnded = false;

  /** After the client's end, the connection ends once nothing it sent is left to answer, and
   *  at once when a request's body is still being read: every byte that came was taken, so the
   *  rest of it never comes (also for a pipelined request taken after the end). */
  private endIfIdle(): void {
    if (!this.clientEnded) return;
    const cutShort = this.phase === 'body';
    if (!cutShort && (this.phase !== 'head' || this.req)) return;
    clearTimeout(this.headTimer);
    this.phase = 'closed';
    this.pending = undefined;
    this.socket.end();
    if (cutShort) this.req?.aborted();
  }

  private received(chunk: Buffer): void {
    this.append(chunk);
    this.advance();
  }

  /**
   * Adds `chunk` after `pending`, in a buffer of the connection's own that doubles when full: a
   * client sending a head (or pipelined requests) in many small pieces costs copying linear in
   * what it sent, not quadratic.
   */
  private append(chunk: Buffer): void {
    const pending = this.pending;
    if (!pending || pending.length === 0) {
      this.pending = chunk;
      return;
    }
    const store = this.store;
    const endsStore =
      store !== undefined && pending.buffer === store.buffer && pending.byteOffset + pending.length === store.byteOffset + this.storeEnd;
    if (endsStore && this.storeEnd + chunk.length <= store.length) {
      chunk.copy(store, this.storeEnd);
      this.storeEnd += chunk.length;
      this.pending = store.subarray(this.storeEnd - pending.length - chunk.length, this.storeEnd);
      return;
    }
    const size = pending.length + chunk.length;
    const grown = Buffer.allocUnsafe(Math.max(2 * size, STORE_MIN_BYTES));
    pending.copy(grown, 0);
    chunk.copy(grown, pending.length);
    this.store = grown;
    this.storeEnd = size;
    this.pending = grown.subarray(0, size);
  }

  /** what is left unread after a step; the own buffer goes once nothing is left in it */
  private keep(rest: Buffer): void {
    if (rest.length > 0) {
      this.pending = rest;
      return;
    }
    this.pending = undefined;
    this.store = undefined;
  }

  /** takes what `pending` holds as far as the current phase allows */
  private advance(): void {
    while (this.pending && this.pending.length > 0) {
      if (this.phase === 'head') {
        if (!this.readHead()) return;
      } else if (this.phase === 'body') {
        this.readBody();
        if (this.phase === 'body') return;
      } else {
        if (this.phase === 'served' && this.pending.length > PIPELINE_HIGH_WATER_BYTES) this.pause('pipeline');
        return;
      }
    }
  }

  /** true when a head was taken (and its request handed on) */
  private readHead(): boolean {
    let buf = this.pending!;
    // empty lines before a request line are skipped (RFC 9112 2.2)
    let skip = 0;
    while (skip + 1 < buf.length && buf[skip] === 0x0d && buf[skip + 1] === 0x0a) skip += 2;
    if (skip > 0) {
      buf = buf.subarray(skip);
      this.pending = buf;
      this.searched = 0;
    }
    const end = buf.indexOf(CRLF_CRLF, Math.max(0, this.searched - 3));
    if (end < 0) {
      this.searched = buf.length;
      if (buf.length > HTTP1_MAX_HEADER_BYTES) this.reject(new HeadError(431, 'request head too large'));
      else if (buf.length > 0 && !this.headTimer) {
        this.headTimer = setTimeout(() => this.socket.destroy(), this.opts.readHeaderTimeoutMs);
        this.headTimer.unref();
      }
      return false;
    }
    if (end > HTTP1_MAX_HEADER_BYTES) {
      this.reject(new HeadError(431, 'request head too large'));
      return false;
    }
    clearTimeout(this.headTimer);
    this.headTimer = undefined;
    this.searched = 0;
    let head: RequestHead;
    try {
      head = parseRequestHead(buf.toString('latin1', 0, end));
    } catch (err) {
      if (!(err instanceof HeadError)) throw err;
      this.reject(err);
      return false;
    }
    this.keep(buf.subarray(end + 4));
    this.dispatch(head);
    return true;
  }

  private dispatch(head: RequestHead): void {
    const socket = this.socket;
    const req = new H1Request(head, socket, this);
    const res = new H1Response(socket, this, head.method === 'HEAD', head.httpVersion === '1.0', head.keepAlive);
    this.req = req;
    this.res = res;
    if (head.method === 'CONNECT') {
      // no tunnels here (what node's server does without a 'connect' listener, answered)
      this.phase = 'served';
      req.completed();
      res.shouldKeepAlive = false;
      res.statusCode = 405;
      res.end();
      return;
    }
    if (head.upgrade) return this.upgrade(req, res);
    if (head.body.kind === 'chunked') {
      this.chunked = new ChunkedDecoder();
      this.phase = 'body';
    } else if (head.body.length > 0) {
      this.bodyLeft = head.body.length;
      this.phase = 'body';
    } else {
      this.phase = 'served';
      req.completed();
    }
    const expect = head.headers.expect;
    if (expect !== undefined && head.httpVersion === '1.1') {
      if (expect.toLowerCase() !== '100-continue') {
        res.shouldKeepAlive = false;
        res.statusCode = 417;
        res.end();
        return;
      }
      if (this.phase === 'body') socket.write('HTTP/1.1 100 Continue\r\n\r\n', 'latin1');
    }
    this.opts.handler(req, res);
    // a pipelined request taken after the client's end is cancelled as the one before it was
    if (this.clientEnded) req.onClientEnded?.();
  }

  /** the socket leaves HTTP: the handler gets it with the bytes after the head */
  private upgrade(req: H1Request, res: H1Response): void {
    this.phase = 'upgraded';
    const socket = this.socket;
    socket.off('data', this.onData);
    // nothing is lost before the handler's own listener comes (node's server does the same)
    (socket as unknown as { readableFlowing: boolean | null }).readableFlowing = null;
    const rest = this.pending ?? Buffer.alloc(0);
    this.pending = undefined;
    res.shouldKeepAlive = false;
    req.completed();
    this.opts.upgraded(socket);
    this.opts.handler(req, res, { socket, head: rest });
  }

  private readBody(): void {
    const buf = this.pending!;
    const req = this.req!;
    let used: number;
    if (this.chunked) {
      try {
        used = this.chunked.push(buf, 0, (data) => req.receive(data));
      } catch (err) {
        if (!(err instanceof HeadError)) throw err;
        req.aborted();
        this.reject(err);
        return;
      }
      this.keep(buf.subarray(used));
      if (this.chunked.done) this.bodyDone();
    } else {
      used = Math.min(this.bodyLeft, buf.length);
      this.keep(buf.subarray(used));
      req.receive(used === buf.length ? buf : buf.subarray(0, used));
      this.bodyLeft -= used;
      if (this.bodyLeft === 0) this.bodyDone();
    }
  }

  private bodyDone(): void {
    this.chunked = undefined;
    this.phase = 'served';
    this.req!.completed();
    // the response went out before the body was read: what was left of it is read and dropped,
    // and the connection takes its next request
    if (this.answered) this.nextRequest();
  }

  /** whether the connection can carry another request after the response now being made: not
   *  when much of the request's body is still to come (Go's rule: 256 KiB) */
  canKeepAlive(): boolean {
    if (this.phase !== 'body') return true;
    return !this.chunked && this.bodyLeft <= DRAIN_LIMIT_BYTES;
  }

  /** a head that cannot be served: Go's plain-text answer, then the connection closes */
  private reject(err: HeadError): void {
    clearTimeout(this.headTimer);
    this.phase = 'closed';
    this.pending = undefined;
    this.socket.off('data', this.onData);
    const socket = this.socket;
    if (this.res && this.res.headersSent) {
      socket.destroy();
      return;
    }
    socket.end(goClientErrorResponse(err.status, err.message), 'latin1');
    this.linger();
  }

  /** reads and drops what the client still sends for a moment, then cuts the connection */
  private linger(): void {
    const socket = this.socket;
    socket.on('data', () => {});
    socket.resume();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  }

  responseFinished(res: H1Response): void {
    if (res !== this.res || this.phase === 'closed') return;
    // an upgrade request answered as an ordinary request: the connection ends with the answer
    if (this.phase === 'upgraded') return void this.socket.end();
    const req = this.req!;
    const bodyUnread = !req.complete;
    if (!res.shouldKeepAlive) {
      this.phase = 'closed';
      this.socket.off('data', this.onData);
      this.pending = undefined;
      this.socket.end();
      if (bodyUnread) {
        req.aborted();
        this.linger();
      }
      return;
    }
    if (bodyUnread) {
      req.destroy();
      this.answered = true;
      return;
    }
    this.nextRequest();
    this.advance();
    this.endIfIdle();
  }

  /** the exchange is over: the connection waits for the next head */
  private nextRequest(): void {
    // a body the handler left unread is dropped, and no longer holds the socket paused
    this.req?.destroy();
    this.answered = false;
    this.req = undefined;
    this.res = undefined;
    this.phase = 'head';
    const paused = this.pausedFor.size > 0;
    this.pausedFor.clear();
    if (paused) this.socket.resume();
  }

  pauseBody(): void {
    this.pause('body');
  }

  resumeBody(): void {
    this.unpause('body');
  }

  private pause(why: 'body' | 'pipeline'): void {
    if (this.pausedFor.size === 0) this.socket.pause();
    this.pausedFor.add(why);
  }

  private unpause(why: 'body' | 'pipeline'): void {
    if (!this.pausedFor.delete(why)) return;
    if (this.pausedFor.size === 0 && this.phase !== 'closed') this.socket.resume();
  }

  private closed(): void {
    clearTimeout(this.headTimer);
    if (this.phase === 'upgraded') return;
    this.phase = 'closed';
    this.pending = undefined;
    this.req?.aborted();
    this.res?.closed();
  }
}
