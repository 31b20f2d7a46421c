// --shutdown-send-retry-after: while shutdown refuses new requests they get kube-apiserver's
// 429 and their connection ends; health endpoints and kube-apiserver's own clients still pass.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serveFilters, type FilterServer } from '../testing/filter-server.js';
import { TestClient } from '../testing/client.js';
import { writeRawJson } from '../../request/response.js';
import { withShutdownRetryAfter } from './shutdown-retry-after.js';

describe('withShutdownRetryAfter', () => {
  let srv: FilterServer;
  let rejecting = false;
  before(async () => {
    srv = await serveFilters([withShutdownRetryAfter(() => rejecting)], async (state) => writeRawJson(state, 200, { ok: true }));
  });
  after(() => srv.close());

  it('serves normally until shutdown refuses new requests', async () => {
    rejecting = false;
    assert.equal((await srv.client.http1({ path: '/api/v1/pods' })).status, 200);
  });

  it('then answers 429, Retry-After: 5 and Connection: close', async () => {
    rejecting = true;
    const res = await srv.client.http1({ path: '/api/v1/pods' });
    assert.equal(res.status, 429);
    assert.equal(res.headers['retry-after'], '5');
    assert.equal(res.headers.connection, 'close');
    assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(res.text, 'The apiserver is shutting down, please try again later.\n');
  });

  it('over HTTP/2 the session is closed with GOAWAY after the 429', async () => {
    rejecting = true;
    const session = srv.client.session();
    const goaway = new Promise<void>((resolve) => session.once('goaway', () => resolve()));
    try {
      const res = await TestClient.http2(session, { path: '/api/v1/pods' });
      assert.equal(res.status, 429);
      assert.equal(res.headers['retry-after'], '5');
      await goaway;
    } finally {
      session.close();
    }
  });

  it('health endpoints and kube-apiserver loopback clients are still served', async () => {
    rejecting = true;
    for (const path of ['/readyz', '/livez', '/healthz/etcd', '/metrics']) {
      assert.equal((await srv.client.http1({ path })).status, 200, path);
    }
    assert.equal(
      (await srv.client.http1({ path: '/api/v1/pods', headers: { 'user-agent': 'kube-apiserver/v1.33.0 (linux/amd64)' } })).status,
      200,
    );
  });
});
