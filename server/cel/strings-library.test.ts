import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withBudget } from './budget.js';
import { celEnvironment } from './environment.js';
import { celGoIssue } from './issues.js';
import { goFloatString } from './strings-library.js';

const env = celEnvironment({ age: 'new' }).registerVariable('o', 'dyn');
const run = (expr: string, o: unknown = null): unknown => {
  const p = env.parse(expr);
  const c = p.check() as { valid: boolean; error?: Error };
  if (!c.valid) throw c.error;
  return withBudget(p, { o });
};

test('string.format: %s of every kind of value, lists and maps in CEL literal form', () => {
  // list literals are homogeneous in kube's environments: mixed arguments go through dyn()
  assert.equal(run(`"%s, %s, %s, %s".format([dyn("a"), dyn(1), dyn(true), dyn(null)])`), 'a, 1, true, null');
  assert.equal(run(`"%s %s %s".format([1.0, 2.5, 1e21])`), '1 2.5 1e+21');
  assert.equal(run(`"%s".format([[dyn(1), dyn("a"), dyn(1.5)]])`), '[1, "a", 1.5]');
  assert.equal(run(`"%s".format([{"b": dyn(1), "a": dyn([true])}])`), '{"a":[true], "b":1}');
  assert.equal(run(`"%s %s".format([dyn(duration("90s")), dyn(timestamp("2024-01-02T03:04:05Z"))])`), '90s 2024-01-02T03:04:05Z');
  assert.equal(run(`"%s".format([[dyn(duration("1.5s")), dyn(b"x")]])`), '[duration("1.5s"), b"x"]');
  assert.equal(run(`"100%% of %s".format(["it"])`), '100% of it');
});

test('string.format: numeric clauses as cel-go prints them', () => {
  assert.equal(run(`"%d %d".format([dyn(-42), dyn(7u)])`), '-42 7');
  assert.equal(run(`"%f|%.2f|%.0f".format([3.5, 1234567.891, 2.5])`), '3.500000|1,234,567.89|2');
  assert.equal(run(`"%e".format([1234.5])`), '1.234500e+03');
  // ties round to even, as Go does
  assert.equal(run(`"%.0f %.0f %.1f".format([3.5, 4.5, 0.25])`), '4 4 0.2');
  assert.equal(run(`"%b %o %x %X".format([5, 8, 255, 255])`), '101 10 ff FF');
  assert.equal(run(`"%x %b".format([dyn("hi"), dyn(true)])`), '6869 1');
});

test('string.format: errors in cel-go words', () => {
  assert.throws(() => run(`"%d".format([1.5])`), /error during formatting: decimal clause can only be used on integers, was given double/);
  assert.throws(() => run(`"%f".format([1])`), /error during formatting: fixed-point clause can only be used on doubles, was given int/);
  assert.throws(() => run(`"%s %s".format(["a"])`), /index 1 out of range/);
  assert.throws(() => run(`"%z".format([1])`), /could not parse formatting clause: unrecognized formatting clause "z"/);
  assert.throws(() => run(`"%".format([1])`), /unexpected end of string/);
});

test('strings.quote escapes as a CEL string literal', () => {
  assert.equal(run(`strings.quote("a\\"b\\\\c\\n\\t")`), '"a\\"b\\\\c\\n\\t"');
  assert.equal(run('strings.quote(o)', 'x\u0007'), '"x\\a"');
});

test('reverse is not declared (strings version 3, after kube 1.33)', () => {
  const c = env.parse("'abc'.reverse()").check() as { valid: boolean };
  assert.equal(c.valid, false);
});

test('doubles as Go prints them', () => {
  assert.equal(goFloatString(1), '1');
  assert.equal(goFloatString(0.0001), '0.0001');
  assert.equal(goFloatString(0.00001), '1e-05');
  assert.equal(goFloatString(-2.5), '-2.5');
  assert.equal(goFloatString(Number.NaN), 'NaN');
});

test('a literal format string over a list literal is checked at compile time, as cel-go does', () => {
  const issue = (expr: string) => {
    const c = env.parse(expr).check() as { valid: boolean; error?: Error };
    return c.valid ? undefined : celGoIssue(expr, c.error!, env);
  };
  assert.equal(
    issue('"%d".format(["a"])'),
    'ERROR: <input>:1:14: error during formatting: decimal clause can only be used on integers, was given string\n | "%d".format(["a"])\n | .............^',
  );
  assert.equal(
    issue('"%s".format(["a", "b"])')?.split('\n')[0],
    'ERROR: <input>:1:12: too many arguments supplied to string.format (expected 1, got 2)',
  );
  assert.equal(
    issue('"%z".format([1])')?.split('\n')[0],
    'ERROR: <input>:1:12: could not parse formatting clause: unrecognized formatting clause "z"',
  );
  // dyn arguments and non-literal formats are checked when they run
  assert.equal(issue('"%d".format([o])'), undefined);
  assert.equal(issue('o.format([1])'), undefined);
  assert.equal(issue('"%.2f %x %s".format([1.5, dyn("ab"), dyn([1])])'), undefined);
});
