// A client-side HTTP/2 connection (RFC 9113) that carries gRPC calls: a unary call's stream
// sends one header block and one gRPC-framed message, a streaming call's sends its header
// block and then messages as they come (it never half-closes: a watch ends by RST_STREAM);
// both receive headers, data and trailers. node:http2 would do the same with an
// event-emitting Duplex, header objects and async-context bookkeeping per stream, which cost
// more than the rest of a write's path through the client; here a stream is one small object
// and a unary call's frames one buffer.
//
// What it implements: the preface and SETTINGS exchange, DATA/HEADERS (with padding and
// priority fields)/CONTINUATION, RST_STREAM, PING (answered after a short hold, and our own
// keepalive), GOAWAY, WINDOW_UPDATE, flow control both ways, the peer's
// MAX_CONCURRENT_STREAMS (calls beyond it wait here), MAX_FRAME_SIZE and INITIAL_WINDOW_SIZE.
// Server push is disabled, so a PUSH_PROMISE is a protocol error. Unknown frame types are
// ignored.

import net from 'node:net';
import tls from 'node:tls';
import {
  CONNECTION_PREFACE,
  DEFAULT_MAX_FRAME_SIZE,
  DEFAULT_WINDOW_SIZE,
  ErrorCode,
  FRAME_HEADER_LENGTH,
  Flag,
  FrameReader,
  FrameSizeError,
  FrameType,
  frame,
  goawayFrame,
  MAX_WINDOW_SIZE,
  pingFrame,
  rstStreamFrame,
  Setting,
  settingsFrame,
  unpadded,
  windowUpdateFrame,
  writeFrameHeader,
} from './h2-frames.js';
import { HpackDecoder, HpackError } from './hpack.js';

export interface H2Tls {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

/** what happens to one stream; exactly one of onEnd, onReset and onLost ends it */
export interface StreamListener {
  /** response headers, or trailers */
  onHeaders(fields: string[]): void;
  onData(chunk: Buffer): void;
  /** the peer ended the stream */
  onEnd(): void;
  /** the peer reset the stream (REFUSED_STREAM also for streams a GOAWAY left unprocessed) */
  onReset(errorCode: number): void;
  /** the connection broke; `notSent`: the stream had not been started on it */
  onLost(notSent: boolean, cause: Error | undefined): void;
}

export interface H2ConnectionEvents {
  /** the peer's first SETTINGS arrived: the connection can carry streams */
  onReady(): void;
  /** the peer sent GOAWAY: no new streams; those in flight finish */
  onGoaway(): void;
  /** the socket is gone (`cause` unless it closed cleanly) */
  onClose(cause: Error | undefined): void;
}

// our receive windows: as large as HTTP/2 allows, so etcd never waits for us
const OUR_INITIAL_WINDOW_SIZE = MAX_WINDOW_SIZE;
/** received bytes (of the connection, or of one stream) acknowledged with one WINDOW_UPDATE */
const WINDOW_UPDATE_THRESHOLD = 16 * 1024 * 1024;
const LAST_STREAM_ID = 2 ** 31 - 1;
/**
 * How long a PING's answer is held. etcd's gRPC server sends a PING (behind a connection
 * WINDOW_UPDATE) to sample the bandwidth-delay product whenever data arrives and no such PING
 * is outstanding: answered at once, every call made one at a time brings two more frames, a
 * wakeup and a write on both sides. Held, the next sample waits until the answer leaves, so
 * there is at most one every this many ms. Its only effect on etcd is a larger estimate of the
 * delay (a larger receive window for what we send); keepalive timeouts are seconds long.
 */
export const PING_ANSWER_HOLD_MS = 20;
/** PINGs awaiting an answer beyond this are answered at once (a peer that pings often) */
const MAX_HELD_PING_ANSWERS = 8;
/** a gRPC message's prefix: its compressed flag (1 byte) and length (4 bytes) */
export const GRPC_MESSAGE_PREFIX_BYTES = 5;

export class H2Stream {
  id = 0;
  sendWindow = 0;
  /** the DATA payload still to send (gRPC-framed messages), null once all is sent */
  pendingBody: Buffer | null = null;
  pendingOffset = 0;
  /** DATA bytes received since this stream's last WINDOW_UPDATE */
  receivedUnacked = 0;
  ended = false;

  /** `message`: a unary call's one request message; null for a streaming call */
  constructor(
    readonly headerBlock: Buffer,
    readonly message: Buffer | null,
    readonly listener: StreamListener,
  ) {}
}

/** the message with gRPC's 5-byte prefix (not compressed, its length) */
function grpcFramed(message: Buffer): Buffer {
  const body = Buffer.allocUnsafe(GRPC_MESSAGE_PREFIX_BYTES + message.length);
  body[0] = 0;
  body.writeUInt32BE(message.length, 1);
  message.copy(body, GRPC_MESSAGE_PREFIX_BYTES);
  return body;
}

export class H2Connection {
  private readonly socket: net.Socket;
  private readonly reader = new FrameReader();
  private readonly decoder = new HpackDecoder();
  private readonly streams = new Map<number, H2Stream>();
  private readonly waiting: H2Stream[] = [];
  private readonly sendBlocked: H2Stream[] = [];
  private nextStreamId: number;
  private peerMaxFrameSize = DEFAULT_MAX_FRAME_SIZE;
  private peerInitialWindow = DEFAULT_WINDOW_SIZE;
  private peerMaxStreams = Number.POSITIVE_INFINITY;
  private connSendWindow = DEFAULT_WINDOW_SIZE;
  private receivedUnacked = 0;
  /** a header block that continues in CONTINUATION frames */
  private headerFragments: Buffer[] | null = null;
  private headerStreamId = 0;
  private headerEndStream = false;
  private ready = false;
  private goaway = false;
  private closed = false;
  /** we found the peer breaking the protocol: nothing more is read, the socket is closing */
  private broken = false;
  private corked = false;
  private pingTimer: NodeJS.Timeout | undefined;
  /** PING answers not sent yet (PING_ANSWER_HOLD_MS) */
  private heldPingAnswers: Buffer[] = [];
  private pingAnswerTimer: NodeJS.Timeout | undefined;
  private failure: Error | undefined;

  /** `authority`: http://host:port or https://host:port. `firstStreamId` (odd) lets a test
   *  reach the end of the stream ids without opening a billion streams. */
  constructor(
    authority: string,
    tlsOptions: H2Tls | null,
    private readonly events: H2ConnectionEvents,
    firstStreamId = 1,
  ) {
    this.nextStreamId = firstStreamId;
    const url = new URL(authority);
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    if (url.protocol === 'https:') {
      this.socket = tls.connect({
        host,
        port,
        ...(tlsOptions ?? {}),
        ALPNProtocols: ['h2'],
        ...(net.isIP(host) ? {} : { servername: host }),
      });
      this.socket.once('secureConnect', () => {
        const alpn = (this.socket as tls.TLSSocket).alpnProtocol;
        if (alpn !== 'h2') return this.destroy(new Error(`etcd did not agree to HTTP/2 (ALPN: ${alpn || 'none'})`));
        this.start();
      });
    } else {
      this.socket = net.connect({ host, port });
      this.socket.once('connect', () => this.start());
    }
    this.socket.setNoDelay(true);
    this.socket.on('data', (chunk: Buffer) => this.receive(chunk));
    this.socket.on('error', (err) => {
      this.failure ??= err;
    });
    this.socket.on('close', () => this.closedSocket());
  }

  /** true while new streams can be started (or queued) on this connection */
  get acceptsStreams(): boolean {
    return this.ready && !this.goaway && !this.broken && !this.closed && this.nextStreamId <= LAST_STREAM_ID;
  }

  /** streams open or waiting to open */
  get openStreams(): number {
    return this.streams.size + this.waiting.length;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** starts a unary call: the header block, then `message` with the gRPC 5-byte prefix, the
   *  end of the request */
  startUnary(headerBlock: Buffer, message: Buffer, listener: StreamListener): H2Stream {
    return this.open(new H2Stream(headerBlock, message, listener));
  }

  /** starts a streaming call: the header block now, messages with sendMessage */
  startStream(headerBlock: Buffer, listener: StreamListener): H2Stream {
    return this.open(new H2Stream(headerBlock, null, listener));
  }

  /** one more message of a streaming call, sent as the flow-control windows allow */
  sendMessage(stream: H2Stream, message: Buffer): void {
    if (stream.ended || stream.message !== null || this.closed) return;
    const body = grpcFramed(message);
    const queued = stream.pendingBody;
    stream.pendingBody = queued ? Buffer.concat([queued.subarray(stream.pendingOffset), body]) : body;
    stream.pendingOffset = 0;
    // not started yet: send() takes the body along once the stream gets its id
    if (stream.id === 0) return;
    if (!queued) this.sendBlocked.push(stream);
    this.flushData();
  }

  private open(stream: H2Stream): H2Stream {
    if (this.streams.size >= this.peerMaxStreams) this.waiting.push(stream);
    else this.send(stream);
    return stream;
  }

  /** abandons a stream (deadline, cancellation): RST_STREAM if it was started */
  cancel(stream: H2Stream, errorCode: number = ErrorCode.CANCEL): void {
    if (stream.ended) return;
    stream.ended = true;
    if (stream.id === 0) {
      const i = this.waiting.indexOf(stream);
      if (i >= 0) this.waiting.splice(i, 1);
      return;
    }
    this.write(rstStreamFrame(stream.id, errorCode));
    this.forget(stream);
  }

  /** destroys the connection unless a PING is answered within `timeoutMs` */
  ping(timeoutMs: number): void {
    if (this.closed || this.pingTimer) return;
    this.pingTimer = setTimeout(() => this.destroy(new Error('keepalive ping not answered')), timeoutMs);
    this.pingTimer.unref();
    this.write(pingFrame(Buffer.alloc(8), false));
  }

  /** closes the connection at once; streams in flight are lost */
  destroy(cause?: Error): void {
    if (cause) this.failure ??= cause;
    this.socket.destroy();
  }

  // ---- sending ----

  private start(): void {
    this.write(CONNECTION_PREFACE);
    this.write(
      settingsFrame([
        [Setting.ENABLE_PUSH, 0],
        [Setting.INITIAL_WINDOW_SIZE, OUR_INITIAL_WINDOW_SIZE],
      ]),
    );
    this.write(windowUpdateFrame(0, MAX_WINDOW_SIZE - DEFAULT_WINDOW_SIZE));
  }

  private write(buf: Buffer): void {
    if (this.closed) return;
    if (!this.corked) {
      // frames written in the same turn of the event loop leave in one write: the calls that
      // the requests read in one poll phase start (each in its own I/O callback) share one
      // syscall, and etcd reads them at once (a tick's batch held only one callback's calls;
      // updates cost kapi and etcd about 12% more CPU that way)
      this.corked = true;
      this.socket.cork();
      setImmediate(() => {
        this.corked = false;
        this.socket.uncork();
      });
    }
    this.socket.write(buf);
  }

  private holdPingAnswer(answer: Buffer): void {
    this.heldPingAnswers.push(answer);
    if (this.heldPingAnswers.length > MAX_HELD_PING_ANSWERS) return this.sendPingAnswers();
    if (this.pingAnswerTimer) return;
    this.pingAnswerTimer = setTimeout(() => this.sendPingAnswers(), PING_ANSWER_HOLD_MS);
    this.pingAnswerTimer.unref();
  }

  private sendPingAnswers(): void {
    clearTimeout(this.pingAnswerTimer);
    this.pingAnswerTimer = undefined;
    const answers = this.heldPingAnswers;
    this.heldPingAnswers = [];
    for (const answer of answers) this.write(answer);
  }

  private send(stream: H2Stream): void {
    stream.id = this.nextStreamId;
    this.nextStreamId += 2;
    stream.sendWindow = this.peerInitialWindow;
    this.streams.set(stream.id, stream);
    const block = stream.headerBlock;
    const message = stream.message;
    if (message === null) {
      this.writeHeaderBlock(stream.id, block);
      if (stream.pendingBody) {
        this.sendBlocked.push(stream);
        this.flushData();
      }
      return;
    }
    const bodyLength = GRPC_MESSAGE_PREFIX_BYTES + message.length;
    const maxFrame = this.peerMaxFrameSize;
    if (block.length <= maxFrame && bodyLength <= maxFrame && bodyLength <= this.connSendWindow && bodyLength <= stream.sendWindow) {
      // the common case: HEADERS and the whole message in one buffer
      const out = Buffer.allocUnsafe(2 * FRAME_HEADER_LENGTH + block.length + bodyLength);
      writeFrameHeader(out, 0, block.length, FrameType.HEADERS, Flag.END_HEADERS, stream.id);
      block.copy(out, FRAME_HEADER_LENGTH);
      let at = FRAME_HEADER_LENGTH + block.length;
      writeFrameHeader(out, at, bodyLength, FrameType.DATA, Flag.END_STREAM, stream.id);
      at += FRAME_HEADER_LENGTH;
      out[at] = 0;
      out.writeUInt32BE(message.length, at + 1);
      message.copy(out, at + GRPC_MESSAGE_PREFIX_BYTES);
      this.connSendWindow -= bodyLength;
      stream.sendWindow -= bodyLength;
      this.write(out);
      return;
    }
    this.writeHeaderBlock(stream.id, block);
    stream.pendingBody = grpcFramed(message);
    stream.pendingOffset = 0;
    this.sendBlocked.push(stream);
    this.flushData();
  }

  private writeHeaderBlock(streamId: number, block: Buffer): void {
    const maxFrame = this.peerMaxFrameSize;
    let offset = Math.min(block.length, maxFrame);
    this.write(frame(FrameType.HEADERS, offset === block.length ? Flag.END_HEADERS : 0, streamId, block.subarray(0, offset)));
    while (offset < block.length) {
      const end = Math.min(block.length, offset + maxFrame);
      this.write(frame(FrameType.CONTINUATION, end === block.length ? Flag.END_HEADERS : 0, streamId, block.subarray(offset, end)));
      offset = end;
    }
  }

  /** sends what the flow-control windows allow of the streams' pending bodies */
  private flushData(): void {
    for (let i = 0; i < this.sendBlocked.length && this.connSendWindow > 0; ) {
      const stream = this.sendBlocked[i]!;
      const body = stream.pendingBody;
      if (!body || stream.ended) {
        this.sendBlocked.splice(i, 1);
        continue;
      }
      while (stream.pendingOffset < body.length && this.connSendWindow > 0 && stream.sendWindow > 0) {
        const size = Math.min(body.length - stream.pendingOffset, this.connSendWindow, stream.sendWindow, this.peerMaxFrameSize);
        const end = stream.pendingOffset + size;
        // a unary request ends with its message; a streaming call's messages never end it
        const last = end === body.length && stream.message !== null;
        this.write(frame(FrameType.DATA, last ? Flag.END_STREAM : 0, stream.id, body.subarray(stream.pendingOffset, end)));
        stream.pendingOffset = end;
        this.connSendWindow -= size;
        stream.sendWindow -= size;
      }
      if (stream.pendingOffset === body.length) {
        stream.pendingBody = null;
        this.sendBlocked.splice(i, 1);
      } else {
        i++;
      }
    }
  }

  // ---- receiving ----

  private receive(chunk: Buffer): void {
    if (this.broken) return;
    try {
      this.reader.push(chunk, this.onFrame);
    } catch (err) {
      const code =
        err instanceof FrameSizeError
          ? ErrorCode.FRAME_SIZE_ERROR
          : err instanceof HpackError
            ? ErrorCode.COMPRESSION_ERROR
            : ErrorCode.PROTOCOL_ERROR;
      this.connectionError(code, err as Error);
    }
  }

  private connectionError(code: number, cause: Error): void {
    if (this.closed || this.broken) return;
    this.broken = true;
    this.write(goawayFrame(0, code));
    this.failure ??= cause;
    this.socket.end();
    this.socket.destroySoon();
  }

  private readonly onFrame = (type: number, flags: number, streamId: number, payload: Buffer): void => {
    if (this.closed) return;
    if (this.headerFragments && type !== FrameType.CONTINUATION) throw new Error('expected CONTINUATION');
    switch (type) {
      case FrameType.DATA:
        return this.onData(flags, streamId, payload);
      case FrameType.HEADERS: {
        if (streamId === 0) throw new Error('HEADERS on stream 0');
        const block = unpadded(payload, flags, true);
        if (!block) throw new Error('HEADERS padding longer than the frame');
        this.headerStreamId = streamId;
        this.headerEndStream = (flags & Flag.END_STREAM) !== 0;
        if (flags & Flag.END_HEADERS) return this.onHeaderBlock(block);
        this.headerFragments = [Buffer.from(block)];
        return;
      }
      case FrameType.CONTINUATION: {
        if (!this.headerFragments || streamId !== this.headerStreamId) throw new Error('unexpected CONTINUATION');
        this.headerFragments.push(Buffer.from(payload));
        if (!(flags & Flag.END_HEADERS)) return;
        const block = Buffer.concat(this.headerFragments);
        this.headerFragments = null;
        return this.onHeaderBlock(block);
      }
      case FrameType.RST_STREAM: {
        if (payload.length !== 4) throw new FrameSizeError('RST_STREAM payload');
        const stream = this.streams.get(streamId);
        if (!stream) return;
        this.forget(stream);
        stream.ended = true;
        stream.listener.onReset(payload.readUInt32BE(0));
        return;
      }
      case FrameType.SETTINGS:
        return this.onSettings(flags, payload);
      case FrameType.PUSH_PROMISE:
        throw new Error('PUSH_PROMISE though push is disabled');
      case FrameType.PING:
        if (payload.length !== 8) throw new FrameSizeError('PING payload');
        if (flags & Flag.ACK) {
          clearTimeout(this.pingTimer);
          this.pingTimer = undefined;
        } else {
          this.holdPingAnswer(pingFrame(Buffer.from(payload), true));
        }
        return;
      case FrameType.GOAWAY:
        return this.onGoaway(payload);
      case FrameType.WINDOW_UPDATE: {
        if (payload.length !== 4) throw new FrameSizeError('WINDOW_UPDATE payload');
        const increment = payload.readUInt32BE(0) & 0x7fffffff;
        if (streamId === 0) {
          this.connSendWindow += increment;
        } else {
          const stream = this.streams.get(streamId);
          if (stream) stream.sendWindow += increment;
        }
        this.flushData();
        return;
      }
      default:
        // PRIORITY, and frame types this connection does not know, carry nothing for it
        return;
    }
  };

  private onData(flags: number, streamId: number, payload: Buffer): void {
    // every DATA byte counts against the connection window, even for a stream we dropped
    this.receivedUnacked += payload.length;
    if (this.receivedUnacked >= WINDOW_UPDATE_THRESHOLD) {
      this.write(windowUpdateFrame(0, this.receivedUnacked));
      this.receivedUnacked = 0;
    }
    const data = unpadded(payload, flags, false);
    if (!data) throw new Error('DATA padding longer than the frame');
    const stream = this.streams.get(streamId);
    if (!stream) return;
    if (data.length > 0) stream.listener.onData(data);
    // the listener may have cancelled the stream
    if (stream.ended) return;
    if (flags & Flag.END_STREAM) return this.endedByPeer(stream);
    // a long-lived stream (a watch) takes more than any initial window over its life
    stream.receivedUnacked += payload.length;
    if (stream.receivedUnacked >= WINDOW_UPDATE_THRESHOLD && !stream.ended) {
      this.write(windowUpdateFrame(stream.id, stream.receivedUnacked));
      stream.receivedUnacked = 0;
    }
  }

  private onHeaderBlock(block: Buffer): void {
    // every block goes through the decoder: it keeps the dynamic table in step with etcd's
    const fields = this.decoder.decode(block);
    const stream = this.streams.get(this.headerStreamId);
    if (!stream) return;
    stream.listener.onHeaders(fields);
    if (this.headerEndStream) this.endedByPeer(stream);
  }

  private endedByPeer(stream: H2Stream): void {
    // a response before the whole request was sent: the rest is not wanted; a streaming
    // call never ended its side, so it is closed with a reset
    if (stream.pendingBody || stream.message === null) this.write(rstStreamFrame(stream.id, ErrorCode.CANCEL));
    this.forget(stream);
    stream.ended = true;
    stream.listener.onEnd();
  }

  private onSettings(flags: number, payload: Buffer): void {
    if (flags & Flag.ACK) return;
    if (payload.length % 6 !== 0) throw new FrameSizeError('SETTINGS payload');
    for (let at = 0; at < payload.length; at += 6) {
      const id = payload.readUInt16BE(at);
      const value = payload.readUInt32BE(at + 2);
      switch (id) {
        case Setting.MAX_CONCURRENT_STREAMS:
          this.peerMaxStreams = value;
          break;
        case Setting.INITIAL_WINDOW_SIZE: {
          if (value > MAX_WINDOW_SIZE) throw new Error('INITIAL_WINDOW_SIZE too large');
          const delta = value - this.peerInitialWindow;
          this.peerInitialWindow = value;
          for (const stream of this.streams.values()) stream.sendWindow += delta;
          break;
        }
        case Setting.MAX_FRAME_SIZE:
          if (value < DEFAULT_MAX_FRAME_SIZE || value > 2 ** 24 - 1) throw new Error('MAX_FRAME_SIZE out of range');
          this.peerMaxFrameSize = value;
          break;
        // HEADER_TABLE_SIZE bounds the table of the peer's decoder, which our encoder never
        // adds to; ENABLE_PUSH and MAX_HEADER_LIST_SIZE do not concern a client's requests
        default:
          break;
      }
    }
    this.write(frame(FrameType.SETTINGS, Flag.ACK, 0));
    this.flushData();
    this.startWaiting();
    if (!this.ready) {
      this.ready = true;
      this.events.onReady();
    }
  }

  private onGoaway(payload: Buffer): void {
    if (payload.length < 8) throw new FrameSizeError('GOAWAY payload');
    const lastStreamId = payload.readUInt32BE(0) & 0x7fffffff;
    const first = !this.goaway;
    this.goaway = true;
    // streams above the last one the server processed never reached its handlers
    for (const stream of [...this.streams.values()]) {
      if (stream.id <= lastStreamId) continue;
      this.forget(stream);
      stream.ended = true;
      stream.listener.onReset(ErrorCode.REFUSED_STREAM);
    }
    this.failWaiting(undefined);
    if (first) this.events.onGoaway();
    this.closeWhenIdle();
  }

  // ---- stream bookkeeping ----

  private forget(stream: H2Stream): void {
    if (this.streams.get(stream.id) !== stream) return;
    this.streams.delete(stream.id);
    if (stream.pendingBody) {
      stream.pendingBody = null;
      const i = this.sendBlocked.indexOf(stream);
      if (i >= 0) this.sendBlocked.splice(i, 1);
    }
    this.startWaiting();
    if (this.nextStreamId > LAST_STREAM_ID) this.closeWhenIdle();
    else if (this.goaway) this.closeWhenIdle();
  }

  private startWaiting(): void {
    while (this.waiting.length > 0 && this.streams.size < this.peerMaxStreams && !this.goaway && !this.closed) {
      if (this.nextStreamId > LAST_STREAM_ID) return this.failWaiting(new Error('stream ids used up'));
      this.send(this.waiting.shift()!);
    }
  }

  private failWaiting(cause: Error | undefined): void {
    const waiting = this.waiting.splice(0);
    for (const stream of waiting) {
      stream.ended = true;
      stream.listener.onLost(true, cause);
    }
  }

  private closeWhenIdle(): void {
    if (this.streams.size === 0 && this.waiting.length === 0 && !this.closed) {
      this.write(goawayFrame(0, ErrorCode.NO_ERROR));
      this.socket.end();
    }
  }

  private closedSocket(): void {
    if (this.closed) return;
    this.closed = true;
    this.ready = false;
    clearTimeout(this.pingTimer);
    clearTimeout(this.pingAnswerTimer);
    this.heldPingAnswers = [];
    const cause = this.failure;
    const streams = [...this.streams.values()];
    this.streams.clear();
    this.sendBlocked.length = 0;
    for (const stream of streams) {
      stream.ended = true;
      stream.listener.onLost(false, cause);
    }
    this.failWaiting(cause);
    this.events.onClose(cause);
  }
}
