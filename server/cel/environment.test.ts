import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withBudget } from './budget.js';
import { celEnvironment, type ExpressionAge } from './environment.js';
import { routeMatchesToRe2 } from './re2.js';

const envs = new Map<ExpressionAge, ReturnType<typeof celEnvironment>>();
function env(age: ExpressionAge = 'new') {
  let e = envs.get(age);
  if (!e) envs.set(age, (e = celEnvironment({ age }).registerVariable('o', 'dyn')));
  return e;
}

function run(expr: string, o: unknown = null, age: ExpressionAge = 'new'): unknown {
  const p = env(age).parse(routeMatchesToRe2(expr));
  const c = p.check() as { valid: boolean; error?: Error };
  if (!c.valid) throw c.error;
  return withBudget(p, { o });
}

function checkError(expr: string, age: ExpressionAge = 'new'): string | undefined {
  try {
    const c = env(age).parse(expr).check() as { valid: boolean; error?: Error };
    return c.valid ? undefined : c.error?.message.split('\n')[0];
  } catch (err) {
    return (err as Error).message.split('\n')[0];
  }
}

test('two-variable comprehensions over lists (index, element) and maps (key, value)', () => {
  assert.equal(run('[1, 2].all(i, v, v > i)'), true);
  assert.equal(run('[1, 2].all(i, v, v > 1)'), false);
  assert.equal(run('{"a": 1}.exists(k, v, k == "a" && v == 1)'), true);
  assert.equal(run('[1, 1].existsOne(i, v, v == 1)'), false);
  assert.equal(run('[1, 2].existsOne(i, v, v == 1)'), true);
  assert.deepEqual(run('[1, 2, 3].transformList(i, v, i > 0, v * 2)'), [4n, 6n]);
  assert.deepEqual(run('["a", "b"].transformList(i, v, v + string(i))'), ['a0', 'b1']);
  assert.deepEqual(run('{"a": 1, "b": 2}.transformMap(k, v, v + 1)'), { a: 2n, b: 3n });
  assert.deepEqual(run('{"a": 1, "b": 2}.transformMap(k, v, k != "a", v)'), { b: 2n });
  assert.deepEqual(run('{"a": 1, "b": 2}.transformMapEntry(k, v, {k + "x": v})'), { ax: 1n, bx: 2n });
  assert.throws(() => run('[1, 2].transformMapEntry(i, v, {"z": v})'), /insert failed: key z already exists/);
  assert.equal(run('o.all(k, v, v > 0)', { a: 1n }), true);
  assert.equal(run('[[1]].all(i, v, v.all(j, w, w > i))'), true);
  assert.match(checkError('[1].all(i, v, 1)') ?? '', /predicate must return bool/);
  assert.match(checkError('[1].all(i, i, true)') ?? '', /duplicate variable name/);
});

test('two-variable comprehensions count against the runtime budget', () => {
  const p = env().parse('o.all(i, v, o.all(j, w, true))');
  const big = Array.from({ length: 2000 }, (_, i) => BigInt(i));
  assert.throws(() => withBudget(p, { o: big }, { limit: 100_000 }), /actual cost limit exceeded/);
});

test('lists: sum, min and max by element type, durations included', () => {
  assert.equal(run('[1, 2].sum()'), 3n);
  assert.equal(run('[1.5, 2.0].sum()'), 3.5);
  assert.equal(run('[1u, 2u].sum() == 3u'), true);
  assert.equal(run('[].sum()'), 0n);
  assert.equal(run('[duration("1s"), duration("2m")].sum() == duration("121s")'), true);
  assert.equal(run('[duration("1s"), duration("2s")].min() == duration("1s")'), true);
  assert.equal(run('[duration("1s"), duration("2s")].max() == duration("2s")'), true);
  assert.equal(
    run('[timestamp("2020-01-01T00:00:00Z"), timestamp("2021-01-01T00:00:00Z")].max() == timestamp("2021-01-01T00:00:00Z")'),
    true,
  );
  assert.equal(run('["b", "a"].min()'), 'a');
  assert.equal(run('o.sum()', [1n, 5n]), 6n);
  assert.throws(() => run('[].min()'), /min called on empty list/);
  assert.equal(env().check('[1, 2].sum()').type, 'int');
  assert.equal(env().check('[duration("1s")].sum()').type, 'google.protobuf.Duration');
});

test('aggregate literals are homogeneous', () => {
  assert.match(checkError('[1, "a"]') ?? '', /List elements must have the same type/);
  assert.match(checkError('{"a": 1, "b": "c"}') ?? '', /expected type 'int' but found 'string'/);
  assert.equal(checkError('[dyn(1), dyn("a")]'), undefined);
});

test('ip, cidr, url, quantity and semver compare by value', () => {
  assert.equal(run('ip("1.2.3.4") == ip("1.2.3.4")'), true);
  assert.equal(run('ip("1.2.3.4") != ip("1.2.3.5")'), true);
  assert.equal(run('ip("::1") == ip("0:0::1")'), true);
  assert.equal(run('cidr("10.0.0.0/8") == cidr("10.0.0.0/8")'), true);
  assert.equal(run('cidr("10.0.0.0/8") == cidr("10.0.0.0/16")'), false);
  assert.equal(run('url("https://a/b") == url("https://a/b")'), true);
  assert.equal(run('quantity("1") == quantity("1000m")'), true);
  assert.equal(run('[quantity("1")] == [quantity("1000m")]'), true);
  assert.equal(run('semver("1.2.3") == semver("1.2.3")', null, 'stored'), true);
});

test('sets extension', () => {
  assert.equal(run('sets.contains([1, 2, 3], [3, 1])'), true);
  assert.equal(run('sets.contains([1, 2], [4])'), false);
  assert.equal(run('sets.equivalent([1, 2, 2], [2, 1])'), true);
  assert.equal(run('sets.intersects(["a"], ["b", "a"])'), true);
  assert.equal(run('sets.intersects(["a"], ["b"])'), false);
  // elements compare with CEL's numeric equality; the two lists' types must join (list(T), list(T))
  assert.equal(run('sets.contains([1, dyn(2.0)], [dyn(2u)])'), true);
  assert.equal(run('sets.equivalent([[dyn(1.0)], [dyn(2)]], [[dyn(1)], [dyn(2u)]])'), true);
  assert.match(checkError("sets.contains([1], ['a'])") ?? '', /no matching overload/);
  assert.match(checkError('sets.intersects([1], [1u])') ?? '', /no matching overload/);
  assert.equal(checkError('sets.contains([1], [dyn(1u)])'), undefined);
});

test('semver is only for stored expressions (introduced at compatibility version 1.33)', () => {
  assert.match(checkError('semver("1.0.0").major() == 1') ?? '', /semver/);
  assert.equal(checkError('semver("1.0.0").major() == 1', 'stored'), undefined);
});

test('matches runs on RE2, the regex and strings libraries are there', () => {
  assert.equal(run('"abc".matches("^a.c$")'), true);
  assert.equal(run('"abc".find("b.")'), 'bc');
  assert.equal(run('"a-b".replace("-", "_")'), 'a_b');
  assert.equal(run('"AbC".lowerAscii()'), 'abc');
});

test('homogeneous literals join as cel-go joins them: dyn goes with anything', () => {
  assert.match(checkError("[1, 'a']") ?? '', /expected type 'int' but found 'string'/);
  assert.match(checkError("{'a': 1, 'b': 'x'}") ?? '', /expected type 'int' but found 'string'/);
  assert.match(checkError("[[1], ['a']]") ?? '', /expected type 'list<int>' but found 'list<string>'/);
  assert.equal(checkError("['a', o.x, dyn(1)]"), undefined);
  assert.equal(checkError("{'a': 1, 'b': o}"), undefined);
  assert.deepEqual(run("['a', o]", 2n), ['a', 2n]);
});

test('has() checks its selection: a missing field of a typed object does not compile', () => {
  const typed = celEnvironment({ age: 'new' });
  typed.registerType('Obj', { fields: { a: 'int' } });
  typed.registerVariable('self', 'Obj');
  typed.registerVariable('m', 'map<string, int>');
  assert.equal((typed.parse('has(self.a) && has(m.x)').check() as { valid: boolean }).valid, true);
  const c = typed.parse('has(self.nosuch)').check() as { valid: boolean; error?: Error };
  assert.equal(c.valid, false);
  assert.match(c.error?.message ?? '', /No such key: nosuch/);
});

test('null compares with objects, timestamps, durations and optionals (cel-go keeps its legacy nullness rule)', () => {
  const typed = celEnvironment({ age: 'new' });
  typed.registerType('Obj', { fields: { a: 'int' } });
  typed.registerVariable('self', 'Obj');
  typed.registerVariable('items', 'list<Obj>');
  const run = (expr: string) => {
    const p = typed.parse(expr);
    const c = p.check() as { valid: boolean; error?: Error };
    if (!c.valid) throw c.error;
    return withBudget(p, { self: { a: 1n }, items: [] });
  };
  assert.equal(run('self == null'), false);
  assert.equal(run('null != self'), true);
  assert.equal(run('size(items) == 0 || items[0] == null'), true);
  assert.equal(run("timestamp('2020-01-01T00:00:00Z') == null || duration('1s') == null"), false);
  assert.equal(run('optional.none() != null'), true);
  for (const refused of ['self.a == null', "'a' == null", 'items == null', "{'a': 1} != null"]) {
    const c = typed.parse(refused).check() as { valid: boolean; error?: Error };
    assert.equal(c.valid, false, refused);
    assert.match(c.error?.message ?? '', /no such overload/);
  }
});

test("cel-go's parser limits hold in every environment, though cel-js would parse further", () => {
  const sum = (terms: number) => Array.from({ length: terms }, (_, i) => String(i + 1)).join(' + ');
  assert.equal(checkError(`${sum(250)} > 0`), undefined);
  assert.equal(checkError(`${sum(251)} > 0`), 'max recursion depth exceeded');
  assert.equal(checkError(`${'['.repeat(250)}1${']'.repeat(250)} == []`), 'expression recursion limit exceeded: 250');
  assert.equal(checkError(`'${'a'.repeat(100_000)}' == ''`), 'expression code point size exceeds limit: size: 100008, limit 100000');
});
