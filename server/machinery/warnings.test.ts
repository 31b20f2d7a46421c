import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addWarning, addWarnings, truncatedWarning, WARNING_ITEM_RUNES, WARNING_TOTAL_RUNES, warningsTruncated } from './warnings.js';

test('each text once, empty texts never', () => {
  const w: string[] = [];
  addWarnings(w, ['a', 'b', 'a', '', 'b', 'c']);
  assert.deepEqual(w, ['a', 'b', 'c']);
  assert.equal(warningsTruncated(w), false);
});

test('past the total every text is cut, and texts are taken until the cut ones fill it', () => {
  const w: string[] = [];
  const long = (i: number): string => `${i}:${'x'.repeat(998)}`;
  // four 1000-character texts fit (4000); the fifth goes past the total
  for (let i = 0; i < 4; i++) assert.equal(addWarning(w, long(i)), true);
  assert.equal(warningsTruncated(w), false);
  assert.equal(addWarning(w, long(4)), true);
  assert.equal(warningsTruncated(w), true);
  // cut to 256 each: 5 * 256 = 1280 of 4096; 11 more fill it (16 * 256 = 4096)
  let taken = 5;
  for (let i = 5; i < 100; i++) if (addWarning(w, long(i))) taken++;
  assert.equal(taken, WARNING_TOTAL_RUNES / WARNING_ITEM_RUNES);
  assert.equal(w.length, taken);
  assert.equal(truncatedWarning(long(0)).length, WARNING_ITEM_RUNES);
  // a full recorder takes nothing more
  assert.equal(addWarning(w, 'short'), false);
});

test('a flood of short texts stops at the total', () => {
  const w: string[] = [];
  addWarnings(
    w,
    Array.from({ length: 100_000 }, (_v, i) => `line ${i}: key "a" already set in map`),
  );
  const runes = w.reduce((n, t) => n + t.length, 0);
  assert.ok(runes > WARNING_TOTAL_RUNES && runes < WARNING_TOTAL_RUNES + 100, String(runes));
});

test('runes, not UTF-16 units: a text is cut after its 256th character', () => {
  const text = '😀'.repeat(300);
  assert.equal([...truncatedWarning(text)].length, WARNING_ITEM_RUNES);
  assert.equal(truncatedWarning('😀'.repeat(200)), '😀'.repeat(200));
  const w: string[] = [];
  addWarning(w, '😀'.repeat(4096));
  assert.equal(warningsTruncated(w), false);
  addWarning(w, '😀');
  assert.equal(warningsTruncated(w), true);
});
