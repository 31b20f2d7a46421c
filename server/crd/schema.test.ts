import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JSONSchemaProps } from '../registry/apiextensions/json-schema-props.js';
import { validateCustomResource } from '../registry/apiextensions/schema-validation.js';
import { applyDefaults } from './defaulting.js';
import { prune } from './pruning.js';
import { errorString } from '../machinery/validation/field-error.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['cronSpec'],
      properties: {
        cronSpec: { type: 'string', pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$' },
        replicas: { type: 'integer', minimum: 1, maximum: 10, default: 1 },
        mode: { type: 'string', enum: ['a', 'b'] },
        name: { type: 'string', minLength: 2, maxLength: 4 },
        tags: { type: 'array', maxItems: 2, items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
        when: { type: 'string', format: 'date-time' },
        port: { 'x-kubernetes-int-or-string': true },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        maybe: { type: 'string', nullable: true },
        inner: { type: 'object', properties: { x: { type: 'string', default: 'dx' } }, default: {} },
        embedded: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
  },
};

const messages = (obj: Record<string, unknown>) => validateCustomResource(obj, schema).map(errorString);

test('a valid object has no errors', () => {
  assert.deepEqual(
    messages({ apiVersion: 'x/v1', kind: 'X', metadata: {}, spec: { cronSpec: '* * * * */5', replicas: 3, port: 'http', maybe: null } }),
    [],
  );
});

test('validation errors are kube-apiserver lines, one per field', () => {
  const got = messages({
    spec: {
      cronSpec: 'nope',
      replicas: 20,
      mode: 'c',
      name: 'toolong',
      tags: ['a', 'a', 'b'],
      when: 'yesterday',
      port: 1.5,
      labels: { a: 1 },
    },
  });
  assert.deepEqual(got, [
    `spec.cronSpec: Invalid value: "nope": spec.cronSpec in body should match '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'`,
    'spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10',
    'spec.mode: Unsupported value: "c": supported values: "a", "b"',
    'spec.name: Too long: may not be more than 4 bytes',
    'spec.tags: Too many: 3: must have at most 2 items',
    'spec.tags[1]: Duplicate value: "a"',
    'spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"',
    'spec.port: Invalid value: "number": spec.port in body must be of type integer,string: 1.5',
    'spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: 1',
  ]);
});

test('required, types and minimums', () => {
  assert.deepEqual(messages({ spec: { replicas: 'x', name: 'a' } }), [
    'spec.cronSpec: Required value',
    'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "x"',
    'spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long',
  ]);
  assert.deepEqual(messages({ spec: { cronSpec: '* * * * *', replicas: 0 } }), [
    'spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1',
  ]);
  assert.deepEqual(messages({ spec: { cronSpec: '* * * * *', embedded: { a: 1 } } }), [
    'spec.embedded.kind: Required value: must not be empty',
    'spec.embedded.apiVersion: Required value: must not be empty',
  ]);
});

test('pruning drops undeclared fields, keeps preserved ones and reports paths', () => {
  const obj: Record<string, unknown> = {
    apiVersion: 'x/v1',
    kind: 'X',
    metadata: { name: 'a', bogus: 1 },
    top: 1,
    spec: {
      cronSpec: 'x',
      foo: 'bar',
      free: { any: { thing: 1 } },
      labels: { k: 'v' },
      tags: ['a'],
      embedded: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', junk: 1 }, spec: {} },
    },
  };
  const pruned = prune(obj, schema);
  assert.deepEqual(pruned.sort(), ['metadata.bogus', 'spec.embedded.metadata.junk', 'spec.foo', 'top']);
  assert.deepEqual(obj, {
    apiVersion: 'x/v1',
    kind: 'X',
    metadata: { name: 'a' },
    spec: {
      cronSpec: 'x',
      free: { any: { thing: 1 } },
      labels: { k: 'v' },
      tags: ['a'],
      embedded: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {} },
    },
  });
});

test('defaulting fills missing fields, nested defaults included, and leaves given ones', () => {
  const obj: Record<string, unknown> = { spec: { cronSpec: 'x' } };
  applyDefaults(obj, schema);
  assert.deepEqual(obj, { spec: { cronSpec: 'x', replicas: 1, inner: { x: 'dx' } } });
  const given: Record<string, unknown> = { spec: { replicas: 5, inner: { x: 'mine' } } };
  applyDefaults(given, schema);
  assert.deepEqual(given, { spec: { replicas: 5, inner: { x: 'mine' } } });
});

test("metadata.name follows the schema's restriction", () => {
  const withName: JSONSchemaProps = {
    type: 'object',
    properties: { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 5 } } } },
  };
  assert.deepEqual(validateCustomResource({ metadata: { name: 'toolong' } }, withName).map(errorString), [
    'metadata.name: Too long: may not be more than 5 bytes',
  ]);
  assert.deepEqual(validateCustomResource({ metadata: { name: 'ok' } }, withName), []);
});
