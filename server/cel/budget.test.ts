import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Environment } from '@marcbachmann/cel-js';
import { CelBudgetExceededError, evaluateWithCost, PER_CALL_LIMIT, withBudget } from './budget.js';
import { celEnvironment } from './environment.js';

const env = new Environment({ homogeneousAggregateLiterals: false }).registerVariable('xs', 'list').registerVariable('s', 'string');
const kube = celEnvironment({ age: 'stored' }).registerVariable('xs', 'dyn').registerVariable('s', 'dyn');
const cost = (expr: string, vars: Record<string, unknown> = {}, e: Environment = env): number => {
  const r = evaluateWithCost(e.parse(expr), { xs: [], s: '', ...vars });
  assert.equal(r.ok, true);
  return r.cost;
};

test('an evaluation within its budget gives its result', () => {
  const p = env.parse('xs.all(x, x > 0) && xs.map(x, x * 2).size() == 3');
  assert.equal(withBudget(p, { xs: [1n, 2n, 3n] }), true);
});

test('costs in cel-go units: variables and fields 1, constants 0, literals 10 and 30, operators 1', () => {
  assert.equal(cost('1'), 0);
  assert.equal(cost('xs'), 1);
  assert.equal(cost('1 + 2'), 1);
  assert.equal(cost('[1, 2]'), 10);
  assert.equal(cost('{"a": 1}'), 30);
  assert.equal(cost('true && (false || 1 < 2)'), 1);
  assert.equal(cost('xs.size() == 0'), 3);
  // strings are charged a tenth of their length
  assert.equal(cost('s == "x"', { s: 'a'.repeat(100) }), 2);
  assert.equal(cost('s + s', { s: 'a'.repeat(100) }), 22);
  // a prefix test scans the prefix
  assert.equal(cost('s.startsWith("a")', { s: 'a'.repeat(100) }), 2);
  assert.equal(cost('"abc".startsWith(s)', { s: 'a'.repeat(100) }), 1 + 10);
  assert.equal(cost('s.contains("aaaaaaaaaaaa")', { s: 'a'.repeat(100) }), 1 + 10 * 2);
  // `in` a list: its size
  assert.equal(cost('1 in xs', { xs: [1n, 2n, 3n] }), 4);
});

test('comprehensions: what the body costs plus cel-go accumulator steps per iteration', () => {
  // range 1, result 1, per element: accumulator 3 plus the body (x 1, > 1)
  assert.equal(cost('xs.all(x, x > 0)', { xs: [1n, 2n, 3n] }), 1 + 1 + 3 * (3 + 2));
  // exists stops at the first hit: the loop condition that stops it is charged (3)
  assert.equal(cost('xs.exists(x, x == 1)', { xs: [1n, 2n, 3n] }), 1 + 1 + 4 + 2 + 3);
  // filter: an element kept costs the append (13), a dropped one nothing (cel-go reads the
  // accumulator as a conditional's attribute branch)
  assert.equal(cost('xs.filter(x, x > 1)', { xs: [1n, 2n, 3n] }), 1 + 10 + 1 + 3 * 2 + 2 * 13);
  // map builds its result: a list literal and an append per element
  assert.equal(cost('xs.map(x, x)', { xs: [1n, 2n] }), 1 + 11 + 2 * (12 + 1));
  // a presence test costs its operand only
  assert.equal(cost('has(xs.a)', { xs: { a: 1n } }, kube), 1);
});

test('kube library costs: regexes by input and pattern, an authorizer check 350000', () => {
  assert.equal(cost("s.matches('^a+$')", { s: 'a'.repeat(100) }, kube), 1 + Math.ceil(101 * 0.1) * Math.ceil(4 * 0.25));
  assert.equal(cost('xs.sum()', { xs: [1n, 2n, 3n] }, kube), 1 + 3);
});

test('nested comprehensions beyond the limit are cut off with cel-go error', () => {
  const p = env.parse('xs.all(a, xs.all(b, xs.all(c, a + b + c >= 0)))');
  const xs = Array.from({ length: 200 }, (_, i) => BigInt(i));
  assert.throws(
    () => withBudget(p, { xs }),
    (err: Error) => err instanceof CelBudgetExceededError && err.message === 'operation cancelled: actual cost limit exceeded',
  );
  assert.equal(withBudget(p, { xs: xs.slice(0, 5) }), true);
  // the limit is kube's per-call limit unless told otherwise
  assert.equal(PER_CALL_LIMIT, 1_000_000);
  assert.throws(() => withBudget(p, { xs: xs.slice(0, 20) }, { limit: 1000 }), CelBudgetExceededError);
});

test('the deadline cuts off a long evaluation even within the cost limit', () => {
  const p = env.parse('xs.all(a, xs.all(b, xs.all(c, a + b + c >= 0)))');
  const xs = Array.from({ length: 400 }, (_, i) => BigInt(i));
  assert.throws(() => withBudget(p, { xs }, { limit: Number.MAX_SAFE_INTEGER, deadlineMs: 1 }), CelBudgetExceededError);
});

test('no budget is active outside an evaluation with cost', () => {
  const p = env.parse('xs.all(a, xs.all(b, true))');
  const xs = Array.from({ length: 50 }, (_, i) => BigInt(i));
  withBudget(env.parse('1'), {});
  assert.equal(p({ xs }), true);
});

test('a failed evaluation reports its error and what it had cost', () => {
  const r = evaluateWithCost(env.parse('xs.size() > 0 && xs[5] == 1'), { xs: [1n] });
  assert.equal(r.ok, false);
  // the failed index is not charged, its operand is
  assert.equal(r.cost, 3 + 1);
  const spent = evaluateWithCost(env.parse('xs.all(a, xs.all(b, true))'), { xs: Array.from({ length: 100 }, () => 1n) }, { limit: 50 });
  assert.equal(spent.ok, false);
  assert.ok(!spent.ok && spent.error instanceof CelBudgetExceededError && spent.cost > 50);
});
