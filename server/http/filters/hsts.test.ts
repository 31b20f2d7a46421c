import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serveFilters, type FilterServer } from '../testing/filter-server.js';
import { TestClient } from '../testing/client.js';
import { writeRawJson } from '../../request/response.js';
import { withHSTS } from './hsts.js';

describe('withHSTS', () => {
  let srv: FilterServer;
  before(async () => {
    srv = await serveFilters([withHSTS(['max-age=31536000', 'includeSubDomains', 'preload'])], async (state) => {
      if (state.query.get('own')) state.res.setHeader('Strict-Transport-Security', 'max-age=1');
      await writeRawJson(state, state.query.get('missing') ? 404 : 200, {});
    });
  });
  after(() => srv.close());

  it('every response carries the directives joined by "; ", over HTTP/1.1 and HTTP/2', async () => {
    const expected = 'max-age=31536000; includeSubDomains; preload';
    assert.equal((await srv.client.http1({ path: '/version' })).headers['strict-transport-security'], expected);
    assert.equal((await srv.client.http1({ path: '/api/v1/pods?missing=1' })).headers['strict-transport-security'], expected);
    const session = srv.client.session();
    try {
      assert.equal((await TestClient.http2(session, { path: '/version' })).headers['strict-transport-security'], expected);
    } finally {
      session.close();
    }
  });

  it('a handler may still set its own', async () => {
    assert.equal((await srv.client.http1({ path: '/version?own=1' })).headers['strict-transport-security'], 'max-age=1');
  });

  it('no directives: no header', async () => {
    const plain = await serveFilters([withHSTS([])], async (state) => writeRawJson(state, 200, {}));
    try {
      assert.equal((await plain.client.http1({ path: '/version' })).headers['strict-transport-security'], undefined);
    } finally {
      await plain.close();
    }
  });
});
