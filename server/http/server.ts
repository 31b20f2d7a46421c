// The listening server: TLS with HTTP/2 and HTTP/1.1 chosen by ALPN. Client certificates are
// requested but not required, so authentication (not the TLS layer) decides what they mean.

import { createSecureServer as createHttp2SecureServer, type Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { HttpRequest, HttpResponse } from './types.js';

export interface SecureServerOptions {
  cert: string | Buffer;
  key: string | Buffer;
  /** CAs whose client certificates the TLS layer accepts (client CA, front-proxy CA, ...) */
  clientCA?: string | Buffer | (string | Buffer)[];
  handler: (req: HttpRequest, res: HttpResponse) => void;
  /** streams per HTTP/2 connection (client-go multiplexes every watch over one) */
  maxConcurrentStreams?: number;
  /** MiB of buffered data an HTTP/2 session may hold before refusing new streams */
  maxSessionMemoryMiB?: number;
}

export interface SecureServer {
  server: Http2SecureServer;
  /** resolves with the bound address */
  listen(port: number, host?: string): Promise<AddressInfo>;
  /** stops accepting; open connections are cut after `graceMs` (0: at once) */
  close(graceMs?: number): Promise<void>;
}

export function createSecureServer(opts: SecureServerOptions): SecureServer {
  const server = createHttp2SecureServer(
    {
      allowHTTP1: true,
      cert: opts.cert,
      key: opts.key,
      ca: opts.clientCA,
      requestCert: true,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.2',
      settings: { maxConcurrentStreams: opts.maxConcurrentStreams ?? 1000 },
      maxSessionMemory: opts.maxSessionMemoryMiB ?? 256,
    },
    opts.handler as unknown as Parameters<typeof createHttp2SecureServer>[1],
  );
  const sockets = new Set<TLSSocket>();
  server.on('secureConnection', (socket: TLSSocket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
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
    close(graceMs = 0) {
      return new Promise<void>((resolve) => {
        let done = false;
        const finish = () => {
          if (!done) {
            done = true;
            resolve();
          }
        };
        server.close(() => finish());
        const cut = () => {
          for (const s of sockets) s.destroy();
        };
        if (graceMs <= 0) cut();
        else setTimeout(cut, graceMs).unref();
        if (!server.listening) finish();
      });
    },
  };
}
