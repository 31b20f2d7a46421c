import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Flag,
  FrameReader,
  FrameSizeError,
  FrameType,
  frame,
  goawayFrame,
  rstStreamFrame,
  Setting,
  settingsFrame,
  unpadded,
  windowUpdateFrame,
} from './h2-frames.js';

interface Seen {
  type: number;
  flags: number;
  streamId: number;
  payload: string;
}

function readAll(reader: FrameReader, chunks: Buffer[]): Seen[] {
  const seen: Seen[] = [];
  for (const chunk of chunks) {
    reader.push(chunk, (type, flags, streamId, payload) => seen.push({ type, flags, streamId, payload: payload.toString('hex') }));
  }
  return seen;
}

test('frames written and read back, whole and cut at every byte', () => {
  const bytes = Buffer.concat([
    settingsFrame([
      [Setting.ENABLE_PUSH, 0],
      [Setting.INITIAL_WINDOW_SIZE, 2 ** 31 - 1],
    ]),
    windowUpdateFrame(0, 2 ** 31 - 1 - 65_535),
    frame(FrameType.DATA, Flag.END_STREAM, 3, Buffer.from('hello')),
    rstStreamFrame(5, 8),
    goawayFrame(7, 0),
  ]);
  const expected: Seen[] = [
    { type: FrameType.SETTINGS, flags: 0, streamId: 0, payload: '0002000000000004' + '7fffffff' },
    { type: FrameType.WINDOW_UPDATE, flags: 0, streamId: 0, payload: (2 ** 31 - 1 - 65_535).toString(16).padStart(8, '0') },
    { type: FrameType.DATA, flags: Flag.END_STREAM, streamId: 3, payload: Buffer.from('hello').toString('hex') },
    { type: FrameType.RST_STREAM, flags: 0, streamId: 5, payload: '00000008' },
    { type: FrameType.GOAWAY, flags: 0, streamId: 0, payload: '0000000700000000' },
  ];
  assert.deepEqual(readAll(new FrameReader(), [bytes]), expected);
  for (let cut = 1; cut < bytes.length; cut++) {
    assert.deepEqual(readAll(new FrameReader(), [bytes.subarray(0, cut), bytes.subarray(cut)]), expected, `cut at ${cut}`);
  }
  assert.deepEqual(
    readAll(
      new FrameReader(),
      [...bytes].map((b) => Buffer.from([b])),
    ),
    expected,
  );
});

test('the reserved bit of a stream id is ignored', () => {
  const bytes = frame(FrameType.DATA, 0, 1, Buffer.from('x'));
  bytes[5]! |= 0x80;
  assert.equal(readAll(new FrameReader(), [bytes])[0]!.streamId, 1);
});

test('a frame over the announced maximum size is a FRAME_SIZE error', () => {
  const bytes = frame(FrameType.DATA, 0, 1, Buffer.alloc(16_385));
  assert.throws(() => readAll(new FrameReader(), [bytes]), FrameSizeError);
});

test('padding and priority fields are taken off DATA and HEADERS payloads', () => {
  // DATA, PADDED: pad length 3, "abc", 3 bytes of padding
  const data = Buffer.from('03616263000000', 'hex');
  assert.equal(unpadded(data, Flag.PADDED, false)?.toString(), 'abc');
  // HEADERS, PADDED and PRIORITY: pad length 2, 5 bytes of priority, block 0x88, 2 bytes padding
  const headers = Buffer.from('02' + '8000000310' + '88' + '0000', 'hex');
  assert.deepEqual(unpadded(headers, Flag.PADDED | Flag.PRIORITY, true), Buffer.from([0x88]));
  // HEADERS with PRIORITY only
  assert.deepEqual(unpadded(Buffer.from('000000000f88', 'hex'), Flag.PRIORITY, true), Buffer.from([0x88]));
  // without flags the payload is the block
  assert.deepEqual(unpadded(Buffer.from('88', 'hex'), Flag.END_HEADERS, true), Buffer.from([0x88]));
  // padding longer than the payload
  assert.equal(unpadded(Buffer.from('0561', 'hex'), Flag.PADDED, false), null);
});
