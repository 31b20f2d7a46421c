import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatDuration, formatMicroTime, formatTime, parseDuration, parseTimestamp } from './times.js';

describe('protobuf times', () => {
  it('parses RFC 3339 with offsets and fractions; formats Time in UTC seconds and MicroTime in microseconds', () => {
    assert.deepEqual(parseTimestamp('1970-01-01T00:00:00Z'), { seconds: 0, nanos: 0 });
    assert.deepEqual(parseTimestamp('2024-02-29T23:59:59.5-01:30'), { seconds: 1709256599, nanos: 500000000 });
    assert.deepEqual(parseTimestamp('0001-01-01T00:00:00Z'), { seconds: -62135596800, nanos: 0 });
    assert.equal(formatTime(1709256599), '2024-03-01T01:29:59Z');
    assert.equal(formatTime(-62135596800), '0001-01-01T00:00:00Z');
    assert.equal(formatMicroTime(1709256599, 123456789), '2024-03-01T01:29:59.123456Z');
    assert.equal(formatMicroTime(0, 0), '1970-01-01T00:00:00.000000Z');
    assert.throws(() => parseTimestamp('2024-01-01 00:00:00'), /RFC 3339/);
  });

  it("formats and parses durations as Go's time.Duration does", () => {
    const cases: [bigint, string][] = [
      [0n, '0s'],
      [1n, '1ns'],
      [1500n, '1.5µs'],
      [100_000_000n, '100ms'],
      [1_500_000_000n, '1.5s'],
      [90_000_000_000n, '1m30s'],
      [3600_000_000_000n, '1h0m0s'],
      [129600_000_000_000n, '36h0m0s'],
      [-2_000_000_000n, '-2s'],
      [3723_000_000_001n, '1h2m3.000000001s'],
    ];
    for (const [nanos, text] of cases) {
      assert.equal(formatDuration(nanos), text);
      assert.equal(parseDuration(text), nanos);
    }
    assert.equal(parseDuration('1.5h'), 5400_000_000_000n);
    assert.equal(parseDuration('.5s'), 500_000_000n);
    assert.equal(parseDuration('1h30m'), 5400_000_000_000n);
    assert.equal(parseDuration('2us'), 2000n);
    assert.equal(parseDuration('0'), 0n);
    assert.throws(() => parseDuration(''), /invalid duration/);
    assert.throws(() => parseDuration('1x'), /invalid duration/);
    assert.throws(() => parseDuration('5'), /invalid duration/);
  });
});
