import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import http2 from 'node:http2';
import net, { type AddressInfo } from 'node:net';
import { Flag, FrameType, frame } from '../../storage/etcd/h2-frames.js';
import { encodeLiteralNewName } from '../../storage/etcd/hpack.js';
import type { HttpRequest, HttpResponse } from '../request/types.js';
import { serveHttp2Stream } from './h2-exchange.js';

type Handler = (req: HttpRequest, res: HttpResponse) => void;

interface Answer {
  headers: http2.IncomingHttpHeaders;
  informational: number[];
  body: Buffer;
}

describe('HTTP/2 requests served off the stream', () => {
  let server: http2.Http2Server;
  let client: http2.ClientHttp2Session;
  let handler: Handler = () => {};

  before(async () => {
    server = http2.createServer();
    server.on('stream', (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, _flags: number, rawHeaders: string[]) =>
      serveHttp2Stream(stream, headers, rawHeaders, (req, res) => handler(req, res)),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  after(async () => {
    client.close();
    await new Promise((resolve) => server.close(resolve));
  });

  function call(headers: http2.OutgoingHttpHeaders, body?: Buffer | Buffer[]): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const stream = client.request(headers, { endStream: body === undefined });
      const informational: number[] = [];
      const chunks: Buffer[] = [];
      let head: http2.IncomingHttpHeaders = {};
      stream.on('headers', (h) => informational.push(Number(h[':status'])));
      stream.on('response', (h) => (head = h));
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => resolve({ headers: head, informational, body: Buffer.concat(chunks) }));
      stream.on('error', reject);
      if (Array.isArray(body)) {
        for (const part of body) stream.write(part);
        stream.end();
      } else if (body) {
        stream.end(body);
      }
    });
  }

  it('answers with the headers set, lower-cased, a date, and no connection header', async () => {
    handler = (req, res) => {
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('Connection', 'close');
      res.setHeader('Warning', ['299 - "one"', '299 - "two"']);
      assert.equal(res.getHeader('content-type'), 'application/json');
      assert.equal(res.hasHeader('CONTENT-TYPE'), true);
      assert.equal(res.hasHeader('connection'), false);
      res.writeHead(201, { 'X-Method': req.method ?? '' });
      assert.equal(res.headersSent, true);
      assert.throws(() => res.setHeader('x-late', '1'), /already been initiated/);
      res.end(JSON.stringify({ url: req.url, version: req.httpVersion }));
    };
    const answer = await call({ ':method': 'GET', ':path': '/a?b=c' });
    assert.equal(answer.headers[':status'], 201);
    assert.equal(answer.headers['content-type'], 'application/json');
    assert.equal(answer.headers['x-method'], 'GET');
    assert.equal(answer.headers['warning'], '299 - "one", 299 - "two"');
    assert.equal(answer.headers['connection'], undefined);
    assert.ok(answer.headers['date']);
    assert.deepEqual(JSON.parse(answer.body.toString()), { url: '/a?b=c', version: '2.0' });
  });

  it('a HEAD request and a 204 get the headers alone, whatever is written', async () => {
    handler = (req, res) => {
      if (req.url === '/no-content') res.statusCode = 204;
      else res.setHeader('Content-Length', '5');
      res.end('hello');
    };
    const head = await call({ ':method': 'HEAD', ':path': '/' });
    assert.equal(head.headers[':status'], 200);
    assert.equal(head.headers['content-length'], '5');
    assert.equal(head.body.length, 0);
    const none = await call({ ':method': 'GET', ':path': '/no-content' });
    assert.equal(none.headers[':status'], 204);
    assert.equal(none.body.length, 0);
  });

  it('reads a body by events, and by iteration without ending the response', async () => {
    handler = (req, res) => {
      if (req.url === '/events') {
        const chunks: Buffer[] = [];
        req.on('data', (c) => chunks.push(Buffer.from(c)));
        req.on('end', () => res.end(`events:${Buffer.concat(chunks).length}`));
        return;
      }
      void (async () => {
        let n = 0;
        for await (const c of req) n += c.length;
        assert.equal(req.readableEnded, true);
        res.write('iterated:');
        res.end(String(n));
      })();
    };
    const parts = [Buffer.alloc(70_000, 1), Buffer.alloc(30_000, 2)];
    const byEvents = await call({ ':method': 'POST', ':path': '/events' }, parts);
    assert.equal(byEvents.body.toString(), 'events:100000');
    const byIteration = await call({ ':method': 'POST', ':path': '/iterate' }, parts);
    assert.equal(byIteration.body.toString(), 'iterated:100000');
  });

  it('a request destroyed for its size still gets its answer', async () => {
    handler = (req, res) => {
      let n = 0;
      const onData = (c: Buffer | string): void => {
        n += c.length;
        if (n <= 1000) return;
        req.off('data', onData);
        req.destroy();
        assert.equal(req.destroyed, true);
        res.statusCode = 413;
        res.end('too large');
      };
      req.on('data', onData);
    };
    const answer = await call({ ':method': 'POST', ':path': '/' }, [Buffer.alloc(800), Buffer.alloc(800), Buffer.alloc(800)]);
    assert.equal(answer.headers[':status'], 413);
    assert.equal(answer.body.toString(), 'too large');
  });

  it("'finish' and 'close' come once the stream closes; end's callback is called; writes after end fail", async () => {
    const events: string[] = [];
    let ended = false;
    let writeError: Error | null | undefined;
    const closed = new Promise<void>((resolve) => {
      handler = (_req, res) => {
        res.once('finish', () => events.push('finish'));
        res.once('close', () => {
          events.push('close');
          resolve();
        });
        res.end('done', () => (ended = true));
        assert.equal(res.writableEnded, true);
        res.write('more', (err) => (writeError = err));
      };
    });
    const answer = await call({ ':method': 'GET', ':path': '/' });
    await closed;
    assert.equal(answer.body.toString(), 'done');
    assert.deepEqual(events, ['finish', 'close']);
    assert.equal(ended, true);
    assert.match(String(writeError), /write after end/);
  });

  it('Expect: 100-continue is answered before the handler runs; other expectations get 417', async () => {
    handler = (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(Buffer.from(c)));
      req.on('end', () => res.end(Buffer.concat(chunks)));
    };
    const continued = await call({ ':method': 'POST', ':path': '/', expect: '100-continue' }, Buffer.from('body'));
    assert.deepEqual(continued.informational, [100]);
    assert.equal(continued.body.toString(), 'body');
    const refused = await call({ ':method': 'POST', ':path': '/', expect: 'something-else' }, Buffer.from('body'));
    assert.equal(refused.headers[':status'], 417);
  });

  it("a client's reset closes the response and aborts the request", async () => {
    const seen = new Promise<string[]>((resolve) => {
      handler = (req, res) => {
        const events: string[] = [];
        req.on('aborted', () => events.push('aborted'));
        res.once('close', () => {
          events.push(`close writableFinished=${res.writableFinished}`);
          resolve(events);
        });
        res.write('partial');
      };
    });
    const stream = client.request({ ':method': 'POST', ':path': '/' }, { endStream: false });
    stream.on('error', () => {});
    stream.once('data', () => stream.close(http2.constants.NGHTTP2_CANCEL));
    assert.deepEqual(await seen, ['aborted', 'close writableFinished=false']);
  });
});

describe('HTTP/2 streams reset before they are served', () => {
  it('streams whose RST_STREAM came in the same read as their HEADERS end without an error, and the connection serves on', async () => {
    const served: string[] = [];
    const server = http2.createServer();
    server.on('stream', (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, _flags: number, rawHeaders: string[]) =>
      serveHttp2Stream(stream, headers, rawHeaders, (req, res) => {
        served.push(req.url ?? '');
        res.end('served');
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const block = (method: string, path: string, extra: [string, string][] = []) =>
      Buffer.concat(
        [[':method', method] as [string, string], [':path', path], [':scheme', 'http'], [':authority', 'x'], ...extra].map(([n, v]) =>
          encodeLiteralNewName(n, v),
        ),
      );
    const cancel = Buffer.alloc(4);
    cancel.writeUInt32BE(http2.constants.NGHTTP2_CANCEL);
    const socket = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (c: Buffer) => received.push(c));
    try {
      // node emits a stream's 'stream' event on the next tick: by then these are reset
      socket.write(
        Buffer.concat([
          Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
          frame(FrameType.SETTINGS, 0, 0),
          frame(FrameType.HEADERS, Flag.END_HEADERS, 1, block('POST', '/continue', [['expect', '100-continue']])),
          frame(FrameType.RST_STREAM, 0, 1, cancel),
          frame(FrameType.HEADERS, Flag.END_HEADERS, 3, block('POST', '/refused', [['expect', 'something-else']])),
          frame(FrameType.RST_STREAM, 0, 3, cancel),
          frame(FrameType.HEADERS, Flag.END_HEADERS, 5, block('CONNECT', '/connect')),
          frame(FrameType.RST_STREAM, 0, 5, cancel),
          frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, 7, block('GET', '/after')),
        ]),
      );
      await waitUntil(() => served.includes('/after'));
      assert.ok(!served.includes('/refused') && !served.includes('/connect'));
      // the connection still serves: stream 7's answer came back on it
      await waitUntil(() => Buffer.concat(received).includes('served'));
    } finally {
      socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

async function waitUntil(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(done(), 'timed out');
}
