// SPDY/3 header blocks: name/value pairs (names lower case, several values joined by NUL)
// compressed with one zlib context per direction for the whole connection, primed with the
// SPDY dictionary and sync-flushed after every block. Both directions work on one block at a
// time in connection order, which is what the shared contexts require.

import { constants, createDeflate, createInflate, type Deflate, type Inflate } from 'node:zlib';
import { MAX_SPDY_HEADER_BLOCK_BYTES, MAX_SPDY_HEADERS } from '../limits/stream-limits.js';
import { SPDY_HEADER_DICTIONARY } from './spdy-dictionary.js';

export type SpdyHeaders = Record<string, string[]>;

export class SpdyProtocolError extends Error {}

export function encodeHeaderBlock(headers: SpdyHeaders): Buffer {
  const parts: Buffer[] = [];
  const count = Buffer.alloc(4);
  const entries = Object.entries(headers);
  count.writeUInt32BE(entries.length);
  parts.push(count);
  for (const [name, values] of entries) {
    for (const text of [name.toLowerCase(), values.join('\0')]) {
      const bytes = Buffer.from(text, 'utf8');
      const len = Buffer.alloc(4);
      len.writeUInt32BE(bytes.length);
      parts.push(len, bytes);
    }
  }
  return Buffer.concat(parts);
}

export function decodeHeaderBlock(block: Buffer): SpdyHeaders {
  const out: SpdyHeaders = {};
  let at = 0;
  const need = (n: number): void => {
    if (at + n > block.length) throw new SpdyProtocolError('truncated header block');
  };
  need(4);
  const count = block.readUInt32BE(at);
  at += 4;
  if (count > MAX_SPDY_HEADERS) throw new SpdyProtocolError('too many headers');
  for (let i = 0; i < count; i++) {
    need(4);
    const nameLen = block.readUInt32BE(at);
    at += 4;
    need(nameLen);
    const name = block
      .subarray(at, at + nameLen)
      .toString('utf8')
      .toLowerCase();
    at += nameLen;
    need(4);
    const valueLen = block.readUInt32BE(at);
    at += 4;
    need(valueLen);
    const values = block
      .subarray(at, at + valueLen)
      .toString('utf8')
      .split('\0');
    at += valueLen;
    (out[name] ??= []).push(...values);
  }
  return out;
}

/**
 * One zlib context used a block at a time: the output of a write plus a sync flush is
 * everything pushed before the flush's callback runs (zlib pushes before it calls back).
 * Callers may ask for several blocks at once (a client opening its streams back to back);
 * each waits for the one before it, or their outputs would run together.
 */
class BlockCodec {
  private previous: Promise<unknown> = Promise.resolve();
  private collected: Buffer[] = [];
  private total = 0;
  private limit = Number.MAX_SAFE_INTEGER;
  private failure: Error | undefined;
  /** the block in progress fails with the context: zlib never calls a flush back after an error */
  private failCurrent: ((err: Error) => void) | undefined;

  constructor(private readonly z: Deflate | Inflate) {
    z.on('data', (chunk: Buffer) => {
      this.total += chunk.length;
      // past the limit nothing more is kept: a small bomb must not become a large buffer
      if (this.total <= this.limit) this.collected.push(chunk);
    });
    z.on('error', (err: Error) => {
      this.failure = new SpdyProtocolError(`header compression: ${err.message}`);
      this.failCurrent?.(this.failure);
    });
  }

  run(input: Buffer, limit: number): Promise<Buffer> {
    const result = this.previous.then(() => this.runNow(input, limit));
    this.previous = result.catch(() => {});
    return result;
  }

  private runNow(input: Buffer, limit: number): Promise<Buffer> {
    this.collected = [];
    this.total = 0;
    this.limit = limit;
    return new Promise((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      this.failCurrent = reject;
      if (input.length > 0) this.z.write(input);
      this.z.flush(constants.Z_SYNC_FLUSH, () => {
        this.failCurrent = undefined;
        if (this.failure) return reject(this.failure);
        if (this.total > limit) return reject(new SpdyProtocolError('header block too large'));
        resolve(Buffer.concat(this.collected));
      });
    });
  }

  close(): void {
    this.z.destroy();
  }
}

export class HeaderCompressor {
  private readonly codec = new BlockCodec(createDeflate({ dictionary: SPDY_HEADER_DICTIONARY }));

  compress(headers: SpdyHeaders): Promise<Buffer> {
    return this.codec.run(encodeHeaderBlock(headers), Number.MAX_SAFE_INTEGER);
  }

  close(): void {
    this.codec.close();
  }
}

export class HeaderDecompressor {
  private readonly codec = new BlockCodec(createInflate({ dictionary: SPDY_HEADER_DICTIONARY }));

  async decompress(compressed: Buffer): Promise<SpdyHeaders> {
    return decodeHeaderBlock(await this.codec.run(compressed, MAX_SPDY_HEADER_BLOCK_BYTES));
  }

  close(): void {
    this.codec.close();
  }
}
