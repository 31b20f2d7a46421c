import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Wakeup } from './controllers.js';

describe('Wakeup', () => {
  test('a wait under an already aborted signal returns at once (a stopping replica does not sleep out the minute)', async () => {
    const stopped = new AbortController();
    stopped.abort();
    const outcome = await Promise.race([
      new Wakeup().wait(60_000, stopped.signal).then(() => 'returned'),
      new Promise<string>((resolve) => setTimeout(() => resolve('still waiting'), 1_000).unref()),
    ]);
    assert.equal(outcome, 'returned');
  });

  test('a wake-up ends a wait, and one that came first ends the next wait', async () => {
    const w = new Wakeup();
    const live = new AbortController();
    const waiting = w.wait(60_000, live.signal).then(() => 'woken');
    w.wake();
    assert.equal(await waiting, 'woken');
    w.wake();
    assert.equal(await w.wait(60_000, live.signal).then(() => 'woken early'), 'woken early');
  });
});
