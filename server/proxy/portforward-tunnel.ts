// kube's TunnelingHandler (PortForwardWebsockets, on in 1.33): kubectl 1.30+ port-forward
// offers a WebSocket with the subprotocol SPDY/3.1+portforward.k8s.io and speaks SPDY inside
// it, one binary message per write. kapi asks the kubelet for a plain SPDY upgrade; when the
// kubelet agrees, the client gets its WebSocket (with the kubelet's protocol under the
// prefix) and the bytes flow between the WebSocket messages and the kubelet's connection.
// A kubelet that refuses has its answer passed to the client as it is.

import type { Duplex } from 'node:stream';
import { handshakeResponse, OPCODE_BINARY, WebSocketConnection } from '../streaming/websocket.js';
import { headValue } from '../streaming/response-head.js';
import { STREAM_HIGH_WATER_BYTES } from '../limits/stream-limits.js';
import { StatusError } from '../machinery/status.js';
import type { Backend } from './kubelet-client.js';
import { KUBERNETES_PROTOCOL_SUFFIX, SPDY_TUNNELING_PREFIX } from './channels.js';
import { openUpgrade, splice } from './upgrade.js';

/** the SPDY protocols a WebSocket request tunnels, prefix removed */
export function tunneledProtocols(offered: readonly string[]): string[] {
  return offered
    .filter((p) => p.startsWith(SPDY_TUNNELING_PREFIX) && p.endsWith(KUBERNETES_PROTOCOL_SUFFIX))
    .map((p) => p.slice(SPDY_TUNNELING_PREFIX.length));
}

/** a plain-text HTTP error as Go's http.Error writes it */
export function plainTextError(code: number, text: string): StatusError & { plain: string } {
  return Object.assign(new StatusError(code, '', text), { plain: text });
}

export interface TunnelRequest {
  socket: Duplex;
  head: Buffer;
  key: string;
  remoteAddress?: string;
  headers: Record<string, string | string[]>;
}

export async function tunnelPortForward(req: TunnelRequest, backend: Backend, protocols: string[]): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    const lower = name.toLowerCase();
    if (lower.startsWith('sec-websocket-') || lower === 'upgrade' || lower === 'connection' || lower === 'x-stream-protocol-version')
      continue;
    headers[name] = value;
  }
  headers['Connection'] = 'Upgrade';
  headers['Upgrade'] = 'SPDY/3.1';
  headers['X-Stream-Protocol-Version'] = protocols;
  const { backend: kubelet, head } = await openUpgrade(backend, { method: 'POST', headers }, req.remoteAddress);
  if (head.status !== 101) {
    // kube passes a refusal through unchanged
    req.socket.write(head.raw);
    req.socket.write(head.rest);
    await splice(kubelet, req.socket);
    return;
  }
  const connection = headValue(head, 'connection').toLowerCase();
  const upgrade = headValue(head, 'upgrade').toLowerCase();
  if (!connection.includes('upgrade') || !upgrade.includes('spdy/3.1')) {
    kubelet.destroy();
    throw plainTextError(500, 'unable to upgrade: missing upgrade headers in response');
  }
  const chosen = headValue(head, 'x-stream-protocol-version').trim();
  req.socket.write(handshakeResponse(req.key, chosen ? SPDY_TUNNELING_PREFIX + chosen : undefined));
  await new Promise<void>((resolve) => {
    const ws = new WebSocketConnection(
      req.socket,
      {
        onMessage: (opcode, data) => {
          if (opcode !== OPCODE_BINARY) return ws.close(1003);
          if (!kubelet.write(data) || kubelet.writableLength > STREAM_HIGH_WATER_BYTES) {
            ws.pause();
            kubelet.once('drain', () => ws.resume());
          }
        },
        onClose: () => {
          kubelet.destroy();
          resolve();
        },
      },
      'server',
      req.head,
    );
    const forward = (chunk: Buffer): void => {
      if (!ws.sendBinary(chunk) || req.socket.writableLength > STREAM_HIGH_WATER_BYTES) {
        kubelet.pause();
        req.socket.once('drain', () => kubelet.resume());
      }
    };
    if (head.rest.length > 0) forward(head.rest);
    kubelet.on('data', forward);
    kubelet.on('end', () => ws.close());
    kubelet.on('close', () => ws.close());
    kubelet.on('error', () => ws.close());
    kubelet.resume();
  });
}
