// Static cost estimates against cel-go's own checker vectors (google/cel-go
// checker/cost_test.go, TestCost), with kube's option that presence tests cost nothing of their
// own. cel-go's test gives some variables size hints (at most n elements or bytes); here a hint
// is a schema bounding the variable's size. Cases that need protobuf message types, hints on
// map keys (kube declares map keys without size), a custom call estimator or uint64
// saturation are left out.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Environment } from '@marcbachmann/cel-js';
import { estimateCostRange, type SizedSchema } from './cost.js';

/** a value of at most n bytes (a string or bytes: format byte counts bytes, not characters) */
const bytesUpTo = (n: number): SizedSchema => ({ type: 'string', format: 'byte', maxLength: n });
const listUpTo = (n: number, items?: SizedSchema): SizedSchema => ({ type: 'array', maxItems: n, items });
const mapUpTo = (n: number, values?: SizedSchema): SizedSchema => ({
  type: 'object',
  maxProperties: n,
  additionalProperties: values ?? {},
});

/** [expression, declared variables, their size hints, min, max] */
const vectors: [string, Record<string, string>, Record<string, SizedSchema>, number, number][] = [
  ['"Hello World!"', {}, {}, 0, 0],
  ['input', { input: 'list<int>' }, {}, 1, 1],
  ["input['key']", { input: 'map<string, string>' }, {}, 2, 2],
  ['has(input.testAttr.nestedAttr)', { input: 'map<string, map<string, int>>' }, {}, 2, 2],
  ['[1, 2, 3]', {}, {}, 10, 10],
  ['{"a": 1, "b": 2, "c": 3}', {}, {}, 30, 30],
  ['input.all(x, true)', { input: 'list<int>' }, { input: listUpTo(100) }, 2, 302],
  ['input.all(x, x.all(y, true))', { input: 'list<list<int>>' }, { input: listUpTo(50, listUpTo(10)) }, 2, 1752],
  ['[1, 2, 3].all(x, true)', {}, {}, 20, 20],
  ["input.matches('[0-9]')", { input: 'string' }, { input: bytesUpTo(500) }, 3, 103],
  ["'123'.matches('[0-9]')", {}, {}, 2, 2],
  ['true || false', {}, {}, 0, 0],
  ['a || b || c || d', { a: 'bool', b: 'bool', c: 'bool', d: 'bool' }, {}, 1, 4],
  ['true && false', {}, {}, 0, 0],
  ['a && b && c && d', { a: 'bool', b: 'bool', c: 'bool', d: 'bool' }, {}, 1, 4],
  ['1 < 2', {}, {}, 1, 1],
  ['1 <= 2', {}, {}, 1, 1],
  ['1 == 2', {}, {}, 1, 1],
  ['2 > 1', {}, {}, 1, 1],
  ['2 >= 1', {}, {}, 1, 1],
  ['2 in [1, 2, 3]', {}, {}, 13, 13],
  ['1 + 1', {}, {}, 1, 1],
  ['1 - 1', {}, {}, 1, 1],
  ['1 / 1', {}, {}, 1, 1],
  ['1 * 1', {}, {}, 1, 1],
  ['1 % 1', {}, {}, 1, 1],
  ['true ? 1 : 2', {}, {}, 0, 0],
  ['size("123")', {}, {}, 1, 1],
  ['string(input)', { input: 'bytes' }, { input: bytesUpTo(500) }, 1, 51],
  ['string(input) == string(input)', { input: 'bytes' }, { input: bytesUpTo(500) }, 3, 152],
  ['bytes(input)', { input: 'string' }, { input: bytesUpTo(500) }, 1, 51],
  ['bytes(input) == bytes(input)', { input: 'string' }, { input: bytesUpTo(500) }, 3, 302],
  ['string(1)', {}, {}, 1, 1],
  ['input.contains(arg1)', { input: 'string', arg1: 'string' }, { input: bytesUpTo(500), arg1: bytesUpTo(500) }, 2, 2502],
  ["input.matches('\\\\d+a\\\\d+b')", { input: 'string' }, { input: bytesUpTo(500) }, 3, 103],
  ['input.startsWith(arg1)', { input: 'string', arg1: 'string' }, { arg1: bytesUpTo(500) }, 2, 52],
  ['input.endsWith(arg1)', { input: 'string', arg1: 'string' }, { arg1: bytesUpTo(500) }, 2, 52],
  ['input.size()', { input: 'string' }, {}, 2, 2],
  ['size(input)', { input: 'string' }, {}, 2, 2],
  [
    '(x > 2 ? input1 : input2).all(y, true)',
    { x: 'int', input1: 'list<int>', input2: 'list<int>' },
    { input1: listUpTo(1), input2: listUpTo(1) },
    4,
    7,
  ],
  ['input.all(k, input[k].single_int32 > 3)', { input: 'map<string, map<string, int>>' }, { input: mapUpTo(10) }, 2, 82],
  ['input.all(k, input[k].all(x, true))', { input: 'map<string, map<string, int>>' }, { input: mapUpTo(5, mapUpTo(10)) }, 2, 187],
  ['(list1 + list2).all(x, true)', { list1: 'list<int>', list2: 'list<int>' }, { list1: listUpTo(10), list2: listUpTo(10) }, 4, 64],
  ['"abcdefg".contains(str1 + str2)', { str1: 'string', str2: 'string' }, { str1: bytesUpTo(10), str2: bytesUpTo(10) }, 2, 6],
  ['list1.size() == list2.size()', { list1: 'list<int>', list2: 'list<int>' }, {}, 5, 5],
  ['x > y ? list1.size() : list2.size()', { x: 'int', y: 'int', list1: 'list<int>', list2: 'list<int>' }, {}, 5, 5],
  [
    'str1.endsWith("abcdefghijklmnopqrstuvwxyz") == str2.endsWith("abcdefghijklmnopqrstuvwxyz")',
    { str1: 'string', str2: 'string' },
    {},
    9,
    9,
  ],
  ['((5 != 6) == (1 == 2)) == ((3 <= 4) == (9 != 9))', {}, {}, 7, 7],
  ['timestamp1 == timestamp2', { timestamp1: 'google.protobuf.Timestamp', timestamp2: 'google.protobuf.Timestamp' }, {}, 3, 3],
  ['duration1 != duration2', { duration1: 'google.protobuf.Duration', duration2: 'google.protobuf.Duration' }, {}, 3, 3],
];

test("static estimates match cel-go's checker vectors", () => {
  const wrong: string[] = [];
  for (const [expr, vars, hints, min, max] of vectors) {
    const env = new Environment({ homogeneousAggregateLiterals: false });
    for (const [name, type] of Object.entries(vars)) env.registerVariable(name, type);
    const p = env.parse(expr);
    const c = p.check() as { valid: boolean; error?: Error };
    if (!c.valid) {
      wrong.push(`${expr}: ${c.error?.message}`);
      continue;
    }
    // variables without a hint have no known size
    const scope = Object.fromEntries(Object.keys(vars).map((v) => [v, hints[v]]));
    const got = estimateCostRange(p.ast, scope);
    if (got.min !== min || got.max !== max) wrong.push(`${expr}: want ${min}..${max}, got ${got.min}..${got.max}`);
  }
  assert.deepEqual(wrong, []);
});
