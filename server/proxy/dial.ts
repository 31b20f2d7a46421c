// Opens the connection to a backend (a kubelet, a pod, a node port), failing within the
// backend's connect timeout, with Go's wording for the failures clients are used to reading
// ("dial tcp 10.0.0.1:10250: connect: connection refused").

import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import type { Backend } from './kubelet-client.js';
import { joinHostPort } from './kubelet-client.js';

function portOf(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

const SYSCALL_TEXT: Record<string, string> = {
  ECONNREFUSED: 'connect: connection refused',
  EHOSTUNREACH: 'connect: no route to host',
  ENETUNREACH: 'connect: network is unreachable',
  ECONNRESET: 'read: connection reset by peer',
  ETIMEDOUT: 'i/o timeout',
};

/** a connection failure in Go's words */
export function dialErrorText(backend: Backend, err: unknown): string {
  const address = joinHostPort(hostOf(backend.url), String(portOf(backend.url)));
  const e = err as NodeJS.ErrnoException & { code?: string };
  if (e?.code === 'ENOTFOUND' || e?.code === 'EAI_AGAIN') return `dial tcp: lookup ${hostOf(backend.url)}: no such host`;
  if (e?.code && SYSCALL_TEXT[e.code]) return `dial tcp ${address}: ${SYSCALL_TEXT[e.code]}`;
  if (e?.code && (e.code.startsWith('ERR_TLS') || e.code.includes('CERT') || e.code.includes('SIGNATURE'))) {
    return `tls: failed to verify certificate: x509: ${e.message}`;
  }
  return `dial tcp ${address}: ${e?.message ?? String(err)}`;
}

/** resolves once TCP (and TLS) are up; rejects with the Go-worded error text */
export function dialBackend(backend: Backend): Promise<Socket | TLSSocket> {
  return new Promise((resolve, reject) => {
    const host = hostOf(backend.url);
    const port = portOf(backend.url);
    let settled = false;
    const socket = backend.tls
      ? tlsConnect({
          host,
          port,
          servername: isIP(host) ? undefined : (backend.tls.servername ?? host),
          cert: backend.tls.cert,
          key: backend.tls.key,
          ca: backend.tls.ca,
          rejectUnauthorized: backend.tls.rejectUnauthorized,
          ALPNProtocols: ['http/1.1'],
        })
      : netConnect({ host, port });
    const timer = setTimeout(() => {
      const err = Object.assign(new Error('i/o timeout'), { code: 'ETIMEDOUT' });
      fail(err);
      socket.destroy();
    }, backend.connectTimeoutMs);
    const fail = (err: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new Error(dialErrorText(backend, err)));
    };
    socket.once('error', fail);
    socket.once(backend.tls ? 'secureConnect' : 'connect', () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.off('error', fail);
      socket.setNoDelay(true);
      resolve(socket);
    });
  });
}
