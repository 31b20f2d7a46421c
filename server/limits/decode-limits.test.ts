import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import { jsonTooDeep, MAX_NESTING_DEPTH, valueDepth, valueTooDeep, yamlTooDeep } from './decode-limits.js';

const bytes = (s: string): Buffer => Buffer.from(s);
const nestedArrays = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

test('JSON nested to the limit passes; one level more is refused at the first opener past it', () => {
  assert.equal(jsonTooDeep(bytes(nestedArrays(MAX_NESTING_DEPTH))), undefined);
  assert.deepEqual(jsonTooDeep(bytes(nestedArrays(MAX_NESTING_DEPTH + 1))), { offset: MAX_NESTING_DEPTH, char: '[' });
  assert.deepEqual(jsonTooDeep(bytes('{"a":'.repeat(3) + '1' + '}'.repeat(3)), 2), { offset: 10, char: '{' });
});

test('brackets inside JSON strings, escaped quotes included, do not count', () => {
  const text = `{"a":"[[[[\\"[[[[","b":"\\\\"}`;
  assert.equal(JSON.parse(text).b, '\\');
  assert.equal(jsonTooDeep(bytes(text), 1), undefined);
  assert.deepEqual(jsonTooDeep(bytes(`{"x\\\\":[1]}`), 1), { offset: 7, char: '[' });
});

test('siblings do not add up: depth is what is open at once', () => {
  const wide = `[${Array.from({ length: 2000 }, () => '[[1]]').join(',')}]`;
  assert.equal(jsonTooDeep(bytes(wide), 3), undefined);
  assert.ok(jsonTooDeep(bytes(wide), 2));
});

test('an unterminated string or unbalanced text is left to the parser', () => {
  assert.equal(jsonTooDeep(bytes('{"a":"[[[[[[')), undefined);
  assert.equal(jsonTooDeep(bytes(']]]]]][')), undefined);
});

test('decoded values: depth walked without recursion, even far past the stack', () => {
  let deep: unknown = 1;
  for (let i = 0; i < 200_000; i++) deep = [deep];
  assert.equal(valueTooDeep(deep), true);
  assert.equal(valueDepth(deep), 200_000);
  assert.equal(valueTooDeep({ a: [{ b: {} }] }, 4), false);
  assert.equal(valueTooDeep({ a: [{ b: {} }] }, 3), true);
  assert.equal(valueDepth('scalar'), 0);
});

const yamlDepth = (text: string): boolean => yamlTooDeep(text, MAX_NESTING_DEPTH) !== undefined;

test('YAML flow collections are counted', () => {
  assert.equal(yamlDepth(nestedArrays(MAX_NESTING_DEPTH - 1)), false);
  assert.equal(yamlDepth(nestedArrays(MAX_NESTING_DEPTH + 1)), true);
  assert.equal(yamlDepth('{a: '.repeat(MAX_NESTING_DEPTH + 1) + '1' + '}'.repeat(MAX_NESTING_DEPTH + 1)), true);
  assert.equal(yamlDepth(`key: ${nestedArrays(MAX_NESTING_DEPTH + 1)}`), true);
  // JSON is YAML
  assert.equal(yamlDepth('{"a":'.repeat(MAX_NESTING_DEPTH + 1) + '1' + '}'.repeat(MAX_NESTING_DEPTH + 1)), true);
});

test('YAML block nesting is counted: indentation, compact sequences and sequences of maps', () => {
  const indented = (depth: number) => Array.from({ length: depth }, (_, i) => `${' '.repeat(i)}a:`).join('\n') + ' 1';
  assert.equal(yamlDepth(indented(MAX_NESTING_DEPTH - 1)), false);
  assert.equal(yamlDepth(indented(MAX_NESTING_DEPTH + 1)), true);
  assert.equal(yamlDepth('- '.repeat(MAX_NESTING_DEPTH + 1) + 'x'), true);
  assert.equal(yamlDepth('- '.repeat(MAX_NESTING_DEPTH - 2) + 'x'), false);
  const seqOfMaps = (depth: number) => Array.from({ length: depth }, (_, i) => `${'  '.repeat(i)}- a:`).join('\n') + ' 1';
  assert.equal(yamlDepth(seqOfMaps(MAX_NESTING_DEPTH)), true);
});

test('YAML text is not structure: quoted scalars, comments and block scalars', () => {
  const opens = '['.repeat(MAX_NESTING_DEPTH + 1);
  const docs = [
    `a: "${opens}"`,
    `a: '${opens}'`,
    `a: 1 # ${opens}`,
    `a: |\n  ${opens}\n  more\nb: 2`,
    `- >-\n    ${opens}\n- x`,
    `a: plain${opens}`,
    `a: "multi\n  line ${opens}\n  text"`,
    `{"a": "${opens}", 'b': 'it''s ${opens}'}`,
  ];
  for (const text of docs) {
    assert.equal(yamlDepth(text), false, text.slice(0, 20));
    assert.equal(parseAllDocuments(text)[0].errors.length, 0, text.slice(0, 20));
  }
});

test('a block scalar ends where a less indented line starts: what follows is structure again', () => {
  const opens = '['.repeat(MAX_NESTING_DEPTH + 1);
  assert.equal(yamlDepth(`a: |\n    text\n  ${opens}`), true);
  assert.equal(yamlDepth(`a: |\nb: ${opens}`), true);
});

test('every document of a stream is counted on its own', () => {
  const half = nestedArrays(Math.floor(MAX_NESTING_DEPTH / 2) + 1);
  assert.equal(yamlDepth(`a: 1\n---\n${half}\n---\n${half}`), false);
  assert.equal(yamlDepth(`a: 1\n---\n${nestedArrays(MAX_NESTING_DEPTH + 1)}`), true);
});

test('real objects pass untouched', () => {
  const pod = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web, tier: "front[end]"}
  annotations:
    note: |
      if [ -f /x ]; then {
    other: 'a#b'
spec:
  containers:
  - name: c
    image: nginx
    command: ["sh", "-c", "echo [ok"]
    ports:
    - containerPort: 80
      protocol: TCP
`;
  assert.equal(yamlTooDeep(pod, 6), undefined);
  assert.ok(yamlTooDeep(pod, 3));
  assert.equal(parseAllDocuments(pod)[0].errors.length, 0);
});
