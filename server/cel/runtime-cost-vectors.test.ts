// Runtime costs against cel-go's interpreter vectors (google/cel-go
// interpreter/runtime_cost_test.go, TestRuntimeCost), with kube's option that presence tests
// cost nothing of their own. cel-go's random 500-character inputs are 500 'a's here; cases
// that need protobuf message types or a custom call tracker are left out.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CelBudgetExceededError, evaluateWithCost } from './budget.js';
import { celEnvironment } from './environment.js';
import { routeMatchesToRe2 } from './re2.js';

const long = 'a'.repeat(500);

/** [expression, declared variables, their values, runtime cost] */
const vectors: [string, Record<string, string>, Record<string, unknown>, number][] = [
  ['"Hello World!"', {}, {}, 0],
  ['input', { input: 'list<int>' }, { input: [1n, 2n] }, 1],
  ["input['key']", { input: 'map<string, string>' }, { input: { key: 'v' } }, 2],
  ['input[0]', { input: 'list<string>' }, { input: ['v'] }, 2],
  ["input['ke' + 'y']", { input: 'map<string, string>' }, { input: { key: 'v' } }, 3],
  ['input[3-3]', { input: 'list<string>' }, { input: ['v'] }, 3],
  ['has(input.testAttr.nestedAttr)', { input: 'map<string, map<string, string>>' }, { input: { testAttr: { nestedAttr: '0' } } }, 2],
  ['[1, 2, 3]', {}, {}, 10],
  ['{"a": 1, "b": 2, "c": 3}', {}, {}, 30],
  ['input.all(x, true)', { input: 'list<int>' }, { input: [] }, 2],
  ['input.all(x, x.all(y, true))', { input: 'list<list<int>>' }, { input: [] }, 2],
  ['[1, 2, 3].all(x, true)', {}, {}, 20],
  ["input.matches('[0-9]')", { input: 'string' }, { input: long }, 103],
  ["'123'.matches('[0-9]')", {}, {}, 2],
  ['false || false', {}, {}, 0],
  ['true || false', {}, {}, 0],
  ['a || b || c || d', { a: 'bool', b: 'bool', c: 'bool', d: 'bool' }, { a: false, b: false, c: false, d: false }, 4],
  ['true && false', {}, {}, 0],
  ['false && true', {}, {}, 0],
  ['a && b && c && d', { a: 'bool', b: 'bool', c: 'bool', d: 'bool' }, { a: true, b: true, c: true, d: true }, 4],
  ['1 < 2', {}, {}, 1],
  ['1 <= 2', {}, {}, 1],
  ['1 == 2', {}, {}, 1],
  ['2 > 1', {}, {}, 1],
  ['2 >= 1', {}, {}, 1],
  ['2 in [1, 2, 3]', {}, {}, 13],
  ['1 + 1', {}, {}, 1],
  ['1 - 1', {}, {}, 1],
  ['1 / 1', {}, {}, 1],
  ['1 * 1', {}, {}, 1],
  ['1 % 1', {}, {}, 1],
  ['true ? 1 : 2', {}, {}, 0],
  ['size("123")', {}, {}, 1],
  ["'12345678901234567890' == '123456789012345678901234567890'", {}, {}, 2],
  ['string(input)', { input: 'bytes' }, { input: new TextEncoder().encode(long) }, 51],
  ['bytes(input)', { input: 'string' }, { input: long }, 51],
  ['string(1)', {}, {}, 1],
  ['input.contains(arg1)', { input: 'string', arg1: 'string' }, { input: long, arg1: long }, 2502],
  ["input.matches('\\\\d+a\\\\d+b')", { input: 'string' }, { input: long }, 103],
  ["matches(input, '\\\\d+a\\\\d+b')", { input: 'string' }, { input: long }, 103],
  ['input.startsWith(arg1)', { input: 'string', arg1: 'string' }, { input: 'idc', arg1: long }, 52],
  ['input.endsWith(arg1)', { input: 'string', arg1: 'string' }, { input: 'idc', arg1: long }, 52],
  ['input.size()', { input: 'string' }, { input: '500' }, 2],
  ['size(input)', { input: 'string' }, { input: '500' }, 2],
  [
    '(x > 2 ? input1 : input2).all(y, true)',
    { x: 'int', input1: 'list<int>', input2: 'list<int>' },
    { x: 1n, input1: [1n], input2: [1n] },
    6,
  ],
  ['true ? false : 1 > 3', {}, {}, 0],
  ['false ? false : 1 > 3', {}, {}, 1],
  ['input.all(k, input[k].all(x, true))', { input: 'map<string, map<string, int>>' }, { input: {} }, 2],
  ['input.all(k, k.contains(k))', { input: 'map<string, map<string, int>>' }, { input: {} }, 2],
  ['(list1 + list2).all(x, true)', { list1: 'list<int>', list2: 'list<int>' }, { list1: [], list2: [] }, 4],
  ['"abcdefg".contains(str1 + str2)', { str1: 'string', str2: 'string' }, { str1: 'val1', str2: 'val2222222' }, 6],
  ['(1 > 2 ? 5 : 3) > 1', {}, {}, 2],
  ['(1 > 2 || 2 > 1) == true', {}, {}, 3],
  ["[{'k1': 1}, {'k2': 2}].all(x, true)", {}, {}, 77],
  ['[1,2,3,4,5].filter(x, x % 2 == 0)', {}, {}, 62],
  ['[1,2,3,4,5].map(x, x)', {}, {}, 86],
  ['[1,2,3,4,5].map(x, x).filter(x, x % 2 == 0)', {}, {}, 138],
  ['[1,2,3,4,5].map(x, x).exists(x, x == 5) == true', {}, {}, 118],
  ['[1,2,3,4,5].map(x, x).map(x, x)', {}, {}, 162],
  ['[1,2,3,4,5].map(x, [x, x]).filter(z, z.size() == 2)', {}, {}, 232],
  ['[1,2,3,4,5].map(x, [x, x]).all(y, y.all(y, y == 1))', {}, {}, 171],
  ['[1,2,3,4,5].map(x, x).map(x, x) + [1]', {}, {}, 173],
  ['[1,2,3].all(i, i in [1,2,3].map(j, j + j))', {}, {}, 86],
];

/** compiled as kapi compiles kube's expressions: kube's environment, `matches` on RE2 */
function program(expr: string, vars: Record<string, string>) {
  const env = celEnvironment({ age: 'stored', homogeneousAggregateLiterals: false });
  for (const [name, type] of Object.entries(vars)) env.registerVariable(name, type);
  const p = env.parse(routeMatchesToRe2(expr));
  const c = p.check() as { valid: boolean; error?: Error };
  if (!c.valid) throw c.error;
  return p;
}

test("runtime costs match cel-go's interpreter vectors", () => {
  const wrong: string[] = [];
  for (const [expr, vars, values, want] of vectors) {
    const r = evaluateWithCost(program(expr, vars), values);
    if (!r.ok) wrong.push(`${expr}: ${r.error.message}`);
    else if (r.cost !== want) wrong.push(`${expr}: want ${want}, got ${r.cost}`);
  }
  assert.deepEqual(wrong, []);
});

test('a limit is reached as cel-go reaches it: at the limit passes, above it is cancelled', () => {
  const p = program('"abcdefg".contains(str1 + str2)', { str1: 'string', str2: 'string' });
  const values = { str1: 'val1', str2: 'val2222222' };
  const at = evaluateWithCost(p, values, { limit: 6 });
  assert.equal(at.ok && at.cost, 6);
  const above = evaluateWithCost(p, values, { limit: 5 });
  assert.ok(!above.ok && above.error instanceof CelBudgetExceededError);
});
