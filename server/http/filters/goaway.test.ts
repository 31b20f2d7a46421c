// --goaway-chance: an HTTP/2 client is sent GOAWAY after a chosen non-long-running request,
// which itself completes; HTTP/1.1 clients and long-running requests are left alone.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serveFilters, type FilterServer } from '../testing/filter-server.js';
import { TestClient } from '../testing/client.js';
import { writeRawJson } from '../../request/response.js';
import { validateGoawayChance, withProbabilisticGoaway } from './goaway.js';

describe('validateGoawayChance', () => {
  it('takes 0 to 0.02 as kube-apiserver does', () => {
    assert.equal(validateGoawayChance(0), undefined);
    assert.equal(validateGoawayChance(0.02), undefined);
    assert.equal(validateGoawayChance(0.021), '--goaway-chance can not be less than 0 or greater than 0.02');
    assert.equal(validateGoawayChance(-0.1), '--goaway-chance can not be less than 0 or greater than 0.02');
    assert.equal(validateGoawayChance(Number.NaN), '--goaway-chance can not be less than 0 or greater than 0.02');
  });
});

describe('withProbabilisticGoaway', () => {
  let srv: FilterServer;
  // decides per request: the test sets the next draws
  let draw = 0.5;
  before(async () => {
    srv = await serveFilters([withProbabilisticGoaway(0.02, () => draw)], async (state) => writeRawJson(state, 200, { ok: true }));
  });
  after(() => srv.close());

  it('a draw under the chance answers the request and then sends GOAWAY', async () => {
    const session = srv.client.session();
    const goaway = new Promise<number>((resolve) => session.once('goaway', (code: number) => resolve(code)));
    try {
      draw = 0.5;
      assert.equal((await TestClient.http2(session, { path: '/api/v1/pods' })).status, 200);
      draw = 0.01;
      const res = await TestClient.http2(session, { path: '/api/v1/pods' });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json(), { ok: true });
      assert.equal(await goaway, 0, 'GOAWAY with NO_ERROR');
    } finally {
      session.close();
    }
  });

  it('HTTP/1.1 and long-running requests are never the ones', async () => {
    draw = 0;
    const res = await srv.client.http1({ path: '/api/v1/pods' });
    assert.equal(res.status, 200);
    const session = srv.client.session();
    let gotGoaway = false;
    session.on('goaway', () => (gotGoaway = true));
    try {
      assert.equal((await TestClient.http2(session, { path: '/api/v1/pods?watch=true' })).status, 200);
      // a second request on the same session proves it was not closed
      draw = 0.5;
      assert.equal((await TestClient.http2(session, { path: '/api/v1/pods' })).status, 200);
      assert.equal(gotGoaway, false);
    } finally {
      session.close();
    }
  });
});
