// An HTTP/2 request and its response served straight off node's ServerHttp2Stream, without
// node's compatibility layer. That layer makes a Readable for every request and a Stream for
// every response, hangs ten listeners and a socket Proxy on each stream, and asks for
// trailers on every response only to send none (one more callback and an empty DATA frame);
// a profile of HTTP/2 GETs put a tenth of each request's CPU in it. Every layer above reads a
// request and writes a response through the small surface of request/types.ts, which these
// two classes give over the stream itself: listeners go on the stream, headers are kept
// until the one `respond`.
//
// What the compatibility layer did and these do too: `connection` headers are dropped (HTTP/2
// forbids them), header names are lower-cased, `date` is sent, a response's 'finish' is the
// stream's close, errors on the stream are not thrown (the stream closes and 'close' tells),
// destroying the request stops reading its body without resetting the stream (a 413 can
// still be answered), `Expect: 100-continue` is answered before the request is handed on,
// other expectations get 417 and CONNECT 405.

import { validateHeaderName } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';
import type { HttpRequest, HttpResponse } from '../request/types.js';

type HeaderValue = string | number | readonly string[];

/** errors on a stream (it closes, and 'close' tells), and the body of a request no one reads
 *  any more (let through unread) */
function ignore(): void {}

/** the request half: headers as node parsed them, the body read from the stream */
export class H2Request implements HttpRequest {
  readonly httpVersion = '2.0';
  #destroyed = false;

  constructor(
    readonly stream: ServerHttp2Stream,
    readonly headers: IncomingHttpHeaders,
    readonly rawHeaders: readonly string[],
  ) {}

  get method(): string | undefined {
    return this.headers[':method'] as string | undefined;
  }

  get url(): string | undefined {
    return this.headers[':path'] as string | undefined;
  }

  /** the connection's socket (a proxy node keeps per session), for its address and certificates */
  get socket(): unknown {
    return this.stream.session?.socket;
  }

  get readableEnded(): boolean {
    return this.stream.readableEnded;
  }

  get destroyed(): boolean {
    return this.#destroyed || this.stream.destroyed;
  }

  on(event: string, listener: (...args: never[]) => void): this {
    this.stream.on(event, listener as (...args: unknown[]) => void);
    return this;
  }

  off(event: string, listener: (...args: never[]) => void): this {
    this.stream.off(event, listener as (...args: unknown[]) => void);
    return this;
  }

  resume(): this {
    this.stream.resume();
    return this;
  }

  /** stops reading the body; the response can still be written */
  destroy(): this {
    if (this.#destroyed) return this;
    this.#destroyed = true;
    this.stream.on('data', ignore);
    this.stream.resume();
    return this;
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    // the stream is the response too: reading the body to its end must not destroy it
    return this.stream.iterator({ destroyOnReturn: false })[Symbol.asyncIterator]();
  }
}

/** statuses whose responses carry no body */
function bodiless(status: number): boolean {
  return status === 204 || status === 205 || status === 304;
}

/** the response half: headers gathered until the one HEADERS frame, the body written to the stream */
export class H2Response implements HttpResponse {
  statusCode = 200;
  #headers: Record<string, HeaderValue> = {};
  #ending = false;

  constructor(
    readonly stream: ServerHttp2Stream,
    private readonly headRequest: boolean,
  ) {}

  get headersSent(): boolean {
    return this.stream.headersSent;
  }

  get writableEnded(): boolean {
    return this.#ending;
  }

  /** node ends a reset stream's writable side itself: a response cut off is not finished */
  get writableFinished(): boolean {
    return this.stream.writableFinished && !this.stream.aborted;
  }

  get destroyed(): boolean {
    return this.stream.destroyed;
  }

  setHeader(name: string, value: HeaderValue): this {
    if (this.stream.headersSent) throw headersSentError();
    this.#set(name, value);
    return this;
  }

  #set(name: string, value: HeaderValue): void {
    validateHeaderName(name);
    if (value === undefined || value === null) throw new TypeError(`invalid value for header "${name}"`);
    const lower = name.toLowerCase();
    if (lower === 'connection') return;
    this.#headers[lower] = value;
  }

  getHeader(name: string): string | number | string[] | undefined {
    return this.#headers[name.toLowerCase()] as string | number | string[] | undefined;
  }

  hasHeader(name: string): boolean {
    return Object.hasOwn(this.#headers, name.toLowerCase());
  }

  removeHeader(name: string): void {
    if (this.stream.headersSent) throw headersSentError();
    delete this.#headers[name.toLowerCase()];
  }

  writeHead(statusCode: number, headers?: Record<string, string | number | string[]>): this {
    if (this.stream.destroyed || this.stream.closed) return this;
    if (this.stream.headersSent) throw headersSentError();
    if (headers) for (const name of Object.keys(headers)) this.#set(name, headers[name]!);
    this.statusCode = statusCode;
    this.#respond(false);
    return this;
  }

  flushHeaders(): void {
    if (!this.stream.destroyed && !this.stream.closed && !this.stream.headersSent) this.writeHead(this.statusCode);
  }

  #respond(endStream: boolean): void {
    const headers = this.#headers as Record<string, HeaderValue>;
    headers[':status'] = this.statusCode;
    this.stream.respond(headers as Parameters<ServerHttp2Stream['respond']>[0], { endStream });
  }

  /** whether what is written would reach the client: HEAD and bodiless statuses end at the headers */
  #bodyAllowed(): boolean {
    return !this.headRequest && !bodiless(this.statusCode);
  }

  write(chunk: string | Buffer, cb?: (err?: Error | null) => void): boolean {
    if (this.#ending || this.stream.destroyed || this.stream.closed) {
      const err = Object.assign(new Error(this.#ending ? 'write after end' : 'the stream is closed'), {
        code: this.#ending ? 'ERR_STREAM_WRITE_AFTER_END' : 'ERR_HTTP2_INVALID_STREAM',
      });
      if (cb) process.nextTick(cb, err);
      return false;
    }
    if (!this.stream.headersSent) this.writeHead(this.statusCode);
    if (!this.#bodyAllowed()) {
      if (cb) process.nextTick(cb);
      return true;
    }
    return this.stream.write(chunk, cb);
  }

  end(chunk?: string | Buffer, cb?: () => void): this {
    if (this.#ending) {
      if (cb) process.nextTick(cb);
      return this;
    }
    this.#ending = true;
    if (cb) this.stream.once('finish', cb);
    const stream = this.stream;
    if (stream.destroyed || stream.closed) return this;
    if (!stream.headersSent) {
      const empty = chunk === undefined || chunk.length === 0 || !this.#bodyAllowed();
      this.#respond(empty);
      if (empty) return this;
    }
    if (chunk !== undefined && chunk.length > 0 && this.#bodyAllowed()) stream.end(chunk);
    else stream.end();
    return this;
  }

  /** the response's 'finish' is its stream's close, as the compatibility layer has it */
  on(event: 'close' | 'drain' | 'finish', listener: () => void): this {
    this.stream.on(event === 'finish' ? 'close' : event, listener);
    return this;
  }

  once(event: 'close' | 'drain' | 'finish', listener: () => void): this {
    this.stream.once(event === 'finish' ? 'close' : event, listener);
    return this;
  }

  off(event: 'close' | 'drain' | 'finish', listener: () => void): this {
    this.stream.off(event === 'finish' ? 'close' : event, listener);
    return this;
  }

  destroy(err?: Error): this {
    if (!this.stream.destroyed) this.stream.destroy(err);
    return this;
  }
}

function headersSentError(): Error {
  return Object.assign(new Error('Response has already been initiated.'), { code: 'ERR_HTTP2_HEADERS_SENT' });
}

/**
 * Serves a stream node's HTTP/2 server emits: answers CONNECT and expectations as node's
 * compatibility layer does, and hands every other request to `handler`.
 */
export function serveHttp2Stream(
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  rawHeaders: readonly string[],
  handler: (req: HttpRequest, res: HttpResponse) => void,
): void {
  stream.on('error', ignore);
  // node hands a stream over on the tick after its HEADERS: a RST_STREAM read with them may
  // have closed it already, and there is nothing to answer
  if (stream.destroyed || stream.closed) return;
  const method = headers[':method'];
  const res = new H2Response(stream, method === 'HEAD');
  if (method === 'CONNECT') {
    res.statusCode = 405;
    res.end();
    return;
  }
  const expect = headers.expect;
  if (expect !== undefined) {
    if (expect !== '100-continue') {
      res.statusCode = 417;
      res.end();
      return;
    }
    stream.additionalHeaders({ ':status': 100 });
  }
  handler(new H2Request(stream, headers, rawHeaders), res);
}
