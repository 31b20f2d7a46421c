import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RevisionProbe } from './revision-probe.js';

/** a revision source whose answers the test releases by hand */
function manualSource() {
  const pending: Array<(rev: number) => void> = [];
  let sent = 0;
  return {
    read: () => {
      sent++;
      return new Promise<number>((resolve) => pending.push(resolve));
    },
    answer: (rev: number) => pending.shift()!(rev),
    get sent() {
      return sent;
    },
  };
}

const tick = () => new Promise((r) => setImmediate(r));

test('concurrent askers share at most two probes', async () => {
  const src = manualSource();
  const probe = new RevisionProbe(src.read);
  const first = probe.current();
  const later = Array.from({ length: 50 }, () => probe.current());
  assert.equal(src.sent, 1, 'askers arriving while a probe is out wait for the next one');
  src.answer(10);
  assert.equal(await first, 10);
  await tick();
  assert.equal(src.sent, 2);
  src.answer(12);
  assert.deepEqual(new Set(await Promise.all(later)), new Set([12]));
});

test('an asker never gets the answer of a probe sent before it asked', async () => {
  const src = manualSource();
  const probe = new RevisionProbe(src.read);
  const early = probe.current();
  // a write is acknowledged at revision 11 while the first probe is on its way
  const late = probe.current();
  src.answer(10);
  assert.equal(await early, 10);
  await tick();
  src.answer(11);
  assert.equal(await late, 11);
});

test('a failed probe fails its askers only; the next asker sends a new one', async () => {
  let calls = 0;
  const probe = new RevisionProbe(async () => {
    calls++;
    if (calls === 1) throw new Error('etcd unavailable');
    return 7;
  });
  await assert.rejects(probe.current(), /unavailable/);
  assert.equal(await probe.current(), 7);
  assert.equal(calls, 2);
});

test('askers queued behind a failed probe get a fresh answer', async () => {
  let calls = 0;
  let fail!: (err: Error) => void;
  const probe = new RevisionProbe(() => {
    calls++;
    if (calls === 1) return new Promise<number>((_, reject) => (fail = reject));
    return Promise.resolve(20);
  });
  const first = probe.current();
  const queued = probe.current();
  fail(new Error('timeout'));
  await assert.rejects(first, /timeout/);
  assert.equal(await queued, 20);
});
