import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Environment } from '@marcbachmann/cel-js';
import { celGoIssue, celIssue } from './issues.js';

const env = new Environment().registerVariable('x', 'int').registerVariable('m', 'map<string, int>');
const issue = (expr: string): string => {
  const r = env.check(expr) as { valid: boolean; error?: Error };
  assert.equal(r.valid, false);
  return celGoIssue(expr, r.error!);
};

test('an issue in cel-go layout: position, source line and caret', () => {
  assert.equal(celIssue('a +\n b', 4, 'msg'), 'ERROR: <input>:2:1: msg\n |  b\n | ^');
});

test('the common compile errors in cel-go words, where cel-go places them', () => {
  assert.equal(
    issue("x == 'x'"),
    "ERROR: <input>:1:3: found no matching overload for '_==_' applied to '(int, string)'\n | x == 'x'\n | ..^",
  );
  assert.equal(
    issue("x  +  'x' > 1").split('\n')[0],
    "ERROR: <input>:1:4: found no matching overload for '_+_' applied to '(int, string)'",
  );
  assert.equal(issue('m.nosuch.foo').split('\n')[0], "ERROR: <input>:1:9: type 'int' does not support field selection");
  assert.equal(issue('x.size()').split('\n')[0], "ERROR: <input>:1:7: found no matching overload for 'size' applied to 'int.()'");
  assert.equal(issue('size(x, 1)').split('\n')[0], "ERROR: <input>:1:5: found no matching overload for 'size' applied to '(int, int)'");
  assert.equal(
    issue("m.a.startsWith('a')").split('\n')[0],
    "ERROR: <input>:1:15: found no matching overload for 'startsWith' applied to 'int.(string)'",
  );
  assert.equal(issue("[1, 'a']").split('\n')[0], "ERROR: <input>:1:5: expected type 'int' but found 'string'");
  assert.equal(issue('y + 1').split('\n')[0], "ERROR: <input>:1:1: undeclared reference to 'y' (in container '')");
});

test('a call of a function the environment lacks is an undeclared reference, as in cel-go', () => {
  const r = env.check('nosuch(x)') as { valid: boolean; error?: Error };
  assert.equal(
    celGoIssue('nosuch(x)', r.error!, env),
    "ERROR: <input>:1:7: undeclared reference to 'nosuch' (in container '')\n | nosuch(x)\n | ......^",
  );
  const m = env.check('x.nosuch()') as { valid: boolean; error?: Error };
  assert.equal(
    celGoIssue('x.nosuch()', m.error!, env).split('\n')[0],
    "ERROR: <input>:1:9: undeclared reference to 'nosuch' (in container '')",
  );
  // a known function with the wrong arguments stays an overload issue
  assert.match(issue('size(x, 1)'), /found no matching overload for 'size'/);
});

test("macro argument errors in cel-go's words (cel-go parser/parser_test.go vectors)", () => {
  const list = new Environment().registerVariable('m', 'list<int>');
  const macroIssue = (expr: string): string => {
    try {
      const r = list.check(expr) as { valid: boolean; error?: Error };
      return celGoIssue(expr, r.error!);
    } catch (err) {
      return celGoIssue(expr, err as Error);
    }
  };
  assert.equal(macroIssue('1.all(2, 3)'), 'ERROR: <input>:1:7: argument must be a simple name\n | 1.all(2, 3)\n | ......^');
  assert.equal(
    macroIssue('m.filter(a.b, false)'),
    'ERROR: <input>:1:11: argument is not an identifier\n | m.filter(a.b, false)\n | ..........^',
  );
  assert.equal(macroIssue('has(m)'), 'ERROR: <input>:1:5: invalid argument to has() macro\n | has(m)\n | ....^');
});
