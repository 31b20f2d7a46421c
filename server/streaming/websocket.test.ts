import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Duplex } from 'node:stream';
import { MAX_WEBSOCKET_MESSAGE_BYTES } from '../limits/stream-limits.js';
import {
  acceptKey,
  CLOSE_PROTOCOL_ERROR,
  CLOSE_TOO_BIG,
  encodeFrame,
  handshakeResponse,
  isWebSocketRequest,
  offeredProtocols,
  OPCODE_BINARY,
  OPCODE_CLOSE,
  OPCODE_CONTINUATION,
  OPCODE_PING,
  OPCODE_PONG,
  OPCODE_TEXT,
  WebSocketConnection,
} from './websocket.js';

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

interface Seen {
  messages: [number, string][];
  closed?: [number, string];
}

function serverOn(socket: Duplex): { ws: WebSocketConnection; seen: Seen } {
  const seen: Seen = { messages: [] };
  const ws = new WebSocketConnection(
    socket,
    {
      onMessage: (opcode, payload) => seen.messages.push([opcode, payload.toString()]),
      onClose: (code, reason) => (seen.closed = [code, reason]),
    },
    'server',
  );
  return { ws, seen };
}

/** decodes unmasked frames a server wrote */
function serverFrames(bytes: Buffer): { fin: boolean; opcode: number; payload: Buffer }[] {
  const out = [];
  let at = 0;
  while (at < bytes.length) {
    assert.equal(bytes[at + 1] & 0x80, 0, 'a server never masks');
    let len = bytes[at + 1] & 0x7f;
    let offset = at + 2;
    if (len === 126) {
      len = bytes.readUInt16BE(at + 2);
      offset += 2;
    } else if (len === 127) {
      len = Number(bytes.readBigUInt64BE(at + 2));
      offset += 8;
    }
    out.push({ fin: (bytes[at] & 0x80) !== 0, opcode: bytes[at] & 0x0f, payload: bytes.subarray(offset, offset + len) });
    at = offset + len;
  }
  return out;
}

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

test('the handshake: RFC 6455 accept key, the chosen subprotocol, upgrade detection', () => {
  assert.equal(acceptKey('dGhlIHNhbXBsZSBub25jZQ=='), 's3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
  const head = handshakeResponse('dGhlIHNhbXBsZSBub25jZQ==', 'v5.channel.k8s.io');
  assert.equal(
    head,
    'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n',
  );
  assert.ok(isWebSocketRequest({ connection: 'keep-alive, Upgrade', upgrade: 'WebSocket' }));
  assert.ok(!isWebSocketRequest({ connection: 'Upgrade', upgrade: 'SPDY/3.1' }));
  assert.deepEqual(offeredProtocols({ 'sec-websocket-protocol': 'v5.channel.k8s.io, v4.channel.k8s.io,,' }), [
    'v5.channel.k8s.io',
    'v4.channel.k8s.io',
  ]);
});

test('frame lengths: 7-bit, 16-bit and 64-bit forms; a client masks, a server does not', () => {
  for (const [len, headLen] of [
    [0, 2],
    [125, 2],
    [126, 4],
    [65535, 4],
    [65536, 10],
  ] as const) {
    const payload = Buffer.alloc(len, 7);
    const plain = encodeFrame(OPCODE_BINARY, payload, false);
    assert.equal(plain.length, headLen + len);
    assert.equal(plain[0], 0x82);
    assert.deepEqual(serverFrames(plain)[0].payload, payload);
    const masked = encodeFrame(OPCODE_BINARY, payload, true);
    assert.equal(masked.length, headLen + 4 + len);
    assert.equal(masked[1] & 0x80, 0x80);
    const mask = masked.subarray(headLen, headLen + 4);
    const body = masked.subarray(headLen + 4);
    for (let i = 0; i < len; i++) assert.equal(body[i] ^ mask[i & 3], 7);
  }
  assert.equal(encodeFrame(OPCODE_TEXT, Buffer.from('a'), false, false)[0], 0x01, 'no FIN bit on a first fragment');
});

test('masked frames are unmasked, split reads are joined, fragments with a ping between them make one message', async () => {
  const { socket, written } = recordingSocket();
  const { seen } = serverOn(socket);
  const whole = encodeFrame(OPCODE_BINARY, Buffer.from('\u0000stdin data'), true);
  for (const byte of whole) socket.push(Buffer.from([byte]));
  socket.push(encodeFrame(OPCODE_TEXT, Buffer.from('frag'), true, false));
  socket.push(encodeFrame(OPCODE_PING, Buffer.from('p'), true));
  socket.push(encodeFrame(OPCODE_CONTINUATION, Buffer.from('men'), true, false));
  socket.push(encodeFrame(OPCODE_CONTINUATION, Buffer.from('ted'), true, true));
  await settle();
  assert.deepEqual(seen.messages, [
    [OPCODE_BINARY, '\u0000stdin data'],
    [OPCODE_TEXT, 'fragmented'],
  ]);
  assert.deepEqual(
    serverFrames(Buffer.concat(written)).map((f) => [f.opcode, f.payload.toString()]),
    [[OPCODE_PONG, 'p']],
  );
  assert.equal(seen.closed, undefined);
});

test('a server refuses unmasked frames (1002)', async () => {
  const { socket, written } = recordingSocket();
  const { seen } = serverOn(socket);
  socket.push(encodeFrame(OPCODE_BINARY, Buffer.from('x'), false));
  await settle();
  assert.deepEqual(seen.closed?.[0], CLOSE_PROTOCOL_ERROR);
  const frames = serverFrames(Buffer.concat(written));
  assert.equal(frames[0].opcode, OPCODE_CLOSE);
  assert.equal(frames[0].payload.readUInt16BE(0), CLOSE_PROTOCOL_ERROR);
  assert.ok(socket.destroyed);
});

test('protocol violations: a continuation with nothing to continue, a new message inside a fragmented one, a fragmented ping, reserved bits', async () => {
  const cases = [
    encodeFrame(OPCODE_CONTINUATION, Buffer.from('x'), true),
    Buffer.concat([encodeFrame(OPCODE_BINARY, Buffer.from('a'), true, false), encodeFrame(OPCODE_BINARY, Buffer.from('b'), true)]),
    encodeFrame(OPCODE_PING, Buffer.from('x'), true, false),
    encodeFrame(OPCODE_PING, Buffer.alloc(126), true),
    Buffer.from([0xc2, 0x80, 0, 0, 0, 0]),
    encodeFrame(0x3, Buffer.from('x'), true),
  ];
  for (const bytes of cases) {
    const { socket } = recordingSocket();
    const { seen } = serverOn(socket);
    socket.push(bytes);
    await settle();
    assert.equal(seen.closed?.[0], CLOSE_PROTOCOL_ERROR, bytes.toString('hex').slice(0, 20));
    assert.deepEqual(seen.messages, []);
  }
});

test('a message over the bound is refused (1009) from its announced length or its fragments, without buffering it', async () => {
  const announced = recordingSocket();
  const one = serverOn(announced.socket);
  const head = Buffer.alloc(14);
  head[0] = 0x82;
  head[1] = 0x80 | 127;
  head.writeBigUInt64BE(BigInt(MAX_WEBSOCKET_MESSAGE_BYTES + 1), 2);
  announced.socket.push(head);
  await settle();
  assert.equal(one.seen.closed?.[0], CLOSE_TOO_BIG);

  const fragmented = recordingSocket();
  const two = serverOn(fragmented.socket);
  const piece = Buffer.alloc(MAX_WEBSOCKET_MESSAGE_BYTES / 2 + 1);
  fragmented.socket.push(encodeFrame(OPCODE_BINARY, piece, true, false));
  fragmented.socket.push(encodeFrame(OPCODE_CONTINUATION, piece, true, true));
  await settle();
  assert.equal(two.seen.closed?.[0], CLOSE_TOO_BIG);
  assert.deepEqual(two.seen.messages, []);
});

test('a close frame is answered with the same code once, then the socket ends; nothing is sent after it', async () => {
  const { socket, written } = recordingSocket();
  const { ws, seen } = serverOn(socket);
  const body = Buffer.alloc(6);
  body.writeUInt16BE(1000, 0);
  body.write('done', 2);
  socket.push(encodeFrame(OPCODE_CLOSE, body, true));
  await settle();
  assert.deepEqual(seen.closed, [1000, 'done']);
  ws.sendBinary(Buffer.from('late'));
  ws.close();
  const frames = serverFrames(Buffer.concat(written));
  assert.deepEqual(
    frames.map((f) => [f.opcode, f.payload.readUInt16BE(0)]),
    [[OPCODE_CLOSE, 1000]],
  );
  assert.equal(socket.writableEnded, true);
});

test('a client role masks what it sends and reads unmasked frames', async () => {
  const { socket, written } = recordingSocket();
  const got: string[] = [];
  const ws = new WebSocketConnection(socket, { onMessage: (_o, p) => got.push(p.toString()), onClose: () => {} }, 'client');
  ws.sendBinary(Buffer.from('abc'));
  assert.equal(written[0][1] & 0x80, 0x80);
  socket.push(encodeFrame(OPCODE_BINARY, Buffer.from('from server'), false));
  await settle();
  assert.deepEqual(got, ['from server']);
});
