// The bench client against a loopback HTTPS server that ends its connections: requests that
// wait for a connection get a new one, and none is sent on a connection the server ended.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { createTestPKI, type TestPKI } from '../server/pki/testing.js';
import { TokenClient } from './client.js';

describe('TokenClient', () => {
  let pki: TestPKI;
  let server: https.Server;
  let url: string;
  let served = 0;

  before(async () => {
    pki = createTestPKI();
    server = https.createServer({ cert: pki.server.cert, key: pki.server.key }, (req, res) => {
      served++;
      const body = Buffer.from(JSON.stringify({ path: req.url, auth: req.headers.authorization }));
      // every third answer closes its connection, as a server going away would
      if (served % 3 === 0) res.setHeader('connection', 'close');
      // odd answers are chunked, even ones carry a content-length
      if (served % 2 === 0) res.setHeader('content-length', body.length);
      res.end(body);
    });
    // connections idle for a moment are ended by the server
    server.keepAliveTimeout = 20;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('200 requests through 4 connections the server keeps ending', async () => {
    const client = new TokenClient(url, Buffer.from(pki.ca.cert), 'secret', 4);
    try {
      const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => client.expect(200, 'GET', `/item/${i}`)));
      answers.forEach((body, i) => assert.deepEqual(JSON.parse(body.toString()), { path: `/item/${i}`, auth: 'Bearer secret' }));
      // the server's keep-alive timeout ends the idle connections before these
      await new Promise((r) => setTimeout(r, 100));
      const late = await Promise.all([1, 2, 3].map((i) => client.expect(200, 'GET', `/late/${i}`)));
      assert.deepEqual(
        late.map((b) => JSON.parse(b.toString()).path),
        ['/late/1', '/late/2', '/late/3'],
      );
    } finally {
      client.close();
    }
  });
});
