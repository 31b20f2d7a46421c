// The per-level limiter, driven by hand: seats are held until the test releases them, so
// every assertion is about order, never about time.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dealHand, QueueSet, type Outcome } from './queueset.js';

type Admitted = Extract<Outcome, { admitted: true }>;
const admitted = (o: Outcome): Admitted => {
  assert.equal(o.admitted, true);
  return o as Admitted;
};

/** resolves with whether `p` has settled by now (after pending microtasks) */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => {
    done = true;
  });
  await new Promise((r) => setImmediate(r));
  return done;
}

describe('QueueSet', () => {
  it('Reject: the request past the limit is turned away; a freed seat is taken again', async () => {
    const qs = new QueueSet(2, undefined);
    const a = admitted(await qs.acquire(() => 1));
    admitted(await qs.acquire(() => 2));
    assert.deepEqual(await qs.acquire(() => 3), { admitted: false, reason: 'rejected' });
    a.release();
    a.release(); // twice is harmless
    admitted(await qs.acquire(() => 4));
    assert.deepEqual(qs.stats, { concurrencyLimit: 2, executing: 2, waiting: 0 });
  });

  it('Queue: the request past the limit waits and gets the first freed seat', async () => {
    const qs = new QueueSet(1, { queues: 1, handSize: 1, queueLengthLimit: 2 });
    const first = admitted(await qs.acquire(() => 7));
    const second = qs.acquire(() => 7);
    const third = qs.acquire(() => 7);
    assert.equal(await settled(second), false);
    assert.deepEqual(qs.stats, { concurrencyLimit: 1, executing: 1, waiting: 2 });
    // the queue is full: the fourth is rejected at once
    assert.deepEqual(await qs.acquire(() => 7), { admitted: false, reason: 'rejected' });
    first.release();
    const s = admitted(await second);
    assert.equal(await settled(third), false);
    s.release();
    admitted(await third).release();
    assert.equal(qs.idle, true);
  });

  it('a waiter whose client goes away leaves the queue', async () => {
    const qs = new QueueSet(1, { queues: 4, handSize: 2, queueLengthLimit: 10 });
    const held = admitted(await qs.acquire(() => 1));
    const ac = new AbortController();
    const waiting = qs.acquire(
      () => 1,
      () => ac.signal,
    );
    assert.equal(qs.stats.waiting, 1);
    ac.abort();
    assert.deepEqual(await waiting, { admitted: false, reason: 'cancelled' });
    assert.equal(qs.stats.waiting, 0);
    held.release();
    assert.equal(qs.idle, true);
  });

  it('a request that would wait, its client gone already, is turned away; one with a free seat never asks for its signal', async () => {
    const qs = new QueueSet(1, { queues: 4, handSize: 2, queueLengthLimit: 10 });
    let asked = 0;
    const gone = () => {
      asked++;
      return AbortSignal.abort();
    };
    const held = admitted(await qs.acquire(() => 1, gone));
    assert.equal(asked, 0);
    assert.deepEqual(await qs.acquire(() => 1, gone), { admitted: false, reason: 'cancelled' });
    assert.equal(asked, 1);
    assert.equal(qs.stats.waiting, 0);
    held.release();
    assert.equal(qs.idle, true);
  });

  it('a waiter past its longest wait is turned away', async () => {
    const qs = new QueueSet(1, { queues: 1, handSize: 1, queueLengthLimit: 10 });
    const held = admitted(await qs.acquire(() => 1));
    assert.deepEqual(await qs.acquire(() => 1, undefined, 1), { admitted: false, reason: 'timeout' });
    held.release();
  });

  it('flows in different queues take turns', async () => {
    // two queues; hash 0 is dealt queue 0, hash 1 queue 1
    const qs = new QueueSet(1, { queues: 2, handSize: 1, queueLengthLimit: 10 });
    assert.deepEqual(dealHand(0, 2, 1), [0]);
    assert.deepEqual(dealHand(1, 2, 1), [1]);
    const held = admitted(await qs.acquire(() => 0));
    const order: string[] = [];
    const track = (name: string, p: Promise<Outcome>) => p.then((o) => (order.push(name), admitted(o)));
    const a1 = track(
      'a1',
      qs.acquire(() => 0),
    );
    const a2 = track(
      'a2',
      qs.acquire(() => 0),
    );
    const b1 = track(
      'b1',
      qs.acquire(() => 1),
    );
    held.release();
    (await a1).release();
    (await b1).release();
    (await a2).release();
    assert.deepEqual(order, ['a1', 'b1', 'a2']);
  });

  it('dealHand gives distinct queues', () => {
    for (const hash of [0, 1, 12345, 2 ** 40 + 17]) {
      const hand = dealHand(hash, 8, 5);
      assert.equal(new Set(hand).size, 5);
      assert.ok(hand.every((q) => q >= 0 && q < 8));
    }
  });

  it('a lower limit from a new configuration applies to the next requests', async () => {
    const qs = new QueueSet(2, undefined);
    const a = admitted(await qs.acquire(() => 1));
    qs.configure(1, undefined);
    assert.deepEqual(await qs.acquire(() => 2), { admitted: false, reason: 'rejected' });
    a.release();
    admitted(await qs.acquire(() => 3)).release();
  });
});
