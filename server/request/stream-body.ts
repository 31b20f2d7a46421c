// Writing a large text body as the client takes it, instead of building it whole: a list of
// thousands of objects is never one string, one buffer and one encrypted copy at once.
//
// Backpressure without letting node's HTTP/1.1 server pause the connection: when a request
// arrives on a connection whose socket needs draining, node pauses the socket and its parser.
// Over TLS the parser reads straight from the TLS layer, which can still hand it cleartext it
// had already decrypted (a request that spans several TLS records, or a pipelined one), and a
// paused parser answers that with HPE_PAUSED: the connection is reset. So the socket is never
// left needing a drain: each slice is smaller than the socket's high-water mark (over HTTP/1.1
// raised while the response streams, so a slice is a large write) and the next is written only
// once the previous one has gone to the kernel (its write callback), which is also what waits
// for a client that stops reading. Over HTTP/2 a write also waits for 'drain'
// when the stream's flow control holds it.

import { createGzip, type Gzip } from 'node:zlib';
import { acceptsGzip, applyWarnings, GZIP_THRESHOLD_BYTES, responseDone, responseFinished, writeBody } from './response.js';
import type { HttpResponse, RequestState } from './types.js';
import { unreadResponseBudget } from './unread-budget.js';

/** below node's 16 KiB socket high-water mark with room for chunk framing and the head */
export const WRITE_SLICE_BYTES = 15 * 1024;
/** a slice over HTTP/2, and over HTTP/1.1 where the socket's high-water mark is raised above
 *  it while the response streams: TLS writes and syscalls are paid per write, not per byte */
const WIDE_SLICE_BYTES = 128 * 1024;
/** a chunk's size line and CRLFs, and room for the head */
const SLICE_FRAMING_BYTES = 1024;
/** the body is made in one buffer of at most this size per response, refilled once what it
 *  held has gone (to the socket, or into gzip); at least GZIP_THRESHOLD_BYTES, so the head
 *  that decides between a whole body and a streamed one fits in it */
const CHUNK_BYTES = GZIP_THRESHOLD_BYTES;
/** what one streamed response holds at most: its chunk buffer, the slice queued for TLS and
 *  its encrypted copy, and gzip's window and output */
export const STREAMED_RESPONSE_HELD_BYTES = 512 * 1024;
/** BestSpeed, as kube-apiserver */
const GZIP_LEVEL = 1;

/** a piece of a body: text, or UTF-8 bytes written as they are (never modified here) */
export type BodyPiece = string | Uint8Array;

/**
 * Writes `pieces` joined, then a newline (Go's json.Encoder) unless `newline` is false (a
 * protobuf body), as `contentType`. A body that
 * ends within the first 128 KiB is written whole, with a Content-Length, exactly as
 * writeBody writes it; a longer one streams (chunked over HTTP/1.1), gzip-compressed when
 * the client accepts it, as a whole body of that size would be. `sizeHint` is about the
 * body's size in bytes, when known (it sizes the first buffer). Resolves once the client has
 * taken it all or the response is gone (cut by the request timeout or the budget).
 */
export async function writeTextBody(
  state: RequestState,
  code: number,
  pieces: Iterable<BodyPiece>,
  contentType: string,
  sizeHint = 0,
  newline = true,
): Promise<void> {
  const res = state.res;
  if (res.headersSent || responseFinished(res)) return;
  const body = new ChunkFiller(pieces[Symbol.iterator](), Math.min(CHUNK_BYTES, sizeHint + (sizeHint >> 4) + 1024), newline ? '\n' : '');
  body.fill();
  while (!body.done && body.full && body.capacity < CHUNK_BYTES) {
    body.grow(CHUNK_BYTES);
    body.fill();
  }
  if (body.done && body.filled.length < GZIP_THRESHOLD_BYTES) {
    await writeBody(state, code, body.filled, contentType);
    return;
  }
  const gzip = (state.compressResponses ?? true) && acceptsGzip(state);
  applyWarnings(state);
  res.setHeader('Content-Type', contentType);
  if (gzip) {
    res.setHeader('Content-Encoding', 'gzip');
    res.setHeader('Vary', 'Accept-Encoding');
  }
  res.writeHead(code);
  if (state.method === 'HEAD') {
    res.end();
    return;
  }
  const booking = unreadResponseBudget().book(STREAMED_RESPONSE_HELD_BYTES, () => res.destroy());
  try {
    if (gzip) await sendCompressed(res, body.chunks());
    else await sendChunks(res, body.chunks());
    if (!responseFinished(res)) res.end();
    await responseDone(res);
  } finally {
    booking.release();
  }
}

/**
 * A body made in one buffer: each fill copies pieces into it until it is full or the body has
 * ended (with its newline). The buffer is reused: what a fill made must have gone before the
 * next fill. One buffer per response, instead of a fresh one per chunk, leaves the garbage
 * collector no dead chunk buffers outside the heap to find.
 */
class ChunkFiller {
  private buf: Buffer;
  private used = 0;
  /** the rest of a piece that did not fit */
  private carry: Uint8Array | undefined;
  private ended = false;

  constructor(
    private readonly pieces: Iterator<BodyPiece>,
    capacity: number,
    /** what follows the last piece */
    private readonly ending: string,
  ) {
    this.buf = Buffer.allocUnsafe(capacity);
  }

  /** every piece and the ending are in */
  get done(): boolean {
    return this.ended && this.carry === undefined;
  }

  get full(): boolean {
    return this.used === this.buf.length;
  }

  get capacity(): number {
    return this.buf.length;
  }

  /** what the last fills made */
  get filled(): Buffer {
    return this.buf.subarray(0, this.used);
  }

  /** a bigger buffer, keeping what is filled */
  grow(capacity: number): void {
    const next = Buffer.allocUnsafe(capacity);
    this.buf.copy(next, 0, 0, this.used);
    this.buf = next;
  }

  /** adds pieces until the buffer is full or the body has ended */
  fill(): void {
    const buf = this.buf;
    if (this.carry) this.copyIn(this.carry);
    while (this.used < buf.length && !this.ended) {
      const next = this.pieces.next();
      let piece: BodyPiece;
      if (next.done) {
        this.ended = true;
        piece = this.ending;
      } else {
        piece = next.value;
      }
      if (typeof piece !== 'string') this.copyIn(piece);
      // a UTF-8 character takes at most 3 bytes per UTF-16 unit
      else if (piece.length * 3 <= buf.length - this.used) this.used += buf.write(piece, this.used);
      else this.copyIn(Buffer.from(piece, 'utf8'));
    }
  }

  /** the buffer's content so far, then each further fill's, the buffer reused each time */
  *chunks(): Generator<Buffer> {
    yield this.filled;
    while (!this.done) {
      this.used = 0;
      this.fill();
      yield this.filled;
    }
  }

  /** copies what fits of `bytes`; the rest is carried to the next fill */
  private copyIn(bytes: Uint8Array): void {
    const room = this.buf.length - this.used;
    if (bytes.length <= room) {
      this.buf.set(bytes, this.used);
      this.used += bytes.length;
      this.carry = undefined;
    } else {
      this.buf.set(bytes.subarray(0, room), this.used);
      this.used += room;
      this.carry = bytes.subarray(room);
    }
  }
}

/** compresses the chunks as the client takes the compressed ones; each chunk is fed once the
 *  previous one is in gzip's window (the chunks share a buffer) */
async function sendCompressed(res: HttpResponse, chunks: Iterable<Buffer>): Promise<void> {
  const gzip = createGzip({ level: GZIP_LEVEL });
  const feeding = feed(gzip, chunks).catch(() => undefined);
  try {
    await sendChunks(res, gzip);
  } finally {
    // the client went away first: stop compressing what it will never get
    if (!gzip.destroyed) gzip.destroy();
    await feeding;
  }
}

async function feed(gzip: Gzip, chunks: Iterable<Buffer>): Promise<void> {
  for (const chunk of chunks) {
    if (gzip.destroyed || !(await taken(gzip, chunk))) return;
  }
  gzip.end();
}

/** resolves true once gzip has consumed `chunk`, false when it fails or closes first */
function taken(gzip: Gzip, chunk: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    const closed = (): void => resolve(false);
    gzip.once('close', closed);
    gzip.write(chunk, (err?: Error | null) => {
      gzip.off('close', closed);
      resolve(!err);
    });
  });
}

async function sendChunks(res: HttpResponse, chunks: Iterable<Buffer> | AsyncIterable<Buffer>): Promise<void> {
  const gone = responseDone(res).then(() => false);
  // HTTP/2 has no parser to pause: its writes wait for 'drain' instead
  const http1 = 'socket' in res;
  const restoreMark = http1 ? raiseSocketHighWaterMark(res, WIDE_SLICE_BYTES + SLICE_FRAMING_BYTES) : undefined;
  const sliceBytes = !http1 || restoreMark ? WIDE_SLICE_BYTES : WRITE_SLICE_BYTES;
  try {
    for await (const chunk of chunks) {
      for (let at = 0; at < chunk.length; at += sliceBytes) {
        if (responseFinished(res)) return;
        const written = await Promise.race([writeSlice(res, chunk.subarray(at, at + sliceBytes)), gone]);
        if (!written) return;
      }
    }
  } finally {
    restoreMark?.();
  }
}

/**
 * Over HTTP/1.1, raises the socket's high-water mark to `bytes` while one response streams, so
 * a slice that big is one write (one TLS write, one syscall) and still never leaves the socket
 * needing a drain. Node offers no public way to set it on the server's TLS sockets. Returns
 * what puts the old mark back, or undefined (a socket without that state).
 */
function raiseSocketHighWaterMark(res: HttpResponse, bytes: number): (() => void) | undefined {
  const state = ((res as { socket?: unknown }).socket as { _writableState?: { highWaterMark?: unknown } } | null)?._writableState;
  if (!state || typeof state.highWaterMark !== 'number') return undefined;
  const old = state.highWaterMark;
  if (old >= bytes) return () => {};
  state.highWaterMark = bytes;
  return () => {
    state.highWaterMark = old;
  };
}

/** resolves true once the slice has gone to the socket (and, over HTTP/2, the stream drained);
 *  false on a write error */
function writeSlice(res: HttpResponse, slice: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    let flushed = false;
    let drained = true;
    const settle = (): void => {
      if (flushed && drained) resolve(true);
    };
    const accepted = res.write(slice, (err?: Error | null) => {
      if (err) return resolve(false);
      flushed = true;
      settle();
    });
    if (!accepted) {
      drained = false;
      res.once('drain', () => {
        drained = true;
        settle();
      });
    }
  });
}
