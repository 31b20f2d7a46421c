// An HTTP/1.1 request and its response, kapi's own rather than node's IncomingMessage and
// ServerResponse. Node's pair is a Readable and a Writable with a header store, an outgoing
// queue and a dozen listeners per request; the https-floor bench put node's HTTP/1.1 layer at
// a third of what a minimal server costs per request. These two give the small surface of
// request/types.ts over the connection's socket: a response's head and body go out in one
// write, and a request's body is handed on as it arrives (h1-connection.ts frames both).

import { EventEmitter } from 'node:events';
import { STATUS_CODES, type IncomingHttpHeaders } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { HttpRequest, HttpResponse } from '../request/types.js';
import { isShared } from '../request/shared-bytes.js';
import { TOKEN, type RequestHead } from './h1-head.js';

type HeaderValue = string | number | readonly string[];

/** what a request asks of its connection: to stop reading while its body waits unread */
export interface BodyFlow {
  pauseBody(): void;
  resumeBody(): void;
}

/** unread body bytes a request holds before its connection stops reading */
const BODY_HIGH_WATER_BYTES = 64 * 1024;

/** the request half: the parsed head, and the body as the connection hands it on */
export class H1Request extends EventEmitter implements HttpRequest {
  readonly method: string;
  readonly url: string;
  readonly httpVersion: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: readonly string[];
  /** called when the client ends its side of the connection while this request is served (it
   *  left, or half-closed after sending it): the request's work is cancelled, as Go cancels
   *  its context, and what the handler still answers is sent */
  onClientEnded: (() => void) | undefined = undefined;
  #queue: Buffer[] = [];
  #queuedBytes = 0;
  #flowing = false;
  #complete = false;
  #ended = false;
  #destroyed = false;
  #aborted = false;
  #flushScheduled = false;
  #bodyPaused = false;
  /** an async iterator waiting for the next chunk */
  #wake: (() => void) | undefined;

  constructor(
    head: RequestHead,
    readonly socket: TLSSocket,
    private readonly flow: BodyFlow,
  ) {
    super();
    this.method = head.method;
    this.url = head.url;
    this.httpVersion = head.httpVersion;
    this.headers = head.headers;
    this.rawHeaders = head.rawHeaders;
  }

  get readableEnded(): boolean {
    return this.#ended;
  }

  get destroyed(): boolean {
    return this.#destroyed;
  }

  /** the whole body has arrived (it may not have been read yet) */
  get complete(): boolean {
    return this.#complete;
  }

  override on(event: string | symbol, listener: (...args: never[]) => void): this {
    super.on(event, listener as (...args: unknown[]) => void);
    if (event === 'data') this.resume();
    return this;
  }

  resume(): this {
    if (!this.#flowing) {
      this.#flowing = true;
      this.#scheduleFlush();
    }
    return this;
  }

  /** stops taking the body: what arrives later is dropped, the response can still be written */
  destroy(): this {
    if (this.#destroyed) return this;
    this.#destroyed = true;
    this.#queue = [];
    this.#queuedBytes = 0;
    this.#unpause();
    this.#wake?.();
    if (!this.#ended) process.nextTick(() => this.emit('close'));
    return this;
  }

  /** body bytes from the connection */
  receive(chunk: Buffer): void {
    if (this.#destroyed || chunk.length === 0) return;
    if (this.#flowing && this.#queue.length === 0 && !this.#flushScheduled) {
      this.emit('data', chunk);
      return;
    }
    this.#queue.push(chunk);
    this.#queuedBytes += chunk.length;
    if (this.#queuedBytes > BODY_HIGH_WATER_BYTES && !this.#bodyPaused) {
      this.#bodyPaused = true;
      this.flow.pauseBody();
    }
    this.#wake?.();
    if (this.#flowing) this.#scheduleFlush();
  }

  /** the body has ended (at once for a request without one) */
  completed(): void {
    this.#complete = true;
    this.#wake?.();
    if (this.#flowing) this.#scheduleFlush();
  }

  /** the connection closed before the body ended */
  aborted(): void {
    if (this.#complete || this.#aborted) return;
    this.#aborted = true;
    this.emit('aborted');
    if (!this.#destroyed && this.listenerCount('error') > 0) {
      this.emit('error', Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    }
    this.#wake?.();
    if (!this.#destroyed) this.emit('close');
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    // a tick later, as a stream would: listeners added right after 'data' see the 'end'
    process.nextTick(() => {
      this.#flushScheduled = false;
      this.#flush();
    });
  }

  #flush(): void {
    while (this.#flowing && !this.#destroyed && this.#queue.length > 0) {
      const chunk = this.#queue.shift()!;
      this.#queuedBytes -= chunk.length;
      this.emit('data', chunk);
    }
    this.#unpause();
    if (this.#flowing && this.#complete && this.#queue.length === 0) this.#end();
  }

  #end(): void {
    if (this.#ended || this.#destroyed) return;
    this.#ended = true;
    this.emit('end');
    process.nextTick(() => this.emit('close'));
  }

  #unpause(): void {
    if (this.#bodyPaused && this.#queuedBytes <= BODY_HIGH_WATER_BYTES) {
      this.#bodyPaused = false;
      this.flow.resumeBody();
    }
  }

  /** chunks as they come, the connection pausing while the reader is behind */
  async *[Symbol.asyncIterator](): AsyncIterator<Buffer> {
    while (true) {
      if (this.#destroyed) return;
      const chunk = this.#queue.shift();
      if (chunk) {
        this.#queuedBytes -= chunk.length;
        this.#unpause();
        yield chunk;
        continue;
      }
      if (this.#aborted) throw Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
      if (this.#complete) {
        this.#ended = true;
        return;
      }
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }
}

/** what a response tells its connection */
export interface ResponseOwner {
  /** the response's last byte went to the socket */
  responseFinished(res: H1Response): void;
  /** whether the connection may carry another request after this response */
  canKeepAlive(): boolean;
}

/** statuses whose responses carry no body */
function bodiless(status: number): boolean {
  return status === 204 || status === 304 || (status >= 100 && status < 200);
}

const INVALID_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const EMPTY = Buffer.alloc(0);
/** bodies from this size on are written beside their framing rather than copied next to it */
const COPY_LIMIT_BYTES = 16 * 1024;
const LAST_CHUNK = '0\r\n\r\n';

let dateSecond = 0;
let dateText = '';

/** the Date field's value, made once a second */
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

function uncork(socket: TLSSocket): void {
  socket.uncork();
}

/** chunk-framed copies of bytes written to many streams (request/shared-bytes.ts): made once
 *  per frame, kept while the frame is */
const framedChunks = new WeakMap<Buffer, Buffer>();

function framedChunk(data: Buffer): Buffer {
  let framed = framedChunks.get(data);
  if (!framed) {
    const size = `${data.length.toString(16)}\r\n`;
    framed = Buffer.allocUnsafe(size.length + data.length + 2);
    framed.write(size, 0, 'latin1');
    data.copy(framed, size.length);
    framed.write('\r\n', size.length + data.length, 'latin1');
    framedChunks.set(data, framed);
  }
  return framed;
}

/** names checked already, by their lower-case form (the same few on every response) */
const checkedNames = new Map<string, string>();
const CHECKED_NAMES_KEPT = 256;

/** the lower-case form of a valid field name; throws on an invalid one */
function validName(name: string): string {
  let lower = checkedNames.get(name);
  if (lower !== undefined) return lower;
  if (!TOKEN.test(name)) throw invalidHeader('ERR_INVALID_HTTP_TOKEN', name);
  lower = name.toLowerCase();
  if (checkedNames.size < CHECKED_NAMES_KEPT) checkedNames.set(name, lower);
  return lower;
}

function invalidHeader(code: 'ERR_INVALID_HTTP_TOKEN' | 'ERR_INVALID_CHAR' | 'ERR_HTTP_INVALID_HEADER_VALUE', name: string): Error {
  const what = code === 'ERR_INVALID_HTTP_TOKEN' ? 'Header name must be a valid HTTP token' : 'Invalid character in header content';
  return Object.assign(new TypeError(`${what} ["${name}"]`), { code });
}

function headersSentError(): Error {
  return Object.assign(new Error('Cannot set headers after they are sent to the client'), { code: 'ERR_HTTP_HEADERS_SENT' });
}

/** the response half: headers kept until the head is made, then head and body on the socket */
export class H1Response extends EventEmitter implements HttpResponse {
  statusCode = 200;
  /** false: the connection closes after this response (`Connection: close` says so) */
  shouldKeepAlive: boolean;
  #headers = new Map<string, [name: string, value: HeaderValue]>();
  /** the head once made, until it goes out with the first body bytes */
  #pendingHead: string | undefined;
  #headersSent = false;
  #ending = false;
  #finished = false;
  #closed = false;
  #chunked = false;
  #noBody = false;

  constructor(
    readonly socket: TLSSocket,
    private readonly owner: ResponseOwner,
    private readonly headRequest: boolean,
    private readonly http10: boolean,
    keepAlive: boolean,
  ) {
    super();
    this.shouldKeepAlive = keepAlive;
  }

  get headersSent(): boolean {
    return this.#headersSent;
  }

  get writableEnded(): boolean {
    return this.#ending;
  }

  get writableFinished(): boolean {
    return this.#finished;
  }

  get destroyed(): boolean {
    return this.#closed || this.socket.destroyed;
  }

  setHeader(name: string, value: HeaderValue): this {
    if (this.#headersSent) throw headersSentError();
    this.#set(name, value);
    return this;
  }

  #set(name: string, value: HeaderValue): void {
    const lower = validName(name);
    if (value === undefined || value === null) throw invalidHeader('ERR_HTTP_INVALID_HEADER_VALUE', name);
    if (Array.isArray(value)) {
      for (const v of value as readonly string[]) if (INVALID_VALUE.test(String(v))) throw invalidHeader('ERR_INVALID_CHAR', name);
    } else if (typeof value === 'string' && INVALID_VALUE.test(value)) throw invalidHeader('ERR_INVALID_CHAR', name);
    this.#headers.set(lower, [name, value]);
  }

  getHeader(name: string): string | number | string[] | undefined {
    return this.#headers.get(name.toLowerCase())?.[1] as string | number | string[] | undefined;
  }

  hasHeader(name: string): boolean {
    return this.#headers.has(name.toLowerCase());
  }

  removeHeader(name: string): void {
    if (this.#headersSent) throw headersSentError();
    this.#headers.delete(name.toLowerCase());
  }

  getHeaderNames(): string[] {
    return [...this.#headers.keys()];
  }

  getHeaders(): Record<string, HeaderValue> {
    const out: Record<string, HeaderValue> = {};
    for (const [lower, [, value]] of this.#headers) out[lower] = value;
    return out;
  }

  writeHead(statusCode: number, headers?: Record<string, string | number | string[]>): this {
    if (this.#headersSent) throw headersSentError();
    if (headers) for (const name of Object.keys(headers)) this.#set(name, headers[name]!);
    this.statusCode = statusCode;
    this.#makeHead(undefined);
    return this;
  }

  flushHeaders(): void {
    if (this.#closed || this.socket.destroyed) return;
    if (!this.#headersSent) this.#makeHead(undefined);
    if (this.#pendingHead !== undefined) {
      const head = this.#pendingHead;
      this.#pendingHead = undefined;
      this.socket.write(head, 'latin1');
    }
  }

  /**
   * The head, with the framing the body gets: its Content-Length when known (`bodyBytes`, an
   * end() before any write), chunked otherwise (or, for HTTP/1.0, the connection's close).
   */
  #makeHead(bodyBytes: number | undefined): void {
    const status = this.statusCode;
    this.#noBody = this.headRequest || bodiless(status);
    const headers = this.#headers;
    if (!this.#noBody && !headers.has('content-length') && !headers.has('transfer-encoding')) {
      if (bodyBytes !== undefined) headers.set('content-length', ['Content-Length', bodyBytes]);
      else if (this.http10) this.shouldKeepAlive = false;
      else {
        headers.set('transfer-encoding', ['Transfer-Encoding', 'chunked']);
        this.#chunked = true;
      }
    } else if (!this.#noBody && !headers.has('content-length')) {
      // a handler's own Transfer-Encoding: chunked framing is then written here
      this.#chunked = String(headers.get('transfer-encoding')![1]).toLowerCase().includes('chunked');
    }
    if (this.shouldKeepAlive && !this.owner.canKeepAlive()) this.shouldKeepAlive = false;
    const connection = headers.get('connection');
    if (connection && /(^|,)\s*close\s*(,|$)/i.test(String(connection[1]))) this.shouldKeepAlive = false;
    let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'unknown'}\r\n`;
    for (const [name, value] of headers.values()) {
      if (Array.isArray(value)) for (const v of value as readonly string[]) head += `${name}: ${v}\r\n`;
      else head += `${name}: ${value as string | number}\r\n`;
    }
    if (!headers.has('date')) head += `Date: ${httpDate()}\r\n`;
    if (!connection) {
      if (!this.shouldKeepAlive) head += 'Connection: close\r\n';
      else if (this.http10) head += 'Connection: keep-alive\r\n';
    }
    this.#pendingHead = `${head}\r\n`;
    this.#headersSent = true;
  }

  write(chunk: string | Buffer, cb?: (err?: Error | null) => void): boolean {
    if (this.#ending || this.#closed || this.socket.destroyed) {
      const err = Object.assign(new Error(this.#ending ? 'write after end' : 'the connection is closed'), {
        code: this.#ending ? 'ERR_STREAM_WRITE_AFTER_END' : 'ERR_STREAM_DESTROYED',
      });
      if (cb) process.nextTick(cb, err);
      return false;
    }
    if (!this.#headersSent) this.#makeHead(undefined);
    const data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    if (this.#noBody || data.length === 0) {
      if (this.#pendingHead !== undefined) return this.#send(EMPTY, '', cb);
      if (cb) process.nextTick(cb);
      return true;
    }
    // a stream's writes made in one turn (an event to every watcher) leave together once the
    // turn's callbacks are done, as node's server has it, rather than one syscall each as made
    const socket = this.socket;
    if (!socket.writableCorked) {
      socket.cork();
      process.nextTick(uncork, socket);
    }
    if (this.#chunked && this.#pendingHead === undefined && isShared(data)) {
      return socket.write(framedChunk(data), cb);
    }
    return this.#send(data, this.#chunked ? '\r\n' : '', cb);
  }

  end(chunk?: string | Buffer, cb?: () => void): this {
    if (this.#ending) {
      if (cb) process.nextTick(cb);
      return this;
    }
    this.#ending = true;
    if (cb) this.once('finish', cb);
    if (this.#closed || this.socket.destroyed) return this;
    let data = chunk === undefined ? EMPTY : typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    if (!this.#headersSent) this.#makeHead(this.headRequest || bodiless(this.statusCode) ? undefined : data.length);
    if (this.#noBody) data = EMPTY;
    const trailer = this.#chunked ? (data.length > 0 ? `\r\n${LAST_CHUNK}` : LAST_CHUNK) : '';
    this.#send(data, trailer, () => this.#finish());
    return this;
  }

  /** one socket write: the head if it is still to go, the body bytes framed, `after` them */
  #send(data: Buffer, after: string, cb?: (err?: Error | null) => void): boolean {
    const head = this.#pendingHead ?? '';
    this.#pendingHead = undefined;
    const size = this.#chunked && data.length > 0 ? `${data.length.toString(16)}\r\n` : '';
    const before = head + size;
    if (before.length === 0 && after.length === 0) return this.socket.write(data, cb);
    if (data.length === 0) return this.socket.write(before + after, 'latin1', cb);
    if (data.length >= COPY_LIMIT_BYTES) {
      // one writev of the pieces: TLS joins them anyway, so a copy here would be a second one
      const socket = this.socket;
      socket.cork();
      if (before.length > 0) socket.write(before, 'latin1');
      let ok = after.length > 0 ? socket.write(data) : socket.write(data, cb);
      if (after.length > 0) ok = socket.write(after, 'latin1', cb);
      socket.uncork();
      return ok && !socket.writableNeedDrain;
    }
    const out = Buffer.allocUnsafe(before.length + data.length + after.length);
    out.write(before, 0, 'latin1');
    data.copy(out, before.length);
    if (after.length > 0) out.write(after, before.length + data.length, 'latin1');
    return this.socket.write(out, cb);
  }

  #finish(): void {
    if (this.#finished || this.#closed) return;
    this.#finished = true;
    this.emit('finish');
    this.owner.responseFinished(this);
    this.#close();
  }

  /** the connection is gone (or the response is done): 'close', once */
  closed(): void {
    this.#close();
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    process.nextTick(() => this.emit('close'));
  }

  destroy(): this {
    if (!this.socket.destroyed) this.socket.destroy();
    this.#close();
    return this;
  }
}
