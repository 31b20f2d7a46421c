// Sends fuzz requests over HTTP/1.1 and HTTP/2 exactly as generated: the path is not
// normalised, headers and bodies go out byte for byte. The admin authenticates with its client
// certificate, the limited user with a bearer token.

import http2 from 'node:http2';
import https from 'node:https';
import tls from 'node:tls';
import type { IncomingHttpHeaders } from 'node:http';
import type { ClientCredentials } from '../http-client.js';
import type { Caller, FuzzOutcome, FuzzRequest, FuzzResponse } from './request.js';

/** a response body longer than this is not read further (large lists are not what we check) */
const MAX_BODY = 4 * 1024 * 1024;
/** how long a raw HTTP/2 exchange is read after the client's end, at most */
const RAW_H2_WAIT_MS = 3_000;
/** a raw HTTP/2 connection the replica answered and then went quiet on for this long is done */
const RAW_H2_QUIET_MS = 250;

export interface TransportOptions {
  admin: ClientCredentials;
  limitedToken: string;
  /** per request; generous, only against hangs */
  timeoutMs?: number;
}

interface Identity {
  cert?: Buffer;
  key?: Buffer;
  authorization?: string;
}

export class FuzzTransport {
  private readonly url: URL;
  private readonly agents = new Map<Caller, https.Agent>();
  private readonly sessions = new Map<Caller, http2.ClientHttp2Session>();
  private readonly timeoutMs: number;

  constructor(private readonly opts: TransportOptions) {
    this.url = new URL(opts.admin.server);
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  private identity(caller: Caller): Identity {
    return caller === 'admin'
      ? { cert: this.opts.admin.cert, key: this.opts.admin.key }
      : { authorization: `Bearer ${this.opts.limitedToken}` };
  }

  private agent(caller: Caller): https.Agent {
    let agent = this.agents.get(caller);
    if (!agent) {
      const id = this.identity(caller);
      agent = new https.Agent({ keepAlive: true, maxSockets: 8, ca: this.opts.admin.ca, cert: id.cert, key: id.key });
      this.agents.set(caller, agent);
    }
    return agent;
  }

  private session(caller: Caller): http2.ClientHttp2Session {
    const open = this.sessions.get(caller);
    if (open && !open.closed && !open.destroyed) return open;
    const id = this.identity(caller);
    const session = http2.connect(this.url.origin, {
      ca: this.opts.admin.ca,
      cert: id.cert,
      key: id.key,
      // the client's own limits must not be what refuses a request with many or large headers
      maxSendHeaderBlockLength: 4 * 1024 * 1024,
      maxHeaderListPairs: 4096,
      maxSessionMemory: 64,
    });
    session.on('error', () => this.sessions.delete(caller));
    session.on('close', () => this.sessions.delete(caller));
    this.sessions.set(caller, session);
    return session;
  }

  send(req: FuzzRequest): Promise<FuzzOutcome> {
    if (req.protocol === 'raw-http/1.1' || req.protocol === 'raw-h2') return this.sendRaw(req);
    return req.protocol === 'h2' ? this.sendH2(req) : this.sendH1(req);
  }

  /**
   * Writes `req.raw` onto a fresh TLS connection, half-closes it and reads until the replica
   * closes. The outcome's body is every byte that came back; a connection the replica reset
   * is an answer too (Go resets as well).
   */
  private sendRaw(req: FuzzRequest): Promise<FuzzOutcome> {
    return new Promise((resolve) => {
      const id = this.identity(req.caller);
      const chunks: Buffer[] = [];
      let length = 0;
      let settled = false;
      let quiet: NodeJS.Timeout | undefined;
      const finish = (outcome: FuzzOutcome): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearTimeout(quiet);
        socket.destroy();
        resolve(outcome);
      };
      const answer = (note: string): void => {
        const body = Buffer.concat(chunks);
        // the oracle reads a raw exchange's answers from its bytes (judgeRaw)
        finish({
          status: 0,
          headers: {},
          body: body.length > 0 ? body : Buffer.from(note),
          truncated: length > MAX_BODY,
        });
      };
      const socket = tls.connect({
        host: this.url.hostname,
        port: Number(this.url.port),
        ca: this.opts.admin.ca,
        cert: id.cert,
        key: id.key,
        ALPNProtocols: [req.protocol === 'raw-h2' ? 'h2' : 'http/1.1'],
        servername: this.url.hostname === '127.0.0.1' ? undefined : this.url.hostname,
      });
      // an HTTP/2 connection the replica answered (its SETTINGS at least) may stay open after a
      // protocol error until its idle timeout closes it (server/http/idle-connections.test.ts)
      const waitMs = req.protocol === 'raw-h2' ? RAW_H2_WAIT_MS : this.timeoutMs;
      const timer = setTimeout(() => {
        if (req.protocol === 'raw-h2' && length > 0) answer('left open until idle');
        else finish({ error: `no end within ${waitMs} ms` });
      }, waitMs);
      let connected = false;
      socket.on('secureConnect', () => {
        connected = true;
        socket.write(req.raw ?? Buffer.alloc(0));
        socket.end();
      });
      socket.on('data', (c: Buffer) => {
        length += c.length;
        if (length <= MAX_BODY) chunks.push(c);
        if (req.protocol !== 'raw-h2') return;
        clearTimeout(quiet);
        quiet = setTimeout(() => answer('left open until idle'), RAW_H2_QUIET_MS);
      });
      socket.on('end', () => answer('closed without an answer'));
      socket.on('close', () => answer('closed without an answer'));
      socket.on('error', (err: NodeJS.ErrnoException) => {
        // before the handshake it is the replica that failed; after it, a reset is its answer
        if (!connected) finish({ error: `${err.code ?? ''} ${err.message}`.trim() });
        else answer(`reset: ${err.code ?? err.message}`);
      });
    });
  }

  private headersOf(req: FuzzRequest): Record<string, string> {
    const headers: Record<string, string> = { ...req.headers };
    const auth = this.identity(req.caller).authorization;
    if (auth && headers.authorization === undefined) headers.authorization = auth;
    if (req.body && headers['content-length'] === undefined) headers['content-length'] = String(req.body.length);
    return headers;
  }

  private sendH1(req: FuzzRequest): Promise<FuzzOutcome> {
    return new Promise((resolve) => {
      let settled = false;
      const done = (o: FuzzOutcome): void => {
        if (!settled) {
          settled = true;
          resolve(o);
        }
      };
      let r: ReturnType<typeof https.request>;
      try {
        r = https.request({
          agent: this.agent(req.caller),
          hostname: this.url.hostname,
          port: this.url.port,
          method: req.method,
          path: req.path,
          headers: this.headersOf(req),
          // responses with large headers must not fail on our side
          maxHeaderSize: 1024 * 1024,
        });
      } catch (err) {
        // the client refuses to send it (e.g. a character node does not allow in a path)
        done({ status: 0, headers: {}, body: Buffer.from(`client refused: ${(err as Error).message}`), truncated: true });
        return;
      }
      r.setTimeout(this.timeoutMs, () => r.destroy(new Error(`no answer within ${this.timeoutMs} ms`)));
      r.on('error', (err) => done({ error: `${(err as NodeJS.ErrnoException).code ?? ''} ${err.message}`.trim() }));
      r.on('response', (res) => {
        collect(res, watchRequested(req.path), res.statusCode ?? 0, res.headers, () => res.destroy(), done);
      });
      r.end(req.body);
    });
  }

  private sendH2(req: FuzzRequest): Promise<FuzzOutcome> {
    return new Promise((resolve) => {
      let settled = false;
      const done = (o: FuzzOutcome): void => {
        if (!settled) {
          settled = true;
          resolve(o);
        }
      };
      let stream: http2.ClientHttp2Stream;
      try {
        const headers: http2.OutgoingHttpHeaders = { ':method': req.method, ':path': req.path };
        for (const [k, v] of Object.entries(this.headersOf(req))) {
          // connection-specific headers are not allowed over HTTP/2
          if (['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'host'].includes(k.toLowerCase())) continue;
          headers[k.toLowerCase()] = v;
        }
        stream = this.session(req.caller).request(headers, { endStream: req.body === undefined });
      } catch (err) {
        done({ status: 0, headers: {}, body: Buffer.from(`client refused: ${(err as Error).message}`), truncated: true });
        return;
      }
      stream.setTimeout(this.timeoutMs, () => stream.close(http2.constants.NGHTTP2_CANCEL));
      stream.on('error', (err) => done({ error: `${(err as NodeJS.ErrnoException).code ?? ''} ${err.message}`.trim() }));
      stream.on('close', () => {
        if (stream.rstCode !== undefined && stream.rstCode !== http2.constants.NGHTTP2_NO_ERROR) {
          done({ error: `HTTP/2 stream reset (code ${stream.rstCode})` });
        }
      });
      stream.on('response', (h) => {
        const status = Number(h[':status']);
        collect(
          stream,
          watchRequested(req.path),
          status,
          h as IncomingHttpHeaders,
          () => stream.close(http2.constants.NGHTTP2_CANCEL),
          done,
        );
      });
      stream.end(req.body);
    });
  }

  close(): void {
    for (const a of this.agents.values()) a.destroy();
    for (const s of this.sessions.values()) s.destroy();
    this.agents.clear();
    this.sessions.clear();
  }
}

/** kube's rule (requestinfo and the query conversion): any `watch` value but 0 or false is a watch */
function watchRequested(path: string): boolean {
  const q = path.indexOf('?');
  if (/\/watch\//.test(q < 0 ? path : path.slice(0, q))) return true;
  if (q < 0) return false;
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(path.slice(q + 1));
  } catch {
    return false;
  }
  const v = params.get('watch');
  return v !== null && v !== '0' && v.toLowerCase() !== 'false';
}

function collect(
  source: NodeJS.ReadableStream,
  isWatch: boolean,
  status: number,
  headers: IncomingHttpHeaders,
  cut: () => void,
  done: (o: FuzzOutcome) => void,
): void {
  const chunks: Buffer[] = [];
  let length = 0;
  const finish = (truncated: boolean): void => {
    const res: FuzzResponse = { status, headers: { ...headers }, body: Buffer.concat(chunks), truncated };
    done(res);
  };
  // a watch that was accepted streams until its timeout: its headers are the answer
  if (isWatch && status >= 200 && status < 300) {
    finish(true);
    cut();
    return;
  }
  source.on('data', (c: Buffer) => {
    length += c.length;
    if (length > MAX_BODY) {
      finish(true);
      cut();
      return;
    }
    chunks.push(c);
  });
  source.on('end', () => finish(false));
  source.on('error', (err: Error) => done({ error: `response cut: ${err.message}` }));
}
