// Syntax errors against cel-go's published parser vectors (google/cel-go parser/parser_test.go:
// the `E` outputs of its ANTLR parser), each input with the exact text cel-go reports.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CEL_GO_PARSER_LIMITS, celSyntaxErrors } from './syntax-errors.js';

const PRIMARY = "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";
const IN_MAP =
  "{'[', '{', '}', '(', '.', ',', '-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

/** one cel-go issue: position, message, the source line and the caret under it */
const issue = (line: number, column: number, message: string, source: string): string =>
  `ERROR: <input>:${line}:${column}: ${message}\n | ${source}\n | ${'.'.repeat(column - 1)}^`;

const vectors: [string, string[]][] = [
  [
    '*@a | b',
    [
      issue(1, 1, `Syntax error: extraneous input '*' expecting ${PRIMARY}`, '*@a | b'),
      issue(1, 2, "Syntax error: token recognition error at: '@'", '*@a | b'),
      issue(1, 5, "Syntax error: token recognition error at: '| '", '*@a | b'),
      issue(1, 7, "Syntax error: extraneous input 'b' expecting <EOF>", '*@a | b'),
    ],
  ],
  [
    'a | b',
    [
      issue(1, 3, "Syntax error: token recognition error at: '| '", 'a | b'),
      issue(1, 5, "Syntax error: extraneous input 'b' expecting <EOF>", 'a | b'),
    ],
  ],
  ['{', [issue(1, 2, `Syntax error: mismatched input '<EOF>' expecting ${IN_MAP}`, '{')]],
  ['TestAllTypes(){}', [issue(1, 15, "Syntax error: mismatched input '{' expecting <EOF>", 'TestAllTypes(){}')]],
  ['TestAllTypes{}()', [issue(1, 15, "Syntax error: mismatched input '(' expecting <EOF>", 'TestAllTypes{}()')]],
  [
    '1 + $',
    [
      issue(1, 5, "Syntax error: token recognition error at: '$'", '1 + $'),
      issue(1, 6, `Syntax error: mismatched input '<EOF>' expecting ${PRIMARY}`, '1 + $'),
    ],
  ],
  ['1 + 2\n3 +', [issue(2, 1, "Syntax error: mismatched input '3' expecting <EOF>", '3 +')]],
  [
    '1 + +',
    [
      issue(1, 5, `Syntax error: mismatched input '+' expecting ${PRIMARY}`, '1 + +'),
      issue(1, 6, `Syntax error: mismatched input '<EOF>' expecting ${PRIMARY}`, '1 + +'),
    ],
  ],
  ['{"a": 1}."a"', [issue(1, 10, `Syntax error: no viable alternative at input '."a"'`, '{"a": 1}."a"')]],
  [
    '"\\xFh"',
    [
      issue(1, 1, `Syntax error: token recognition error at: '"\\xFh'`, '"\\xFh"'),
      issue(1, 6, `Syntax error: token recognition error at: '"'`, '"\\xFh"'),
      issue(1, 7, `Syntax error: mismatched input '<EOF>' expecting ${PRIMARY}`, '"\\xFh"'),
    ],
  ],
  [
    'in',
    [
      issue(1, 1, `Syntax error: mismatched input 'in' expecting ${PRIMARY}`, 'in'),
      issue(1, 3, `Syntax error: mismatched input '<EOF>' expecting ${PRIMARY}`, 'in'),
    ],
  ],
  ...[
    'as',
    'break',
    'const',
    'continue',
    'else',
    'for',
    'function',
    'if',
    'import',
    'let',
    'loop',
    'package',
    'namespace',
    'return',
    'var',
    'void',
    'while',
  ].map((w): [string, string[]] => [w, [issue(1, 1, `reserved identifier: ${w}`, w)]]),
  [
    'func{{a}}',
    [
      issue(1, 6, "Syntax error: extraneous input '{' expecting {'}', ',', '?', IDENTIFIER, ESC_IDENTIFIER}", 'func{{a}}'),
      issue(1, 8, "Syntax error: mismatched input '}' expecting ':'", 'func{{a}}'),
      issue(1, 9, "Syntax error: extraneous input '}' expecting <EOF>", 'func{{a}}'),
    ],
  ],
  [
    'msg{:a}',
    [
      issue(1, 5, "Syntax error: extraneous input ':' expecting {'}', ',', '?', IDENTIFIER, ESC_IDENTIFIER}", 'msg{:a}'),
      issue(1, 7, "Syntax error: mismatched input '}' expecting ':'", 'msg{:a}'),
    ],
  ],
  ['{a}', [issue(1, 3, "Syntax error: mismatched input '}' expecting ':'", '{a}')]],
  [
    '{:a}',
    [
      issue(1, 2, `Syntax error: extraneous input ':' expecting ${IN_MAP}`, '{:a}'),
      issue(1, 4, "Syntax error: mismatched input '}' expecting ':'", '{:a}'),
    ],
  ],
  ['ind[a{b}]', [issue(1, 8, "Syntax error: mismatched input '}' expecting ':'", 'ind[a{b}]')]],
  [
    '--',
    [
      issue(1, 3, "Syntax error: no viable alternative at input '-'", '--'),
      issue(1, 3, `Syntax error: mismatched input '<EOF>' expecting ${PRIMARY}`, '--'),
    ],
  ],
  [
    '?',
    [
      issue(1, 1, `Syntax error: mismatched input '?' expecting ${PRIMARY}`, '?'),
      issue(1, 2, `Syntax error: mismatched input '<EOF>' expecting ${PRIMARY}`, '?'),
    ],
  ],
  ['foo(a,b,)', [issue(1, 9, `Syntax error: mismatched input ')' expecting ${PRIMARY}`, 'foo(a,b,)')]],
  [
    '"""hello\nworld',
    [
      issue(1, 3, `Syntax error: token recognition error at: '"hello\n'`, '"""hello'),
      issue(2, 1, "Syntax error: extraneous input 'world' expecting <EOF>", 'world'),
    ],
  ],
  [
    "'''hello\nworld",
    [
      issue(1, 3, "Syntax error: token recognition error at: ''hello\n'", "'''hello"),
      issue(2, 1, "Syntax error: extraneous input 'world' expecting <EOF>", 'world'),
    ],
  ],
  [
    'r"""hello\nworld',
    [
      issue(1, 4, `Syntax error: token recognition error at: '"hello\n'`, 'r"""hello'),
      issue(2, 1, "Syntax error: extraneous input 'world' expecting <EOF>", 'world'),
    ],
  ],
  [
    '"hello\nworld"',
    [
      issue(1, 1, `Syntax error: token recognition error at: '"hello\n'`, '"hello'),
      issue(2, 6, `Syntax error: token recognition error at: '"'`, 'world"'),
    ],
  ],
  [
    "'hello\nworld'",
    [
      issue(1, 1, "Syntax error: token recognition error at: ''hello\n'", "'hello"),
      issue(2, 6, "Syntax error: token recognition error at: '''", "world'"),
    ],
  ],
  [
    'r"hello\nworld"',
    [
      issue(1, 2, `Syntax error: token recognition error at: '"hello\n'`, 'r"hello'),
      issue(2, 1, "Syntax error: extraneous input 'world' expecting <EOF>", 'world"'),
      issue(2, 6, `Syntax error: token recognition error at: '"'`, 'world"'),
    ],
  ],
  [
    '`hello\nworld`',
    [
      issue(1, 1, "Syntax error: token recognition error at: '`hello\n'", '`hello'),
      issue(2, 6, "Syntax error: token recognition error at: '`'", 'world`'),
    ],
  ],
  ['1 \v + 2', [issue(1, 3, "Syntax error: token recognition error at: '\v'", '1 \v + 2')]],
  ['-!x', [issue(1, 2, "Syntax error: no viable alternative at input '-!'", '-!x')]],
  ['!-x', [issue(1, 3, "Syntax error: no viable alternative at input '-x'", '!-x')]],
  [
    'a.in',
    [
      issue(1, 3, "Syntax error: no viable alternative at input '.in'", 'a.in'),
      issue(1, 5, `Syntax error: mismatched input '<EOF>' expecting ${PRIMARY}`, 'a.in'),
    ],
  ],
  [
    'has(a.`$b`)',
    [
      issue(1, 7, "Syntax error: token recognition error at: '`$'", 'has(a.`$b`)'),
      issue(1, 10, "Syntax error: token recognition error at: '`)'", 'has(a.`$b`)'),
      issue(1, 12, "Syntax error: missing ')' at '<EOF>'", 'has(a.`$b`)'),
    ],
  ],
  ['(a){}', [issue(1, 4, "Syntax error: mismatched input '{' expecting <EOF>", '(a){}')]],
  ['(a.b){}', [issue(1, 6, "Syntax error: mismatched input '{' expecting <EOF>", '(a.b){}')]],
  ['(a).b{}', [issue(1, 6, "Syntax error: mismatched input '{' expecting <EOF>", '(a).b{}')]],
  ['a.`b-c`{}', [issue(1, 8, "Syntax error: mismatched input '{' expecting <EOF>", 'a.`b-c`{}')]],
  [
    'Msg{`$b`: 1}',
    [
      issue(1, 5, "Syntax error: token recognition error at: '`$'", 'Msg{`$b`: 1}'),
      issue(1, 8, "Syntax error: token recognition error at: '`:'", 'Msg{`$b`: 1}'),
      issue(1, 11, "Syntax error: missing ':' at '1'", 'Msg{`$b`: 1}'),
    ],
  ],
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
    'self.a // a comment\n  + 0x1F - 1e3 + .5e-2',
  ]) {
    assert.equal(celSyntaxErrors(ok), undefined, ok);
  }
});

// cel-go's parser test runs with smaller limits than its defaults (which kube keeps): recursion
// 32, error recovery 4, recovery lookahead 4; its limit vectors with the text cel-go reports
const TEST_LIMITS = { ...CEL_GO_PARSER_LIMITS, maxRecursionDepth: 32, errorRecoveryLimit: 4, errorRecoveryTokenLookahead: 4 };
const numbers = (from: number, to: number, sep: string) => Array.from({ length: to - from + 1 }, (_, i) => String(from + i)).join(sep);
const indexes = (n: number) => Array.from({ length: n }, (_, i) => `[${i + 1}]`).join('');

test("cel-go's parser limits: recursion while parsing, depth of the tree, error recoveries", () => {
  const recursion = 'ERROR: <input>:-1:0: expression recursion limit exceeded: 32';
  const depth = 'ERROR: <input>:-1:0: max recursion depth exceeded';
  const cases: [string, string][] = [
    [`${'['.repeat(32)}'not fine'${']'.repeat(32)}`, recursion],
    [`${'['.repeat(72)}\n\t\t\t${'['.repeat(34)}'too many'${']'.repeat(34)}\n\t\t\t${']'.repeat(72)}`, recursion],
    [`${'a ? b : '.repeat(40)}c`, recursion],
    [numbers(1, 34, ' + '), depth],
    ['a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.A.B.C.D.E.F.G.H', depth],
    [`a${indexes(33)}`, depth],
    [`a < ${numbers(1, 33, ' < ')}`, depth],
    [Array.from({ length: 14 }, () => `a${indexes(20)}`).join(' !=\n'), depth],
    [
      [
        'y!=y!=y!=y!=y!=y!=y!=y!=y!=-y!=-y!=-y!=-y-y!=-y!=-y!=-y-y!=-y!=-y!=-y-y!=-y',
        '!=-y!=-y-y!=-y!=-y!=-y-y!=-y!=-y!=-y-y!=-y!=-y!=-y-y!=-y!=-y!=-y-y!=-y!=-y!=-y-y',
        '!=-y!=-y!=-y-y!=-y!=-y!=-y-y!=-y!=-y!=-y-y!=-y!=-y!=-y-y!=-y!=-y!=-y-y!=-y!=-y',
        '!=-y-y!=-y!=-y!=-y-y!=-y!=-y!=-y-y!=-y!=-y!=-y-y!=-y!=-y!=-y-y!=-y!=-y!=-y-y!=-y',
        '!=-y!=-y-y!=-y!=-y!=-y-y!=-y!=-y!=-y-y!=-y!=-y!=-y-y!=-y!=-y!=-y-y!=-y!=-y!=-y-y',
        '!=-y!=-y!=-y-y!=-y!=-y!=-y-y!=-y!=-y!=-y-y!=-y',
      ].join('\n\t\t'),
      depth,
    ],
    [
      'a ? b ((?))',
      [
        issue(1, 9, `Syntax error: mismatched input '?' expecting ${PRIMARY}`, 'a ? b ((?))'),
        issue(1, 10, `Syntax error: mismatched input ')' expecting ${PRIMARY}`, 'a ? b ((?))'),
        issue(1, 12, 'Syntax error: error recovery attempt limit exceeded: 4', 'a ? b ((?))'),
      ].join('\n'),
    ],
  ];
  for (const [input, want] of cases) assert.equal(celSyntaxErrors(input, TEST_LIMITS), want, input);
  // at the limits, no error
  assert.equal(celSyntaxErrors(numbers(1, 33, ' + '), TEST_LIMITS), undefined);
  assert.equal(celSyntaxErrors(`${'['.repeat(31)}1${']'.repeat(31)}`, TEST_LIMITS), undefined);
  // kube's limits are cel-go's defaults: 250
  assert.equal(celSyntaxErrors(numbers(1, 251, '+')), undefined);
  assert.equal(celSyntaxErrors(numbers(1, 252, '+')), depth.replace('32', '250'));
  assert.equal(celSyntaxErrors(`${'('.repeat(250)}1${')'.repeat(250)}`), recursion.replace('32', '250'));
});

test("cel-go's syntax errors nested up to its recursion limit of 250, and past it", () => {
  // an operand missing at the innermost level. Each parenthesis nests one more expression under
  // the top one (and one more of each rule an expression reads through), so 249 parentheses are
  // cel-go's deepest; an operator inside would nest one rule deeper still
  const empty = (levels: number) => `${'('.repeat(levels)}${')'.repeat(levels)}`;
  for (const levels of [200, 249]) {
    const want = issue(1, levels + 1, `Syntax error: mismatched input ')' expecting ${PRIMARY}`, empty(levels));
    assert.equal(celSyntaxErrors(empty(levels)), want, `${levels} levels`);
  }
  const recursion = 'ERROR: <input>:-1:0: expression recursion limit exceeded: 250';
  for (const levels of [250, 251]) assert.equal(celSyntaxErrors(empty(levels)), recursion, `${levels} levels`);
});

test("cel-go's caret line: wide dots and caret under characters of more than one byte", () => {
  assert.equal(
    celSyntaxErrors('ó + 1'),
    "ERROR: <input>:1:1: Syntax error: token recognition error at: 'ó'\n | ó + 1\n | \uff3e\nERROR: <input>:1:3: Syntax error: extraneous input '+' expecting " +
      `${PRIMARY}\n | ó + 1\n | \uff0e.^`,
  );
  assert.equal(
    celSyntaxErrors("'é' + \t$"),
    `ERROR: <input>:1:8: Syntax error: token recognition error at: '$'\n | 'é' +  $\n | .\uff0e.....^\nERROR: <input>:1:9: Syntax error: mismatched input '<EOF>' expecting ${PRIMARY}\n | 'é' +  $\n | .\uff0e......^`,
  );
});

test("cel-go's deep vector: the recursion limit and the syntax errors read before it, a wide caret", () => {
  const lines = [
    '-[-1--1--1--1---1--1--1--0--1--1--1--1--0--2--1--1--0--1--1--1--1--0--1--1--1',
    '--3-[-1--1--1--1---1--1--1--0--1--1--1--1--0--3--1--1--0--1--1--1--1--0--1--1--1',
    '--3-[-1--1--1--1---1--1--1--0-/1--1--1--1--0--2--1--1--0--1--1--1--1--0--1--1--1',
    '--3-[-1--1--1--1---1--1--1--0--1--1--1--1--0--2--1--1--0--1--1--1--1--0--1--1--1',
    '--3-[-1--1--1--1---1--1--1--0--1--1--1--1--0--2--1--1--0--1--1--1--1--0--1--1--1',
    '--3-[-1--1--1--1---1--1--1--0--1--1--1--1--0--2--1--1--0--1--1--1--1--0--1--1--1',
    '--3-[-1--1--1--1---1--1--1--0--1--1--1--1--0--3--1--1--0--1--1--1--1--0--1--1--1',
    '--3-[-1--1--1--1---1--1--1--0-/1--1--1--1--0--2--1--1--0--1--1--1--1--0--1--1--1',
    '--3-[-1--1--1--1---1-1--1--1--1--0--2--1--1--0--1--1--1--1--0--1--1--1--3-[-1--1',
    '--1--1---1--1--1--0--1--1--1--1--0--2--1--1--0--1--1--1--1--0--1--1--1--3-[-1--1',
    '--1--1---1--1-À1--0--1--1--1--1--0--2--1--1--0--1--1--1--1--0--1--1--1--3-[-1--1',
    '--1--1---1--1--1--0--1--1--1--1--0--2--1--1--0--1--1--1--1--0--1--1--1--3-[-1--1',
    '--1--1---1--1--1--0--1--1--1--1--0--3--1--1--0--1--1--1--1--0--1--1--1--3-[-1--1',
    '--1--1---1--1--1--0-/1--1--1--1--0--2--1--1--0--1--1--1--1--0--1--1--1--3-[-1--1',
    '--1--1---1--1--1--0--1--1--1--1--0--2--1--1--0--1--1--1--1--0--1--1--1--3-[-1--1',
    '--1--1---1--1--1--0--1--1--1--1--0--2--1--1--0--1--1--1--1--0--1--1--1--3-[-1--1',
    '--1--1---1--1--1--0--1--1--1--1--0--2--1--1--0--1--1--1--1--0--1--1--1--3-[-1--1',
    '--1--1---1--1--1--0--1--1--1--1--0--3--1--1--0--1--1--1',
    '--1--0--1--1--1--3-[-1--1--1--1---1--1--1--0-/1--1--1--1--0--2--1--1--0--1--1--1',
    '--1--0--1--1--1--3-[-1--1--1--1---1--1--1--0--1--1--1--1--0--2--1--1--0--1--1--1',
    '--1--0--1--1--1--3-[-1--1--1--1---1--1--1--0--1--1--1--1--0--2--1--1--0--1--1--1',
    '--1--0--1--1--1--3-[-1--1--1--1---1--1--1--0--1--1--1--1--0--2--1--1--0--1--1--1',
    '--1--0--1--1--1--3-[-1--1--1--1---1--1--1--0--1--1--1--1--0--3--1--1--0--1--1--1',
    '--1--0--1--1--1--3-[-1--1--1--1---1--1--1--0-/1--1--1--1--0--2--1--1--0--1--1--1',
    '--1--0--1--1--1--3-[-1--1--1--1---1--1--1--0--1--1--1--1--0--1--1--1--3-[-1--1--1',
    '--1---1--1--1--0--1--1--1--1--0--2--1--1--0--1--1--1--1--0--1--1--1--3-[-1--1--1',
    '--1---1--1--1--0--1--1--1--1--0--2--1--1--0--1--1--1--1--0--1--1--1--3-[-1--1--1',
    '--1---1--1--1--0--1--1--1--1--0--2--1--1--0--1--1--1--1--0--1--1--1--3-[-1--1--1',
    '--1---1--1--1--0--1--1--1--1--0--3--1--1--0--1--1--1--1--0--1--1--1--3-[-1--1--1',
    '--1---1--1--1--0-/1--1--1--1--0--2--1--1--0--1--1--1--1--0--1--1--1--3-[-1--1--1',
    '--1---1--1--1--0--1--1--1--1--0--2--1--1--0--1--1--1--1--0--1--1--1--3-[-1--1--1',
    '--1---1--1--1--0--1--1--1--1--0--2--1--1--0--1--1--1--1--0--1--1--1--3-[-1--1--1',
    '--1---1--1--1--0--1--1--1--1--0--2--1--1--0--1--1--1--1--0--1--1--1--3-[-1--1--1',
    '--1---1--1--1--0--1--1--1--1--0--3--1--1--0--1',
  ];
  const line = (n: number) => `  ${lines[n - 1]}`;
  const extraneous = `Syntax error: extraneous input '/' expecting ${PRIMARY}`;
  assert.equal(
    celSyntaxErrors(lines.join('\n\t\t'), TEST_LIMITS),
    [
      'ERROR: <input>:-1:0: expression recursion limit exceeded: 32',
      issue(3, 33, extraneous, line(3)),
      issue(8, 33, extraneous, line(8)),
      `ERROR: <input>:11:17: Syntax error: token recognition error at: 'À'\n | ${line(11)}\n | ${'.'.repeat(16)}\uff3e`,
      issue(14, 23, extraneous, line(14)),
    ].join('\n'),
  );
});

test("cel-go's recovery lookahead limit: a recovery that would skip more tokens stops the parse", () => {
  // cel-go's vector (its test limits): non-breaking spaces and a DEL the lexer refuses, then a
  // recovery to the end that skips more than 4 tokens
  const lines = [
    'ó\u00a0¢',
    '\t\tó\u00a00\u00a0',
    '\t\t\u007f0"""\\""\\"""\\""\\"""\\""\\"""\\""\\"""\\"\\"""\\""\\"""\\""\\"""\\""\\"""\\"!\\"""\\""\\"""\\""\\"',
  ];
  const source = (n: number) => lines[n - 1]!.replace(/\t/g, ' ');
  const wide = (n: number, column: number, before = '') =>
    `ERROR: <input>:${n}:${column}: Syntax error: token recognition error at: '${lines[n - 1]!.replace(/\t/g, '')[column - 1 - (n > 1 ? 2 : 0)]}'\n | ${source(n)}\n | ${before}\uff3e`;
  assert.equal(
    celSyntaxErrors(lines.join('\n'), TEST_LIMITS),
    [
      'ERROR: <input>:-1:0: error recovery token lookahead limit exceeded: 4',
      wide(1, 1),
      wide(1, 2, '\uff0e'),
      wide(1, 3, '\uff0e\uff0e'),
      wide(2, 3, '..'),
      wide(2, 4, '..\uff0e'),
      wide(2, 6, '..\uff0e\uff0e.'),
      issue(3, 3, "Syntax error: token recognition error at: '\u007f'", source(3)),
      issue(3, 4, "Syntax error: mismatched input '0' expecting <EOF>", source(3)),
      issue(3, 11, "Syntax error: token recognition error at: '\\'", source(3)),
    ].join('\n'),
  );
  // kube's limit is cel-go's default, 256 tokens
  const trailing = (n: number) => `1${' 2'.repeat(n)}`;
  assert.equal(celSyntaxErrors(trailing(256)), issue(1, 3, "Syntax error: mismatched input '2' expecting <EOF>", trailing(256)));
  assert.equal(
    celSyntaxErrors(trailing(257)),
    `ERROR: <input>:-1:0: error recovery token lookahead limit exceeded: 256\n${issue(1, 3, "Syntax error: mismatched input '2' expecting <EOF>", trailing(257))}`,
  );
});

test("cel-go's syntax error reporting limit: the error past it says so, and the parse ends", () => {
  // cel-go's vector (ErrorReportingLimit(2)): the lexer has read to the end before the parser
  // reports the stray `tru`, so the third error is the second '^'
  const input = `'3# < 10" '& tru ^^`;
  assert.equal(
    celSyntaxErrors(input, { ...CEL_GO_PARSER_LIMITS, errorReportingLimit: 2 }),
    [
      issue(1, 12, "Syntax error: token recognition error at: '& '", input),
      issue(1, 18, "Syntax error: token recognition error at: '^'", input),
      issue(1, 19, 'Syntax error: More than 2 syntax errors', input),
    ].join('\n'),
  );
  // at kube's limit (100) the 101st error is that line, but cel-go records at most 100 issues:
  // the display counts it instead
  const dollars = (n: number) => `1${' $'.repeat(n)}`;
  const shown = (input: string, n: number) =>
    Array.from({ length: n }, (_, i) => issue(1, 3 + 2 * i, "Syntax error: token recognition error at: '$'", input));
  assert.equal(celSyntaxErrors(dollars(100)), shown(dollars(100), 100).join('\n'));
  assert.equal(celSyntaxErrors(dollars(101)), [...shown(dollars(101), 100), '1 more errors were truncated'].join('\n'));
  assert.equal(celSyntaxErrors(dollars(150)), [...shown(dollars(150), 100), '1 more errors were truncated'].join('\n'));
});
