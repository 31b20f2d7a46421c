import { test } from 'node:test';
import assert from 'node:assert/strict';
import { duplicateFields } from './duplicate-fields.js';

test('no duplicates in ordinary objects', () => {
  assert.deepEqual(duplicateFields('{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}'), []);
  assert.deepEqual(duplicateFields('[]'), []);
  assert.deepEqual(duplicateFields('"a"'), []);
});

test('duplicates are reported with their paths', () => {
  const text =
    '{"metadata":{"name":"x","name":"y"},"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"a"},{"name":"b","image":"i","image":"j"}]}},"replicas":2}}';
  assert.deepEqual(duplicateFields(text), ['metadata.name', 'spec.template.spec.containers[1].image', 'spec.replicas']);
});

test('strings that look like members do not confuse the scanner', () => {
  assert.deepEqual(duplicateFields('{"a":"b:c","b":"\\"a\\":1","a\\u0062":[1,"x"], "ab": 2}'), ['ab']);
  assert.deepEqual(duplicateFields('{ "k" : { "k" : 1 } , "k" : 2 }'), ['k']);
});
