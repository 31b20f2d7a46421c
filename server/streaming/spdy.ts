// A SPDY/3.1 connection as Kubernetes' streaming protocols use it (exec, attach, port-forward):
// streams opened by SYN_STREAM and accepted by SYN_REPLY, DATA with FIN for half-close,
// RST_STREAM, PING echo and GOAWAY. No flow control (kube's peers send no WINDOW_UPDATE and
// ignore it), no server push. Frames larger than MAX_SPDY_FRAME_BYTES, more than
// MAX_SPDY_STREAMS open streams or an undecodable header block end the connection.

import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import { MAX_SPDY_FRAME_BYTES, MAX_SPDY_STREAMS } from '../limits/stream-limits.js';
import { HeaderCompressor, HeaderDecompressor, SpdyProtocolError, type SpdyHeaders } from './spdy-headers.js';

export { SpdyProtocolError, type SpdyHeaders } from './spdy-headers.js';

const VERSION = 3;
const TYPE_SYN_STREAM = 1;
const TYPE_SYN_REPLY = 2;
const TYPE_RST_STREAM = 3;
const TYPE_SETTINGS = 4;
const TYPE_PING = 6;
const TYPE_GOAWAY = 7;
const TYPE_HEADERS = 8;
const TYPE_WINDOW_UPDATE = 9;
const FLAG_FIN = 0x01;

const RST_PROTOCOL_ERROR = 1;
const RST_CANCEL = 5;

/** frames waiting for their turn (header blocks decompress asynchronously) before reading pauses */
const MAX_PENDING_FRAMES = 64;

type Frame =
  | { control: true; type: number; flags: number; payload: Buffer }
  | { control: false; streamId: number; flags: number; payload: Buffer };

function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt16BE(0x8000 | VERSION, 0);
  head.writeUInt16BE(type, 2);
  head.writeUInt32BE(((flags & 0xff) << 24) | payload.length, 4);
  return Buffer.concat([head, payload]);
}

function dataFrame(streamId: number, flags: number, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(streamId & 0x7fffffff, 0);
  head.writeUInt32BE(((flags & 0xff) << 24) | data.length, 4);
  return Buffer.concat([head, data]);
}

function uint32s(...values: number[]): Buffer {
  const b = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, i * 4));
  return b;
}

/** the first value of a header, '' when absent */
export function headerOf(headers: SpdyHeaders, name: string): string {
  return headers[name.toLowerCase()]?.[0] ?? '';
}

/**
 * One stream. Events: `data` (Buffer), `end` (the peer half-closed), `close` (both sides are
 * done, or the stream was reset), `reset` (the peer reset it).
 */
export class SpdyStream extends EventEmitter {
  private localDone = false;
  private remoteDone = false;
  private closed = false;
  private acceptedResolve!: () => void;
  private acceptedReject!: (err: Error) => void;
  /** resolves once the peer's SYN_REPLY arrives (for streams this side opened) */
  readonly accepted: Promise<void>;

  constructor(
    private readonly conn: SpdyConnection,
    readonly id: number,
    readonly headers: SpdyHeaders,
  ) {
    super();
    this.accepted = new Promise((resolve, reject) => {
      this.acceptedResolve = resolve;
      this.acceptedReject = reject;
    });
    this.accepted.catch(() => {});
  }

  header(name: string): string {
    return headerOf(this.headers, name);
  }

  /** accepts a stream the peer opened */
  reply(): void {
    this.conn.sendControl(TYPE_SYN_REPLY, 0, Promise.resolve(uint32s(this.id)), {});
  }

  /** false when the connection's socket buffer is full */
  write(data: Buffer): boolean {
    if (this.localDone || this.closed || data.length === 0) return true;
    let ok = true;
    for (let at = 0; at < data.length; at += MAX_SPDY_FRAME_BYTES) {
      ok = this.conn.sendData(dataFrame(this.id, 0, data.subarray(at, at + MAX_SPDY_FRAME_BYTES)));
    }
    return ok;
  }

  /** half-closes this side (an empty DATA frame with FIN) */
  end(): void {
    if (this.localDone || this.closed) return;
    this.localDone = true;
    this.conn.sendData(dataFrame(this.id, FLAG_FIN, Buffer.alloc(0)));
    this.maybeClose();
  }

  reset(status = RST_CANCEL): void {
    if (this.closed) return;
    this.conn.sendControl(TYPE_RST_STREAM, 0, Promise.resolve(uint32s(this.id, status)));
    this.finish();
  }

  /** @internal */
  receiveData(data: Buffer, fin: boolean): void {
    if (this.remoteDone) return;
    if (data.length > 0) this.emit('data', data);
    if (fin) this.remoteEnd();
  }

  /** @internal */
  remoteEnd(): void {
    if (this.remoteDone) return;
    this.remoteDone = true;
    this.emit('end');
    this.maybeClose();
  }

  /** @internal */
  markAccepted(): void {
    this.acceptedResolve();
  }

  /** @internal the peer reset the stream, or the connection went away */
  abort(reason: string): void {
    if (this.closed) return;
    this.acceptedReject(new Error(reason));
    if (!this.remoteDone) {
      this.remoteDone = true;
      this.emit('reset');
    }
    this.finish();
  }

  private maybeClose(): void {
    if (this.localDone && this.remoteDone) this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.localDone = true;
    this.remoteDone = true;
    this.conn.forget(this.id);
    this.emit('close');
  }
}

export interface SpdyConnectionOptions {
  /** a stream the peer opened; call `reply()` to accept it */
  onStream?: (stream: SpdyStream) => void;
  /** the connection is over; called once */
  onClose?: (err?: Error) => void;
  /** bytes already read from the socket past the HTTP upgrade */
  head?: Buffer;
}

export class SpdyConnection {
  private readonly streams = new Map<number, SpdyStream>();
  private nextStreamId: number;
  private nextPingId: number;
  private buffered: Buffer = Buffer.alloc(0);
  private readonly compressor = new HeaderCompressor();
  private readonly decompressor = new HeaderDecompressor();
  /** outgoing frames in order; header blocks are compressed asynchronously */
  private outgoing: Promise<Buffer>[] = [];
  private writing = false;
  private incoming: Promise<void> = Promise.resolve();
  private pendingFrames = 0;
  private pausedForFrames = false;
  private closed = false;

  constructor(
    readonly socket: Duplex,
    readonly role: 'client' | 'server',
    private readonly opts: SpdyConnectionOptions = {},
  ) {
    this.nextStreamId = role === 'client' ? 1 : 2;
    this.nextPingId = role === 'client' ? 1 : 2;
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    // the frames that came before the end are handled first (headers decompress
    // asynchronously, so some may still be queued): a kubelet's last output, its exit status
    // and its GOAWAY often arrive together with the close
    const closeAfterQueuedFrames = (): void => void this.incoming.then(() => this.shutdown());
    socket.on('end', closeAfterQueuedFrames);
    socket.on('close', closeAfterQueuedFrames);
    socket.on('error', (err: Error) => this.shutdown(err));
    if (opts.head && opts.head.length > 0) {
      const head = opts.head;
      queueMicrotask(() => this.receive(head));
    }
    // a socket paused while its HTTP head was read stays paused under a new listener
    socket.resume();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  openStream(headers: SpdyHeaders): SpdyStream {
    if (this.closed) throw new Error('connection closed');
    const id = this.nextStreamId;
    this.nextStreamId += 2;
    const stream = new SpdyStream(this, id, headers);
    this.streams.set(id, stream);
    // stream id, associated stream id, priority and slot
    this.sendControl(TYPE_SYN_STREAM, 0, Promise.resolve(Buffer.concat([uint32s(id, 0), Buffer.from([0, 0])])), headers);
    return stream;
  }

  ping(): void {
    const id = this.nextPingId;
    this.nextPingId += 2;
    this.sendControl(TYPE_PING, 0, Promise.resolve(uint32s(id)));
  }

  /** GOAWAY, then the socket ends */
  close(): void {
    if (this.closed) return;
    this.sendControl(TYPE_GOAWAY, 0, Promise.resolve(uint32s(0, 0)));
    // the header compressor stays until what is queued is written: a SYN_REPLY still being
    // compressed would otherwise fail, and the connection be cut with everything queued after it
    void this.flushed().then(() => {
      this.socket.end();
      this.compressor.close();
    });
    this.shutdown(undefined, false);
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    if (!this.pausedForFrames) this.socket.resume();
  }

  /** @internal */
  sendControl(type: number, flags: number, fixed: Promise<Buffer>, headers?: SpdyHeaders): void {
    if (this.socket.destroyed) return;
    const block = headers ? this.compressor.compress(headers) : Promise.resolve(Buffer.alloc(0));
    this.outgoing.push(Promise.all([fixed, block]).then(([f, b]) => controlFrame(type, flags, Buffer.concat([f, b]))));
    void this.pump();
  }

  /** @internal */
  sendData(frame: Buffer): boolean {
    if (this.socket.destroyed) return true;
    if (this.outgoing.length === 0 && !this.writing) return this.socket.write(frame);
    this.outgoing.push(Promise.resolve(frame));
    void this.pump();
    return !this.socket.writableNeedDrain;
  }

  /** @internal */
  forget(id: number): void {
    this.streams.delete(id);
  }

  private async flushed(): Promise<void> {
    while (this.outgoing.length > 0 || this.writing) await new Promise((r) => setImmediate(r));
  }

  private async pump(): Promise<void> {
    if (this.writing) return;
    this.writing = true;
    try {
      while (this.outgoing.length > 0) {
        const frame = await this.outgoing[0];
        this.outgoing.shift();
        if (!this.socket.destroyed) this.socket.write(frame);
      }
    } catch (err) {
      this.fail(err instanceof Error ? err : new Error(String(err)));
    } finally {
      this.writing = false;
    }
  }

  private receive(chunk: Buffer): void {
    if (this.closed) return;
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    while (this.buffered.length >= 8) {
      const b = this.buffered;
      const length = b.readUInt32BE(4) & 0xffffff;
      if (length > MAX_SPDY_FRAME_BYTES)
        return this.fail(new SpdyProtocolError(`frame of ${length} bytes exceeds ${MAX_SPDY_FRAME_BYTES}`));
      if (b.length < 8 + length) return;
      const flags = b[4];
      const payload = Buffer.from(b.subarray(8, 8 + length));
      const frame: Frame =
        (b[0] & 0x80) !== 0
          ? { control: true, type: b.readUInt16BE(2), flags, payload }
          : { control: false, streamId: b.readUInt32BE(0) & 0x7fffffff, flags, payload };
      this.buffered = b.subarray(8 + length);
      this.enqueue(frame);
      if (this.closed) return;
    }
  }

  private enqueue(frame: Frame): void {
    this.pendingFrames++;
    if (this.pendingFrames > MAX_PENDING_FRAMES && !this.pausedForFrames) {
      this.pausedForFrames = true;
      this.socket.pause();
    }
    this.incoming = this.incoming
      .then(() => (this.closed ? undefined : this.handle(frame)))
      .catch((err: unknown) => this.fail(err instanceof Error ? err : new Error(String(err))))
      .finally(() => {
        this.pendingFrames--;
        if (this.pausedForFrames && this.pendingFrames === 0) {
          this.pausedForFrames = false;
          this.socket.resume();
        }
      });
  }

  private async handle(frame: Frame): Promise<void> {
    if (!frame.control) {
      this.streams.get(frame.streamId)?.receiveData(frame.payload, (frame.flags & FLAG_FIN) !== 0);
      return;
    }
    const p = frame.payload;
    const need = (n: number): void => {
      if (p.length < n) throw new SpdyProtocolError(`control frame ${frame.type} too short`);
    };
    switch (frame.type) {
      case TYPE_SYN_STREAM: {
        need(10);
        const id = p.readUInt32BE(0) & 0x7fffffff;
        const headers = await this.decompressor.decompress(p.subarray(10));
        if (this.streams.has(id) || this.streams.size >= MAX_SPDY_STREAMS || !this.opts.onStream) {
          this.sendControl(TYPE_RST_STREAM, 0, Promise.resolve(uint32s(id, RST_PROTOCOL_ERROR)));
          return;
        }
        const stream = new SpdyStream(this, id, headers);
        this.streams.set(id, stream);
        this.opts.onStream(stream);
        if ((frame.flags & FLAG_FIN) !== 0) stream.remoteEnd();
        return;
      }
      case TYPE_SYN_REPLY: {
        need(4);
        const stream = this.streams.get(p.readUInt32BE(0) & 0x7fffffff);
        await this.decompressor.decompress(p.subarray(4));
        stream?.markAccepted();
        if (stream && (frame.flags & FLAG_FIN) !== 0) stream.remoteEnd();
        return;
      }
      case TYPE_HEADERS: {
        need(4);
        const stream = this.streams.get(p.readUInt32BE(0) & 0x7fffffff);
        await this.decompressor.decompress(p.subarray(4));
        if (stream && (frame.flags & FLAG_FIN) !== 0) stream.remoteEnd();
        return;
      }
      case TYPE_RST_STREAM:
        need(8);
        this.streams.get(p.readUInt32BE(0) & 0x7fffffff)?.abort('stream reset by peer');
        return;
      case TYPE_PING: {
        need(4);
        const id = p.readUInt32BE(0);
        // the peer's pings (the other parity) are echoed; answers to ours need nothing
        if ((id & 1) !== (this.nextPingId & 1)) this.sendControl(TYPE_PING, 0, Promise.resolve(uint32s(id)));
        return;
      }
      case TYPE_GOAWAY:
        this.shutdown();
        this.socket.end();
        return;
      case TYPE_SETTINGS:
      case TYPE_WINDOW_UPDATE:
        return;
      default:
        // unknown control frames are ignored, as the protocol asks
        return;
    }
  }

  private fail(err: Error): void {
    if (!this.socket.destroyed) this.socket.destroy();
    this.shutdown(err);
  }

  private shutdown(err?: Error, closeCompressor = true): void {
    if (this.closed) return;
    this.closed = true;
    this.buffered = Buffer.alloc(0);
    for (const stream of [...this.streams.values()]) stream.abort('connection closed');
    this.streams.clear();
    if (closeCompressor) this.compressor.close();
    this.decompressor.close();
    this.opts.onClose?.(err);
  }
}
