import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WorkQueue } from './workqueue.js';

test('a key added while it is being processed runs again afterwards, never concurrently', async () => {
  const q = new WorkQueue();
  const ac = new AbortController();
  let active = 0;
  let maxActive = 0;
  let runs = 0;
  let release!: () => void;
  const firstRunStarted = new Promise<void>((resolve) => {
    release = resolve;
  });
  let unblock!: () => void;
  const blocker = new Promise<void>((resolve) => {
    unblock = resolve;
  });
  const done = q.run(ac.signal, 4, async (key) => {
    assert.equal(key, 'a');
    active++;
    maxActive = Math.max(maxActive, active);
    runs++;
    if (runs === 1) {
      release();
      await blocker;
    }
    active--;
    if (runs === 2) ac.abort();
  });
  q.add('a');
  await firstRunStarted;
  q.add('a');
  q.add('a');
  unblock();
  await done;
  assert.equal(runs, 2);
  assert.equal(maxActive, 1);
});

test('addAfter delivers the key later; the earlier of two delays wins', async () => {
  const q = new WorkQueue();
  const ac = new AbortController();
  const seen: string[] = [];
  const done = q.run(ac.signal, 1, async (key) => {
    seen.push(key);
    if (seen.length === 2) ac.abort();
  });
  q.addAfter('late', 60_000);
  q.addAfter('late', 20);
  q.addAfter('soon', 1);
  await done;
  assert.deepEqual(seen.sort(), ['late', 'soon']);
});

test('run resolves when the signal aborts with nothing queued', async () => {
  const q = new WorkQueue();
  const ac = new AbortController();
  const done = q.run(ac.signal, 3, async () => undefined);
  q.addAfter('never', 60_000);
  ac.abort();
  await done;
  q.add('ignored');
});
