import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { alternate, markdownTable, sliceOf, type Run } from './measure.js';

describe('alternated measurement', () => {
  it('slices cover every operation once, in order', () => {
    for (const [n, rounds] of [
      [10, 4],
      [3, 4],
      [5000, 4],
      [7, 1],
      [0, 3],
    ] as const) {
      const covered: number[] = [];
      for (let round = 0; round < rounds; round++) {
        const [from, to] = sliceOf(n, rounds, round);
        for (let i = from; i < to; i++) covered.push(i);
      }
      assert.deepEqual(
        covered,
        Array.from({ length: n }, (_, i) => i),
        `${n} in ${rounds}`,
      );
    }
  });

  it("runs kapi's slice, then the unmeasured step, then raw etcd's, round by round, and sums each side", async () => {
    const order: string[] = [];
    const run = (latency: number, wallMs: number, errors = 0): Run => ({
      latencies: [latency],
      wallMs,
      errors,
      firstError: errors ? 'e' : undefined,
    });
    const pids = { kapi: process.pid, etcd: process.pid };
    const r = await alternate(
      pids,
      3,
      async (round) => {
        order.push(`kapi ${round}`);
        return run(round, 10, round === 1 ? 1 : 0);
      },
      async (round) => {
        order.push(`raw ${round}`);
        return run(100 + round, 1);
      },
      async (round) => {
        order.push(`between ${round}`);
      },
    );
    assert.deepEqual(order, ['kapi 0', 'between 0', 'raw 0', 'kapi 1', 'between 1', 'raw 1', 'kapi 2', 'between 2', 'raw 2']);
    assert.deepEqual(r.kapi.latencies, [0, 1, 2]);
    assert.equal(r.kapi.wallMs, 30);
    assert.equal(r.kapi.errors, 1);
    assert.equal(r.kapi.firstError, 'e');
    assert.deepEqual(r.raw.latencies, [100, 101, 102]);
    assert.equal(r.raw.wallMs, 3);
    assert.ok(r.kapiCpu.wallMs >= 0 && r.rawCpu.wallMs >= 0);
  });

  it('writes tables as the formatter would (make check compares bench/last-run.md)', () => {
    assert.equal(markdownTable(['a', 'bb'], [['1', '2']]), '| a | bb |\n| - | -- |\n| 1 | 2  |');
  });
});
