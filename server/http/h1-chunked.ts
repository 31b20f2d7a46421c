// A chunked request body (RFC 9112 7.1) decoded as its bytes arrive: each chunk's size line
// (extensions ignored), its data, its CRLF, and after the last chunk the trailer fields, which
// are read and dropped. Size lines and trailers are bounded, so a client cannot make the
// decoder hold more than a line's worth of framing.

import { HeadError } from './h1-head.js';

/** the longest chunk-size line (with extensions) and the most trailer bytes taken */
const MAX_LINE_BYTES = 4096;
const MAX_TRAILER_BYTES = 64 * 1024;
const HEX = /^[0-9a-fA-F]{1,15}$/;

type Phase = 'size' | 'data' | 'data-end' | 'trailer' | 'done';

export class ChunkedDecoder {
  private phase: Phase = 'size';
  private line = '';
  private left = 0;
  private trailerBytes = 0;

  get done(): boolean {
    return this.phase === 'done';
  }

  /**
   * Decodes what `buf` holds from `at` on, handing each piece of data to `onData`; returns
   * where the body ended in `buf` (the bytes after it belong to the next request), or
   * buf.length when it needs more. Throws a HeadError (400) on bad framing.
   */
  push(buf: Buffer, at: number, onData: (data: Buffer) => void): number {
    let i = at;
    while (i < buf.length && this.phase !== 'done') {
      if (this.phase === 'data') {
        const n = Math.min(this.left, buf.length - i);
        onData(buf.subarray(i, i + n));
        i += n;
        this.left -= n;
        if (this.left === 0) this.phase = 'data-end';
        continue;
      }
      const lf = buf.indexOf(0x0a, i);
      const end = lf < 0 ? buf.length : lf + 1;
      this.line += buf.toString('latin1', i, end);
      i = end;
      if (this.line.length > (this.phase === 'trailer' ? MAX_TRAILER_BYTES : MAX_LINE_BYTES)) {
        throw new HeadError(400, 'chunked framing line too long');
      }
      if (lf < 0) break;
      const line = this.line;
      this.line = '';
      if (!line.endsWith('\r\n')) throw new HeadError(400, 'chunked framing line without CRLF');
      const content = line.slice(0, -2);
      this.lineDone(content);
    }
    return i;
  }

  private lineDone(content: string): void {
    switch (this.phase) {
      case 'size': {
        const semicolon = content.indexOf(';');
        const size = (semicolon < 0 ? content : content.slice(0, semicolon)).trimEnd();
        if (!HEX.test(size)) throw new HeadError(400, 'invalid chunk size');
        const n = Number.parseInt(size, 16);
        if (n === 0) this.phase = 'trailer';
        else {
          this.left = n;
          this.phase = 'data';
        }
        return;
      }
      case 'data-end':
        if (content !== '') throw new HeadError(400, 'chunk data longer than its size');
        this.phase = 'size';
        return;
      case 'trailer':
        this.trailerBytes += content.length + 2;
        if (this.trailerBytes > MAX_TRAILER_BYTES) throw new HeadError(400, 'trailer too long');
        if (content === '') this.phase = 'done';
        return;
      default:
        return;
    }
  }
}
