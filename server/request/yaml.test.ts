import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StatusError } from '../machinery/status.js';
import { decodeYamlText, yamlDuplicateKeysError } from './yaml.js';

test('the first document with content is the value; documents after it are not parsed', () => {
  assert.deepEqual(decodeYamlText('a: 1\n---\nb: 2\n').value, { a: 1 });
  // go-yaml stops after the first document: what follows may be anything
  assert.deepEqual(decodeYamlText('a: 1\n---\n: : [\n').value, { a: 1 });
  assert.deepEqual(decodeYamlText('a: 1\n...\n---\n{{{\n').value, { a: 1 });
  // an empty first document is null, as go-yaml reads it
  assert.equal(decodeYamlText('---\n---\nkind: X\n').value, null);
  assert.equal(decodeYamlText('---\n...\n---\nkind: X\n').value, null);
  assert.deepEqual(decodeYamlText('# a comment\n---\nkind: X\n').value, { kind: 'X' });
  assert.equal(decodeYamlText('').value, null);
  assert.equal(decodeYamlText('# nothing\n').value, null);
});

test('a broken first document is a 400 naming its line', () => {
  assert.throws(
    () => decodeYamlText('a: 1\nb: [1,\n'),
    (e: unknown) => e instanceof StatusError && e.code === 400 && /^error converting YAML to JSON: yaml: line \d+: /.test(e.message),
  );
});

test('repeated keys come from the same parse as the value, with the line of the repeated value', () => {
  const decoded = decodeYamlText('data:\n  a: "1"\n  a: "2"\n');
  assert.deepEqual(decoded.value, { data: { a: '2' } });
  assert.equal(decoded.json, false);
  assert.equal(decoded.duplicateKeys, 'yaml: unmarshal errors:\n  line 3: key "a" already set in map');
  assert.equal(decodeYamlText('a: 1\nb: 2\n').duplicateKeys, undefined);
});

test('JSON text is read by JSON.parse; its repeats are found by reading it as YAML', () => {
  const decoded = decodeYamlText('{"a": 1, "a": 2}');
  assert.deepEqual(decoded, { value: { a: 2 }, json: true });
  assert.equal(yamlDuplicateKeysError('{"a": 1,\n "a": 2}'), 'yaml: unmarshal errors:\n  line 2: key "a" already set in map');
});

test('a large block map: every key, and a repeat at its line', () => {
  const lines = ['data:'];
  for (let i = 0; i < 20000; i++) lines.push(`  k${i}: v${i}`);
  lines.push('  k7: again');
  const decoded = decodeYamlText(lines.join('\n'));
  assert.equal(Object.keys((decoded.value as { data: object }).data).length, 20000);
  assert.equal(decoded.duplicateKeys, 'yaml: unmarshal errors:\n  line 20002: key "k7" already set in map');
});

test("plain scalars are read as go-yaml v2 reads them (kube's YAML decoder), not by YAML 1.2's core schema", () => {
  const text = [
    'mode: 0644',
    'yes1: yes',
    'on1: On',
    'y1: Y',
    'n1: n',
    'off1: OFF',
    'truthy: tRuE',
    'hex: 0x1F',
    'negHex: -0x1A',
    'bin: 0b101',
    'oct: 0o17',
    'under: 1_000',
    'eight: 08',
    'float: 1e3',
    'dot: .5',
    'trail: 1.',
    'huge: 1e400',
    'date: 2001-12-14',
    'clock: 12:30',
    'quoted: "0644"',
    'tilde: ~',
    'empty:',
    'y: key-y',
    '2: key-2',
  ].join('\n');
  assert.deepEqual(decodeYamlText(text).value, {
    mode: 420,
    yes1: true,
    on1: true,
    y1: true,
    n1: false,
    off1: false,
    truthy: 'tRuE',
    hex: 31,
    negHex: -26,
    bin: 5,
    oct: 15,
    under: 1000,
    eight: 8,
    float: 1000,
    dot: 0.5,
    trail: 1,
    huge: '1e400',
    date: '2001-12-14',
    clock: '12:30',
    quoted: '0644',
    tilde: null,
    empty: null,
    true: 'key-y',
    2: 'key-2',
  });
  // merge keys, as go-yaml merges them
  assert.deepEqual(decodeYamlText('base: &b {p: 1, q: 2}\nuse: {<<: *b, q: 3}\n').value, { base: { p: 1, q: 2 }, use: { p: 1, q: 3 } });
});

test("NaN and infinities are refused as Go's JSON encoder refuses them", () => {
  for (const [text, shown] of [
    ['a: .inf', '+Inf'],
    ['a: [1, -.Inf]', '-Inf'],
    ['a: {b: .NaN}', 'NaN'],
  ] as const) {
    assert.throws(
      () => decodeYamlText(text),
      (e: unknown) => e instanceof StatusError && e.message === `error converting YAML to JSON: json: unsupported value: ${shown}`,
      text,
    );
  }
});
