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
