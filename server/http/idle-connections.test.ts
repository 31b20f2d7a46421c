// HTTP/2 connections with no stream open are closed after the idle timeout, as kube-apiserver's
// Go server closes them; an open stream (a watch) keeps its connection however quiet it is.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import https from 'node:https';
import type { Socket } from 'node:net';
import tls from 'node:tls';
import { createTestPKI, type TestPKI } from '../pki/testing.js';
import { createSecureServer, type SecureServer, type SecureServerOptions } from './server.js';

const IDLE_MS = 300;
/** shorter than the idle time here (kube's are 32 and 90 s) so the tests can tell them apart;
 *  node looks at the heads every connectionsCheckingInterval (at most a second) */
const READ_HEADER_MS = 150;

/** a server on a free loopback port with a throwaway PKI */
async function serve(
  timeouts: Pick<SecureServerOptions, 'idleTimeoutMs' | 'readHeaderTimeoutMs'>,
  handler: SecureServerOptions['handler'],
): Promise<{ pki: TestPKI; server: SecureServer; port: number }> {
  const pki = createTestPKI();
  const server = createSecureServer({ cert: pki.server.cert, key: pki.server.key, clientCA: pki.ca.cert, ...timeouts, handler });
  return { pki, server, port: (await server.listen(0)).port };
}

/** a TLS connection that speaks HTTP/1.1 and sends only what the test writes; `answer()` is
 *  what came back so far */
async function rawHttp1(
  port: number,
  ca: string,
): Promise<{ socket: tls.TLSSocket; answer: () => string; answered: (ending: string) => Promise<number>; closedAt: Promise<number> }> {
  const socket = tls.connect({ host: '127.0.0.1', port, ca, ALPNProtocols: ['http/1.1'] });
  socket.on('error', () => {});
  let answer = '';
  socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
  await new Promise((resolve) => socket.once('secureConnect', resolve));
  const closedAt = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now())));
  /** resolves with the time the answer so far came to end with `ending` */
  const answered = (ending: string) =>
    new Promise<number>((resolve) => {
      const look = () => (answer.endsWith(ending) ? resolve(performance.now()) : setTimeout(look, 5));
      look();
    });
  return { socket, answer: () => answer, answered, closedAt };
}

describe('idle connections', () => {
  let pki: TestPKI;
  let server: SecureServer;
  let origin: string;

  before(async () => {
    let port: number;
    ({ pki, server, port } = await serve({ idleTimeoutMs: IDLE_MS, readHeaderTimeoutMs: READ_HEADER_MS }, (req, res) => {
      // /hold answers its head and keeps the stream open until the client ends it
      if (req.url === '/hold') {
        res.writeHead(200);
        res.write('held\n');
        return;
      }
      res.end('ok');
    }));
    origin = `https://127.0.0.1:${port}`;
  });

  after(async () => {
    await server.close();
    pki.cleanup();
  });

  const connect = (): http2.ClientHttp2Session => http2.connect(origin, { ca: pki.ca.cert });

  const closed = (session: http2.ClientHttp2Session): Promise<void> =>
    new Promise((resolve) => (session.closed ? resolve() : session.once('close', () => resolve())));

  test('a connection whose requests are done is closed by the server', { timeout: 10_000 }, async () => {
    const session = connect();
    const req = session.request({ ':path': '/' });
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    await new Promise((resolve) => req.on('end', resolve));
    assert.equal(body, 'ok');
    let goaway = false;
    session.on('goaway', () => (goaway = true));
    await closed(session);
    assert.ok(goaway, 'the server said GOAWAY before it closed');
  });

  test('an open stream keeps its connection past the idle timeout', { timeout: 10_000 }, async () => {
    const session = connect();
    const req = session.request({ ':path': '/hold' });
    await new Promise((resolve) => req.once('data', resolve));
    let sessionClosed = false;
    session.once('close', () => (sessionClosed = true));
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS * 4));
    assert.equal(sessionClosed, false, 'the connection of an open stream stayed');
    req.close();
    await closed(session);
  });

  test('a client that broke the protocol and keeps its end open is cut', { timeout: 10_000 }, async () => {
    // a HEADERS frame of HPACK garbage: nghttp2 answers GOAWAY (COMPRESSION_ERROR) and node
    // stops reading; only the idle timeout ends the connection
    const preface = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
    const settings = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);
    const garbage = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x85, 0x91]);
    const headers = Buffer.concat([Buffer.from([0, 0, garbage.length, 1, 5, 0, 0, 0, 1]), garbage]);
    const client = pki.client('fuzzer');
    const socket = tls.connect({
      host: '127.0.0.1',
      port: Number(new URL(origin).port),
      ca: pki.ca.cert,
      cert: client.cert,
      key: client.key,
      ALPNProtocols: ['h2'],
    });
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => {});
    // read what comes (the GOAWAY), or the server's end is never seen
    socket.resume();
    await new Promise((resolve) => socket.once('secureConnect', resolve));
    socket.write(Buffer.concat([preface, settings, headers]));
    // the client's end comes later than the frames, as it would from a client that lingers
    setTimeout(() => socket.end(), 50);
    await ended;
    assert.ok(socket.destroyed);
  });

  /** a keep-alive HTTP/1.1 request for `path`: its socket once the response head is in */
  const http1 = (path: string): Promise<{ socket: Socket; response: import('node:http').IncomingMessage }> =>
    new Promise((resolve, reject) => {
      const agent = new https.Agent({ keepAlive: true, ca: pki.ca.cert });
      const req = https.get(`${origin}${path}`, { agent }, (response) => resolve({ socket: req.socket as Socket, response }));
      req.on('error', reject);
    });

  test('an HTTP/1.1 keep-alive connection waiting for its next request is closed', { timeout: 10_000 }, async () => {
    const { socket, response } = await http1('/');
    response.resume();
    await new Promise((resolve) => response.on('end', resolve));
    await new Promise((resolve) => (socket.destroyed ? resolve(undefined) : socket.once('close', resolve)));
    assert.ok(socket.destroyed);
  });

  test('a new HTTP/1.1 connection that sends no request is closed after the read-header timeout, not the idle one', {
    timeout: 10_000,
  }, async () => {
    const { answer, closedAt } = await rawHttp1(Number(new URL(origin).port), pki.ca.cert);
    const opened = performance.now();
    const after = (await closedAt) - opened;
    assert.ok(after < IDLE_MS, `closed after ${after} ms, the idle time is ${IDLE_MS} ms`);
    assert.equal(answer(), '', 'closed without an answer, as Go does');
  });

  test('a keep-alive connection that carried a request waits the idle time, not the read-header time', { timeout: 10_000 }, async () => {
    const { socket, answered, closedAt } = await rawHttp1(Number(new URL(origin).port), pki.ca.cert);
    socket.write('GET / HTTP/1.1\r\nhost: kapi\r\n\r\n');
    const answeredAt = await answered('ok');
    const idleFor = (await closedAt) - answeredAt;
    assert.ok(idleFor >= IDLE_MS - 20, `closed ${idleFor} ms after its answer, the idle time is ${IDLE_MS} ms`);
  });

  test('an HTTP/1.1 response still open keeps its connection past the idle timeout', { timeout: 10_000 }, async () => {
    const { socket, response } = await http1('/hold');
    response.resume();
    let socketClosed = false;
    socket.once('close', () => (socketClosed = true));
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS * 4));
    assert.equal(socketClosed, false, 'the connection of an open response stayed');
    socket.destroy();
  });
});

describe('HTTP/1.1 heads', () => {
  /** long enough that only the read-header rule can be what closes a connection */
  const LONG_IDLE_MS = 5_000;
  const HEAD_MS = 200;
  let pki: TestPKI;
  let server: SecureServer;
  let port: number;

  before(async () => {
    ({ pki, server, port } = await serve({ idleTimeoutMs: LONG_IDLE_MS, readHeaderTimeoutMs: HEAD_MS }, (_req, res) => res.end('ok')));
  });

  after(async () => {
    await server.close();
    pki.cleanup();
  });

  test('a head begun on a keep-alive connection and never ended is cut without an answer', { timeout: 10_000 }, async () => {
    const { socket, answer, answered, closedAt } = await rawHttp1(port, pki.ca.cert);
    socket.write('GET / HTTP/1.1\r\nhost: kapi\r\n\r\n');
    await answered('ok');
    const firstAnswer = answer();
    const begun = performance.now();
    socket.write('GET / HTTP/1.1\r\nhost: kapi\r\n');
    const dribble = setInterval(() => socket.write('x'), 50);
    const cutAt = await closedAt;
    clearInterval(dribble);
    assert.ok(cutAt - begun < LONG_IDLE_MS, `cut ${cutAt - begun} ms after the head began, the idle time is ${LONG_IDLE_MS} ms`);
    assert.equal(answer(), firstAnswer, 'nothing was answered to the unfinished head');
  });
});
