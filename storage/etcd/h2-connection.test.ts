// The HTTP/2 transport of gRPC calls against node's own HTTP/2 server (nghttp2), for what
// etcd does not readily make happen: tiny send windows, a limit on concurrent streams,
// padded frames, header blocks split into CONTINUATION frames, GOAWAY with streams left
// unprocessed, resets and HTTP errors, streaming calls' messages split and joined across
// frames. etcd itself is in channel.test.ts.

import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { GrpcStatus } from './grpc-codes.js';
import { EtcdError } from './errors.js';
import { H2Connection, type StreamListener } from './h2-connection.js';
import { encodeLiteral, encodeStaticIndexed } from './hpack.js';
import { GrpcChannel } from './channel.js';

const { NGHTTP2_ENHANCE_YOUR_CALM, PADDING_STRATEGY_MAX } = http2.constants;

let server: http2.Http2Server;
let authority = '';
let active = 0;
let maxActive = 0;
/** streams held back by /hold until `releaseHeld` */
const held: (() => void)[] = [];
/** how the /stream streams ended: `aborted` when the client reset them */
const streamEnds: string[] = [];
const sessions = new Set<http2.ServerHttp2Session>();

function grpcFrame(message: Buffer): Buffer {
  const out = Buffer.alloc(5 + message.length);
  out.writeUInt32BE(message.length, 1);
  message.copy(out, 5);
  return out;
}

function readBody(stream: http2.ServerHttp2Stream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return new Promise((resolve) => stream.on('end', () => resolve(Buffer.concat(chunks))));
}

function respondOk(stream: http2.ServerHttp2Stream, message: Buffer, extra: http2.OutgoingHttpHeaders = {}): void {
  stream.respond({ ':status': 200, 'content-type': 'application/grpc', ...extra }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.end(grpcFrame(message));
}

before(async () => {
  server = http2.createServer({
    paddingStrategy: PADDING_STRATEGY_MAX,
    settings: { maxConcurrentStreams: 2, initialWindowSize: 1000 },
  });
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  server.on('stream', async (stream, headers) => {
    // resets, ours and the server's, surface as stream errors here
    stream.on('error', () => {});
    active++;
    maxActive = Math.max(maxActive, active);
    stream.on('close', () => active--);
    const path = headers[':path'];
    if (path === '/stream') return serveStream(stream, headers);
    const body = await readBody(stream);
    assert.equal(headers['content-type'], 'application/grpc');
    assert.equal(headers.te, 'trailers');
    assert.match(String(headers['grpc-timeout']), /^\d+m$/);
    if (path === '/echo') {
      // the request's message back, under a header too big for one frame
      return respondOk(stream, body.subarray(5), { 'x-big': 'h'.repeat(40_000) });
    }
    if (path === '/hold') {
      held.push(() => respondOk(stream, body.subarray(5)));
      return;
    }
    if (path === '/not-found') {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '5', 'grpc-message': 'not%20found%3A%20%2Fa' }));
      return stream.end();
    }
    if (path === '/trailers-only') {
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '3', 'grpc-message': 'bad' },
        { endStream: true },
      );
      return;
    }
    if (path === '/unavailable') {
      stream.respond({ ':status': 503 }, { endStream: true });
      return;
    }
    if (path === '/calm') return stream.close(NGHTTP2_ENHANCE_YOUR_CALM);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  authority = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => {
  server.close();
});

/** the messages of a gRPC-framed byte stream, as they complete */
function messageReader(onMessage: (m: Buffer) => void): (chunk: Buffer) => void {
  let pending = Buffer.alloc(0);
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 5 && pending.length >= 5 + pending.readUInt32BE(1)) {
      const end = 5 + pending.readUInt32BE(1);
      onMessage(pending.subarray(5, end));
      pending = pending.subarray(end);
    }
  };
}

/**
 * A streaming call: each message is answered as it arrives. `echo N`: N bytes back, in one
 * write (larger than a frame); `pair`: two messages in one write; `half`: a message written
 * in two parts; `ok` and `fail`: trailers with grpc-status 0, or 5 and a message.
 */
function serveStream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void {
  assert.equal(headers['content-type'], 'application/grpc');
  assert.equal(headers.te, 'trailers');
  assert.equal(headers.hasleader, 'true');
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  let trailers: http2.OutgoingHttpHeaders = { 'grpc-status': '0' };
  stream.on('wantTrailers', () => stream.sendTrailers(trailers));
  stream.on('aborted', () => streamEnds.push('aborted'));
  stream.on(
    'data',
    messageReader((m) => {
      const text = m.toString();
      if (text.startsWith('echo ')) stream.write(grpcFrame(Buffer.alloc(Number(text.slice(5)), 'e')));
      else if (text === 'pair') stream.write(Buffer.concat([grpcFrame(Buffer.from('one')), grpcFrame(Buffer.from('two'))]));
      else if (text === 'half') {
        const whole = grpcFrame(Buffer.from('in two parts'));
        stream.write(whole.subarray(0, 3));
        setTimeout(() => stream.write(whole.subarray(3)), 10);
      } else if (text === 'ok') {
        streamEnds.push('ok');
        stream.end();
      } else if (text === 'fail') {
        trailers = { 'grpc-status': '5', 'grpc-message': 'no%20such%20thing' };
        streamEnds.push('fail');
        stream.end();
      } else stream.write(grpcFrame(m));
    }),
  );
}

async function channel(): Promise<GrpcChannel> {
  const ch = new GrpcChannel(authority, authority, null);
  assert.equal(await ch.connect(5_000), true);
  return ch;
}

function failure(code: number, message: RegExp | string, notSent?: boolean) {
  return (err: unknown): boolean => {
    assert.ok(err instanceof EtcdError, String(err));
    assert.equal(err.code, code, err.message);
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    if (notSent !== undefined) assert.equal(err.notSent, notSent);
    return true;
  };
}

test('calls beyond MAX_CONCURRENT_STREAMS wait; bodies larger than the send window and frame size go through', async () => {
  const ch = await channel();
  try {
    maxActive = 0;
    const messages = Array.from({ length: 10 }, (_, i) => Buffer.alloc(50_000 + i, i));
    const replies = await Promise.all(messages.map((m) => ch.call('/echo', m, 10_000)));
    replies.forEach((r, i) => assert.ok(r.equals(messages[i]!), `reply ${i}`));
    assert.ok(maxActive <= 2, `at most 2 streams at once, saw ${maxActive}`);
  } finally {
    ch.close();
  }
});

test('grpc-status and percent-decoded grpc-message from trailers and from a trailers-only response', async () => {
  const ch = await channel();
  try {
    await assert.rejects(ch.call('/not-found', Buffer.from('x'), 5_000), failure(GrpcStatus.NOT_FOUND, 'not found: /a'));
    await assert.rejects(ch.call('/trailers-only', Buffer.from('x'), 5_000), failure(GrpcStatus.INVALID_ARGUMENT, 'bad'));
  } finally {
    ch.close();
  }
});

test('an HTTP error status and a reset stream map to gRPC codes as grpc clients do', async () => {
  const ch = await channel();
  try {
    await assert.rejects(
      ch.call('/unavailable', Buffer.from('x'), 5_000),
      failure(GrpcStatus.UNAVAILABLE, 'Received HTTP status code 503'),
    );
    await assert.rejects(
      ch.call('/calm', Buffer.from('x'), 5_000),
      failure(GrpcStatus.RESOURCE_EXHAUSTED, `Received RST_STREAM with code ${NGHTTP2_ENHANCE_YOUR_CALM}`),
    );
  } finally {
    ch.close();
  }
});

test('a deadline resets the stream and fails the call; the connection goes on', async () => {
  const ch = await channel();
  try {
    await assert.rejects(ch.call('/hold', Buffer.from('x'), 50), failure(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded', false));
    held.splice(0);
    assert.ok((await ch.call('/echo', Buffer.from('after'), 5_000)).equals(Buffer.from('after')));
  } finally {
    ch.close();
  }
});

test('GOAWAY: streams the server did not process fail as not sent, the processed one completes, a new connection follows', async () => {
  const ch = await channel();
  try {
    const first = ch.call('/hold', Buffer.from('one'), 10_000);
    while (held.length < 1) await new Promise((r) => setTimeout(r, 5));
    const session = [...sessions][0]!;
    // the server has seen stream 1 only: a GOAWAY naming it leaves stream 3 unprocessed
    const second = ch.call('/hold', Buffer.from('two'), 10_000);
    session.goaway(0, 1);
    await assert.rejects(second, failure(GrpcStatus.UNAVAILABLE, 'Stream refused by server', true));
    assert.equal(ch.ready, false, 'no new calls on a connection that is going away');
    held.shift()!();
    assert.ok((await first).equals(Buffer.from('one')));
    assert.equal(await ch.connect(5_000), true);
    assert.ok((await ch.call('/echo', Buffer.from('three'), 5_000)).equals(Buffer.from('three')));
  } finally {
    held.splice(0);
    ch.close();
  }
});

test('the connection closing under a call fails it as UNAVAILABLE, possibly sent', async () => {
  const ch = await channel();
  try {
    const pending = ch.call('/hold', Buffer.from('x'), 10_000);
    while (held.length < 1) await new Promise((r) => setTimeout(r, 5));
    for (const s of sessions) s.destroy();
    await assert.rejects(pending, failure(GrpcStatus.UNAVAILABLE, /^Connection to etcd lost/, false));
    held.splice(0);
    await assert.rejects(ch.call('/echo', Buffer.from('x'), 5_000), failure(GrpcStatus.UNAVAILABLE, 'No connection established', true));
  } finally {
    ch.close();
  }
});

test('when the stream ids run out the connection takes no more calls and closes once idle', async () => {
  let ready!: () => void;
  let closed!: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  const isClosed = new Promise<void>((r) => (closed = r));
  const connection = new H2Connection(authority, null, { onReady: ready, onGoaway: () => {}, onClose: closed }, 2 ** 31 - 3);
  await isReady;
  const block = Buffer.concat([
    encodeStaticIndexed(':method', 'POST'),
    encodeStaticIndexed(':scheme', 'http'),
    encodeLiteral(':authority', new URL(authority).host),
    encodeLiteral(':path', '/echo'),
    encodeLiteral('content-type', 'application/grpc'),
    encodeLiteral('te', 'trailers'),
    encodeLiteral('grpc-timeout', '5000m'),
  ]);
  const call = (message: string) =>
    new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const listener: StreamListener = {
        onHeaders: () => {},
        onData: (chunk) => chunks.push(Buffer.from(chunk)),
        onEnd: () => resolve(Buffer.concat(chunks).subarray(5).toString()),
        onReset: (code) => reject(new Error(`reset ${code}`)),
        onLost: () => reject(new Error('lost')),
      };
      connection.startUnary(block, Buffer.from(message), listener);
    });
  const replies = Promise.all([call('last but one'), call('last')]);
  assert.equal(connection.acceptsStreams, false, 'stream id 2^31-1 is the last one');
  assert.deepEqual(await replies, ['last but one', 'last']);
  await isClosed;
  assert.equal(connection.isClosed, true);
});

function serverPing(session: http2.ServerHttp2Session, payload: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const sent = session.ping(payload, (err, _duration, answer) => (err ? reject(err) : resolve(answer)));
    if (!sent) reject(new Error('ping not sent'));
  });
}

test("the server's PINGs are answered with their payloads: one held briefly, a burst beyond the hold limit at once; calls go on", async () => {
  const ch = await channel();
  try {
    assert.ok((await ch.call('/echo', Buffer.from('before'), 5_000)).equals(Buffer.from('before')));
    const session = [...sessions][0]!;
    const one = Buffer.from('held-one');
    assert.ok((await serverPing(session, one)).equals(one));
    // nghttp2 keeps up to 10 PINGs of its own outstanding
    const burst = Array.from({ length: 10 }, (_, i) => Buffer.from(`burst-${String(i).padStart(2, '0')}`));
    const answers = await Promise.all(burst.map((p) => serverPing(session, p)));
    answers.forEach((a, i) => assert.ok(a.equals(burst[i]!), `answer ${i}`));
    assert.ok((await ch.call('/echo', Buffer.from('after'), 5_000)).equals(Buffer.from('after')));
  } finally {
    ch.close();
  }
});

/** a streaming call on `ch` whose messages (as text) and end are collected */
function openTextStream(ch: GrpcChannel) {
  const messages: string[] = [];
  let waiter: (() => void) | undefined;
  let closed!: (err: EtcdError | null) => void;
  const ended = new Promise<EtcdError | null>((resolve) => (closed = resolve));
  const call = ch.openStream<string, string>(
    '/stream',
    { hasleader: 'true' },
    (req) => Buffer.from(req),
    (bytes) => bytes.toString(),
    {
      onMessage: (m) => {
        messages.push(m);
        waiter?.();
      },
      onClose: (err) => closed(err),
    },
  );
  assert.ok(call, 'the channel is connected');
  const count = async (n: number): Promise<void> => {
    while (messages.length < n) await new Promise<void>((resolve) => (waiter = resolve));
  };
  return { call, messages, ended, count };
}

test('a streaming call: messages both ways past the send window, split and joined across frames, in order', async () => {
  const ch = await channel();
  try {
    const s = openTextStream(ch);
    // the server's stream window is 1000 bytes: these wait for its WINDOW_UPDATEs
    const big = 'b'.repeat(5_000);
    s.call.write('first');
    s.call.write(big);
    s.call.write('echo 40000');
    s.call.write('pair');
    s.call.write('half');
    await s.count(6);
    assert.deepEqual(s.messages.slice(0, 2), ['first', big]);
    assert.equal(s.messages[2], 'e'.repeat(40_000));
    assert.deepEqual(s.messages.slice(3), ['one', 'two', 'in two parts']);
    s.call.write('ok');
    assert.equal(await s.ended, null, 'grpc-status 0 ends the call without an error');
  } finally {
    ch.close();
  }
});

test('a streaming call ended with an error status reports it; a cancelled one resets its stream and reports nothing', async () => {
  const ch = await channel();
  try {
    const failing = openTextStream(ch);
    failing.call.write('fail');
    const err = await failing.ended;
    assert.ok(err instanceof EtcdError);
    assert.equal(err.code, GrpcStatus.NOT_FOUND);
    assert.equal(err.message, 'no such thing');

    const cancelled = openTextStream(ch);
    cancelled.call.write('hello');
    await cancelled.count(1);
    streamEnds.length = 0;
    cancelled.call.cancel();
    while (!streamEnds.includes('aborted')) await new Promise((r) => setTimeout(r, 5));
    let reported = false;
    void cancelled.ended.then(() => (reported = true));
    // the connection carries on
    assert.ok((await ch.call('/echo', Buffer.from('after'), 5_000)).equals(Buffer.from('after')));
    assert.equal(reported, false, 'no handler is called after cancel');
  } finally {
    ch.close();
  }
});
