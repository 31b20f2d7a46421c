import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RequestCancellation } from './cancellation.js';

describe('a request cancellation', () => {
  it('gives the same signal every time, aborted when the request is cancelled', () => {
    const c = new RequestCancellation();
    const signal = c.signal;
    assert.equal(c.signal, signal);
    let fired = 0;
    signal.addEventListener('abort', () => fired++);
    c.cancel('client gone');
    c.cancel('again');
    assert.equal(signal.aborted, true);
    assert.equal(signal.reason, 'client gone');
    assert.equal(fired, 1);
  });

  it('cancelled before anyone asked, gives a signal aborted already, with the reason', () => {
    const c = new RequestCancellation();
    c.cancel('deadline');
    assert.equal(c.signal.aborted, true);
    assert.equal(c.signal.reason, 'deadline');
    assert.throws(
      () => c.signal.throwIfAborted(),
      (err) => err === 'deadline',
    );
  });

  it('cancelled without a reason, aborts with an AbortError like any AbortController', () => {
    const c = new RequestCancellation();
    c.cancel();
    assert.equal((c.signal.reason as Error).name, 'AbortError');
  });

  it('works with node APIs that combine signals', () => {
    const c = new RequestCancellation();
    const combined = AbortSignal.any([c.signal, new AbortController().signal]);
    c.cancel();
    assert.equal(combined.aborted, true);
  });
});
