// HTTP/2 connections with no stream open are closed after the idle timeout, as kube-apiserver's
// Go server closes them; an open stream (a watch) keeps its connection however quiet it is.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import https from 'node:https';
import type { Socket } from 'node:net';
import tls from 'node:tls';
import { createTestPKI, type TestPKI } from '../pki/testing.js';
import { createSecureServer, type SecureServer } from './server.js';

const IDLE_MS = 300;

describe('idle connections', () => {
  let pki: TestPKI;
  let server: SecureServer;
  let origin: string;

  before(async () => {
    pki = createTestPKI();
    server = createSecureServer({
      cert: pki.server.cert,
      key: pki.server.key,
      clientCA: pki.ca.cert,
      idleTimeoutMs: IDLE_MS,
      handler: (req, res) => {
        // /hold answers its head and keeps the stream open until the client ends it
        if (req.url === '/hold') {
          res.writeHead(200);
          res.write('held\n');
          return;
        }
        res.end('ok');
      },
    });
    const addr = await server.listen(0);
    origin = `https://127.0.0.1:${addr.port}`;
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
