import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ruleCompileError, validateRules } from './cel.js';
import type { JSONSchemaProps } from './schema.js';
import { errorString } from '../registry/validation/field-error.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      'x-kubernetes-validations': [
        { rule: 'self.min <= self.max', message: 'min must not exceed max' },
        { rule: 'self.mode == oldSelf.mode', message: 'mode is immutable' },
      ],
      properties: {
        min: { type: 'integer' },
        max: { type: 'integer' },
        mode: { type: 'string' },
        name: { type: 'string', 'x-kubernetes-validations': [{ rule: "self.startsWith('a')" }] },
      },
    },
  },
};

test('rules pass and fail with their messages at their fields', () => {
  assert.deepEqual(validateRules({ spec: { min: 1, max: 2, mode: 'x', name: 'ab' } }, undefined, schema, '', false).map(errorString), []);
  assert.deepEqual(validateRules({ spec: { min: 3, max: 2, mode: 'x', name: 'b' } }, undefined, schema, '', false).map(errorString), [
    'spec: Invalid value: "object": min must not exceed max',
    `spec.name: Invalid value: "string": failed rule: self.startsWith('a')`,
  ]);
});

test('transition rules run on updates only, against the old value', () => {
  const old = { spec: { min: 1, max: 2, mode: 'x' } };
  assert.deepEqual(validateRules({ spec: { min: 1, max: 2, mode: 'y' } }, undefined, schema, '', false), []);
  assert.deepEqual(validateRules({ spec: { min: 1, max: 2, mode: 'y' } }, old, schema, '', true).map(errorString), ['spec: Invalid value: "object": mode is immutable']);
  assert.deepEqual(validateRules({ spec: { min: 1, max: 2, mode: 'x' } }, old, schema, '', true), []);
});

test('a rule that does not compile is reported', () => {
  assert.match(ruleCompileError('self.+') ?? '', /^compilation failed: /);
  assert.equal(ruleCompileError('self.a == 1'), undefined);
});

test('matches runs on RE2 (no catastrophic backtracking); a runaway rule is cut by the budget', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: {
      word: { type: 'string', 'x-kubernetes-validations': [{ rule: "self.matches('^(a+)+$')", message: 'only a' }] },
      list: { type: 'array', items: { type: 'integer' }, 'x-kubernetes-validations': [{ rule: 'self.all(a, self.all(b, self.all(c, a + b + c >= 0)))', message: 'too slow' }] },
    },
  };
  // exponential for a backtracking engine, linear for RE2
  assert.deepEqual(validateRules({ word: `${'a'.repeat(40)}b` }, undefined, s, '', false).map(errorString), ['word: Invalid value: "string": only a']);
  assert.deepEqual(validateRules({ word: 'aaaa' }, undefined, s, '', false), []);
  // Kubernetes' own libraries are there too
  assert.equal(ruleCompileError("quantity('1Gi').isGreaterThan(quantity('1Mi')) && isIP('10.0.0.1')"), undefined);
  // 200^3 iterations: far over the budget, refused instead of holding the replica
  const errs = validateRules({ list: Array.from({ length: 200 }, (_, i) => i) }, undefined, s, '', false).map(errorString);
  assert.deepEqual(errs, ['list: Invalid value: "array": too slow']);
});
