// The listening server: TLS with HTTP/2 and HTTP/1.1 chosen by ALPN. Client certificates are
// requested but not required, so authentication (not the TLS layer) decides what they mean.
// HTTP/2 streams are served directly off node's sessions (h2-exchange.ts); HTTP/1.1
// connections by kapi's own framing (h1-connection.ts).

import {
  createSecureServer as createHttp2SecureServer,
  type Http2SecureServer,
  type IncomingHttpHeaders,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { createSecureContext, type SecureContext, type TLSSocket } from 'node:tls';
import { HTTP2_MAX_FRAME_BYTES, HTTP2_MAX_HEADER_LIST_BYTES, HTTP2_MAX_HEADER_PAIRS } from './header-limits.js';
import { sniMatcher, type NodeTlsVersion } from './tls-options.js';
import { CONNECTION_IDLE_TIMEOUT_MS, IdleConnections, READ_HEADER_TIMEOUT_MS } from './idle-connections.js';
import type { HttpRequest, HttpResponse, UpgradeSocket } from '../request/types.js';
import { serveHttp2Stream } from './h2-exchange.js';
import { serveHttp1 } from './h1-connection.js';

export interface SecureServerOptions {
  cert: string | Buffer;
  key: string | Buffer;
  /** CAs whose client certificates the TLS layer accepts (client CA, front-proxy CA, ...) */
  clientCA?: string | Buffer | (string | Buffer)[];
  /** with `upgrade` for an HTTP/1.1 request asking to switch protocols */
  handler: (req: HttpRequest, res: HttpResponse, upgrade?: UpgradeSocket) => void;
  /** streams per HTTP/2 connection (client-go multiplexes every watch over one) */
  maxConcurrentStreams?: number;
  /** MiB of buffered data an HTTP/2 session may hold before refusing new streams */
  maxSessionMemoryMiB?: number;
  /** --tls-min-version (default TLS 1.2) */
  minVersion?: NodeTlsVersion;
  /** --tls-cipher-suites as an OpenSSL list for TLS 1.2 and older (default: node's) */
  ciphers?: string;
  /** --tls-sni-cert-key: certificates chosen by the name the client asks for */
  sniCertificates?: SniCertificate[];
  /** how long a connection with no request open stays (kube-apiserver: 90 s) */
  idleTimeoutMs?: number;
  /** how long a TLS handshake, and an HTTP/1.1 connection's first request head or any later
   *  head once begun, may take (kube-apiserver's ReadHeaderTimeout: 32 s) */
  readHeaderTimeoutMs?: number;
}

export interface SniCertificate {
  cert: string | Buffer;
  key: string | Buffer;
  /** domain patterns ("*.example.com" matches one label) */
  names: string[];
  /** the names were given on the command line (they win over names read from certificates) */
  explicit: boolean;
}

export interface SecureServer {
  server: Http2SecureServer;
  /** resolves with the bound address */
  listen(port: number, host?: string): Promise<AddressInfo>;
  /**
   * Graceful close: the listener closes at once; requests in flight are answered (HTTP/2
   * clients get GOAWAY, HTTP/1.1 responses from now on carry `Connection: close`), then the
   * connections close. Whatever is still open after `graceMs` is cut (0: everything at once).
   * Long-running requests (watches) must be ended by their owner, or they hold the close
   * up until `graceMs`.
   */
  close(graceMs?: number): Promise<void>;
  /** requests being served now */
  readonly inFlight: number;
}

export function createSecureServer(opts: SecureServerOptions): SecureServer {
  let inFlight = 0;
  let closing = false;
  let onIdle: (() => void) | undefined;
  const readHeaderTimeoutMs = opts.readHeaderTimeoutMs ?? READ_HEADER_TIMEOUT_MS;
  const idle = new IdleConnections(opts.idleTimeoutMs ?? CONNECTION_IDLE_TIMEOUT_MS, readHeaderTimeoutMs);
  // every request is counted until its response closes (finished or aborted), so close()
  // knows when the requests in flight are done, and its connection when it is idle
  const handler = (req: HttpRequest, res: HttpResponse): void => {
    inFlight++;
    const connection = idle.requestStarted(req);
    res.once('close', () => {
      inFlight--;
      if (inFlight === 0) onIdle?.();
      connection?.ended();
    });
    // closing: this HTTP/1.1 connection ends after the response (HTTP/2 clients got GOAWAY)
    if (closing && req.httpVersion.startsWith('1.')) res.setHeader('connection', 'close');
    opts.handler(req, res);
  };
  // the client CAs go into every SNI context too, so client certificates verify the same way
  const sniContexts = (opts.sniCertificates ?? []).map((c) => ({
    names: c.names,
    explicit: c.explicit,
    value: createSecureContext({
      cert: c.cert,
      key: c.key,
      ca: opts.clientCA,
      minVersion: opts.minVersion ?? 'TLSv1.2',
      ciphers: opts.ciphers,
    }),
  }));
  const pickContext = sniContexts.length > 0 ? sniMatcher<SecureContext>(sniContexts) : undefined;
  const server = createHttp2SecureServer(
    {
      allowHTTP1: true,
      // a TLS server leaves Nagle's algorithm on (node's http server turns it off): a response
      // written in several pieces, or a watch's next event, would wait for the client's delayed
      // ACK of the previous piece, 40 ms on Linux
      noDelay: true,
      cert: opts.cert,
      key: opts.key,
      ca: opts.clientCA,
      requestCert: true,
      rejectUnauthorized: false,
      minVersion: opts.minVersion ?? 'TLSv1.2',
      // Go bounds the handshake by the smallest of its read and write timeouts: kube sets only
      // ReadHeaderTimeout
      handshakeTimeout: readHeaderTimeoutMs,
      ...(opts.ciphers ? { ciphers: opts.ciphers } : {}),
      ...(pickContext
        ? { SNICallback: (name: string, cb: (err: Error | null, ctx?: SecureContext) => void) => cb(null, pickContext(name)) }
        : {}),
      settings: {
        maxConcurrentStreams: opts.maxConcurrentStreams ?? 1000,
        maxHeaderListSize: HTTP2_MAX_HEADER_LIST_BYTES,
        maxFrameSize: HTTP2_MAX_FRAME_BYTES,
      },
      maxHeaderListPairs: HTTP2_MAX_HEADER_PAIRS,
      maxSessionMemory: opts.maxSessionMemoryMiB ?? 256,
    },
    handler as unknown as Parameters<typeof createHttp2SecureServer>[1],
  );
  // node's HTTP/2 server serves every stream through its compatibility layer once there is a
  // 'request' listener; the streams are served directly instead (h2-exchange.ts)
  server.removeAllListeners('stream');
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, _flags: number, rawHeaders: string[]) =>
    serveHttp2Stream(stream, headers, rawHeaders, handler),
  );
  // node's own secureConnection listener makes an HTTP/2 session of an h2 connection (and
  // would hand any other to node's HTTP/1.1 server): it now sees only h2 connections, and
  // emits 'session' before it returns, which is how a session and its socket are paired.
  // allowHTTP1 stays on so that ALPN offers http/1.1.
  const sessionListeners = server.listeners('secureConnection') as ((socket: TLSSocket) => void)[];
  server.removeAllListeners('secureConnection');
  let newSession: ServerHttp2Session | undefined;
  server.on('session', (session: ServerHttp2Session) => {
    newSession = session;
  });
  const http1 = {
    readHeaderTimeoutMs,
    // Upgrade requests (exec, attach, port-forward, WebSockets through the proxies) go through
    // the same chain; until a handler takes the socket over, an ordinary response is written
    // on it, and the connection ends with that response.
    handler: (req: HttpRequest, res: HttpResponse, upgrade?: UpgradeSocket) =>
      upgrade ? opts.handler(req, res, upgrade) : handler(req, res),
    upgraded: (socket: TLSSocket) => idle.upgraded(socket),
  };
  const sockets = new Set<TLSSocket>();
  server.on('secureConnection', (socket: TLSSocket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    if (socket.alpnProtocol === 'h2') {
      for (const listener of sessionListeners) listener.call(server, socket);
      if (newSession) idle.http2(newSession, socket);
      newSession = undefined;
      return;
    }
    idle.http1(socket);
    serveHttp1(socket, http1);
  });
  // connections still in their TLS handshake are only here
  const rawSockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    rawSockets.add(socket);
    socket.once('close', () => rawSockets.delete(socket));
  });
  // a client that fails the handshake must not take anything down
  server.on('tlsClientError', () => {});
  server.on('sessionError', () => {});

  return {
    server,
    listen(port, host = '127.0.0.1') {
      return new Promise((resolve, reject) => {
        const onError = (err: Error) => reject(err);
        server.once('error', onError);
        server.listen(port, host, () => {
          server.off('error', onError);
          resolve(server.address() as AddressInfo);
        });
      });
    },
    get inFlight() {
      return inFlight;
    },
    close(graceMs = 0) {
      closing = true;
      // the listener closes now; node sends GOAWAY on every HTTP/2 session (streams in flight
      // go on)
      const closed = new Promise<void>((resolve) => {
        if (!server.listening) resolve();
        else server.close(() => resolve());
      });
      const drained = new Promise<void>((resolve) => {
        if (inFlight === 0) return resolve();
        onIdle = resolve;
      });
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, Math.max(0, graceMs));
        timer.unref();
      });
      return (async () => {
        await Promise.race([drained, graceOver]);
        clearTimeout(timer);
        onIdle = undefined;
        // nothing is being answered any more (or the grace is over): idle HTTP/1.1
        // connections end politely; anything else still open is cut
        for (const s of sockets) {
          if (inFlight === 0 && !s.destroyed) s.end();
          else s.destroy();
        }
        const cut = setTimeout(() => {
          for (const s of sockets) s.destroy();
          for (const s of rawSockets) s.destroy();
        }, 1000);
        cut.unref();
        await closed;
        clearTimeout(cut);
      })();
    },
  };
}
