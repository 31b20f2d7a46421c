import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createBodyBudget } from './body-budget.js';

/** whether the promise has settled after the microtasks queued so far */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

test('bodies within the budget are held at once and released once', async () => {
  const budget = createBodyBudget(100);
  const a = await budget.hold(40);
  const b = await budget.hold(60);
  assert.equal(budget.held, 100);
  a();
  a();
  assert.equal(budget.held, 60);
  b();
  assert.equal(budget.held, 0);
  assert.equal(budget.waitedCount, 0);
});

test('a body past the budget waits for room, and later ones wait behind it in order', async () => {
  const budget = createBodyBudget(100);
  const first = await budget.hold(80);
  const order: string[] = [];
  const large = budget.hold(50).then((release) => (order.push('large'), release));
  // fits by size, but arrived after a waiting body: it must not overtake it
  const small = budget.hold(10).then((release) => (order.push('small'), release));
  assert.equal(await settled(large), false);
  assert.equal(await settled(small), false);
  assert.equal(budget.waiting, 2);
  first();
  await Promise.all([large, small]);
  assert.deepEqual(order, ['large', 'small']);
  assert.equal(budget.held, 60);
  assert.equal(budget.waitedCount, 2);
});

test('a body larger than the whole budget is held alone', async () => {
  const budget = createBodyBudget(100);
  const small = await budget.hold(10);
  const huge = budget.hold(500);
  assert.equal(await settled(huge), false);
  small();
  const release = await huge;
  assert.equal(budget.held, 500);
  const next = budget.hold(1);
  assert.equal(await settled(next), false);
  release();
  (await next)();
  assert.equal(budget.held, 0);
});

test('a waiting body whose request ends leaves the queue, and those behind it move up', async () => {
  const budget = createBodyBudget(100);
  const held = await budget.hold(60);
  const gone = new AbortController();
  const leaving = budget.hold(90, gone.signal);
  const behind = budget.hold(30);
  assert.equal(await settled(behind), false);
  gone.abort(new Error('deadline passed'));
  await assert.rejects(leaving, /deadline passed/);
  (await behind)();
  held();
  assert.equal(budget.held, 0);
  assert.equal(budget.waiting, 0);
});

test('a request that ended before it asked does not wait', async () => {
  const budget = createBodyBudget(100);
  const held = await budget.hold(100);
  const gone = new AbortController();
  gone.abort();
  await assert.rejects(budget.hold(10, gone.signal), /aborted|request ended/);
  assert.equal(budget.waiting, 0);
  held();
});
