import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Environment } from '@marcbachmann/cel-js';
import { CelBudgetExceededError, withBudget } from './budget.js';

const env = new Environment({ homogeneousAggregateLiterals: false }).registerVariable('xs', 'list');

test('an evaluation within its budget gives its result', () => {
  const p = env.parse('xs.all(x, x > 0) && xs.map(x, x * 2).size() == 3');
  assert.equal(withBudget(() => p({ xs: [1n, 2n, 3n] })), true);
});

test('nested comprehensions beyond the iteration budget are cut off', () => {
  const p = env.parse('xs.all(a, xs.all(b, xs.all(c, a + b + c >= 0)))');
  const xs = Array.from({ length: 200 }, (_, i) => BigInt(i));
  assert.throws(() => withBudget(() => p({ xs }), { iterations: 10_000 }), CelBudgetExceededError);
  // without a budget the same program runs (small input)
  assert.equal(withBudget(() => p({ xs: xs.slice(0, 5) }), { iterations: 10_000 }), true);
});

test('the deadline cuts off a long evaluation even within the iteration count', () => {
  const p = env.parse('xs.all(a, xs.all(b, xs.all(c, a + b + c >= 0)))');
  const xs = Array.from({ length: 400 }, (_, i) => BigInt(i));
  assert.throws(() => withBudget(() => p({ xs }), { iterations: Number.MAX_SAFE_INTEGER, deadlineMs: 1 }), CelBudgetExceededError);
});

test('no budget is active outside withBudget', () => {
  const p = env.parse('xs.all(a, xs.all(b, true))');
  const xs = Array.from({ length: 50 }, (_, i) => BigInt(i));
  withBudget(() => 0);
  assert.equal(p({ xs }), true);
});
