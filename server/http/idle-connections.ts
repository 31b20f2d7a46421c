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
 * Closes an HTTP/2 session that has had no stream open for `idleMs`, as Go's server does. It
 * is also what ends a session after nghttp2 answered a protocol error with GOAWAY: node then
 * stops reading the connection and never sees the client close it.
 */
export function closeWhenIdle(session: ServerHttp2Session, socket: TLSSocket, idleMs: number): void {
  let open = 0;
  let timer: NodeJS.Timeout | undefined;
  // node ends a destroyed session's socket politely, which a client that stopped being read
  // never answers: the socket itself is cut (the TLS socket: session.socket is a guard that
  // throws on manipulation)
  const arm = (): void => {
    timer = setTimeout(() => {
      if (session.destroyed) return;
      if (!session.closed) session.close();
      setTimeout(() => {
        session.destroy();
        socket.destroy();
      }, GOAWAY_GRACE_MS).unref();
    }, idleMs);
    timer.unref();
  };
  session.on('stream', (stream: ServerHttp2Stream) => {
    if (open++ === 0) clearTimeout(timer);
    stream.once('close', () => {
      if (--open === 0 && !session.destroyed) arm();
    });
  });
  session.once('close', () => clearTimeout(timer));
  arm();
}

export interface Http1Connection {
  readonly socket: TLSSocket;
  open: number;
  timer: NodeJS.Timeout | undefined;
  upgraded: boolean;
}

/** HTTP/1.1 connections, each closed once it has waited `idleMs` for its next request */
export class Http1IdleConnections {
  private readonly bySocket = new WeakMap<object, Http1Connection>();

  constructor(private readonly idleMs: number) {}

  connected(socket: TLSSocket): void {
    const c: Http1Connection = { socket, open: 0, timer: undefined, upgraded: false };
    this.bySocket.set(socket, c);
    socket.once('close', () => clearTimeout(c.timer));
    this.arm(c);
  }

  /** a request on `socket` began: pass what this returns to requestEnded once it is done */
  requestStarted(socket: unknown): Http1Connection | undefined {
    const c = typeof socket === 'object' && socket !== null ? this.bySocket.get(socket) : undefined;
    if (c && c.open++ === 0) clearTimeout(c.timer);
    return c;
  }

  requestEnded(c: Http1Connection): void {
    if (--c.open === 0 && !c.upgraded && !c.socket.destroyed) this.arm(c);
  }

  /** the connection left HTTP for another protocol: its handler decides when it ends */
  upgraded(socket: object): void {
    const c = this.bySocket.get(socket);
    if (!c) return;
    c.upgraded = true;
    clearTimeout(c.timer);
  }

  private arm(c: Http1Connection): void {
    c.timer = setTimeout(() => c.socket.destroy(), this.idleMs);
    c.timer.unref();
  }
}
