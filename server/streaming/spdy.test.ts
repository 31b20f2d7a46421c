import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Duplex } from 'node:stream';
import { constants, inflateSync } from 'node:zlib';
import { MAX_SPDY_FRAME_BYTES } from '../limits/stream-limits.js';
import { SpdyConnection, type SpdyStream } from './spdy.js';
import { SPDY_HEADER_DICTIONARY } from './spdy-dictionary.js';
import { decodeHeaderBlock } from './spdy-headers.js';

/** a socket whose writes are recorded and whose reads the test pushes */
function recordingSocket(): { socket: Duplex; written: Buffer[] } {
  const written: Buffer[] = [];
  const socket = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, done) {
      written.push(chunk);
      done();
    },
  });
  return { socket, written };
}

/** two sockets joined back to back */
function socketPair(): [Duplex, Duplex] {
  let a!: Duplex;
  let b!: Duplex;
  const make = (peer: () => Duplex): Duplex =>
    new Duplex({
      read() {},
      write(chunk: Buffer, _enc, done) {
        peer().push(chunk);
        done();
      },
      final(done) {
        peer().push(null);
        done();
      },
    });
  a = make(() => b);
  b = make(() => a);
  return [a, b];
}

interface RawFrame {
  control: boolean;
  type: number;
  streamId: number;
  flags: number;
  payload: Buffer;
}

function parseFrames(bytes: Buffer): RawFrame[] {
  const frames: RawFrame[] = [];
  let at = 0;
  while (at + 8 <= bytes.length) {
    const control = (bytes[at] & 0x80) !== 0;
    const length = bytes.readUInt32BE(at + 4) & 0xffffff;
    const payload = bytes.subarray(at + 8, at + 8 + length);
    frames.push({
      control,
      type: control ? bytes.readUInt16BE(at + 2) : 0,
      streamId: control ? (payload.length >= 4 ? payload.readUInt32BE(0) & 0x7fffffff : 0) : bytes.readUInt32BE(at) & 0x7fffffff,
      flags: bytes[at + 4],
      payload,
    });
    if (control) assert.equal(bytes.readUInt16BE(at) & 0x7fff, 3, 'version 3');
    at += 8 + length;
  }
  assert.equal(at, bytes.length, 'whole frames only');
  return frames;
}

const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 20));

/** waits for what zlib does on its thread pool: a condition, not a duration */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 5));
}

const frameCount = (written: Buffer[]): number => parseFrames(Buffer.concat(written)).length;

test('SYN_STREAMs: odd ids from a client in creation order, no flags, priority 0, headers in the shared zlib stream', async () => {
  const { socket, written } = recordingSocket();
  const conn = new SpdyConnection(socket, 'client');
  for (const type of ['error', 'stdin', 'stdout', 'stderr', 'resize']) conn.openStream({ streamtype: [type] });
  await until(() => frameCount(written) === 5);
  const frames = parseFrames(Buffer.concat(written));
  assert.deepEqual(
    frames.map((f) => [f.type, f.streamId, f.flags]),
    [
      [1, 1, 0],
      [1, 3, 0],
      [1, 5, 0],
      [1, 7, 0],
      [1, 9, 0],
    ],
  );
  for (const f of frames) {
    assert.equal(f.payload.readUInt32BE(4), 0, 'no associated stream');
    assert.equal(f.payload.readUInt16BE(8), 0, 'priority and slot');
  }
  const zlibStream = Buffer.concat(frames.map((f) => f.payload.subarray(10)));
  const blocks = inflateSync(zlibStream, { dictionary: SPDY_HEADER_DICTIONARY, finishFlush: constants.Z_SYNC_FLUSH });
  const types: string[] = [];
  for (let at = 0; at < blocks.length; ) {
    // each block on its own is count + (name, value) pairs; walk them to find the next one
    const one = decodeHeaderBlock(blocks.subarray(at));
    types.push(one.streamtype[0]);
    let end = at + 4;
    for (let i = 0; i < 2; i++) end += 4 + blocks.readUInt32BE(end);
    at = end;
  }
  assert.deepEqual(types, ['error', 'stdin', 'stdout', 'stderr', 'resize']);
  conn.close();
});

test('a server opens even ids; data is split at the frame bound; end() is an empty DATA frame with FIN', async () => {
  const { socket, written } = recordingSocket();
  const conn = new SpdyConnection(socket, 'server');
  const stream = conn.openStream({ streamtype: ['data'] });
  await until(() => frameCount(written) === 1);
  written.length = 0;
  stream.write(Buffer.alloc(MAX_SPDY_FRAME_BYTES + 10, 1));
  stream.end();
  stream.write(Buffer.from('after end is dropped'));
  await until(() => frameCount(written) >= 3);
  await settle();
  const frames = parseFrames(Buffer.concat(written));
  assert.deepEqual(
    frames.map((f) => [f.control, f.streamId, f.flags, f.payload.length]),
    [
      [false, 2, 0, MAX_SPDY_FRAME_BYTES],
      [false, 2, 0, 10],
      [false, 2, 1, 0],
    ],
  );
  conn.close();
});

test('client and server: replies, data both ways, half-close each side, then close', async () => {
  const [a, b] = socketPair();
  const accepted: SpdyStream[] = [];
  const server = new SpdyConnection(b, 'server', {
    onStream: (s) => {
      s.reply();
      accepted.push(s);
      s.on('data', (d: Buffer) => s.write(Buffer.concat([Buffer.from(`${s.header('streamtype')}:`), d])));
      s.once('end', () => s.end());
    },
  });
  const client = new SpdyConnection(a, 'client');
  const streams = ['error', 'stdin', 'stdout'].map((t) => client.openStream({ streamtype: [t], port: ['80'] }));
  await Promise.all(streams.map((s) => s.accepted));
  assert.deepEqual(
    accepted.map((s) => [s.id, s.header('streamtype'), s.header('port')]),
    [
      [1, 'error', '80'],
      [3, 'stdin', '80'],
      [5, 'stdout', '80'],
    ],
  );
  const got: string[] = [];
  const closed = Promise.all(
    streams.map(
      (s) =>
        new Promise<void>((resolve) => {
          s.on('data', (d: Buffer) => got.push(d.toString()));
          s.once('close', () => resolve());
        }),
    ),
  );
  streams[1].write(Buffer.from('hello'));
  for (const s of streams) s.end();
  await closed;
  assert.deepEqual(got, ['stdin:hello']);
  client.close();
  await until(() => server.isClosed);
  assert.ok(server.isClosed, 'GOAWAY ends the peer');
});

test('pings from the peer are echoed; a reset stream reports it; unknown and WINDOW_UPDATE frames are ignored', async () => {
  const { socket, written } = recordingSocket();
  const resets: number[] = [];
  const conn = new SpdyConnection(socket, 'client');
  const stream = conn.openStream({ streamtype: ['data'] });
  stream.on('reset', () => resets.push(stream.id));
  await until(() => frameCount(written) === 1);
  written.length = 0;
  const control = (type: number, payload: Buffer): Buffer => {
    const head = Buffer.alloc(8);
    head.writeUInt16BE(0x8003, 0);
    head.writeUInt16BE(type, 2);
    head.writeUInt32BE(payload.length, 4);
    return Buffer.concat([head, payload]);
  };
  const u32 = (...v: number[]): Buffer => Buffer.concat(v.map((n) => Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255])));
  socket.push(control(6, u32(2)));
  socket.push(control(6, u32(1)));
  socket.push(control(9, u32(1, 65536)));
  socket.push(control(200, Buffer.from('whatever')));
  socket.push(control(3, u32(1, 5)));
  await until(() => resets.length === 1 && frameCount(written) >= 1);
  await settle();
  const frames = parseFrames(Buffer.concat(written));
  assert.deepEqual(
    frames.map((f) => [f.type, f.payload.readUInt32BE(0)]),
    [[6, 2]],
    'only the peer-parity ping is answered',
  );
  assert.deepEqual(resets, [1]);
  assert.equal(conn.isClosed, false);
  conn.close();
});

test('a frame longer than the bound ends the connection before its payload is read', async () => {
  const { socket } = recordingSocket();
  let closedWith: Error | undefined;
  const conn = new SpdyConnection(socket, 'server', { onClose: (err) => (closedWith = err) });
  const head = Buffer.alloc(8);
  head.writeUInt32BE(1, 0);
  head.writeUInt32BE(MAX_SPDY_FRAME_BYTES + 1, 4);
  socket.push(head);
  await settle();
  assert.ok(conn.isClosed);
  assert.match(String(closedWith), /exceeds/);
  assert.ok(socket.destroyed);
});

test('a SYN_STREAM whose header block does not inflate ends the connection', async () => {
  const { socket } = recordingSocket();
  let closedWith: Error | undefined;
  const conn = new SpdyConnection(socket, 'server', { onStream: () => assert.fail('no stream'), onClose: (err) => (closedWith = err) });
  const payload = Buffer.concat([Buffer.from([0, 0, 0, 1, 0, 0, 0, 0, 0, 0]), Buffer.from('garbage header block')]);
  const head = Buffer.alloc(8);
  head.writeUInt16BE(0x8003, 0);
  head.writeUInt16BE(1, 2);
  head.writeUInt32BE(payload.length, 4);
  socket.push(Buffer.concat([head, payload]));
  await until(() => conn.isClosed);
  assert.ok(conn.isClosed);
  assert.match(String(closedWith), /header compression/);
});

test('frames that arrive just before the connection ends are all handled (a reply still inflating holds the close)', async () => {
  const [a, b] = socketPair();
  const server = new SpdyConnection(b, 'server', {
    onStream: (s) => {
      s.reply();
      s.write(Buffer.from('last words'));
      s.end();
      server.close();
    },
  });
  const client = new SpdyConnection(a, 'client');
  const stream = client.openStream({ streamtype: ['stdout'] });
  const got: string[] = [];
  let ended = false;
  stream.on('data', (d: Buffer) => got.push(d.toString()));
  stream.once('end', () => {
    ended = true;
  });
  await until(() => client.isClosed);
  assert.deepEqual(got, ['last words']);
  assert.ok(ended, "the stream's FIN came before the connection's end");
});
