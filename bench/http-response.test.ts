// The bench client's response reader: each framing the server uses, split at every byte, and
// the bytes it must refuse.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpResponseReader } from './http-response.js';

/** pushes `wire` in the given pieces; the response once the reader says it is complete */
function read(wire: Buffer, cuts: number[], noBody = false) {
  const reader = new HttpResponseReader(noBody);
  let at = 0;
  let done = false;
  for (const cut of [...cuts, wire.length]) {
    assert.equal(done, false, 'the reader finished before the last bytes');
    done = reader.push(wire.subarray(at, cut));
    at = cut;
  }
  assert.equal(done, true, 'the reader wanted more bytes than the response has');
  return reader.response();
}

/** no split, every split in two, and splits in three with a 3-byte middle piece */
function splits(wire: Buffer): number[][] {
  const out: number[][] = [[]];
  for (let i = 1; i < wire.length; i++) {
    out.push([i]);
    if (i + 3 < wire.length) out.push([i, i + 3]);
  }
  return out;
}

const lengthFramed = Buffer.from('HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{"kind":"x"}');
const chunked = Buffer.from(
  'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n',
);

describe('HttpResponseReader', () => {
  test('a content-length body, split anywhere', () => {
    for (const cuts of splits(lengthFramed)) {
      const r = read(lengthFramed, cuts);
      assert.equal(r.status, 201);
      assert.equal(r.body.toString(), '{"kind":"x"}');
      assert.equal(r.keepAlive, true);
    }
  });

  test('a chunked body with an extension and a trailer, split anywhere', () => {
    for (const cuts of splits(chunked)) {
      const r = read(chunked, cuts);
      assert.equal(r.status, 200);
      assert.equal(r.body.toString(), 'hello, world');
    }
  });

  test('an empty body: content-length 0, 204, and a HEAD request', () => {
    assert.equal(read(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'), []).body.length, 0);
    assert.equal(read(Buffer.from('HTTP/1.1 204 No Content\r\n\r\n'), []).status, 204);
    assert.equal(read(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n'), [], true).body.length, 0);
  });

  test('connection: close is reported so the connection is not reused', () => {
    const r = read(Buffer.from('HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\nContent-Length: 2\r\n\r\nno'), [7]);
    assert.deepEqual([r.status, r.keepAlive, r.body.toString()], [500, false, 'no']);
  });

  test('bytes that are not an HTTP/1.1 response are refused', () => {
    assert.throws(() => new HttpResponseReader(false).push(Buffer.from('PRI * HTTP/2.0\r\n\r\n')), /status line/);
    assert.throws(() => new HttpResponseReader(false).push(Buffer.from('HTTP/1.1 200 OK\r\n\r\n')), /neither content-length/);
    assert.throws(
      () => new HttpResponseReader(false).push(Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n')),
      /bad chunk size/,
    );
    assert.throws(() => new HttpResponseReader(false).push(Buffer.from(`HTTP/1.1 200 OK\r\n${'x'.repeat(70000)}`)), /too long/);
    assert.throws(() => read(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nab'), []), /after the end/);
  });
});
