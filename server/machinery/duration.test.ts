import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration, formatDuration, DurationError } from './duration.js';

test('parses Go durations into milliseconds', () => {
  assert.equal(parseDuration('5m'), 300_000);
  assert.equal(parseDuration('30s'), 30_000);
  assert.equal(parseDuration('1h0m0s'), 3_600_000);
  assert.equal(parseDuration('1h30m'), 5_400_000);
  assert.equal(parseDuration('1.5h'), 5_400_000);
  assert.equal(parseDuration('300ms'), 300);
  assert.equal(parseDuration('2us'), 0.002);
  assert.equal(parseDuration('2µs'), 0.002);
  assert.equal(parseDuration('1500ns'), 0.0015);
  assert.equal(parseDuration('.5s'), 500);
  assert.equal(parseDuration('1.s'), 1000);
  assert.equal(parseDuration('-2s'), -2000);
  assert.equal(parseDuration('+2s'), 2000);
});

test('a bare zero is a duration, and zero with a unit too', () => {
  assert.equal(parseDuration('0'), 0);
  assert.equal(parseDuration('0s'), 0);
  assert.equal(parseDuration('-0'), 0);
});

test('rejects what Go rejects', () => {
  for (const bad of ['', '5', '1x', 'm', '.s', '1h-5m', 's5', '5 m', '1.2.3s', '-', '+']) {
    assert.throws(() => parseDuration(bad), DurationError, bad);
  }
  assert.throws(() => parseDuration('5'), /missing unit in duration "5"/);
  assert.throws(() => parseDuration('5d'), /unknown unit "d" in duration "5d"/);
});

test('formats like Go Duration.String()', () => {
  assert.equal(formatDuration(0), '0s');
  assert.equal(formatDuration(300_000), '5m0s');
  assert.equal(formatDuration(3_600_000), '1h0m0s');
  assert.equal(formatDuration(5_400_000), '1h30m0s');
  assert.equal(formatDuration(1500), '1.5s');
  assert.equal(formatDuration(60_000), '1m0s');
  assert.equal(formatDuration(300), '300ms');
  assert.equal(formatDuration(0.002), '2µs');
  assert.equal(formatDuration(0.0015), '1.5µs');
  assert.equal(formatDuration(-2000), '-2s');
});

test('format and parse round-trip', () => {
  for (const ms of [1, 999, 1000, 61_500, 3_723_000, 86_400_000]) {
    assert.equal(parseDuration(formatDuration(ms)), ms);
  }
});
