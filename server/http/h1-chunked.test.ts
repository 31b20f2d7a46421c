import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChunkedDecoder } from './h1-chunked.js';
import { HeadError } from './h1-head.js';

/** the body and where it ended, fed in pieces of `step` bytes */
function decode(wire: string, step: number): { body: string; end: number } {
  const buf = Buffer.from(wire, 'latin1');
  const d = new ChunkedDecoder();
  const parts: Buffer[] = [];
  let at = 0;
  while (at < buf.length && !d.done) {
    const piece = buf.subarray(at, Math.min(buf.length, at + step));
    const used = d.push(piece, 0, (data) => parts.push(Buffer.from(data)));
    at += used;
    if (used < piece.length) break;
  }
  assert.ok(d.done, 'the body ended');
  return { body: Buffer.concat(parts).toString('latin1'), end: at };
}

describe('chunked request bodies', () => {
  const wire = '5;ext=1\r\nhello\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nTrailer: x\r\n\r\nGET / HTTP/1.1\r\n';

  it('decodes the data, skips extensions and trailers, and stops where the body ends', () => {
    for (const step of [1, 2, 3, 7, 1000]) {
      const { body, end } = decode(wire, step);
      assert.equal(body, 'helloabcdefghijklmnopqrstuvwxyz', `step ${step}`);
      assert.equal(wire.slice(end), 'GET / HTTP/1.1\r\n', `step ${step}`);
    }
  });

  it('refuses bad framing', () => {
    for (const bad of ['x\r\n', '5\r\nhelloX\r\n', '-1\r\n', '5\nhello\r\n', `${'1'.repeat(5000)}\r\n`, '1234567890123456\r\n']) {
      const d = new ChunkedDecoder();
      assert.throws(
        () => d.push(Buffer.from(bad, 'latin1'), 0, () => {}),
        (err: unknown) => err instanceof HeadError && err.status === 400,
        JSON.stringify(bad.slice(0, 20)),
      );
    }
  });

  it('bounds the trailer', () => {
    const d = new ChunkedDecoder();
    const trailer = `0\r\n${'X-A: b\r\n'.repeat(10000)}\r\n`;
    assert.throws(() => d.push(Buffer.from(trailer, 'latin1'), 0, () => {}), HeadError);
  });
});
