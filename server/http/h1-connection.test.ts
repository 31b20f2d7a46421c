import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import type { HttpRequest, HttpResponse, UpgradeSocket } from '../request/types.js';
import { markShared } from '../request/shared-bytes.js';
import { serveHttp1 } from './h1-connection.js';
import type { H1Request } from './h1-exchange.js';

type Handler = (req: HttpRequest, res: HttpResponse, upgrade?: UpgradeSocket) => void;

/** the raw bytes a client gets back for `wire`, until the server closes or `until` holds */
function exchange(port: number, wire: string | Buffer[], until?: (got: string) => boolean, pauseMs = 0): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let got = '';
    const done = () => {
      socket.destroy();
      resolve(got);
    };
    socket.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (until?.(got)) done();
    });
    socket.on('close', done);
    socket.on('error', reject);
    socket.on('connect', async () => {
      for (const part of typeof wire === 'string' ? [Buffer.from(wire, 'latin1')] : wire) {
        socket.write(part);
        if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
      }
    });
  });
}

/** the status lines of the responses in `raw`, in order */
const statuses = (raw: string) => [...raw.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));

describe('HTTP/1.1 connections served by kapi', { timeout: 60_000 }, () => {
  let server: net.Server;
  let port: number;
  let handler: Handler = () => {};
  const upgraded: net.Socket[] = [];

  before(async () => {
    server = net.createServer((socket) =>
      serveHttp1(socket as TLSSocket, {
        handler: (req, res, upgrade) => handler(req, res, upgrade),
        readHeaderTimeoutMs: 300,
        upgraded: (s) => upgraded.push(s),
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  /** what a client that sends `wire` and half-closes at once gets back, until the server closes */
  const halfClosed = (wire: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.end(wire, 'latin1'));
      let got = '';
      socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
      socket.on('close', () => resolve(got));
      socket.on('error', reject);
    });

  it('a client that half-closes after its requests gets every answer, its requests are told of the end, then the connection ends', async () => {
    const told: string[] = [];
    handler = (req, res) => {
      (req as H1Request).onClientEnded = () => told.push(req.url ?? '');
      setTimeout(() => res.end(`answer ${req.url}`), 20);
    };
    const got = await halfClosed('GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.deepEqual(statuses(got), [200, 200]);
    assert.match(got, /answer \/a[\s\S]*answer \/b$/);
    assert.deepEqual(told, ['/a', '/b']);
  });

  it('a client that half-closes in the middle of a body: its request is aborted and the connection ends', async () => {
    let aborted = false;
    handler = (req) => {
      req.on('aborted', () => {
        aborted = true;
      });
    };
    const got = await halfClosed('POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nshort');
    assert.equal(got, '');
    assert.ok(aborted, 'the handler saw its request aborted');
  });

  it('a pipelined request taken after the end whose body the end cut short: the request before it is answered, it is aborted, the connection ends', async () => {
    const aborted: string[] = [];
    handler = (req, res) => {
      req.on('aborted', () => aborted.push(req.url ?? ''));
      req.on('data', () => {});
      req.on('end', () => setTimeout(() => res.end(`answer ${req.url}`), 20));
    };
    const got = await halfClosed(
      'POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nokPOST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nshort',
    );
    assert.deepEqual(statuses(got), [200]);
    assert.match(got, /answer \/a$/);
    assert.deepEqual(aborted, ['/b']);
  });

  it('serves node:http clients over kept-alive connections', async () => {
    handler = (req, res) => {
      res.setHeader('Content-Type', 'text/plain');
      res.end(`${req.method} ${req.url} ${req.headers['x-n']}`);
    };
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = new Set<unknown>();
    try {
      for (let n = 0; n < 3; n++) {
        const { status, body, headers } = await new Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }>(
          (resolve, reject) => {
            const req = http.get({ port, host: '127.0.0.1', path: `/p?n=${n}`, agent, headers: { 'X-N': String(n) } }, (res) => {
              sockets.add(res.socket);
              let body = '';
              res.on('data', (d: Buffer) => (body += d.toString()));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
            });
            req.on('error', reject);
          },
        );
        assert.equal(status, 200);
        assert.equal(body, `GET /p?n=${n} ${n}`);
        assert.equal(headers['content-length'], String(body.length));
        assert.ok(headers.date);
        assert.equal(headers.connection, undefined);
      }
      assert.equal(sockets.size, 1);
    } finally {
      agent.destroy();
    }
  });

  it('answers pipelined requests in order, one at a time', async () => {
    let open = 0;
    handler = (req, res) => {
      open++;
      assert.equal(open, 1);
      setTimeout(() => {
        open--;
        res.end(req.url);
      }, 5);
    };
    const raw = await exchange(
      port,
      'GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\nGET /3 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n',
    );
    assert.deepEqual(statuses(raw), [200, 200, 200]);
    assert.match(raw, /\/1[\s\S]*\/2[\s\S]*\/3$/);
    assert.match(raw, /Connection: close\r\n/);
  });

  it('reads chunked and length-framed bodies, split anywhere', async () => {
    handler = (req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c) => parts.push(Buffer.from(c as Buffer)));
      req.on('end', () => res.end(`got ${Buffer.concat(parts).toString()}`));
    };
    const chunked = 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n';
    const sized = 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nConnection: close\r\n\r\nwxyz';
    const wire = Buffer.from(chunked + sized, 'latin1');
    const pieces = Array.from({ length: Math.ceil(wire.length / 7) }, (_, i) => wire.subarray(i * 7, i * 7 + 7));
    const raw = await exchange(port, pieces, undefined, 1);
    assert.deepEqual(statuses(raw), [200, 200]);
    assert.match(raw, /got abcde/);
    assert.match(raw, /got wxyz$/);
  });

  it('reads a body through the async iterator', async () => {
    handler = async (req, res) => {
      let total = 0;
      for await (const chunk of req) total += chunk.length;
      res.end(`total ${total}`);
    };
    const body = 'x'.repeat(200_000);
    const raw = await exchange(port, `POST / HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    assert.match(raw, /total 200000$/);
  });

  it('frames a streamed response in chunks, and none for HEAD or 204', async () => {
    handler = (req, res) => {
      if (req.url === '/204') {
        res.statusCode = 204;
        res.end();
        return;
      }
      res.setHeader('Content-Type', 'text/plain');
      res.writeHead(200);
      res.write('one,');
      res.write(Buffer.from('two'));
      res.end();
    };
    const raw = await exchange(port, 'GET / HTTP/1.1\r\nHost: a\r\n\r\n', (got) => got.endsWith('0\r\n\r\n'));
    assert.match(raw, /Transfer-Encoding: chunked\r\n/);
    assert.match(raw, /\r\n\r\n4\r\none,\r\n3\r\ntwo\r\n0\r\n\r\n$/);
    const head = await exchange(port, 'HEAD / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
    assert.match(head, /\r\n\r\n$/);
    const none = await exchange(port, 'GET /204 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
    assert.match(none, /^HTTP\/1\.1 204 No Content\r\n/);
    assert.doesNotMatch(none, /Transfer-Encoding|Content-Length/);
  });

  it('writes large bodies, sized and chunked, that node:http reads back whole', async () => {
    const big = Buffer.alloc(300_000, 'k');
    handler = (req, res) => {
      if (req.url === '/sized') return void res.end(big);
      res.write(big.subarray(0, 100_000));
      res.write(big.subarray(100_000));
      res.end();
    };
    for (const path of ['/sized', '/chunked']) {
      const body = await new Promise<Buffer>((resolve, reject) => {
        http
          .get({ port, host: '127.0.0.1', path }, (res) => {
            const parts: Buffer[] = [];
            res.on('data', (d: Buffer) => parts.push(d));
            res.on('end', () => resolve(Buffer.concat(parts)));
          })
          .on('error', reject);
      });
      assert.ok(body.equals(big), path);
    }
  });

  it('frames bytes shared between streams once, and a buffer filled again afresh', async () => {
    const shared = markShared(Buffer.from('{"type":"ADDED"}\n'));
    const scratch = Buffer.from('first');
    handler = (_req, res) => {
      res.writeHead(200);
      res.write(shared);
      res.write(scratch);
      scratch.write('again');
      res.write(scratch);
      res.write(shared);
      res.end();
    };
    const raw = await exchange(port, 'GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
    assert.match(raw, /\r\n\r\n11\r\n\{"type":"ADDED"\}\n\r\n5\r\nfirst\r\n5\r\nagain\r\n11\r\n\{"type":"ADDED"\}\n\r\n0\r\n\r\n$/);
  });

  it('ends an HTTP/1.0 response with the connection, unless kept alive', async () => {
    handler = (_req, res) => {
      res.write('streamed');
      res.end();
    };
    const raw = await exchange(port, 'GET / HTTP/1.0\r\n\r\n');
    assert.match(raw, /Connection: close\r\n/);
    assert.match(raw, /\r\n\r\nstreamed$/);
    handler = (_req, res) => res.end('sized');
    const kept = await exchange(port, 'GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n', (got) => got.endsWith('sized'));
    assert.match(kept, /Connection: keep-alive\r\n/);
    assert.match(kept, /Content-Length: 5\r\n/);
  });

  it('answers a head it cannot read as Go does, and closes', async () => {
    handler = (_req, res) => res.end('never');
    const bad = await exchange(port, 'GET / HTTP/1.1\r\nHost: a\r\nX : y\r\n\r\n');
    assert.match(bad, /^HTTP\/1\.1 400 Bad Request\r\n[\s\S]*Connection: close\r\n/);
    const huge = await exchange(port, `GET / HTTP/1.1\r\nHost: a\r\nX: ${'a'.repeat(1_100_000)}\r\n\r\n`);
    assert.match(huge, /^HTTP\/1\.1 431 /);
    const version = await exchange(port, 'GET / HTTP/3.0\r\nHost: a\r\n\r\n');
    assert.match(version, /^HTTP\/1\.1 505 /);
    handler = (req) => req.on('data', () => {});
    const chunking = await exchange(port, 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n');
    assert.match(chunking, /^HTTP\/1\.1 400 /);
  });

  it('reads a large head sent in many pieces, and pipelined requests split anywhere', async () => {
    handler = (req, res) => res.end(`${req.url} ${String(req.headers['x-big']).length}`);
    const wire = Buffer.from(
      `GET /big HTTP/1.1\r\nHost: a\r\nX-Big: ${'v'.repeat(60_000)}\r\n\r\nGET /small HTTP/1.1\r\nHost: a\r\nX-Big: s\r\nConnection: close\r\n\r\n`,
      'latin1',
    );
    const pieces = Array.from({ length: Math.ceil(wire.length / 997) }, (_, i) => wire.subarray(i * 997, (i + 1) * 997));
    const raw = await exchange(port, pieces, undefined, 1);
    assert.deepEqual(statuses(raw), [200, 200]);
    assert.match(raw, /\/big 60000[\s\S]*\/small 1$/);
  });

  it('closes a connection whose head does not arrive in time', async () => {
    handler = (_req, res) => res.end('never');
    const started = Date.now();
    const raw = await exchange(port, 'GET / HTTP/1.1\r\nHost: a\r\n');
    assert.equal(raw, '');
    assert.ok(Date.now() - started >= 250);
  });

  it('sends 100 Continue before reading a body that expects it, and 417 for other expectations', async () => {
    handler = (req, res) => {
      req.on('data', () => {});
      req.on('end', () => res.end('read'));
    };
    const raw = await exchange(
      port,
      'POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok',
    );
    assert.deepEqual(statuses(raw), [100, 200]);
    const other = await exchange(port, 'POST / HTTP/1.1\r\nHost: a\r\nExpect: magic\r\nContent-Length: 2\r\n\r\nok');
    assert.deepEqual(statuses(other), [417]);
  });

  it('closes the connection after a response given before a large body was read', async () => {
    handler = (req, res) => {
      req.destroy();
      res.statusCode = 413;
      res.end('too large');
    };
    const raw = await exchange(port, [Buffer.from('POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000\r\n\r\nabc')]);
    assert.deepEqual(statuses(raw), [413]);
    assert.match(raw, /Connection: close\r\n[\s\S]*too large$/);
  });

  it('reads and drops a small body left unread, and takes the next request', async () => {
    handler = (req, res) => {
      if (req.url === '/early') res.end('early');
      else res.end('next');
    };
    const raw = await exchange(
      port,
      [
        Buffer.from('POST /early HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc'),
        Buffer.from('defghijGET /next HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n'),
      ],
      undefined,
      20,
    );
    assert.deepEqual(statuses(raw), [200, 200]);
    assert.doesNotMatch(raw.split('early')[0]!, /Connection: close/);
    assert.match(raw, /next$/);
  });

  it('takes the next request after one whose large body arrived whole and was never read', async () => {
    handler = (req, res) => {
      // answered once the body is in (and has paused the socket), without reading it
      if (req.url === '/ignored') setTimeout(() => res.end('ignored'), 50);
      else res.end('next');
    };
    // just over the 64 KiB a request holds unread: it all arrives before the socket pauses
    const body = 'b'.repeat(70_000);
    const raw = await exchange(
      port,
      [
        Buffer.from(`POST /ignored HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\n\r\n${body}`),
        Buffer.from('GET /next HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n'),
      ],
      undefined,
      200,
    );
    assert.deepEqual(statuses(raw), [200, 200]);
    assert.match(raw, /next$/);
  });

  it('hands an upgrade its socket with the bytes after the head', async () => {
    handler = (req, _res, upgrade) => {
      assert.ok(upgrade);
      assert.equal(req.headers.upgrade, 'test');
      upgrade.socket.write(`HTTP/1.1 101 Switching Protocols\r\n\r\nhead=${upgrade.head.toString()}`);
      upgrade.socket.once('data', (d: Buffer) => upgrade.socket.end(`|then=${d.toString()}`));
    };
    const raw = await exchange(
      port,
      [Buffer.from('GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\nearly'), Buffer.from('late')],
      undefined,
      20,
    );
    assert.match(raw, /^HTTP\/1\.1 101 /);
    assert.match(raw, /head=early\|then=late$/);
    assert.ok(upgraded.length > 0);
  });

  it('tells the request and the response when the client goes away mid-body', async () => {
    const seen: string[] = [];
    const settled = new Promise<void>((resolve) => {
      handler = (req, res) => {
        req.on('data', () => {});
        req.on('aborted', () => seen.push('aborted'));
        res.on('close', () => {
          seen.push(`close finished=${res.writableFinished}`);
          resolve();
        });
      };
    });
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write('POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc');
      setTimeout(() => socket.destroy(), 20);
    });
    socket.on('error', () => {});
    await settled;
    assert.deepEqual(seen, ['aborted', 'close finished=false']);
  });

  it('refuses header values that would split the response', async () => {
    let thrown: unknown;
    handler = (_req, res) => {
      try {
        res.setHeader('X-Bad', 'a\r\nInjected: yes');
      } catch (err) {
        thrown = err;
      }
      res.end('ok');
    };
    const raw = await exchange(port, 'GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
    assert.equal((thrown as { code?: string }).code, 'ERR_INVALID_CHAR');
    assert.doesNotMatch(raw, /Injected/);
  });
});
