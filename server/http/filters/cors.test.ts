// kube-apiserver's CORS filter: matching origins get the Access-Control-* headers, their
// OPTIONS preflight is answered 204 before anything else runs; others pass untouched.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serveFilters, type FilterServer } from '../testing/filter-server.js';
import { writeRawJson } from '../../request/response.js';
import { validateCorsAllowedOrigins, withCORS } from './cors.js';

describe('validateCorsAllowedOrigins', () => {
  it('accepts pinned expressions and refuses unpinned, empty or broken ones', () => {
    assert.deepEqual(validateCorsAllowedOrigins(['//example\\.com(:|$)', '^https://example\\.com$']), []);
    assert.match(
      validateCorsAllowedOrigins(['example.com'])[0]!,
      /^--cors-allowed-origins has an invalid regular expression: regular expression does not pin to start\/end of host in the origin header, help: /,
    );
    assert.match(validateCorsAllowedOrigins([''])[0]!, /^empty value in --cors-allowed-origins, help: /);
    assert.equal(validateCorsAllowedOrigins(['^https://(x$']).length, 1);
  });
});

describe('withCORS', () => {
  let srv: FilterServer;
  let served = 0;
  before(async () => {
    srv = await serveFilters([withCORS(['^https://good\\.example(:|$)'])], async (state) => {
      served++;
      await writeRawJson(state, 200, { ok: true });
    });
  });
  after(() => srv.close());

  it('a matching origin gets the headers; its preflight is a 204 that never reaches the handler', async () => {
    const before = served;
    const pre = await srv.client.http1({ method: 'OPTIONS', path: '/api/v1/pods', headers: { origin: 'https://good.example:8443' } });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-origin'], 'https://good.example:8443');
    assert.equal(pre.headers['access-control-allow-methods'], 'POST, GET, OPTIONS, PUT, DELETE, PATCH');
    assert.equal(
      pre.headers['access-control-allow-headers'],
      'Content-Type, Content-Length, Accept-Encoding, X-CSRF-Token, Authorization, X-Requested-With, If-Modified-Since',
    );
    assert.equal(pre.headers['access-control-expose-headers'], 'Date');
    assert.equal(pre.headers['access-control-allow-credentials'], 'true');
    assert.equal(served, before);
    const get = await srv.client.http1({ path: '/api/v1/pods', headers: { origin: 'https://good.example' } });
    assert.equal(get.status, 200);
    assert.equal(get.headers['access-control-allow-origin'], 'https://good.example');
    assert.equal(served, before + 1);
  });

  it('other origins and requests without one pass through without CORS headers', async () => {
    const cases: Record<string, string>[] = [{ origin: 'https://evil.example' }, { origin: 'https://good.example.evil.example' }, {}];
    for (const headers of cases) {
      const res = await srv.client.http1({ path: '/api/v1/pods', headers });
      assert.equal(res.status, 200);
      assert.equal(res.headers['access-control-allow-origin'], undefined);
    }
  });
});
