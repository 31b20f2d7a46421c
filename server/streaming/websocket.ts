// WebSocket (RFC 6455) over an already upgraded socket: the handshake answer, and framing of
// messages both ways. kapi is the server side for kubectl's exec/attach/port-forward
// WebSockets, so frames it reads must be masked and frames it writes are not; the client role
// exists for tests. Fragmented messages are reassembled up to MAX_WEBSOCKET_MESSAGE_BYTES;
// anything larger, or a protocol violation, closes the connection (1009 / 1002).

import { createHash, randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { MAX_WEBSOCKET_MESSAGE_BYTES } from '../limits/stream-limits.js';

const HANDSHAKE_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export const OPCODE_CONTINUATION = 0x0;
export const OPCODE_TEXT = 0x1;
export const OPCODE_BINARY = 0x2;
export const OPCODE_CLOSE = 0x8;
export const OPCODE_PING = 0x9;
export const OPCODE_PONG = 0xa;

export const CLOSE_NORMAL = 1000;
export const CLOSE_PROTOCOL_ERROR = 1002;
export const CLOSE_TOO_BIG = 1009;

/** the Sec-WebSocket-Accept value for a client's Sec-WebSocket-Key */
export function acceptKey(key: string): string {
  return createHash('sha1')
    .update(key + HANDSHAKE_GUID)
    .digest('base64');
}

type HeaderBag = Record<string, string | string[] | undefined>;

function headerText(headers: HeaderBag, name: string): string {
  const v = headers[name];
  return Array.isArray(v) ? v.join(',') : (v ?? '');
}

/** an HTTP/1.1 request asking to become a WebSocket (Connection: Upgrade, Upgrade: websocket) */
export function isWebSocketRequest(headers: HeaderBag): boolean {
  const connection = headerText(headers, 'connection')
    .toLowerCase()
    .split(',')
    .map((s) => s.trim());
  return (
    connection.includes('upgrade') &&
    headerText(headers, 'upgrade')
      .toLowerCase()
      .split(',')
      .map((s) => s.trim())
      .includes('websocket')
  );
}

/** the subprotocols a client offers, in its order */
export function offeredProtocols(headers: HeaderBag): string[] {
  return headerText(headers, 'sec-websocket-protocol')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** the 101 head that accepts a WebSocket request, with the chosen subprotocol if any */
export function handshakeResponse(key: string, protocol: string | undefined): string {
  const lines = [
    'HTTP/1.1 101 Switching Protocols',
    'Upgrade: websocket',
    'Connection: Upgrade',
    `Sec-WebSocket-Accept: ${acceptKey(key)}`,
  ];
  if (protocol) lines.push(`Sec-WebSocket-Protocol: ${protocol}`);
  return lines.join('\r\n') + '\r\n\r\n';
}

/** one frame, masked when a client sends it */
export function encodeFrame(opcode: number, payload: Buffer, masked: boolean, fin = true): Buffer {
  const len = payload.length;
  const lengthBytes = len < 126 ? 0 : len < 65536 ? 2 : 8;
  const head = Buffer.alloc(2 + lengthBytes + (masked ? 4 : 0));
  head[0] = (fin ? 0x80 : 0) | opcode;
  const maskBit = masked ? 0x80 : 0;
  if (lengthBytes === 0) head[1] = maskBit | len;
  else if (lengthBytes === 2) {
    head[1] = maskBit | 126;
    head.writeUInt16BE(len, 2);
  } else {
    head[1] = maskBit | 127;
    head.writeBigUInt64BE(BigInt(len), 2);
  }
  if (!masked) return Buffer.concat([head, payload]);
  const mask = randomBytes(4);
  mask.copy(head, 2 + lengthBytes);
  const body = Buffer.allocUnsafe(len);
  for (let i = 0; i < len; i++) body[i] = payload[i] ^ mask[i & 3];
  return Buffer.concat([head, body]);
}

export interface WebSocketHandlers {
  /** a whole text or binary message */
  onMessage(opcode: number, payload: Buffer): void;
  /** the connection is over (closed by either side, or broken); called once */
  onClose(code: number, reason: string): void;
}

/**
 * A WebSocket on an upgraded socket. `head` is whatever the HTTP parser read past the
 * handshake. Pings are answered; a close frame is answered and ends the socket.
 */
export class WebSocketConnection {
  private buffered: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  private fragmentsBytes = 0;
  private fragmentOpcode = 0;
  private closed = false;
  private closeSent = false;

  constructor(
    readonly socket: Duplex,
    private readonly handlers: WebSocketHandlers,
    private readonly role: 'server' | 'client',
    head: Buffer = Buffer.alloc(0),
  ) {
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('end', () => this.finish(1006, ''));
    socket.on('close', () => this.finish(1006, ''));
    socket.on('error', () => this.finish(1006, ''));
    if (head.length > 0) queueMicrotask(() => this.receive(head));
  }

  /** false when the socket's buffer is full: wait for `drain` on `socket` */
  send(opcode: number, payload: Buffer): boolean {
    if (this.closeSent || this.socket.destroyed) return true;
    return this.socket.write(encodeFrame(opcode, payload, this.role === 'client'));
  }

  sendBinary(payload: Buffer): boolean {
    return this.send(OPCODE_BINARY, payload);
  }

  /** sends a close frame (once) and ends the socket after it */
  close(code = CLOSE_NORMAL, reason = ''): void {
    if (!this.closeSent && !this.socket.destroyed) {
      const body = Buffer.alloc(2 + Buffer.byteLength(reason));
      body.writeUInt16BE(code, 0);
      body.write(reason, 2);
      this.socket.write(encodeFrame(OPCODE_CLOSE, body, this.role === 'client'));
      this.closeSent = true;
      this.socket.end();
    }
    this.finish(code, reason);
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  private finish(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.buffered = Buffer.alloc(0);
    this.fragments = [];
    this.handlers.onClose(code, reason);
  }

  private fail(code: number): void {
    this.close(code);
    this.socket.destroy();
  }

  private receive(chunk: Buffer): void {
    if (this.closed) return;
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    for (;;) {
      const frame = this.nextFrame();
      if (frame === undefined) return;
      if (frame === 'error') return;
      this.handleFrame(frame.fin, frame.opcode, frame.payload);
      if (this.closed) return;
    }
  }

  private nextFrame(): { fin: boolean; opcode: number; payload: Buffer } | undefined | 'error' {
    const b = this.buffered;
    if (b.length < 2) return undefined;
    const fin = (b[0] & 0x80) !== 0;
    if ((b[0] & 0x70) !== 0) return this.failWith(CLOSE_PROTOCOL_ERROR);
    const opcode = b[0] & 0x0f;
    const masked = (b[1] & 0x80) !== 0;
    // a server reads masked frames only, a client unmasked ones only
    if (masked !== (this.role === 'server')) return this.failWith(CLOSE_PROTOCOL_ERROR);
    let len = b[1] & 0x7f;
    let offset = 2;
    if (len === 126) {
      if (b.length < 4) return undefined;
      len = b.readUInt16BE(2);
      offset = 4;
    } else if (len === 127) {
      if (b.length < 10) return undefined;
      const big = b.readBigUInt64BE(2);
      if (big > BigInt(MAX_WEBSOCKET_MESSAGE_BYTES)) return this.failWith(CLOSE_TOO_BIG);
      len = Number(big);
      offset = 10;
    }
    if (len > MAX_WEBSOCKET_MESSAGE_BYTES) return this.failWith(CLOSE_TOO_BIG);
    const maskAt = offset;
    if (masked) offset += 4;
    if (b.length < offset + len) return undefined;
    let payload = b.subarray(offset, offset + len);
    if (masked) {
      const unmasked = Buffer.allocUnsafe(len);
      for (let i = 0; i < len; i++) unmasked[i] = payload[i] ^ b[maskAt + (i & 3)];
      payload = unmasked;
    } else {
      payload = Buffer.from(payload);
    }
    this.buffered = b.subarray(offset + len);
    return { fin, opcode, payload };
  }

  private failWith(code: number): 'error' {
    this.fail(code);
    return 'error';
  }

  private handleFrame(fin: boolean, opcode: number, payload: Buffer): void {
    if (opcode >= 0x8) {
      // control frames are never fragmented and carry at most 125 bytes
      if (!fin || payload.length > 125) return this.fail(CLOSE_PROTOCOL_ERROR);
      if (opcode === OPCODE_PING) this.send(OPCODE_PONG, payload);
      else if (opcode === OPCODE_CLOSE) {
        const code = payload.length >= 2 ? payload.readUInt16BE(0) : CLOSE_NORMAL;
        this.close(code, payload.subarray(2).toString());
      } else if (opcode !== OPCODE_PONG) this.fail(CLOSE_PROTOCOL_ERROR);
      return;
    }
    if (opcode === OPCODE_CONTINUATION) {
      if (this.fragmentOpcode === 0) return this.fail(CLOSE_PROTOCOL_ERROR);
    } else if (opcode === OPCODE_TEXT || opcode === OPCODE_BINARY) {
      if (this.fragmentOpcode !== 0) return this.fail(CLOSE_PROTOCOL_ERROR);
      if (fin) {
        this.handlers.onMessage(opcode, payload);
        return;
      }
      this.fragmentOpcode = opcode;
    } else {
      return this.fail(CLOSE_PROTOCOL_ERROR);
    }
    this.fragmentsBytes += payload.length;
    if (this.fragmentsBytes > MAX_WEBSOCKET_MESSAGE_BYTES) return this.fail(CLOSE_TOO_BIG);
    this.fragments.push(payload);
    if (!fin) return;
    const whole = Buffer.concat(this.fragments);
    const kind = this.fragmentOpcode;
    this.fragments = [];
    this.fragmentsBytes = 0;
    this.fragmentOpcode = 0;
    this.handlers.onMessage(kind, whole);
  }
}
