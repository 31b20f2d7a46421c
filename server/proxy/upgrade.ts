// kube's UpgradeAwareHandler for an upgrade request: the client's request goes to the backend
// as it came (kapi's credentials and hop-by-hop headers excepted, the upgrade headers kept),
// the backend's answer comes back byte for byte, and after a 101 the two connections are
// spliced until either side ends. A backend that cannot be reached is kube's 500
// "error dialing backend: ...".

import type { Duplex } from 'node:stream';
import { readResponseHead, type ResponseHead } from '../streaming/response-head.js';
import { STREAM_HIGH_WATER_BYTES } from '../limits/stream-limits.js';
import { dialBackend } from './dial.js';
import { unknownFailure } from './forward.js';
import type { Backend } from './kubelet-client.js';

export interface UpgradeRequest {
  method: string;
  headers: Record<string, string | string[]>;
}

/** headers that must not reach a backend: kapi's own credentials */
function forwardable(name: string): boolean {
  const lower = name.toLowerCase();
  return lower !== 'authorization' && !lower.startsWith('impersonate-') && lower !== 'host' && !lower.startsWith(':');
}

export function upgradeRequestHead(backend: Backend, req: UpgradeRequest, remoteAddress?: string): string {
  const lines = [`${req.method} ${backend.url.pathname}${backend.url.search} HTTP/1.1`, `Host: ${backend.url.host}`];
  for (const [name, value] of Object.entries(req.headers)) {
    if (!forwardable(name)) continue;
    for (const v of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${v.replace(/[\r\n]/g, ' ')}`);
  }
  if (remoteAddress && !Object.keys(req.headers).some((n) => n.toLowerCase() === 'x-forwarded-for'))
    lines.push(`X-Forwarded-For: ${remoteAddress}`);
  return lines.join('\r\n') + '\r\n\r\n';
}

/** dials the backend and sends the upgrade request; the 500 Status when it cannot be reached */
export async function openUpgrade(
  backend: Backend,
  req: UpgradeRequest,
  remoteAddress?: string,
): Promise<{ backend: Duplex; head: ResponseHead }> {
  let socket: Duplex;
  try {
    socket = await dialBackend(backend);
  } catch (err) {
    throw unknownFailure(`error dialing backend: ${err instanceof Error ? err.message : String(err)}`);
  }
  socket.on('error', () => {});
  socket.write(upgradeRequestHead(backend, req, remoteAddress));
  try {
    return { backend: socket, head: await readResponseHead(socket) };
  } catch (err) {
    socket.destroy();
    throw unknownFailure(`error dialing backend: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** one direction of a splice, pausing the reader while the writer is full */
function pump(from: Duplex, to: Duplex): void {
  from.on('data', (chunk: Buffer) => {
    if (!to.write(chunk) || to.writableLength > STREAM_HIGH_WATER_BYTES) {
      from.pause();
      to.once('drain', () => from.resume());
    }
  });
  from.on('end', () => to.end());
}

/** joins two connections until either ends; both are closed afterwards */
export function splice(a: Duplex, b: Duplex): Promise<void> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      a.destroy();
      b.destroy();
      resolve();
    };
    for (const s of [a, b]) {
      s.on('error', finish);
      s.on('close', finish);
    }
    pump(a, b);
    pump(b, a);
    a.resume();
    b.resume();
  });
}
