// Raw watch streams over HTTP/1.1 (a TLS connection per stream, as a client without HTTP/2
// has) or HTTP/2 (streams multiplexed over one session per server, as client-go does), that
// say how each stream ended: cleanly (the chunked terminator / END_STREAM arrived) or cut
// (reset, aborted, connection lost). The graceful-shutdown test tells the two apart.

import http2 from 'node:http2';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { ClientCredentials } from '../http-client.js';

export interface WatchEventJson {
  type: string;
  object: {
    kind?: string;
    code?: number;
    reason?: string;
    message?: string;
    data?: Record<string, string>;
    metadata?: {
      name?: string;
      namespace?: string;
      resourceVersion?: string;
      labels?: Record<string, string>;
      annotations?: Record<string, string>;
    };
  };
}

export type StreamEnd =
  /** the server ended the response properly */
  | { kind: 'clean' }
  /** the response or connection broke off */
  | { kind: 'cut'; message: string }
  /** the client closed it */
  | { kind: 'closed' };

export interface RawWatch {
  /** the HTTP status (0 when no response came) */
  readonly status: Promise<number>;
  /** how the stream ended */
  readonly ended: Promise<StreamEnd>;
  /** the body of a non-200 answer */
  errorBody(): string;
  close(): void;
}

export interface OpenWatchOptions {
  creds: ClientCredentials;
  server: string;
  /** path with query (watch=1 included) */
  path: string;
  http2?: Http2Sessions;
  onEvent: (ev: WatchEventJson) => void;
}

function lineSplitter(onLine: (line: string) => void): { push(chunk: string): void; flush(): void } {
  let buf = '';
  return {
    push(chunk) {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) onLine(line);
      }
    },
    flush() {
      if (buf.trim()) onLine(buf.trim());
      buf = '';
    },
  };
}

function parseEvent(line: string): WatchEventJson {
  try {
    return JSON.parse(line) as WatchEventJson;
  } catch {
    return { type: 'UNPARSEABLE', object: { message: line.slice(0, 500) } };
  }
}

export function openWatch(opts: OpenWatchOptions): RawWatch {
  return opts.http2 ? openWatchH2(opts, opts.http2) : openWatchH1(opts);
}

function settle<T>(): { promise: Promise<T>; resolve: (v: T) => void; done: () => boolean } {
  let resolve!: (v: T) => void;
  let settled = false;
  const promise = new Promise<T>((r) => (resolve = r));
  return {
    promise,
    resolve: (v) => {
      if (settled) return;
      settled = true;
      resolve(v);
    },
    done: () => settled,
  };
}

function openWatchH1(opts: OpenWatchOptions): RawWatch {
  const url = new URL(opts.server);
  const status = settle<number>();
  const ended = settle<StreamEnd>();
  let body = '';
  let closedByUs = false;
  const req = https.request({
    hostname: url.hostname,
    port: url.port,
    path: opts.path,
    method: 'GET',
    agent: false,
    ca: opts.creds.ca,
    cert: opts.creds.cert,
    key: opts.creds.key,
    headers: { accept: 'application/json' },
  });
  req.on('error', (err) => {
    status.resolve(0);
    ended.resolve(closedByUs ? { kind: 'closed' } : { kind: 'cut', message: err.message });
  });
  req.on('response', (res: IncomingMessage) => {
    status.resolve(res.statusCode ?? 0);
    res.setEncoding('utf8');
    const lines = lineSplitter((l) => opts.onEvent(parseEvent(l)));
    res.on('data', (chunk: string) => {
      if (res.statusCode === 200) lines.push(chunk);
      else body += chunk;
    });
    res.on('end', () => {
      if (res.statusCode === 200) lines.flush();
      ended.resolve({ kind: 'clean' });
    });
    res.on('aborted', () => ended.resolve(closedByUs ? { kind: 'closed' } : { kind: 'cut', message: 'response aborted' }));
    res.on('error', (err) => ended.resolve(closedByUs ? { kind: 'closed' } : { kind: 'cut', message: err.message }));
    res.on('close', () => {
      // 'close' without 'end': the connection went away mid-response
      ended.resolve(closedByUs ? { kind: 'closed' } : { kind: 'cut', message: 'connection closed before the response ended' });
    });
  });
  req.end();
  return {
    status: status.promise,
    ended: ended.promise,
    errorBody: () => body,
    close() {
      closedByUs = true;
      req.destroy();
      ended.resolve({ kind: 'closed' });
    },
  };
}

/** HTTP/2 sessions per server, shared by the watches of one client (as client-go shares one
 *  connection); a session that closes or receives GOAWAY is replaced for new streams */
export class Http2Sessions {
  private readonly sessions = new Map<string, http2.ClientHttp2Session>();
  private closed = false;
  /** streams whose first DATA came before node emitted their response headers */
  dataBeforeResponse = 0;
  constructor(private readonly creds: ClientCredentials) {}

  get(server: string): http2.ClientHttp2Session {
    if (this.closed) throw new Error('http2 sessions closed');
    const cur = this.sessions.get(server);
    if (cur && !cur.closed && !cur.destroyed) return cur;
    const session = http2.connect(server, { ca: this.creds.ca, cert: this.creds.cert, key: this.creds.key });
    const drop = () => {
      if (this.sessions.get(server) === session) this.sessions.delete(server);
    };
    session.on('goaway', drop);
    session.on('close', drop);
    session.on('error', drop);
    this.sessions.set(server, session);
    return session;
  }

  close(): void {
    this.closed = true;
    for (const s of this.sessions.values()) s.destroy();
    this.sessions.clear();
  }
}

function openWatchH2(opts: OpenWatchOptions, sessions: Http2Sessions): RawWatch {
  const status = settle<number>();
  const ended = settle<StreamEnd>();
  let body = '';
  let closedByUs = false;
  let stream: http2.ClientHttp2Stream;
  try {
    const session = sessions.get(opts.server);
    stream = session.request({ ':method': 'GET', ':path': opts.path, accept: 'application/json' });
  } catch (err) {
    status.resolve(0);
    ended.resolve({ kind: 'cut', message: (err as Error).message });
    return { status: status.promise, ended: ended.promise, errorBody: () => '', close() {} };
  }
  let code = 0;
  let gotEnd = false;
  const lines = lineSplitter((l) => opts.onEvent(parseEvent(l)));
  // node emits 'response' on a tick after it reads the HEADERS frame (process.nextTick): DATA
  // handed over before that tick must not be taken for an error body, so it waits for the status
  let early: string[] | undefined;
  const take = (chunk: string) => {
    if (code === 200) lines.push(chunk);
    else body += chunk;
  };
  stream.setEncoding('utf8');
  stream.on('response', (headers) => {
    code = Number(headers[':status'] ?? 0);
    status.resolve(code);
    if (early) {
      sessions.dataBeforeResponse++;
      for (const chunk of early) take(chunk);
      early = undefined;
    }
  });
  stream.on('data', (chunk: string) => {
    if (code === 0) (early ??= []).push(chunk);
    else take(chunk);
  });
  stream.on('end', () => {
    gotEnd = true;
    if (code === 200) lines.flush();
  });
  stream.on('error', (err) => {
    status.resolve(0);
    ended.resolve(closedByUs ? { kind: 'closed' } : { kind: 'cut', message: err.message });
  });
  stream.on('close', () => {
    status.resolve(0);
    if (closedByUs) ended.resolve({ kind: 'closed' });
    else if (gotEnd && stream.rstCode === http2.constants.NGHTTP2_NO_ERROR) ended.resolve({ kind: 'clean' });
    else ended.resolve({ kind: 'cut', message: `stream closed (end: ${gotEnd}, rst code ${stream.rstCode})` });
  });
  stream.end();
  return {
    status: status.promise,
    ended: ended.promise,
    errorBody: () => body,
    close() {
      closedByUs = true;
      stream.close(http2.constants.NGHTTP2_CANCEL);
      ended.resolve({ kind: 'closed' });
    },
  };
}
