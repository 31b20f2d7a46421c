import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_INVALID_CAUSE_CHARS } from '../status.js';
import { dedupe, fieldErrors, invalidError } from './field-error.js';

test('exact repeats are dropped, errors differing only in detail, field or value are not', () => {
  const valid = ['a', 'b'];
  const list = [
    fieldErrors.notSupported('spec.x', 'c', valid),
    fieldErrors.notSupported('spec.x', 'c', ['a', 'b']),
    fieldErrors.notSupported('spec.x', 'c', ['a']),
    fieldErrors.notSupported('spec.y', 'c', valid),
    fieldErrors.notSupported('spec.x', 'd', valid),
    fieldErrors.required('spec.x'),
    fieldErrors.required('spec.x'),
  ];
  assert.deepEqual(
    dedupe(list).map((e) => [e.field, e.badValue, e.detail]),
    [
      ['spec.x', 'c', 'supported values: "a", "b"'],
      ['spec.x', 'c', 'supported values: "a"'],
      ['spec.y', 'c', 'supported values: "a", "b"'],
      ['spec.x', 'd', 'supported values: "a", "b"'],
      ['spec.x', '', ''],
    ],
  );
});

test('an Invalid Status carries every error up to its bound, then counts the rest', () => {
  const few = invalidError('example.com', 'Widget', 'w', [fieldErrors.required('spec.a'), fieldErrors.required('spec.b')]);
  assert.equal(few.message, 'Widget.example.com "w" is invalid: [spec.a: Required value, spec.b: Required value]');
  assert.equal(few.details?.causes?.length, 2);

  // 60k values outside an enum of 2000: kube-apiserver would list 1.2 GB of errors
  const valid = Array.from({ length: 2000 }, (_v, i) => `e${i}`);
  const errs = Array.from({ length: 60_000 }, (_v, i) => fieldErrors.notSupported(`spec.list[${i}]`, `x${i}`, valid));
  const many = invalidError('example.com', 'Widget', 'w', errs);
  const causes = many.details?.causes ?? [];
  const chars = causes.reduce((n, c) => n + (c.field?.length ?? 0) + (c.message?.length ?? 0), 0);
  assert.ok(
    causes.length > 100 && causes.length < errs.length && chars <= MAX_INVALID_CAUSE_CHARS,
    `${causes.length} causes, ${chars} characters`,
  );
  assert.ok(many.message.endsWith(`, and ${errs.length - causes.length} more errors]`), many.message.slice(-80));
  assert.equal(causes[0]?.message, `Unsupported value: "x0": supported values: ${valid.map((v) => `"${v}"`).join(', ')}`);
});
