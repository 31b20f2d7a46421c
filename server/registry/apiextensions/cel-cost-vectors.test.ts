// Static cost estimates of CRD rules against kube's published vectors
// (kubernetes/kubernetes staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/
// compilation_test.go, TestCostEstimation): each rule on a generated schema, first without
// bounds (sizes estimated from what fits in a request), then with maxItems, maxProperties or
// maxLength set, and the maximum cost kube estimates for each. (kube's table also lists
// `has(self.x)` rules with cost 0, which its test does not check.)

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RULE_COST_LIMIT, ruleCost } from './cel-checks.js';
import type { JSONSchemaProps } from './json-schema-props.js';

type Generator = (max: number | undefined) => JSONSchemaProps;

/** a type name of the vectors as a schema: formats and int-or-string included */
function typed(name: string): JSONSchemaProps {
  if (name === 'int-or-string') return { 'x-kubernetes-int-or-string': true };
  if (name === 'date' || name === 'date-time' || name === 'duration') return { type: 'string', format: name };
  return { type: name };
}
const bound = (key: 'maxItems' | 'maxProperties' | 'maxLength', max: number | undefined): JSONSchemaProps =>
  max === undefined ? {} : { [key]: max };
const requiredObject = (extra: JSONSchemaProps = {}): JSONSchemaProps => ({
  type: 'object',
  required: ['required'],
  properties: { required: { type: 'string' }, optional: { type: 'string' } },
  ...extra,
});

const arrayOf =
  (item: string): Generator =>
  (max) => ({ type: 'array', items: typed(item), ...bound('maxItems', max) });
const arrayOfArrays =
  (item: string): Generator =>
  (max) => ({ type: 'array', items: { type: 'array', items: typed(item) }, ...bound('maxItems', max) });
const arrayOfObjects: Generator = (max) => ({ type: 'array', items: requiredObject(), ...bound('maxItems', max) });
const mapOf =
  (value: string): Generator =>
  (max) => ({ type: 'object', additionalProperties: typed(value), ...bound('maxProperties', max) });
const mapOfItems =
  (item: JSONSchemaProps): Generator =>
  (max) => ({ type: 'object', additionalProperties: item, ...bound('maxProperties', max) });
const string: Generator = (max) => ({ type: 'string', ...bound('maxLength', max) });
const bytes: Generator = (max) => ({ type: 'string', format: 'byte', ...bound('maxLength', max) });
const nestedSpec: Generator = (max) => ({
  type: 'object',
  additionalProperties: { type: 'string', ...bound('maxLength', max) },
  ...bound('maxProperties', max),
});
const arrayOfNumberMaps: Generator = (max) => ({
  type: 'array',
  items: { type: 'object', additionalProperties: { type: 'number' } },
  ...bound('maxItems', max),
});
const allMaxNested: Generator = (max) => ({
  type: 'array',
  items: { type: 'object', additionalProperties: requiredObject(bound('maxProperties', max)), ...bound('maxProperties', max) },
  ...bound('maxItems', max),
});
const oneMaxNested: Generator = (max) => ({
  type: 'array',
  items: { type: 'object', additionalProperties: requiredObject(), ...bound('maxProperties', max) },
});
const enumString =
  (...values: string[]): Generator =>
  (max) => ({ type: 'string', enum: values, ...bound('maxLength', max) });

/** [schema, rule, cost without bounds (or 'over' the per-rule limit), bound, cost with it] */
const vectors: [Generator, string, number | 'over', number, number][] = [
  [arrayOf('number'), 'self.all(x, true)', 4718591, 10, 32],
  [arrayOf('string'), 'self.all(x, true)', 3145727, 20, 62],
  [arrayOf('boolean'), 'self.all(x, true)', 1887437, 5, 17],
  [arrayOfArrays('number'), 'self.all(x, true)', 3145727, 100, 302],
  [arrayOfObjects, 'self.all(x, true)', 555128, 50, 152],
  [mapOf('number'), 'self.all(x, true)', 1348169, 10, 32],
  [mapOf('string'), 'self.all(x, true)', 1179647, 3, 11],
  [mapOf('boolean'), 'self.all(x, true)', 943718, 100, 302],
  [string, "self.contains('test')", 314574, 10, 5],
  [string, "self.startsWith('test')", 2, 15, 2],
  [string, "self.endsWith('test')", 2, 30, 2],
  [string, 'size(self + "hello") > size("hello")', 314578, 4, 7],
  [arrayOf('number'), 'self[1] == 0.0', 2, 5000, 2],
  [arrayOf('string'), 'self[1] == self[1]', 314577, 8, 314577],
  [arrayOf('number'), 'self.all(x, self.all(y, true))', 'over', 10, 352],
  [arrayOf('number'), 'self.all(x, self.all(y, self.all(z, true)))', 'over', 10, 3552],
  [string, 'self.matches("x")', 314574, 50, 22],
  [string, '"".matches("(((((((((())))))))))[0-9]")', 7, 10, 7],
  [string, 'self.matches("")', 1, 100, 1],
  [nestedSpec, 'self.all(x, x.contains(self[x]))', 2752507, 10, 72],
  [arrayOf('number'), 'self[3] == 0.0', 2, 0, 2],
  [mapOf('number'), 'self["x"] == 0.0', 2, 0, 2],
  [string, 'self == "x"', 2, 0, 1],
  [bytes, 'self == b"x"', 2, 0, 1],
  [arrayOf('number'), 'self.all(x, x == 0.0)', 6291454, 3 * 1024 * 2048, 25165826],
  [allMaxNested, 'self.all(x, x["y"].required == "z")', 7340027, 10, 72],
  [oneMaxNested, 'self.all(x, x["y"].required == "z")', 7340027, 10, 7340027],
  [arrayOf('int-or-string'), 'self.all(x, true)', 4718591, 10, 32],
  [arrayOf('int-or-string'), 'self[0] == 5', 3, 10, 3],
  [arrayOf('boolean'), 'self[0] == false', 2, 25, 2],
  [arrayOfObjects, 'self[0] == null', 2, 422, 2],
  [arrayOfArrays('number'), 'self[0][0] == -1.0', 3, 51, 3],
  [arrayOfNumberMaps, 'self.all(x, x.y == 25.2)', 6291452, 12, 74],
  [arrayOfNumberMaps, 'self[0].x > 2.0', 4, 3000, 4],
  [arrayOf('duration'), 'self.all(x, true)', 2359295, 5, 17],
  [arrayOf('duration'), 'self[0].getHours() == 2', 4, 525, 4],
  [arrayOf('date'), 'self.all(x, true)', 725936, 15, 47],
  [arrayOf('date'), 'self[2].getDayOfMonth() == 13', 4, 42, 4],
  [arrayOf('date-time'), 'self.all(x, true)', 428963, 25, 77],
  [arrayOf('date-time'), 'self[2].getMinutes() == 45', 4, 99, 4],
  [mapOf('int-or-string'), 'self.all(x, true)', 1348169, 15, 47],
  [mapOfItems(requiredObject()), 'self.all(x, true)', 428963, 20, 62],
  [mapOfItems({ type: 'object', additionalProperties: { type: 'number' } }), 'self.all(x, true)', 1179647, 10, 32],
  [mapOfItems({ type: 'array', items: { type: 'number' } }), 'self.all(x, true)', 1179647, 25, 77],
  [mapOf('duration'), 'self.all(x, true)', 1048577, 5, 17],
  [mapOf('date'), 'self.all(x, true)', 524288, 10, 32],
  [mapOf('date-time'), 'self.all(x, true)', 349526, 25, 77],
  [string, "self.find('[0-9]+') == ''", 629147, 10, 11],
  [
    (max) => ({ type: 'array', items: { type: 'string', ...bound('maxLength', max) }, ...bound('maxItems', max) }),
    "self.join(' ') == 'aa bb'",
    329853068905,
    10,
    43,
  ],
  [
    (max) => ({ type: 'array', items: { type: 'string', ...bound('maxLength', max) }, ...bound('maxItems', max) }),
    'self.isSorted() == true',
    329854432052,
    10,
    52,
  ],
  [
    (max) => ({
      type: 'object',
      properties: {
        str: { type: 'string', ...bound('maxLength', max) },
        before: { type: 'string', maxLength: 2 },
        after: { type: 'string', maxLength: 4 },
      },
    }),
    "self.str.replace(self.before, self.after) == 'does not matter'",
    629154,
    4,
    12,
  ],
  [
    (max) => ({
      type: 'object',
      properties: { str: { type: 'string', ...bound('maxLength', max) }, separator: { type: 'string', ...bound('maxLength', max) } },
    }),
    'self.str.split(self.separator) == []',
    629160,
    10,
    22,
  ],
  [string, "self.lowerAscii() == 'lower!'", 314575, 10, 6],
  [mapOf('integer'), 'oldSelf.size() == self.size()', 5, 10, 5],
  [mapOf('date-time'), 'self["a"] == self["b"]', 8, 7, 8],
  [mapOf('duration'), 'self["c"] == self["d"]', 8, 42, 8],
  [enumString('A', 'B', 'C', 'LongValue'), "self.contains('A')", 2, 1000, 401],
];

test("CRD rule cost estimates match kube's published vectors", () => {
  const wrong: string[] = [];
  for (const [generate, rule, unbounded, max, bounded] of vectors) {
    const free = ruleCost(rule, generate(undefined));
    const freeOk = unbounded === 'over' ? free !== undefined && free > RULE_COST_LIMIT / 10 : free === unbounded;
    if (!freeOk) wrong.push(`${rule} without bounds: want ${unbounded}, got ${free}`);
    const set = ruleCost(rule, generate(max));
    if (set !== bounded) wrong.push(`${rule} with ${max}: want ${bounded}, got ${set}`);
  }
  assert.deepEqual(wrong, []);
});
