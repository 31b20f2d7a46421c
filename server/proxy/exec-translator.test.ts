import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { SpdyConnection, type SpdyStream } from '../streaming/spdy.js';
import { WebSocketConnection } from '../streaming/websocket.js';
import { resultStatus, translateToSpdy, type StreamOptions } from './exec-translator.js';

test('the error stream as kube turns it into the v5 status', () => {
  assert.deepEqual(resultStatus(''), { metadata: {}, status: 'Success' });
  assert.deepEqual(resultStatus('{"metadata":{},"status":"Success"}'), { metadata: {}, status: 'Success' });
  const exit = resultStatus(
    JSON.stringify({ status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '42' }] } }),
  );
  assert.equal(
    JSON.stringify(exit),
    JSON.stringify({
      metadata: {},
      status: 'Failure',
      message: 'command terminated with non-zero exit code: command terminated with exit code 42',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '42' }] },
    }),
  );
  const failures: [string, string][] = [
    ['{"status":"Failure","reason":"NonZeroExitCode"}', 'error stream protocol error: details must be set'],
    ['{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[]}}', 'error stream protocol error: no ExitCode cause given'],
    [
      '{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"256"}]}}',
      'error stream protocol error: invalid exit code value "256"',
    ],
    ['{"status":"Failure","message":"container not running"}', 'container not running'],
    ['{"status":"Weird"}', 'error stream protocol error: unknown error'],
  ];
  for (const [text, message] of failures) {
    const s = resultStatus(text);
    assert.equal(s.reason, 'InternalError', text);
    assert.equal(s.code, 500);
    assert.equal(s.message, `Internal error occurred: ${message}`, text);
  }
  assert.match(String(resultStatus('not json').message), /^Internal error occurred: error stream protocol error: .* in "not json"$/);
});

interface FakeKubelet {
  port: number;
  /** stream types in the order the translator opened them */
  opened: string[];
  resizes: string[];
  close(): void;
}

/** a plain-HTTP SPDY peer that runs `cat` (stdin to stdout, a note on stderr) and exits 7 */
async function startFakeKubelet(): Promise<FakeKubelet> {
  const opened: string[] = [];
  const resizes: string[] = [];
  const server = http.createServer((_req, res) => res.writeHead(400).end());
  server.on('upgrade', (req, socket: Duplex, head: Buffer) => {
    const query = new URL(req.url ?? '/', 'http://kubelet').searchParams;
    const expected =
      1 +
      ['input', 'output', 'error'].filter((k) => query.get(k) === '1' && !(k === 'error' && query.get('tty') === '1')).length +
      Number(query.get('tty') === '1');
    socket.write(
      'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n',
    );
    const streams = new Map<string, SpdyStream>();
    const conn = new SpdyConnection(socket, 'server', {
      head,
      onStream: (stream) => {
        stream.reply();
        const type = stream.header('streamtype');
        opened.push(type);
        streams.set(type, stream);
        if (type === 'resize') stream.on('data', (d: Buffer) => resizes.push(d.toString()));
        if (streams.size < expected) return;
        const stdout = streams.get('stdout');
        streams.get('stderr')?.write(Buffer.from('running cat\n'));
        streams.get('stdin')?.on('data', (d: Buffer) => stdout?.write(d));
        streams.get('stdin')?.once('end', () => {
          stdout?.end();
          streams.get('stderr')?.end();
          const error = streams.get('error');
          error?.write(
            Buffer.from(
              JSON.stringify({
                metadata: {},
                status: 'Failure',
                reason: 'NonZeroExitCode',
                details: { causes: [{ reason: 'ExitCode', message: '7' }] },
              }),
            ),
          );
          error?.end();
          setImmediate(() => conn.close());
        });
      },
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as net.AddressInfo).port, opened, resizes, close: () => server.close() };
}

interface Session {
  messages: [number, string][];
  closeCode: number;
}

/** a v5 client: sends its messages right after the handshake (before the kubelet's streams exist) */
async function runSession(kubeletPort: number, opts: StreamOptions, send: Buffer[]): Promise<Session> {
  const query = new URLSearchParams({
    command: 'cat',
    input: opts.stdin ? '1' : '0',
    output: opts.stdout ? '1' : '0',
    error: opts.stderr ? '1' : '0',
    tty: opts.tty ? '1' : '0',
  });
  const backend = { url: new URL(`http://127.0.0.1:${kubeletPort}/exec/ns/pod/c?${query}`), connectTimeoutMs: 5000 };
  const front = net.createServer((socket) => {
    socket.once(
      'data',
      () =>
        void translateToSpdy(
          { socket, head: Buffer.alloc(0), key: 'dGhlIHNhbXBsZSBub25jZQ==', headers: {} },
          backend,
          opts,
          new AbortController().signal,
        ),
    );
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  try {
    return await new Promise<Session>((resolve, reject) => {
      const messages: [number, string][] = [];
      const client = net.connect((front.address() as net.AddressInfo).port, '127.0.0.1', () => client.write('GET / HTTP/1.1\r\n\r\n'));
      client.on('error', reject);
      let buffered = Buffer.alloc(0);
      const onHead = (chunk: Buffer): void => {
        buffered = Buffer.concat([buffered, chunk]);
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        client.off('data', onHead);
        const ws = new WebSocketConnection(
          client,
          {
            onMessage: (_op, p) => messages.push([p[0], p.subarray(1).toString()]),
            onClose: (code) => resolve({ messages, closeCode: code }),
          },
          'client',
          buffered.subarray(end + 4),
        );
        for (const m of send) ws.sendBinary(m);
      };
      client.on('data', onHead);
    });
  } finally {
    front.close();
  }
}

const channel = (n: number, text: string): Buffer => Buffer.concat([Buffer.from([n]), Buffer.from(text)]);
const CLOSE_STDIN = Buffer.from([255, 0]);

test("v5 exec translated to SPDY: streams opened in kube's order, stdin closed by channel 255, output, stderr and the exit code on channel 3", async () => {
  const kubelet = await startFakeKubelet();
  try {
    const session = await runSession(kubelet.port, { stdin: true, stdout: true, stderr: true, tty: false }, [
      channel(0, 'one '),
      channel(0, 'two\n'),
      CLOSE_STDIN,
    ]);
    assert.deepEqual(kubelet.opened, ['error', 'stdin', 'stdout', 'stderr']);
    assert.deepEqual(session.messages[0], [1, ''], 'the empty first message on the lowest output channel');
    const text = (n: number): string =>
      session.messages
        .filter(([c]) => c === n)
        .map(([, t]) => t)
        .join('');
    assert.equal(text(1), 'one two\n');
    assert.equal(text(2), 'running cat\n');
    const last = session.messages.at(-1)!;
    assert.equal(last[0], 3);
    assert.deepEqual(JSON.parse(last[1]).details, { causes: [{ reason: 'ExitCode', message: '7' }] });
    assert.equal(session.closeCode, 1000);
  } finally {
    kubelet.close();
  }
});

test('v5 exec with a TTY: no stderr stream, a resize stream last, resize messages passed through', async () => {
  const kubelet = await startFakeKubelet();
  try {
    const size = JSON.stringify({ Width: 100, Height: 30 });
    const session = await runSession(kubelet.port, { stdin: true, stdout: true, stderr: false, tty: true }, [
      channel(4, size),
      channel(0, 'typed\r'),
      CLOSE_STDIN,
    ]);
    assert.deepEqual(kubelet.opened, ['error', 'stdin', 'stdout', 'resize']);
    assert.deepEqual(kubelet.resizes, [size]);
    assert.equal(
      session.messages
        .filter(([c]) => c === 1)
        .map(([, t]) => t)
        .join(''),
      'typed\r',
    );
    assert.equal(session.messages.at(-1)?.[0], 3);
  } finally {
    kubelet.close();
  }
});

test('a kubelet that cannot be reached: the dial error as an internal-error status on channel 3', async () => {
  const unused = net.createServer();
  await new Promise<void>((r) => unused.listen(0, '127.0.0.1', r));
  const port = (unused.address() as net.AddressInfo).port;
  await new Promise<void>((r) => unused.close(() => r()));
  const session = await runSession(port, { stdin: false, stdout: true, stderr: false, tty: false }, []);
  const last = session.messages.at(-1)!;
  assert.equal(last[0], 3);
  assert.match(JSON.parse(last[1]).message, /error dialing backend: dial tcp 127\.0\.0\.1:\d+: connect: connection refused/);
});

test('a request ended before the translation began: the translation ends at once, not when the command does', async () => {
  const kubelet = await startFakeKubelet();
  const ended = new AbortController();
  ended.abort();
  let translating: Promise<void> | undefined;
  const front = net.createServer();
  const backend = { url: new URL(`http://127.0.0.1:${kubelet.port}/exec/ns/pod/c?command=cat&input=1&output=1`), connectTimeoutMs: 5000 };
  const arrived = new Promise<void>((resolve) => {
    front.once('connection', (socket: net.Socket) => {
      translating = translateToSpdy(
        { socket, head: Buffer.alloc(0), key: 'dGhlIHNhbXBsZSBub25jZQ==', headers: {} },
        backend,
        { stdin: true, stdout: true, stderr: false, tty: false },
        ended.signal,
      );
      resolve();
    });
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  const client = net.connect((front.address() as net.AddressInfo).port, '127.0.0.1');
  client.on('error', () => undefined);
  try {
    await arrived;
    const outcome = await Promise.race([
      translating!.then(() => 'ended'),
      new Promise<string>((resolve) => setTimeout(() => resolve('still translating'), 1_000).unref()),
    ]);
    assert.equal(outcome, 'ended');
  } finally {
    client.destroy();
    front.close();
    kubelet.close();
  }
});
