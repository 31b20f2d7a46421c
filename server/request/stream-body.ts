// Writing a large text body as the client takes it, instead of building it whole: a list of
// thousands of objects is never one string, one buffer and one encrypted copy at once.
//
// Backpressure without letting node's HTTP/1.1 server pause the connection: when a request
// arrives on a connection whose socket needs draining, node pauses the socket and its parser.
// Over TLS the parser reads straight from the TLS layer, which can still hand it cleartext it
// had already decrypted (a request that spans several TLS records, or a pipelined one), and a
// paused parser answers that with HPE_PAUSED: the connection is reset. So the socket is never
// left needing a drain: each slice is smaller than the socket's high-water mark and the next is
// written only once the previous one has gone to the kernel (its write callback), which is
// also what waits for a client that stops reading. Over HTTP/2 a write also waits for 'drain'
// when the stream's flow control holds it.

import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { acceptsGzip, applyWarnings, GZIP_THRESHOLD_BYTES, responseDone, responseFinished, writeBody } from './response.js';
import type { HttpResponse, RequestState } from './types.js';
import { unreadResponseBudget } from './unread-budget.js';

/** below node's 16 KiB socket high-water mark with room for chunk framing and the head */
export const WRITE_SLICE_BYTES = 15 * 1024;
/** text is encoded this many characters at a time */
const TEXT_CHUNK_CHARS = 64 * 1024;
/** what one streamed response holds at most: a text chunk, its bytes, the slice queued for
 *  TLS and its encrypted copy, and gzip's window */
export const STREAMED_RESPONSE_HELD_BYTES = 512 * 1024;
/** BestSpeed, as kube-apiserver */
const GZIP_LEVEL = 1;

/**
 * Writes `pieces` joined, then a newline (Go's json.Encoder), as `contentType`. A body that
 * ends within the first 128 KiB is written whole, with a Content-Length, exactly as
 * writeBody writes it; a longer one streams (chunked over HTTP/1.1), gzip-compressed when
 * the client accepts it, as a whole body of that size would be. Resolves once the client has
 * taken it all or the response is gone (cut by the request timeout or the budget).
 */
export async function writeTextBody(state: RequestState, code: number, pieces: Iterable<string>, contentType: string): Promise<void> {
  const res = state.res;
  if (res.headersSent || responseFinished(res)) return;
  const rest = pieces[Symbol.iterator]();
  let head = '';
  while (head.length < GZIP_THRESHOLD_BYTES) {
    const next = rest.next();
    if (next.done) {
      await writeBody(state, code, head + '\n', contentType);
      return;
    }
    head += next.value;
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
    const chunks = textChunks(head, rest);
    if (gzip) await sendCompressed(res, chunks);
    else await sendChunks(res, chunks);
    if (!responseFinished(res)) res.end();
    await responseDone(res);
  } finally {
    booking.release();
  }
}

/** the text as UTF-8 chunks of about TEXT_CHUNK_CHARS characters, newline last */
function* textChunks(head: string, rest: Iterator<string>): Generator<Buffer> {
  let pending = head;
  for (;;) {
    while (pending.length < TEXT_CHUNK_CHARS) {
      const next = rest.next();
      if (next.done) {
        yield Buffer.from(pending + '\n', 'utf8');
        return;
      }
      pending += next.value;
    }
    while (pending.length >= TEXT_CHUNK_CHARS) {
      let end = TEXT_CHUNK_CHARS;
      // a surrogate pair is one character: its halves are never encoded apart
      const last = pending.charCodeAt(end - 1);
      if (last >= 0xd800 && last <= 0xdbff) end--;
      yield Buffer.from(pending.slice(0, end), 'utf8');
      pending = pending.slice(end);
    }
  }
}

async function sendCompressed(res: HttpResponse, chunks: Iterable<Buffer>): Promise<void> {
  const gzip = createGzip({ level: GZIP_LEVEL });
  const feeding = pipeline(Readable.from(chunks, { objectMode: false }), gzip).catch(() => undefined);
  try {
    await sendChunks(res, gzip);
  } finally {
    // the client went away first: stop compressing what it will never get
    if (!gzip.destroyed) gzip.destroy();
    await feeding;
  }
}

async function sendChunks(res: HttpResponse, chunks: Iterable<Buffer> | AsyncIterable<Buffer>): Promise<void> {
  const gone = responseDone(res).then(() => false);
  for await (const chunk of chunks) {
    for (let at = 0; at < chunk.length; at += WRITE_SLICE_BYTES) {
      if (responseFinished(res)) return;
      const written = await Promise.race([writeSlice(res, chunk.subarray(at, at + WRITE_SLICE_BYTES)), gone]);
      if (!written) return;
    }
  }
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
