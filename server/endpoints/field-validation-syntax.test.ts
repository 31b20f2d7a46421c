import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errors, StatusError } from '../machinery/status.js';
import { MAX_NESTING_DEPTH } from '../limits/decode-limits.js';
import {
  checkStrategicPatchSyntax,
  decodeObjectAsKube,
  goJsonSyntaxError,
  parsePatchAsKube,
  quoteChar,
  summarizeBody,
} from './field-validation-syntax.js';
import type { PatchApplier } from './patch/types.js';
import type { Scope } from './scope.js';

const syntax = (text: string | Buffer) => goJsonSyntaxError(typeof text === 'string' ? Buffer.from(text) : text);

test('well-formed JSON passes', () => {
  for (const ok of ['{}', '[]', ' {"a":[1,-2.5e+3,true,false,null,"x\\u00e9\\n"]} ', '0', '"s"', '-0.1E-2'])
    assert.equal(syntax(ok), undefined, ok);
});

test("Go's scanner texts", () => {
  const cases: [string | Buffer, string][] = [
    ['this is not json', "invalid character 'h' in literal true (expecting 'r')"],
    ['{"a":"b",}', "invalid character '}' looking for beginning of object key string"],
    [Buffer.from([0, 1, 0x62]), "invalid character '\\x00' looking for beginning of value"],
    ['{"a" 1}', "invalid character '1' after object key"],
    ['{"a":1 "b":2}', `invalid character '"' after object key:value pair`],
    ['[1 2]', "invalid character '2' after array element"],
    ['{"a":', 'unexpected end of JSON input'],
    ['"abc', 'unexpected end of JSON input'],
    ['', 'unexpected end of JSON input'],
    ['tru', "invalid character ' ' in literal true (expecting 'e')"],
    ['nul', "invalid character ' ' in literal null (expecting 'l')"],
    ['{"a":1}x', "invalid character 'x' after top-level value"],
    ['01', "invalid character '1' after top-level value"],
    ['-', "invalid character ' ' in numeric literal"],
    ['1.', "invalid character ' ' after decimal point in numeric literal"],
    ['1e+', "invalid character ' ' in exponent of numeric literal"],
    ['"\\x"', "invalid character 'x' in string escape code"],
    ['"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape"],
    ['"a\nb"', "invalid character '\\n' in string literal"],
    ["{'a':1}", "invalid character '\\'' looking for beginning of object key string"],
    ['apiVersion: v1', "invalid character 'a' looking for beginning of value"],
  ];
  for (const [input, message] of cases) assert.equal(syntax(input), message, String(input));
  // Go's words at our depth limit (MAX_NESTING_DEPTH) rather than Go's 10000
  const over = MAX_NESTING_DEPTH + 1;
  assert.equal(syntax(`${'['.repeat(over)}${']'.repeat(over)}`), "invalid character '[' exceeded max depth");
  assert.equal(syntax(`${'['.repeat(MAX_NESTING_DEPTH)}${']'.repeat(MAX_NESTING_DEPTH)}`), undefined);
});

test('quoteChar follows strconv.Quote for a byte read as a rune', () => {
  assert.equal(quoteChar(0x7f), "'\\x7f'");
  assert.equal(quoteChar(0x85), "'\\u0085'");
  assert.equal(quoteChar(0xe9), "'é'");
  assert.equal(quoteChar(0x5c), "'\\\\'");
});

test('bodies are summarized as kube-apiserver does: text for JSON objects, hex otherwise', () => {
  assert.equal(summarizeBody(Buffer.from('{"a":1}')), '{"a":1}');
  assert.equal(summarizeBody(Buffer.from('this is not json')), '74686973206973206e6f74206a736f6e');
  assert.equal(summarizeBody(Buffer.from('x'.repeat(31))), `${'78'.repeat(30)} ...`);
  assert.equal(summarizeBody(Buffer.alloc(0)), '<empty>');
});

const scope = { kind: { group: '', version: 'v1', kind: 'ConfigMap' } } as unknown as Scope;

test('create and update bodies that are not JSON: the 400 kube-apiserver gives', () => {
  const refused = (text: string) => {
    try {
      decodeObjectAsKube(scope, Buffer.from(text), 'json');
    } catch (err) {
      assert.ok(err instanceof StatusError);
      return { code: err.code, message: err.message };
    }
    assert.fail('accepted');
  };
  assert.deepEqual(refused('this is not json'), {
    code: 400,
    message:
      "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character 'h' in literal true (expecting 'r') (74686973206973206e6f74206a736f6e)",
  });
  assert.deepEqual(refused('{"apiVersion":"v1","kind":"ConfigMap",}'), {
    code: 400,
    message:
      'the object provided is unrecognized (must be of type ConfigMap): couldn\'t get version/kind; json parse error: invalid character \'}\' looking for beginning of object key string ({"apiVersion":"v1","kind":"Con ...)',
  });
  assert.match(refused('[1,2]').message, / \(5b312c325d\)$/);
  const ok = decodeObjectAsKube(scope, Buffer.from('{"metadata":{"name":"x"}}'), 'json');
  assert.equal(ok.kind, 'ConfigMap');
});

test('patches that are not JSON: the 400 of each patch type and level', () => {
  const applier = {
    parse: () => {
      throw errors.badRequest('not JSON');
    },
  } as unknown as PatchApplier;
  const body = Buffer.from('{"a":');
  const message = (patchType: string, level: 'Strict' | 'Warn' | 'Ignore') => {
    try {
      parsePatchAsKube(applier, patchType, body, level);
    } catch (err) {
      return (err as StatusError).message;
    }
    return undefined;
  };
  assert.equal(message('application/merge-patch+json', 'Warn'), 'error decoding patch: unexpected end of JSON input');
  assert.equal(message('application/json-patch+json', 'Strict'), 'error decoding patch: unexpected end of JSON input');
  assert.equal(message('application/merge-patch+json', 'Ignore'), 'Invalid JSON Patch');
  assert.equal(message('application/json-patch+json', 'Ignore'), 'unexpected end of JSON input');
  assert.throws(
    () => checkStrategicPatchSyntax('application/strategic-merge-patch+json', body),
    (err: StatusError) => err.code === 400 && err.message === 'unexpected end of JSON input',
  );
  checkStrategicPatchSyntax('application/strategic-merge-patch+json', Buffer.from('{}'));
});
