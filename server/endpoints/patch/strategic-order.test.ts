import { test } from 'node:test';
import assert from 'node:assert/strict';
import { goSliceStable } from './strategic-order.js';
import { goFormat, goFormatString } from './strategic-go.js';

/** a small deterministic generator, so failures reproduce */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

test('goSliceStable sorts stably with a consistent comparator, below and above the block size', () => {
  const next = random(7);
  for (const size of [0, 1, 2, 19, 20, 21, 39, 40, 41, 77, 160, 333]) {
    const items = Array.from({ length: size }, (_, i) => ({ key: Math.floor(next() * 10), seq: i }));
    const expected = items.slice().sort((a, b) => a.key - b.key); // V8's sort is stable
    const actual = items.slice();
    goSliceStable(actual, (a, b) => a.key < b.key);
    assert.deepEqual(actual, expected, `size ${size}`);
  }
});

test('goSliceStable with an always-true comparator behaves like Go (insertion sort reverses a block)', () => {
  // Go's insertion sort swaps while less(j, j-1) holds: with `true` each item runs to the front
  const items = [1, 2, 3, 4, 5];
  goSliceStable(items, () => true);
  assert.deepEqual(items, [5, 4, 3, 2, 1]);
});

test('goFormat prints values as Go %v does', () => {
  assert.equal(goFormat({ b: [1, 'x', null], a: { c: true } }), 'map[a:map[c:true] b:[1 x <nil>]]');
  assert.equal(goFormat(1.5), '1.5');
  assert.equal(goFormat(0.00001), '1e-05');
  assert.equal(goFormat(1234567.5), '1.2345675e+06');
  assert.equal(goFormat(123456.5), '123456.5');
  assert.equal(goFormat(1e21), '1e+21');
  assert.equal(goFormat(123456789), '123456789');
  assert.equal(goFormatString('merge'), 'merge');
  assert.equal(goFormatString(3), '%!s(int64=3)');
});
