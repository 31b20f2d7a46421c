import assert from 'node:assert/strict';
import { test } from 'node:test';
import { celEnvironment } from './environment.js';
import { evaluateWithCost } from './budget.js';
import { markMapList, markSetList, registerKeyedListOperators, routeOperatorsToKeyedLists } from './keyed-lists.js';

const base = () => celEnvironment({ age: 'stored', homogeneousAggregateLiterals: false });
const env = registerKeyedListOperators(base(), base()).registerVariable('a', 'dyn').registerVariable('b', 'dyn');

function run(expr: string, vars: { a?: unknown; b?: unknown } = {}): unknown {
  const p = env.parse(routeOperatorsToKeyedLists(env.parse(expr).ast));
  return p({ a: vars.a ?? null, b: vars.b ?? null });
}

test('the rewrite keeps every other construct and routes ==, != and +', () => {
  const parsed = env.parse(String.raw`a.?x.orValue('\'') + "y" != '' && [1, 2].all(i, v, v == i + 1) && has(a.z)`);
  assert.equal(
    routeOperatorsToKeyedLists(parsed.ast),
    `!kubernetesListEquals(kubernetesListAdd(a.?x.orValue("'"), "y"), "") && [1, 2].all(i, v, kubernetesListEquals(v, kubernetesListAdd(i, 1))) && has(a.z)`,
  );
});

test('unmarked values keep CEL semantics', () => {
  assert.equal(run('[1, 2] == [2, 1]'), false);
  assert.deepEqual(run('[1, 2] + [2]'), [1n, 2n, 2n]);
  assert.equal(run('1 == 1.0 && 1u + 2u == 3u && "a" + "b" == "ab" && duration("1s") + duration("1s") == duration("2s")'), true);
  assert.equal(run('{"k": [1]} == {"k": [1]} && {"k": 1} != {"k": 2}'), true);
  assert.throws(() => run('9223372036854775807 + 1'), /overflow/);
});

test('a set list: equality ignores order, + is a union; the left operand decides', () => {
  const a = markSetList(['x', 'y']);
  assert.equal(run('a == b', { a, b: ['y', 'x'] }), true);
  assert.equal(run('a == ["y", "x"] && a != ["x", "z"] && a != ["x"]'), false);
  assert.equal(run('a == ["y", "x"]', { a }), true);
  assert.equal(run('a != ["x", "z"]', { a }), true);
  assert.equal(run('b == a', { a, b: ['y', 'x'] }), false);
  assert.deepEqual(run('a + ["z", "x", "z"]', { a }), ['x', 'y', 'z']);
  // the union is a set again
  assert.equal(run('a + ["z"] == ["z", "y", "x"]', { a }), true);
  // nested in maps, compared deeply
  assert.equal(run('{"s": a} == {"s": ["y", "x"]}', { a }), true);
  assert.throws(() => run('a + [[1]]', { a: markSetList([1n]) }), /listSet operations are only supported on lists of scalar values/);
});

test('a map list: equality by key, + replaces elements with the same key in place and appends the rest', () => {
  const a = markMapList(
    [
      { name: 'a', v: 1n },
      { name: 'b', v: 2n },
    ],
    ['name'],
  );
  assert.equal(run('a == [{"name": "b", "v": 2}, {"name": "a", "v": 1}]', { a }), true);
  assert.equal(run('a == [{"name": "b", "v": 3}, {"name": "a", "v": 1}]', { a }), false);
  assert.deepEqual(run('a + [{"name": "c", "v": 3}, {"name": "a", "v": 9}]', { a }), [
    { name: 'a', v: 9n },
    { name: 'b', v: 2n },
    { name: 'c', v: 3n },
  ]);
});

test('the routed operators cost what the operators cost', () => {
  const costOf = (expr: string, a: unknown) => {
    const r = evaluateWithCost(env.parse(routeOperatorsToKeyedLists(env.parse(expr).ast)), { a, b: null });
    assert.equal(r.ok, true);
    return r.cost;
  };
  const long = 'x'.repeat(1000);
  // a 1 + the comparison of 1000 characters (a tenth) and of ints (1)
  assert.equal(costOf(`a == "${'x'.repeat(1000)}"`, long), 1 + 100);
  assert.equal(costOf('a + 1 == 2', 1n), 1 + 1 + 1);
  assert.equal(costOf('a + a', long), 1 + 1 + 200);
});
