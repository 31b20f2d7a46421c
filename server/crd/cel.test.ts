import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ruleCompileError, ruleCost, ruleCostErrors } from '../registry/apiextensions/cel-checks.js';
import { validateRules } from './cel.js';
import type { JSONSchemaProps } from '../registry/apiextensions/json-schema-props.js';
import { errorString } from '../machinery/validation/field-error.js';

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
  assert.deepEqual(validateRules({ spec: { min: 1, max: 2, mode: 'y' } }, old, schema, '', true).map(errorString), [
    'spec: Invalid value: "object": mode is immutable',
  ]);
  assert.deepEqual(validateRules({ spec: { min: 1, max: 2, mode: 'x' } }, old, schema, '', true), []);
});

test('a rule that does not compile is reported', () => {
  const obj: JSONSchemaProps = { type: 'object', properties: { a: { type: 'integer' } } };
  assert.match(ruleCompileError('self.+', obj) ?? '', /^compilation failed: /);
  assert.equal(ruleCompileError('self.a == 1', obj), undefined);
});

test('matches runs on RE2 (no catastrophic backtracking); a runaway rule is cut by the budget', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: {
      word: { type: 'string', 'x-kubernetes-validations': [{ rule: "self.matches('^(a+)+$')", message: 'only a' }] },
      list: {
        type: 'array',
        items: { type: 'integer' },
        'x-kubernetes-validations': [{ rule: 'self.all(a, self.all(b, self.all(c, a + b + c >= 0)))', message: 'too slow' }],
      },
    },
  };
  // exponential for a backtracking engine, linear for RE2
  assert.deepEqual(validateRules({ word: `${'a'.repeat(40)}b` }, undefined, s, '', false).map(errorString), [
    'word: Invalid value: "string": only a',
  ]);
  assert.deepEqual(validateRules({ word: 'aaaa' }, undefined, s, '', false), []);
  // Kubernetes' own libraries are there too
  assert.equal(ruleCompileError("quantity('1Gi').isGreaterThan(quantity('1Mi')) && isIP('10.0.0.1')", s), undefined);
  // 200^3 iterations: far over the budget, refused instead of holding the replica
  const errs = validateRules({ list: Array.from({ length: 200 }, (_, i) => i) }, undefined, s, '', false).map(errorString);
  assert.deepEqual(errs, [
    `list: Invalid value: "array": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: too slow`,
  ]);
});

test("rules are type-checked against the schema: a missing field is refused in cel-go's words", () => {
  const s: JSONSchemaProps = { type: 'object', properties: { replicas: { type: 'integer' }, name: { type: 'string' } } };
  assert.equal(
    ruleCompileError('self.nosuch > 0', s),
    "compilation failed: ERROR: <input>:1:5: undefined field 'nosuch'\n | self.nosuch > 0\n | ....^",
  );
  assert.equal(
    ruleCompileError('self.replicas + self.name == 1', s),
    "compilation failed: ERROR: <input>:1:15: found no matching overload for '_+_' applied to '(int, string)'\n | self.replicas + self.name == 1\n | ..............^",
  );
  assert.match(ruleCompileError("[1, 'a'].size() > 0", s) ?? '', /expected type 'int' but found 'string'/);
  assert.match(ruleCompileError('nosuch', s) ?? '', /undeclared reference to 'nosuch'/);
  // the root always has apiVersion, kind and metadata.name
  assert.equal(ruleCompileError("self.metadata.name != '' && self.kind == 'X'", s, true), undefined);
  // int-or-string is dyn; unknown fields an object preserves are not exposed, as in kube
  const dyn: JSONSchemaProps = {
    type: 'object',
    properties: {
      port: { 'x-kubernetes-int-or-string': true },
      free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'string' } } },
      untyped: { 'x-kubernetes-preserve-unknown-fields': true },
      embedded: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
    },
  };
  assert.equal(
    ruleCompileError("self.port == 80 || self.free.known == 'x' || self.embedded.kind == 'Pod' || self.embedded.metadata.name == 'p'", dyn),
    undefined,
  );
  assert.match(ruleCompileError('self.free.anything == 1', dyn) ?? '', /undefined field 'anything'/);
  assert.match(ruleCompileError('has(self.untyped)', dyn) ?? '', /undefined field 'untyped'/);
  assert.match(ruleCompileError('self.embedded.spec', dyn) ?? '', /undefined field 'spec'/);
  // a root metadata declared without name and generateName is declared for it
  assert.equal(
    ruleCompileError("self.metadata.name != ''", { type: 'object', properties: { metadata: { type: 'object' } } }, true),
    undefined,
  );
});

test('durations, timestamps, maps, sets and escaped property names', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: {
      timeout: { type: 'string', format: 'duration' },
      at: { type: 'string', format: 'date-time' },
      'foo-bar': { type: 'string' },
      'a.b/c': { type: 'integer' },
      if: { type: 'boolean' },
      x__y: { type: 'integer' },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
      ratio: { type: 'number' },
    },
    'x-kubernetes-validations': [
      { rule: "self.timeout <= duration('1h')", message: 'timeout' },
      { rule: "self.at > timestamp('2020-01-01T00:00:00Z')", message: 'at' },
      {
        rule: "self.foo__dash__bar == 'x' && self.a__dot__b__slash__c == 1 && self.__if__ && self.x__underscores__y == 2",
        message: 'escaped',
      },
      { rule: "self.labels.all(k, v, k.startsWith('a') && v != '')", message: 'labels' },
      { rule: "sets.contains(self.tags, ['a'])", message: 'tags' },
      { rule: 'self.ratio * 2.0 > 1.0', message: 'ratio' },
    ],
  };
  for (const r of s['x-kubernetes-validations']!) assert.equal(ruleCompileError(r.rule, s), undefined, r.rule);
  const good = {
    timeout: '30m',
    at: '2024-05-01T00:00:00Z',
    'foo-bar': 'x',
    'a.b/c': 1,
    if: true,
    x__y: 2,
    labels: { ab: 'c' },
    tags: ['b', 'a'],
    ratio: 1,
  };
  assert.deepEqual(validateRules(good, undefined, s, '', false), []);
  const bad = {
    timeout: '2h',
    at: '2019-05-01T00:00:00Z',
    'foo-bar': 'y',
    'a.b/c': 1,
    if: true,
    x__y: 2,
    labels: { b: 'c' },
    tags: ['b'],
    ratio: 0.25,
  };
  assert.deepEqual(
    validateRules(bad, undefined, s, '', false).map((e) => e.detail),
    ['timeout', 'at', 'escaped', 'labels', 'tags', 'ratio'],
  );
  assert.match(
    ruleCompileError("self.timeout == 'x'", s) ?? '',
    /found no matching overload for '_==_' applied to '\(google.protobuf.Duration, string\)'/,
  );
});

test("the static cost estimate: per rule and for the schema, with kube's messages", () => {
  const nested = (maxItems?: number): JSONSchemaProps => ({
    type: 'object',
    properties: {
      list: {
        type: 'array',
        ...(maxItems === undefined ? {} : { maxItems }),
        items: { type: 'string', ...(maxItems === undefined ? {} : { maxLength: 10 }) },
        'x-kubernetes-validations': [{ rule: 'self.all(a, self.all(b, a.startsWith(b)))' }],
      },
    },
  });
  assert.deepEqual(ruleCostErrors(nested(), 'spec.versions[0].schema.openAPIV3Schema').map(errorString), [
    'spec.versions[0].schema.openAPIV3Schema.properties[list].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)',
    'spec.versions[0].schema.openAPIV3Schema.properties[list].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema',
    'spec.versions[0].schema.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)',
  ]);
  assert.deepEqual(ruleCostErrors(nested(100), 'x'), []);
  // one pass over an unbounded list of integers fits
  const once: JSONSchemaProps = { type: 'array', items: { type: 'integer' }, 'x-kubernetes-validations': [{ rule: 'self.all(x, x > 0)' }] };
  assert.deepEqual(ruleCostErrors(once, 'x'), []);
  const cost = ruleCost('self.all(x, x > 0)', once)!;
  assert.ok(cost > 1_000_000 && cost < 10_000_000, String(cost));
  // a rule on the items of an unbounded list runs once per item: the cardinality multiplies it
  const perItem: JSONSchemaProps = {
    type: 'array',
    items: { type: 'string', 'x-kubernetes-validations': [{ rule: "self.matches('^[a-z]+$')" }] },
  };
  assert.match(ruleCostErrors(perItem, 'x').map(errorString)[0] ?? '', /estimated rule cost exceeds budget by factor of more than 100x/);
  const bounded: JSONSchemaProps = { ...perItem, maxItems: 10, items: { ...perItem.items!, maxLength: 64 } };
  assert.deepEqual(ruleCostErrors(bounded, 'x'), []);
});

test('set and map lists: order-free equality and union in rules; lists of objects are typed', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: {
      tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
      ports: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } },
      },
    },
    'x-kubernetes-validations': [
      { rule: 'self.tags == oldSelf.tags', message: 'tags are immutable' },
      { rule: "oldSelf.tags + ['z'] == ['z'] + self.tags || !('z' in self.tags)", message: 'z joins the old tags' },
      { rule: '(oldSelf.ports + self.ports).size() == self.ports.size()', message: 'ports may not be removed' },
      { rule: 'self.ports.all(p, p.port > 0)', message: 'ports are positive' },
    ],
  };
  for (const r of s['x-kubernetes-validations']!) assert.equal(ruleCompileError(r.rule, s), undefined);
  assert.equal(
    ruleCompileError('self.ports.exists(p, p.nosuch == 1)', s)?.split('\n')[0],
    "compilation failed: ERROR: <input>:1:23: undefined field 'nosuch'",
  );
  const old = {
    tags: ['a', 'b'],
    ports: [
      { name: 'http', port: 80 },
      { name: 'x', port: 1 },
    ],
  };
  const messages = (v: unknown) => validateRules(v, old, s, '', true).map(errorString);
  assert.deepEqual(
    messages({
      tags: ['b', 'a'],
      ports: [
        { name: 'x', port: 2 },
        { name: 'http', port: 81 },
        { name: 'y', port: 3 },
      ],
    }),
    [],
  );
  assert.deepEqual(messages({ tags: ['b', 'c'], ports: old.ports }), [': Invalid value: "object": tags are immutable']);
  assert.deepEqual(messages({ tags: ['a', 'b'], ports: [{ name: 'x', port: 1 }] }), [
    ': Invalid value: "object": ports may not be removed',
  ]);
});

test('runtime cost: the object budget runs out with kube message and stops the validation', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: {
      a: { type: 'array', items: { type: 'integer' }, 'x-kubernetes-validations': [{ rule: 'self.all(x, self.all(y, x >= 0))' }] },
      b: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self > 0', message: 'b positive' }] },
    },
  };
  const value = { a: Array.from({ length: 100 }, (_, i) => i), b: -1 };
  // within the default budget both rules run
  assert.deepEqual(validateRules(value, undefined, s, '', false).map(errorString), ['b: Invalid value: "integer": b positive']);
  // 100 x 100 iterations cost more than 20000: the budget runs out on the first rule
  assert.deepEqual(validateRules(value, undefined, s, '', false, 20_000).map(errorString), [
    'a: Invalid value: "array": validation failed due to running out of cost budget, no further validation rules will be run',
  ]);
});

test('runtime errors in kube words; messageExpression gives the message; optionalOldSelf runs on create', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: {
      port: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-validations': [{ rule: 'self + 1 > 0' }] },
      list: {
        type: 'array',
        items: { type: 'integer' },
        'x-kubernetes-validations': [{ rule: 'self[3] > 0', message: 'fourth positive' }],
      },
      name: {
        type: 'string',
        'x-kubernetes-validations': [
          { rule: "self.startsWith('a')", messageExpression: "'name ' + self + ' must start with a'" },
          { rule: 'self.size() < 3', message: 'short', messageExpression: "''" },
        ],
      },
      tier: {
        type: 'string',
        'x-kubernetes-validations': [
          {
            rule: "oldSelf.hasValue() ? self == oldSelf.value() : self != 'gold'",
            message: 'gold only by upgrade',
            optionalOldSelf: true,
          } as never,
        ],
      },
    },
  };
  assert.deepEqual(validateRules({ port: 'http', list: [1], name: 'bcde', tier: 'gold' }, undefined, s, '', false).map(errorString), [
    `port: Invalid value: "string": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: self + 1 > 0`,
    'list: Invalid value: "array": index out of bounds: 3 evaluating rule: fourth positive',
    'name: Invalid value: "string": name bcde must start with a',
    // an empty message falls back to the rule's message
    'name: Invalid value: "string": short',
    'tier: Invalid value: "string": gold only by upgrade',
  ]);
  assert.deepEqual(validateRules({ tier: 'gold' }, { tier: 'gold' }, s, '', true).map(errorString), []);
});

test('transition rules below a map list see the old item with the same keys', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: {
      items: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            v: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self >= oldSelf', message: 'v only grows' }] },
          },
        },
      },
    },
  };
  const old = {
    items: [
      { name: 'a', v: 1 },
      { name: 'b', v: 5 },
    ],
  };
  assert.deepEqual(
    validateRules(
      {
        items: [
          { name: 'b', v: 6 },
          { name: 'a', v: 1 },
          { name: 'c', v: 0 },
        ],
      },
      old,
      s,
      '',
      true,
    ).map(errorString),
    [],
  );
  assert.deepEqual(
    validateRules(
      {
        items: [
          { name: 'b', v: 4 },
          { name: 'a', v: 1 },
        ],
      },
      old,
      s,
      '',
      true,
    ).map(errorString),
    ['items[0].v: Invalid value: "integer": v only grows'],
  );
});

test('a messageExpression is costed like its rule, with kube message', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: { names: { type: 'array', items: { type: 'string' } } },
    'x-kubernetes-validations': [
      { rule: 'self.names.size() < 10', messageExpression: "self.names.map(a, self.names.map(b, a + b).join('')).join(',')" } as never,
    ],
  };
  const errs = ruleCostErrors(s, 'schema').map(errorString);
  assert.equal(
    errs[0],
    'schema.x-kubernetes-validations[0].messageExpression: Forbidden: estimated messageExpression cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)',
  );
});
