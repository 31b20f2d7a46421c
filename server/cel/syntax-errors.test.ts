// Syntax errors against cel-go's published parser vectors (google/cel-go parser/parser_test.go:
// the `E` outputs of its ANTLR parser), each input with the exact text cel-go reports.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { celSyntaxErrors } from './syntax-errors.js';

const PRIMARY = "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";
const IN_MAP = "{'[', '{', '}', '(', '.', ',', '-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

/** one cel-go issue: position, message, the source line and the caret under it */
const issue = (line: number, column: number, message: string, source: string): string =>
  `ERROR: <input>:${line}:${column}: ${message}\n | ${source}\n | ${'.'.repeat(column - 1)}^`;

const vectors: [string, string[]][] = [
  ['*@a | b', [
    issue(1, 1, `Syntax error: extraneous input '*' expecting ${PRIMARY}`, '*@a | b'),
    issue(1, 2, "Syntax error: token recognition error at: '@'", '*@a | b'),
    issue(1, 5, "Syntax error: token recognition error at: '| '", '*@a | b'),
    issue(1, 7, "Syntax error: extraneous input 'b' expecting <EOF>", '*@a | b'),
  ]],
  ['a | b', [issue(1, 3, "Syntax error: token recognition error at: '| '", 'a | b'), issue(1, 5, "Syntax error: extraneous input 'b' expecting <EOF>", 'a | b')]],
  ['{', [issue(1, 2, `Syntax error: mismatched input '<EOF>' expecting ${IN_MAP}`, '{')]],
  ['TestAllTypes(){}', [issue(1, 15, "Syntax error: mismatched input '{' expecting <EOF>", 'TestAllTypes(){}')]],
  ['TestAllTypes{}()', [issue(1, 15, "Syntax error: mismatched input '(' expecting <EOF>", 'TestAllTypes{}()')]],
  ['1 + $', [issue(1, 5, "Syntax error: token recognition error at: '$'", '1 + $'), issue(1, 6, `Syntax error: mismatched input '<EOF>' expecting ${PRIMARY}`, '1 + $')]],
  ['1 + 2\n3 +', [issue(2, 1, "Syntax error: mismatched input '3' expecting <EOF>", '3 +')]],
  ['1 + +', [issue(1, 5, `Syntax error: mismatched input '+' expecting ${PRIMARY}`, '1 + +'), issue(1, 6, `Syntax error: mismatched input '<EOF>' expecting ${PRIMARY}`, '1 + +')]],
  ['{"a": 1}."a"', [issue(1, 10, `Syntax error: no viable alternative at input '."a"'`, '{"a": 1}."a"')]],
  ['"\\xFh"', [
    issue(1, 1, `Syntax error: token recognition error at: '"\\xFh'`, '"\\xFh"'),
    issue(1, 6, `Syntax error: token recognition error at: '"'`, '"\\xFh"'),
    issue(1, 7, `Syntax error: mismatched input '<EOF>' expecting ${PRIMARY}`, '"\\xFh"'),
  ]],
  ['in', [issue(1, 1, `Syntax error: mismatched input 'in' expecting ${PRIMARY}`, 'in'), issue(1, 3, `Syntax error: mismatched input '<EOF>' expecting ${PRIMARY}`, 'in')]],
  ...['as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while'].map(
    (w): [string, string[]] => [w, [issue(1, 1, `reserved identifier: ${w}`, w)]],
  ),
  ['func{{a}}', [
    issue(1, 6, "Syntax error: extraneous input '{' expecting {'}', ',', '?', IDENTIFIER, ESC_IDENTIFIER}", 'func{{a}}'),
    issue(1, 8, "Syntax error: mismatched input '}' expecting ':'", 'func{{a}}'),
    issue(1, 9, "Syntax error: extraneous input '}' expecting <EOF>", 'func{{a}}'),
  ]],
  ['msg{:a}', [
    issue(1, 5, "Syntax error: extraneous input ':' expecting {'}', ',', '?', IDENTIFIER, ESC_IDENTIFIER}", 'msg{:a}'),
    issue(1, 7, "Syntax error: mismatched input '}' expecting ':'", 'msg{:a}'),
  ]],
  ['{a}', [issue(1, 3, "Syntax error: mismatched input '}' expecting ':'", '{a}')]],
  ['{:a}', [issue(1, 2, `Syntax error: extraneous input ':' expecting ${IN_MAP}`, '{:a}'), issue(1, 4, "Syntax error: mismatched input '}' expecting ':'", '{:a}')]],
  ['ind[a{b}]', [issue(1, 8, "Syntax error: mismatched input '}' expecting ':'", 'ind[a{b}]')]],
  ['--', [issue(1, 3, "Syntax error: no viable alternative at input '-'", '--'), issue(1, 3, `Syntax error: mismatched input '<EOF>' expecting ${PRIMARY}`, '--')]],
  ['?', [issue(1, 1, `Syntax error: mismatched input '?' expecting ${PRIMARY}`, '?'), issue(1, 2, `Syntax error: mismatched input '<EOF>' expecting ${PRIMARY}`, '?')]],
  ['foo(a,b,)', [issue(1, 9, `Syntax error: mismatched input ')' expecting ${PRIMARY}`, 'foo(a,b,)')]],
  ['"""hello\nworld', [issue(1, 3, `Syntax error: token recognition error at: '"hello\n'`, '"""hello'), issue(2, 1, "Syntax error: extraneous input 'world' expecting <EOF>", 'world')]],
  ["'''hello\nworld", [issue(1, 3, "Syntax error: token recognition error at: ''hello\n'", "'''hello"), issue(2, 1, "Syntax error: extraneous input 'world' expecting <EOF>", 'world')]],
  ['r"""hello\nworld', [issue(1, 4, `Syntax error: token recognition error at: '"hello\n'`, 'r"""hello'), issue(2, 1, "Syntax error: extraneous input 'world' expecting <EOF>", 'world')]],
  ['"hello\nworld"', [issue(1, 1, `Syntax error: token recognition error at: '"hello\n'`, '"hello'), issue(2, 6, `Syntax error: token recognition error at: '"'`, 'world"')]],
  ["'hello\nworld'", [issue(1, 1, "Syntax error: token recognition error at: ''hello\n'", "'hello"), issue(2, 6, "Syntax error: token recognition error at: '''", "world'")]],
  ['r"hello\nworld"', [
    issue(1, 2, `Syntax error: token recognition error at: '"hello\n'`, 'r"hello'),
    issue(2, 1, "Syntax error: extraneous input 'world' expecting <EOF>", 'world"'),
    issue(2, 6, `Syntax error: token recognition error at: '"'`, 'world"'),
  ]],
  ['`hello\nworld`', [issue(1, 1, "Syntax error: token recognition error at: '`hello\n'", '`hello'), issue(2, 6, "Syntax error: token recognition error at: '`'", 'world`')]],
  ['1 \v + 2', [issue(1, 3, "Syntax error: token recognition error at: '\v'", '1 \v + 2')]],
  ['-!x', [issue(1, 2, "Syntax error: no viable alternative at input '-!'", '-!x')]],
  ['!-x', [issue(1, 3, "Syntax error: no viable alternative at input '-x'", '!-x')]],
  ['a.in', [issue(1, 3, "Syntax error: no viable alternative at input '.in'", 'a.in'), issue(1, 5, `Syntax error: mismatched input '<EOF>' expecting ${PRIMARY}`, 'a.in')]],
  ['has(a.`$b`)', [
    issue(1, 7, "Syntax error: token recognition error at: '`$'", 'has(a.`$b`)'),
    issue(1, 10, "Syntax error: token recognition error at: '`)'", 'has(a.`$b`)'),
    issue(1, 12, "Syntax error: missing ')' at '<EOF>'", 'has(a.`$b`)'),
  ]],
  ['(a){}', [issue(1, 4, "Syntax error: mismatched input '{' expecting <EOF>", '(a){}')]],
  ['(a.b){}', [issue(1, 6, "Syntax error: mismatched input '{' expecting <EOF>", '(a.b){}')]],
  ['(a).b{}', [issue(1, 6, "Syntax error: mismatched input '{' expecting <EOF>", '(a).b{}')]],
  ['a.`b-c`{}', [issue(1, 8, "Syntax error: mismatched input '{' expecting <EOF>", 'a.`b-c`{}')]],
  ['Msg{`$b`: 1}', [
    issue(1, 5, "Syntax error: token recognition error at: '`$'", 'Msg{`$b`: 1}'),
    issue(1, 8, "Syntax error: token recognition error at: '`:'", 'Msg{`$b`: 1}'),
    issue(1, 11, "Syntax error: missing ':' at '1'", 'Msg{`$b`: 1}'),
  ]],
];

test("syntax errors in cel-go's words and layout (cel-go's parser vectors)", () => {
  const wrong: string[] = [];
  for (const [input, expected] of vectors) {
    const got = celSyntaxErrors(input);
    if (got !== expected.join('\n')) wrong.push(`${JSON.stringify(input)}:\n${got}\n--- want ---\n${expected.join('\n')}`);
  }
  assert.deepEqual(wrong, []);
});

test('expressions cel-go parses have no syntax errors', () => {
  for (const ok of [
    'self.a.b[0] + 1 > 2 && !has(self.c) || self.d in ["x", "y"] ? -1 : 2u',
    "self.items.all(i, i.name.matches('^[a-z]+$')) && self.map.exists(k, v, v > 0)",
    '{"a": [1, 2.5, -3], "b": {?"c": null}, "d": b"\\x00"}.size() == 3',
    "Object{spec: Object.spec{replicas: 3}} == dyn(1) || r'raw\\d' != '''x''' || self.`escaped-name` == .x",
    "self.a // a comment\n  + 0x1F - 1e3 + .5e-2",
  ]) {
    assert.equal(celSyntaxErrors(ok), undefined, ok);
  }
});
