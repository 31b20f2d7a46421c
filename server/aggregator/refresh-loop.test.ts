import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { APIServiceIndex } from './api-services.js';
import { refreshLoop } from './refresh-loop.js';

const quietIndex: APIServiceIndex = {
  remote: () => undefined,
  remotes: () => [],
  all: () => [],
  generation: 1,
  onChange: () => () => undefined,
  synced: Promise.resolve(),
  informer: undefined as never,
  stop: () => undefined,
};

describe('refreshLoop', () => {
  test('a stop that comes during a refresh ends the loop at once, not after the period', async () => {
    const stopping = new AbortController();
    let refreshes = 0;
    const refreshThatSeesTheStop = async (): Promise<void> => {
      refreshes++;
      stopping.abort();
    };
    const outcome = await Promise.race([
      refreshLoop(quietIndex, refreshThatSeesTheStop, 60_000, stopping.signal).then(() => 'returned'),
      new Promise<string>((resolve) => setTimeout(() => resolve('still waiting'), 1_000).unref()),
    ]);
    assert.equal(outcome, 'returned');
    assert.equal(refreshes, 1);
  });
});
