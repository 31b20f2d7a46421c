// --request-timeout over a real TLS server: 504 as kube-apiserver writes it, ?timeout= only
// shortens, a malformed one is a 400, long-running requests are never cut, and the late
// handler's writes neither reach the client nor break its connection.

import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serveFilters, type FilterServer } from '../testing/filter-server.js';
import { TestClient } from '../testing/client.js';
import { writeRawJson } from '../../request/response.js';
import type { Handler, RequestState } from '../../request/types.js';
import { effectiveTimeoutMs, timeoutBody, withRequestTimeout } from './timeout.js';
import { isLongRunning } from './long-running.js';
import { parseRequestInfo } from '../../request/request-info.js';

describe('effectiveTimeoutMs', () => {
  const q = (s: string) => new URLSearchParams(s);
  it('is the flag unless ?timeout= is positive and shorter', () => {
    assert.equal(effectiveTimeoutMs(q(''), 60_000), 60_000);
    assert.equal(effectiveTimeoutMs(q('timeout='), 60_000), 60_000);
    assert.equal(effectiveTimeoutMs(q('timeout=1s'), 60_000), 1000);
    assert.equal(effectiveTimeoutMs(q('timeout=250ms'), 60_000), 250);
    assert.equal(effectiveTimeoutMs(q('timeout=2m'), 60_000), 60_000);
    assert.equal(effectiveTimeoutMs(q('timeout=0'), 60_000), 60_000);
    assert.equal(effectiveTimeoutMs(q('timeout=-5s'), 60_000), 60_000);
  });
  it('names a malformed ?timeout= as kube-apiserver does', () => {
    assert.deepEqual(effectiveTimeoutMs(q('timeout=abc'), 60_000), {
      invalid: 'invalid timeout specified in the request URL - time: invalid duration "abc"',
    });
    assert.deepEqual(effectiveTimeoutMs(q('timeout=10'), 60_000), {
      invalid: 'invalid timeout specified in the request URL - time: missing unit in duration "10"',
    });
  });
});

describe('isLongRunning', () => {
  const info = (method: string, path: string, query = '') => parseRequestInfo(method, path, new URLSearchParams(query));
  it('watches, proxies and streaming subresources are long-running; the rest is not', () => {
    assert.equal(isLongRunning(info('GET', '/api/v1/pods', 'watch=true')), true);
    assert.equal(isLongRunning(info('GET', '/api/v1/watch/pods')), true);
    assert.equal(isLongRunning(info('GET', '/api/v1/namespaces/a/pods/p/log')), true);
    assert.equal(isLongRunning(info('POST', '/api/v1/namespaces/a/pods/p/exec')), true);
    assert.equal(isLongRunning(info('GET', '/api/v1/namespaces/a/pods/p/proxy/x')), true);
    assert.equal(isLongRunning(info('GET', '/api/v1/pods')), false);
    assert.equal(isLongRunning(info('GET', '/api/v1/namespaces/a/pods/p/status')), false);
    assert.equal(isLongRunning(info('GET', '/version')), false);
  });
});

describe('withRequestTimeout', () => {
  let srv: FilterServer;
  // each held request waits here until the test lets it go
  const held = new Map<string, () => void>();
  const lateWrites: string[] = [];
  const postTimeoutErrors: unknown[] = [];
  const api: Handler = async (state: RequestState) => {
    const name = state.query.get('hold');
    if (name) {
      await new Promise<void>((resolve) => held.set(name, resolve));
      state.res.setHeader('X-Late', 'yes');
      await writeRawJson(state, 200, { late: name });
      lateWrites.push(name);
      if (state.query.get('fail')) throw new Error('failed after the timeout');
      return;
    }
    await writeRawJson(state, 200, { ok: true, aborted: state.signal.aborted });
  };

  after(async () => {
    for (const release of held.values()) release();
    await srv?.close();
  });

  const waitHeld = async (name: string): Promise<() => void> => {
    for (let i = 0; i < 2000 && !held.has(name); i++) await new Promise((r) => setTimeout(r, 5));
    const release = held.get(name);
    assert.ok(release, `${name} reached the handler`);
    return release;
  };

  it('answers 504 with the bare Status when the deadline passes first, and drops the late answer', async () => {
    srv ??= await serveFilters(
      [withRequestTimeout({ requestTimeoutMs: 60_000, onPostTimeoutError: (err) => postTimeoutErrors.push(err) })],
      api,
    );
    const session = srv.client.session();
    try {
      const res = await TestClient.http2(session, { path: '/api/v1/namespaces/a/configmaps?hold=one&timeout=50ms' });
      assert.equal(res.status, 504);
      assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(res.text, timeoutBody());
      assert.deepEqual(JSON.parse(res.text), {
        metadata: {},
        status: 'Failure',
        message: 'Timeout: request did not complete within the allotted timeout',
        reason: 'Timeout',
        details: {},
        code: 504,
      });
      assert.equal(res.headers['x-late'], undefined);
      // the late handler finishes: its writes go nowhere, the session stays usable
      (await waitHeld('one'))();
      for (let i = 0; i < 2000 && !lateWrites.includes('one'); i++) await new Promise((r) => setTimeout(r, 5));
      assert.ok(lateWrites.includes('one'));
      const again = await TestClient.http2(session, { path: '/api/v1/namespaces/a/configmaps' });
      assert.equal(again.status, 200);
      assert.deepEqual(again.json(), { ok: true, aborted: false });
    } finally {
      session.close();
    }
  });

  it('over HTTP/1.1 too, and an error thrown after the timeout is reported, not answered', async () => {
    const res = await srv.client.http1({ path: '/api/v1/namespaces/a/configmaps?hold=two&fail=1&timeout=20ms' });
    assert.equal(res.status, 504);
    (await waitHeld('two'))();
    for (let i = 0; i < 2000 && postTimeoutErrors.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.match(String(postTimeoutErrors[0]), /failed after the timeout/);
  });

  it('a malformed ?timeout= is a 400 Status', async () => {
    const res = await srv.client.http1({ path: '/api/v1/namespaces/a/configmaps?timeout=soon' });
    assert.equal(res.status, 400);
    const status = res.json<{ reason: string; message: string }>();
    assert.equal(status.reason, 'BadRequest');
    assert.equal(status.message, 'invalid timeout specified in the request URL - time: invalid duration "soon"');
  });

  it('a request already past its deadline is answered 504 without running the handler', async () => {
    const res = await srv.client.http1({ path: '/api/v1/namespaces/a/configmaps?hold=never&timeout=1ns' });
    assert.equal(res.status, 504);
    assert.equal(held.has('never'), false);
  });

  it('long-running requests are not cut', async () => {
    const fast = await serveFilters([withRequestTimeout({ requestTimeoutMs: 1 })], api);
    try {
      const watching = fast.client.http1({ path: '/api/v1/namespaces/a/configmaps?watch=true&hold=watch' });
      const release = await waitHeld('watch');
      release();
      const res = await watching;
      assert.equal(res.status, 200);
      assert.deepEqual(res.json(), { late: 'watch' });
    } finally {
      await fast.close();
    }
  });
});
