// The adaptive Retry-After, on a clock the test moves.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DroppedRequests } from './retry-after.js';

describe('DroppedRequests', () => {
  it('starts at 1, doubles under sustained drops, comes back down when they stop', () => {
    let now = 1000;
    const d = new DroppedRequests(() => now);
    assert.equal(d.retryAfter('x'), 1);
    const dropSeconds = (seconds: number, perSecond: number) => {
      for (let i = 0; i < seconds; i++) {
        for (let j = 0; j < perSecond; j++) d.record('x');
        now++;
      }
    };
    dropSeconds(1, 5);
    assert.equal(d.retryAfter('x'), 1, 'nothing before the first second counts');
    dropSeconds(1, 5);
    assert.equal(d.retryAfter('x'), 2);
    dropSeconds(3, 10);
    assert.equal(d.retryAfter('x'), 4);
    assert.equal(d.retryAfter('other'), 1, 'per priority level');
    dropSeconds(60, 10);
    assert.equal(d.retryAfter('x'), 32, 'never past 32');
    // one drop now and then: it comes down by one each time
    now += 100;
    d.record('x');
    now += 100;
    d.record('x');
    assert.ok(d.retryAfter('x') < 32);
  });
});
