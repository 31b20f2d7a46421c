// The shutdown bookkeeping: non-long-running requests are waited for until they are answered;
// watches are ended through their own signal within the grace period, and the ones still open
// after it (a handler that ignores its signal) are cut.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { serveFilters, type FilterServer } from '../testing/filter-server.js';
import { beginStream, writeRawJson } from '../../request/response.js';
import { createRequestTracker } from './in-flight.js';

describe('createRequestTracker', () => {
  const tracker = createRequestTracker();
  let srv: FilterServer;
  const releases: (() => void)[] = [];
  before(async () => {
    srv = await serveFilters([tracker.filter], async (state) => {
      if (state.info.verb === 'watch') {
        beginStream(state, 200, 'application/json');
        state.res.write('{"type":"ADDED"}\n');
        const stubborn = state.query.get('stubborn') !== null;
        await new Promise<void>((resolve) => {
          state.res.once('close', () => resolve());
          // a well-behaved watch ends its stream when its signal fires
          if (!stubborn) state.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        if (!state.res.writableEnded && !state.res.destroyed) state.res.end();
        return;
      }
      await new Promise<void>((resolve) => releases.push(resolve));
      await writeRawJson(state, 200, { ok: true });
    });
  });
  after(async () => {
    for (const r of releases) r();
    await srv.close();
  });

  it('counts non-long-running requests until they are answered', async () => {
    const answer = srv.client.http1({ path: '/api/v1/pods' });
    for (let i = 0; i < 2000 && releases.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(tracker.nonLongRunning, 1);
    let drained = false;
    const waiting = tracker.nonLongRunningDrained().then(() => (drained = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(drained, false);
    releases.shift()!();
    assert.equal((await answer).status, 200);
    await waiting;
    assert.equal(tracker.nonLongRunning, 0);
  });

  /** a watch on its own connection: how its stream ends */
  const openWatch = (query: string): Promise<string> =>
    new Promise<string>((resolve) => {
      const req = request(
        { host: '127.0.0.1', port: srv.client.port, path: `/api/v1/pods?watch=true${query}`, ca: srv.client.ca, agent: false },
        (res) => {
          res.on('data', () => {});
          res.on('end', () => resolve('ended'));
          res.on('error', () => resolve('broken'));
          res.on('aborted', () => resolve('broken'));
        },
      );
      req.on('error', () => resolve('broken'));
      req.end();
    });

  it('ends every watch cleanly through its signal, and cuts one that ignores it when the grace period is over', async () => {
    const polite = [openWatch(''), openWatch(''), openWatch('')];
    const stubborn = openWatch('&stubborn=1');
    for (let i = 0; i < 2000 && tracker.watches < 4; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(tracker.watches, 4);
    assert.equal(tracker.nonLongRunning, 0, 'a watch is not a non-long-running request');
    await tracker.endWatches(2000);
    assert.deepEqual(await Promise.all(polite), ['ended', 'ended', 'ended']);
    assert.equal(await stubborn, 'broken');
    for (let i = 0; i < 2000 && tracker.watches > 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(tracker.watches, 0);
  });
});
