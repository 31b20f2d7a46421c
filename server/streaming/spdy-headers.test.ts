import { test } from 'node:test';
import assert from 'node:assert/strict';
import { constants, deflateSync, inflateSync } from 'node:zlib';
import { MAX_SPDY_HEADERS } from '../limits/stream-limits.js';
import { SPDY_HEADER_DICTIONARY } from './spdy-dictionary.js';
import { decodeHeaderBlock, encodeHeaderBlock, HeaderCompressor, HeaderDecompressor, SpdyProtocolError } from './spdy-headers.js';

function adler32(bytes: Uint8Array): number {
  let a = 1;
  let b = 0;
  for (const byte of bytes) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}

test('the dictionary is SPDY/3 draft 3 byte for byte: its length and the id every SPDY/3 peer announces', () => {
  assert.equal(SPDY_HEADER_DICTIONARY.length, 1423);
  // every SPDY/3 header stream starts 0x38 0xea 0xe3 0xc6 0xa7 0xc2: the last four are this id
  assert.equal(adler32(SPDY_HEADER_DICTIONARY).toString(16), 'e3c6a7c2');
});

test('a header block: count, then lengths and bytes; names lower case, several values joined by NUL', () => {
  const block = encodeHeaderBlock({ StreamType: ['error'], port: ['80', '81'] });
  const expected = Buffer.concat([
    Buffer.from([0, 0, 0, 2]),
    Buffer.from([0, 0, 0, 10]),
    Buffer.from('streamtype'),
    Buffer.from([0, 0, 0, 5]),
    Buffer.from('error'),
    Buffer.from([0, 0, 0, 4]),
    Buffer.from('port'),
    Buffer.from([0, 0, 0, 5]),
    Buffer.from('80\u000081'),
  ]);
  assert.deepEqual(block, expected);
  assert.deepEqual(decodeHeaderBlock(block), { streamtype: ['error'], port: ['80', '81'] });
});

test('truncated blocks and too many headers are protocol errors', () => {
  const block = encodeHeaderBlock({ a: ['b'] });
  for (let cut = 0; cut < block.length; cut++) assert.throws(() => decodeHeaderBlock(block.subarray(0, cut)), SpdyProtocolError);
  const many = Buffer.alloc(4);
  many.writeUInt32BE(MAX_SPDY_HEADERS + 1);
  assert.throws(() => decodeHeaderBlock(many), /too many headers/);
});

test('compressed blocks are zlib with the dictionary, sync-flushed, one context for the connection', async () => {
  const compressor = new HeaderCompressor();
  const first = await compressor.compress({ streamtype: ['error'] });
  assert.deepEqual([...first.subarray(2, 6)], [0xe3, 0xc6, 0xa7, 0xc2], 'the dictionary id in the zlib header');
  assert.deepEqual(first.subarray(-4), Buffer.from([0, 0, 0xff, 0xff]), 'a sync flush ends every block');
  const second = await compressor.compress({ streamtype: ['stdin'] });
  const whole = inflateSync(Buffer.concat([first, second]), { dictionary: SPDY_HEADER_DICTIONARY, finishFlush: constants.Z_SYNC_FLUSH });
  assert.deepEqual(whole, Buffer.concat([encodeHeaderBlock({ streamtype: ['error'] }), encodeHeaderBlock({ streamtype: ['stdin'] })]));
  compressor.close();
});

test('blocks asked for at once come out one per call, in order (a client opening its streams back to back)', async () => {
  const compressor = new HeaderCompressor();
  const decompressor = new HeaderDecompressor();
  const types = ['error', 'stdin', 'stdout', 'stderr', 'resize'];
  const blocks = await Promise.all(types.map((t) => compressor.compress({ streamtype: [t] })));
  for (const [i, block] of blocks.entries()) assert.deepEqual(await decompressor.decompress(block), { streamtype: [types[i]] });
  const decoded = await Promise.all(
    types.map((t) => compressor.compress({ streamtype: [t], port: ['8080'] })).map(async (b) => decompressor.decompress(await b)),
  );
  assert.deepEqual(
    decoded.map((h) => h.streamtype[0]),
    types,
  );
  compressor.close();
  decompressor.close();
});

test('a block another zlib wrote with the dictionary decodes; garbage and bombs are protocol errors', async () => {
  const foreign = deflateSync(encodeHeaderBlock({ streamtype: ['data'], port: ['80'] }), {
    dictionary: SPDY_HEADER_DICTIONARY,
    finishFlush: constants.Z_SYNC_FLUSH,
  });
  const decompressor = new HeaderDecompressor();
  assert.deepEqual(await decompressor.decompress(foreign), { streamtype: ['data'], port: ['80'] });
  decompressor.close();

  const broken = new HeaderDecompressor();
  await assert.rejects(broken.decompress(Buffer.from('not zlib at all')), SpdyProtocolError);
  broken.close();

  const huge = encodeHeaderBlock({ big: ['x'.repeat(1024 * 1024)] });
  const bomb = deflateSync(huge, { dictionary: SPDY_HEADER_DICTIONARY, finishFlush: constants.Z_SYNC_FLUSH });
  assert.ok(bomb.length < 4096);
  const bounded = new HeaderDecompressor();
  await assert.rejects(bounded.decompress(bomb), /header block too large/);
  bounded.close();
});
