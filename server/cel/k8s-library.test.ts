import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Environment } from '@marcbachmann/cel-js';
import { registerKubernetesLibraries } from './k8s-library.js';

const env = registerKubernetesLibraries(new Environment({ homogeneousAggregateLiterals: false }).registerVariable('o', 'dyn'));
const ev = (expr: string, o: unknown = null) => {
  const p = env.parse(expr);
  const c = p.check() as { valid: boolean; error?: Error };
  assert.ok(c.valid, `${expr}: ${c.error?.message}`);
  return p({ o });
};

test('regex find and findAll run on RE2', () => {
  assert.equal(ev("'abc 123 def 456'.find('[0-9]+')"), '123');
  assert.equal(ev("'abc'.find('[0-9]+')"), '');
  assert.deepEqual(ev("'abc 123 def 456'.findAll('[0-9]+')"), ['123', '456']);
  assert.deepEqual(ev("'a1b2c3'.findAll('[0-9]', 2)"), ['1', '2']);
});

test('strings: replace and charAt', () => {
  assert.equal(ev("'hello hello'.replace('he', 'we')"), 'wello wello');
  assert.equal(ev("'hello hello'.replace('he', 'we', 1)"), 'wello hello');
  assert.equal(ev("'hello'.charAt(1)"), 'e');
  assert.equal(ev("'hello'.charAt(5)"), '');
});

test('lists: isSorted, sum, min, max, indexOf, lastIndexOf', () => {
  assert.equal(ev('[1, 2, 3].isSorted()'), true);
  assert.equal(ev("['b', 'a'].isSorted()"), false);
  assert.equal(ev('[1, 2, 3].sum()'), 6n);
  assert.equal(ev('[1.5, 2.5].sum()'), 4);
  assert.equal(ev('[3, 1, 2].min()'), 1n);
  assert.equal(ev('[3, 1, 2].max()'), 3n);
  assert.equal(ev('[1, 2, 1].indexOf(1)'), 0n);
  assert.equal(ev('[1, 2, 1].lastIndexOf(1)'), 2n);
  assert.equal(ev('[1, 2].indexOf(5)'), -1n);
  assert.throws(() => ev('o.min()', []), /empty list/);
});

test('quantity: parse, compare, arithmetic', () => {
  assert.equal(ev("isQuantity('1Gi')"), true);
  assert.equal(ev("isQuantity('1Gx')"), false);
  assert.equal(ev("quantity('1Gi').isGreaterThan(quantity('1000Mi'))"), true);
  assert.equal(ev("quantity('500m').isLessThan(quantity('1'))"), true);
  assert.equal(ev("quantity('1k').asInteger()"), 1000n);
  assert.equal(ev("quantity('1.5').isInteger()"), false);
  assert.equal(ev("quantity('1').add(quantity('500m')).compareTo(quantity('1500m'))"), 0n);
  assert.equal(ev("quantity('2').sub(1).asInteger()"), 1n);
  assert.equal(ev("quantity('-3').sign()"), -1n);
  assert.equal(ev("quantity('250m').asApproximateFloat()"), 0.25);
  assert.throws(() => ev("quantity('nope')"), /invalid quantity/);
});
