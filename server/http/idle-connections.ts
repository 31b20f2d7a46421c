// Connections that carry no request are closed after kube-apiserver's idle timeout (its Go
// http.Server's IdleTimeout, which its HTTP/2 server takes over): an HTTP/2 session with no
// stream open, an HTTP/1.1 keep-alive connection between requests. An open stream or request
// (a watch) keeps its connection however quiet it is; an upgraded connection (exec, a proxied
// WebSocket) belongs to its handler.

import type { ServerHttp2Session, ServerHttp2Stream } from 'node:http2';
import type { TLSSocket } from 'node:tls';

/** kube-apiserver's http.Server IdleTimeout */
export const CONNECTION_IDLE_TIMEOUT_MS = 90_000;
/** after its GOAWAY, how long an idle HTTP/2 connection has to go before it is cut (Go: 1 s) */
const GOAWAY_GRACE_MS = 1_000;

/**
 * One connection's idleness: requests (or streams) open and when the last one ended. A single
 * timer per connection looks when it fires and waits again for what is left of the idle time,
 * so a request costs two counter updates and a clock read, not a timer of its own.
 */
export class IdleClock {
  open = 0;
  private lastEnd = performance.now();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly idleMs: number,
    private readonly onIdle: () => void,
  ) {
    this.wait(idleMs);
  }

  started(): void {
    this.open++;
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
    const left = this.idleMs - (performance.now() - this.lastEnd);
    if (left > 0) return this.wait(left);
    this.stopped = true;
    this.onIdle();
  }
}

/**
 * Closes an HTTP/2 session that has had no stream open for `idleMs`, as Go's server does. It
 * is also what ends a session after nghttp2 answered a protocol error with GOAWAY: node then
 * stops reading the connection and never sees the client close it.
 */
export function closeWhenIdle(session: ServerHttp2Session, socket: TLSSocket, idleMs: number): void {
  const clock = new IdleClock(idleMs, () => {
    if (session.destroyed) return;
    if (!session.closed) session.close();
    // node ends a destroyed session's socket politely, which a client that stopped being read
    // never answers: the socket itself is cut (the TLS socket: session.socket is a guard that
    // throws on manipulation)
    setTimeout(() => {
      session.destroy();
      socket.destroy();
    }, GOAWAY_GRACE_MS).unref();
  });
  session.on('stream', (stream: ServerHttp2Stream) => {
    clock.started();
    stream.once('close', () => clock.ended());
  });
  session.once('close', () => clock.stop());
}

/** HTTP/1.1 connections, each closed once it has waited `idleMs` for its next request */
export class Http1IdleConnections {
  private readonly bySocket = new WeakMap<object, IdleClock>();

  constructor(private readonly idleMs: number) {}

  connected(socket: TLSSocket): void {
    const clock = new IdleClock(this.idleMs, () => socket.destroy());
    this.bySocket.set(socket, clock);
    socket.once('close', () => clock.stop());
  }

  /** a request on `socket` began: pass what this returns to requestEnded once it is done */
  requestStarted(socket: unknown): IdleClock | undefined {
    const clock = typeof socket === 'object' && socket !== null ? this.bySocket.get(socket) : undefined;
    clock?.started();
    return clock;
  }

  requestEnded(clock: IdleClock): void {
    clock.ended();
  }

  /** the connection left HTTP for another protocol: its handler decides when it ends */
  upgraded(socket: object): void {
    this.bySocket.get(socket)?.stop();
  }
}
