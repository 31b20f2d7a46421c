import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createUnreadResponseBudget } from './unread-budget.js';

test('bodies within the budget are all kept', () => {
  const budget = createUnreadResponseBudget(100);
  const cut: string[] = [];
  const a = budget.book(40, () => cut.push('a'));
  budget.book(60, () => cut.push('b'));
  assert.deepEqual(cut, []);
  assert.equal(budget.booked, 100);
  a.release();
  assert.equal(budget.booked, 60);
});

test('past the budget the response that has waited longest is cut', () => {
  let clock = 0;
  const budget = createUnreadResponseBudget(100, () => clock);
  const cut: string[] = [];
  const stalled = budget.book(50, () => cut.push('stalled'));
  clock = 1;
  budget.book(40, () => cut.push('later'));
  clock = 2;
  budget.book(30, () => cut.push('new'));
  assert.deepEqual(cut, ['stalled']);
  assert.equal(budget.booked, 70);
  assert.equal(budget.cutCount, 1);
  stalled.release();
  assert.equal(budget.booked, 70, 'a cut body is released once');
});

test('one body larger than the budget is kept alone', () => {
  const budget = createUnreadResponseBudget(100);
  const cut: string[] = [];
  budget.book(10, () => cut.push('small'));
  budget.book(500, () => cut.push('huge'));
  assert.deepEqual(cut, ['small']);
  assert.equal(budget.booked, 500);
});

test('a reservation whose request is already cancelled is refused at once, not after the wait', async () => {
  const budget = createUnreadResponseBudget(100, Date.now, 60_000);
  const producing = await budget.reserve(100);
  const gone = new AbortController();
  gone.abort();
  const outcome = await Promise.race([
    budget.reserve(50, gone.signal).then(
      () => 'admitted',
      (err: { code?: number }) => `refused ${err.code}`,
    ),
    new Promise<string>((resolve) => setTimeout(() => resolve('still waiting'), 1_000).unref()),
  ]);
  assert.equal(outcome, 'refused 429');
  assert.equal(budget.refusedCount, 1);
  producing.release();
  assert.equal(budget.booked, 0, 'the refused reservation left nothing booked');
});
