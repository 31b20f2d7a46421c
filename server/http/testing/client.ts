// Minimal HTTPS clients for tests: one request over HTTP/1.1 or HTTP/2, and streaming reads
// of a watch.

import { connect, type ClientHttp2Session } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import type { KeyPair } from '../../pki/testing.js';

export interface TestResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
  json<T = Record<string, unknown>>(): T;
}

export interface RequestOptions {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** client certificate; none when omitted */
  identity?: KeyPair;
}

function response(status: number, headers: IncomingHttpHeaders, raw: Buffer): TestResponse {
  const body = headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
  const text = body.toString('utf8');
  return { status, headers, body, text, json: <T>() => JSON.parse(text) as T };
}

export class TestClient {
  constructor(
    readonly port: number,
    readonly ca: string,
    readonly identity?: KeyPair,
  ) {}

  /** one request over HTTP/1.1 on its own connection */
  http1(opts: RequestOptions): Promise<TestResponse> {
    const id = opts.identity ?? this.identity;
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        {
          host: '127.0.0.1',
          port: this.port,
          method: opts.method ?? 'GET',
          path: opts.path,
          headers: opts.body === undefined ? opts.headers : { 'content-length': String(Buffer.byteLength(opts.body)), ...opts.headers },
          ca: this.ca,
          cert: id?.cert,
          key: id?.key,
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve(response(res.statusCode ?? 0, res.headers, Buffer.concat(chunks))));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(opts.body);
    });
  }

  /** an HTTP/2 session (close it when done) */
  session(identity?: KeyPair): ClientHttp2Session {
    const id = identity ?? this.identity;
    return connect(`https://127.0.0.1:${this.port}`, { ca: this.ca, cert: id?.cert, key: id?.key });
  }

  /** one request over a session */
  static http2(session: ClientHttp2Session, opts: RequestOptions): Promise<TestResponse> {
    return new Promise((resolve, reject) => {
      const stream = session.request({ ':method': opts.method ?? 'GET', ':path': opts.path, ...(opts.headers ?? {}) });
      let status = 0;
      let headers: IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      stream.on('response', (h) => {
        status = Number(h[':status']);
        headers = h as IncomingHttpHeaders;
      });
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => resolve(response(status, headers, Buffer.concat(chunks))));
      stream.on('error', reject);
      stream.end(opts.body);
    });
  }
}

/** splits a stream of newline-terminated JSON documents */
export class LineReader {
  private buffer = '';
  private lines: string[] = [];
  private waiters: ((line: string | undefined) => void)[] = [];
  private ended = false;

  push(chunk: Buffer | string): void {
    this.buffer += chunk.toString();
    let i: number;
    while ((i = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, i);
      this.buffer = this.buffer.slice(i + 1);
      const w = this.waiters.shift();
      if (w) w(line);
      else this.lines.push(line);
    }
  }

  end(): void {
    this.ended = true;
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  /** the next line, or undefined once the stream has ended */
  next(): Promise<string | undefined> {
    const line = this.lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.ended) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  async nextJson<T = Record<string, unknown>>(): Promise<T | undefined> {
    const line = await this.next();
    return line === undefined ? undefined : (JSON.parse(line) as T);
  }
}
