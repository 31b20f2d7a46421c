// Connections that carry no request are closed after kube-apiserver's idle timeout (its Go
// http.Server's IdleTimeout, which its HTTP/2 server takes over): an HTTP/2 session with no
// stream open, an HTTP/1.1 keep-alive connection between requests. An open stream or request
// (a watch) keeps its connection however quiet it is; an upgraded connection (exec, a proxied
// WebSocket) belongs to its handler. A new HTTP/1.1 connection has only kube's ReadHeaderTimeout
// for its first request, as Go times that first read from the start.

import type { ServerHttp2Session } from 'node:http2';
import type { TLSSocket } from 'node:tls';

/** kube-apiserver's http.Server IdleTimeout */
export const CONNECTION_IDLE_TIMEOUT_MS = 90_000;
/** kube-apiserver's http.Server ReadHeaderTimeout: also how long a new HTTP/1.1 connection may
 *  go without a request */
export const READ_HEADER_TIMEOUT_MS = 32_000;
/** after its GOAWAY, how long an idle HTTP/2 connection has to go before it is cut (Go: 1 s) */
const GOAWAY_GRACE_MS = 1_000;

/**
 * One connection's idleness: requests (or streams) open and when the last one ended. A single
 * timer per connection looks when it fires and waits again for what is left of the idle time,
 * so a request costs two counter updates and a clock read, not a timer of its own.
 */
export class IdleClock {
  private open = 0;
  private lastEnd = performance.now();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** how long the connection may now go without a request: until its first one, the time a
   *  new connection has for it */
  private allowedMs: number;

  constructor(
    private readonly idleMs: number,
    private readonly onIdle: () => void,
    firstRequestMs = idleMs,
  ) {
    this.allowedMs = firstRequestMs;
    this.wait(firstRequestMs);
  }

  started(): void {
    this.open++;
    this.allowedMs = this.idleMs;
  }

  ended(): void {
    if (--this.open === 0) this.lastEnd = performance.now();
  }

  /** the connection is closed, or no longer this clock's to close */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private wait(ms: number): void {
    this.timer = setTimeout(() => this.check(), ms);
    this.timer.unref();
  }

  private check(): void {
    if (this.stopped) return;
    if (this.open > 0) return this.wait(this.idleMs);
    const left = this.allowedMs - (performance.now() - this.lastEnd);
    if (left > 0) return this.wait(left);
    this.stopped = true;
    this.onIdle();
  }
}

/** a request's connection as the idle rules know it: its HTTP/2 session, or its socket */
function connectionOf(req: { httpVersion: string; socket: unknown }): unknown {
  if (!req.httpVersion.startsWith('2')) return req.socket;
  return (req as unknown as { stream?: { session?: unknown } }).stream?.session;
}

/** every connection of a server, each closed once it has carried no request for `idleMs` */
export class IdleConnections {
  private readonly clocks = new WeakMap<object, IdleClock>();

  /** `firstRequestMs`: how long a new HTTP/1.1 connection may go without a request (Go's
   *  ReadHeaderTimeout runs from the start of a connection's first read) */
  constructor(
    private readonly idleMs: number,
    private readonly firstRequestMs = idleMs,
  ) {}

  /**
   * An HTTP/2 session with no stream open is told GOAWAY and cut a second later, as Go's server
   * does. This also ends a session after nghttp2 answered a protocol error with GOAWAY: node
   * then stops reading the connection and never sees the client close it.
   */
  http2(session: ServerHttp2Session, socket: TLSSocket): void {
    this.track(session, () => {
      if (session.destroyed) return;
      if (!session.closed) session.close();
      // node ends a destroyed session's socket politely, which a client that stopped being
      // read never answers: the socket itself is cut (the TLS socket: session.socket is a
      // guard that throws on manipulation)
      setTimeout(() => {
        session.destroy();
        socket.destroy();
      }, GOAWAY_GRACE_MS).unref();
    });
    session.once('close', () => this.clocks.get(session)?.stop());
  }

  /** an HTTP/1.1 keep-alive connection waiting for its next request is closed */
  http1(socket: TLSSocket): void {
    this.track(socket, () => socket.destroy(), this.firstRequestMs);
    socket.once('close', () => this.clocks.get(socket)?.stop());
  }

  /** a request began on its connection: call what this returns once it is done */
  requestStarted(req: { httpVersion: string; socket: unknown }): IdleClock | undefined {
    const connection = connectionOf(req);
    const clock = typeof connection === 'object' && connection !== null ? this.clocks.get(connection) : undefined;
    clock?.started();
    return clock;
  }

  /** the connection left HTTP for another protocol: its handler decides when it ends */
  upgraded(socket: object): void {
    this.clocks.get(socket)?.stop();
  }

  private track(connection: object, onIdle: () => void, firstRequestMs = this.idleMs): void {
    this.clocks.set(connection, new IdleClock(this.idleMs, onIdle, firstRequestMs));
  }
}
