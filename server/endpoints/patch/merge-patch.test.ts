import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Json } from '../../machinery/json-patch.js';
import { applyMergePatch, MergePatchError } from './merge-patch.js';

// The examples of RFC 7386 appendix A (original, patch, result), except the ones whose patch
// is not an object or array: the library kube-apiserver uses refuses those.
const vectors: [Json, Json, Json][] = [
  [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
  [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
  [{ a: 'b' }, { a: null }, {}],
  [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
  [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
  [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
  [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
  [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
  [
    ['a', 'b'],
    ['c', 'd'],
    ['c', 'd'],
  ],
  [{ a: 'b' }, ['c'], ['c']],
  [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  [[1, 2], { a: 'b', c: null }, { a: 'b' }],
  [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
];

test('RFC 7386 appendix A', () => {
  for (const [original, patch, result] of vectors) {
    assert.deepEqual(applyMergePatch(original, patch), result, JSON.stringify({ original, patch }));
  }
});

test('scalar and null patches are refused', () => {
  assert.throws(() => applyMergePatch({ a: 'foo' }, null), MergePatchError);
  assert.throws(() => applyMergePatch({ a: 'foo' }, 'bar'), MergePatchError);
});

test('inputs are not modified', () => {
  const doc: Json = { a: { b: 1 } };
  const patch: Json = { a: { c: 2 } };
  assert.deepEqual(applyMergePatch(doc, patch), { a: { b: 1, c: 2 } });
  assert.deepEqual(doc, { a: { b: 1 } });
  assert.deepEqual(patch, { a: { c: 2 } });
});

test('labels are set and removed like kubectl label does', () => {
  const pod: Json = { metadata: { name: 'p', labels: { app: 'web', tier: 'x' } }, spec: { containers: [{ name: 'c' }] } };
  const out = applyMergePatch(pod, { metadata: { labels: { tier: null, env: 'prod' } } });
  assert.deepEqual(out, { metadata: { name: 'p', labels: { app: 'web', env: 'prod' } }, spec: { containers: [{ name: 'c' }] } });
});
