import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeFieldValue, parseFieldSelector, parseFieldSelectorOrBadRequest, FieldSelector } from './fields.js';
import { fieldCount, fieldLabels, objectMetaFieldLabels, selectableFields } from './field-sets.js';
import { SelectorError } from './labels.js';
import { StatusError } from '../machinery/status.js';

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof SelectorError);
    return e.message;
  }
  assert.fail('no error');
}

test('=, == and != with comma AND', () => {
  const s = parseFieldSelector('metadata.name=web,status.phase!=Failed');
  assert.equal(s.matches({ 'metadata.name': 'web', 'status.phase': 'Running' }), true);
  assert.equal(s.matches({ 'metadata.name': 'web', 'status.phase': 'Failed' }), false);
  assert.equal(parseFieldSelector('a==b').matches({ a: 'b' }), true);
  // a field the object does not offer reads as ''
  assert.equal(parseFieldSelector('spec.nodeName=').matches({}), true);
  assert.equal(parseFieldSelector('spec.nodeName!=').matches({}), false);
  assert.equal(parseFieldSelector('').empty(), true);
});

test('escaped values', () => {
  const s = parseFieldSelector('a=x\\,y\\=z\\\\,b=c');
  assert.deepEqual(
    s.requirements.map((r) => [r.field, r.value]),
    [
      ['a', 'x,y=z\\'],
      ['b', 'c'],
    ],
  );
  assert.equal(escapeFieldValue('x,y=z\\'), 'x\\,y\\=z\\\\');
  assert.equal(
    message(() => parseFieldSelector('a=b\\c')),
    'invalid field selector: invalid escape sequence: \\c',
  );
  assert.equal(
    message(() => parseFieldSelector('a=b=c')),
    'invalid field selector: unescaped character in value: 61',
  );
  assert.equal(
    message(() => parseFieldSelector('a=b\\')),
    'invalid field selector: invalid escape sequence: \\',
  );
});

test('a term without an operator is rejected', () => {
  assert.equal(
    message(() => parseFieldSelector('a=b,cd')),
    "invalid selector: 'a=b,cd'; can't understand 'cd'",
  );
});

test('requiresExactMatch finds the single name or namespace', () => {
  const s = parseFieldSelector('metadata.namespace=ns,metadata.name=x');
  assert.equal(s.requiresExactMatch('metadata.name'), 'x');
  assert.equal(s.requiresExactMatch('metadata.namespace'), 'ns');
  assert.equal(parseFieldSelector('metadata.name!=x').requiresExactMatch('metadata.name'), undefined);
});

test('400 form', () => {
  assert.equal(parseFieldSelectorOrBadRequest(undefined), FieldSelector.everything);
  assert.throws(
    () => parseFieldSelectorOrBadRequest('nope'),
    (e) => e instanceof StatusError && e.code === 400,
  );
});

test('resources without their own labels: metadata.name and metadata.namespace only', () => {
  assert.deepEqual(objectMetaFieldLabels('metadata.namespace', 'a'), ['metadata.namespace', 'a']);
  assert.equal(
    message(() => objectMetaFieldLabels('data.x', 'a')),
    '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"',
  );
  const renamed = fieldLabels(['a'], { b: 'c' });
  assert.deepEqual(renamed('b', 'v'), ['c', 'v']);
  assert.equal(
    message(() => renamed('d', 'v')),
    'field label not supported: d',
  );
});

test('selectable fields: metadata, and the extra fields of a kind', () => {
  assert.deepEqual(selectableFields(true)({ metadata: { name: 'a', namespace: 'n' } }), {
    'metadata.name': 'a',
    'metadata.namespace': 'n',
  });
  assert.deepEqual(selectableFields(false, (o) => ({ x: fieldCount(o.x) }))({ metadata: { name: 'a' }, x: 2.5 }), {
    'metadata.name': 'a',
    x: '2',
  });
});
