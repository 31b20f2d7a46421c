import { test } from 'node:test';
import assert from 'node:assert/strict';

import type { Watch, WatchEvent } from '../interface.js';
import { CatchUpWatch } from './catch-up-watch.js';

const ev = (type: WatchEvent['type'], name: string, rv: number): WatchEvent => ({
  type,
  object: { metadata: { name, resourceVersion: String(rv) } },
});

function arrayWatch(events: WatchEvent[]): Watch & { stopped: boolean } {
  let i = 0;
  const w = {
    stopped: false,
    stop() {
      w.stopped = true;
    },
    [Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
      return {
        next: async () => (w.stopped || i >= events.length ? { done: true, value: undefined } : { done: false, value: events[i++]! }),
      };
    },
  };
  return w;
}

async function drain(w: Watch): Promise<string[]> {
  const out: string[] = [];
  for await (const e of w) out.push(`${e.type} ${e.object.metadata.name}@${e.object.metadata.resourceVersion}`);
  return out;
}

test('hands over at a revision boundary: each event once, in order', async () => {
  // the store has 5, 6 (two keys), 8, 9; the cache's history reaches back to revision 6
  const store = arrayWatch([ev('ADDED', 'a', 5), ev('ADDED', 'b', 6), ev('ADDED', 'c', 6), ev('MODIFIED', 'a', 8), ev('DELETED', 'b', 9)]);
  const cacheFrom: number[] = [];
  const w = new CatchUpWatch(store, 4, (from) => {
    if (from < 6) return undefined;
    cacheFrom.push(from);
    // the cache replays what follows `from`
    return arrayWatch([ev('MODIFIED', 'a', 8), ev('DELETED', 'b', 9), ev('ADDED', 'd', 10)]);
  });
  assert.deepEqual(await drain(w), ['ADDED a@5', 'ADDED b@6', 'ADDED c@6', 'MODIFIED a@8', 'DELETED b@9', 'ADDED d@10']);
  assert.deepEqual(cacheFrom, [6]);
  assert.equal(store.stopped, true);
  assert.equal(w.servedByCache, true);
});

test('store bookmarks are not passed on (etcd 3.4 may send them ahead of events); ERROR passes through', async () => {
  // the bookmark at 7 overtook the event at 6, as etcd 3.4's progress answer can
  const store = arrayWatch([ev('ADDED', 'w', 4), ev('BOOKMARK', '', 7), ev('ADDED', 'x', 6), ev('ADDED', 'y', 8)]);
  const from: number[] = [];
  const w = new CatchUpWatch(store, 3, (rev) => {
    from.push(rev);
    return rev >= 6 ? arrayWatch([ev('ADDED', 'y', 8)]) : undefined;
  });
  assert.deepEqual(await drain(w), ['ADDED w@4', 'ADDED x@6', 'ADDED y@8']);
  // hand-over tried before 4 (at 3), at the bookmark (after the last event passed on, 4),
  // before 6 (4 again): the cache cannot; before 8 (at 6): it can
  assert.deepEqual(from, [3, 4, 4, 6]);
  const expired = arrayWatch([{ type: 'ERROR', object: { metadata: {}, kind: 'Status', code: 410 } }]);
  const w2 = new CatchUpWatch(expired, 3, () => arrayWatch([]));
  assert.deepEqual(await drain(w2), ['ERROR undefined@undefined']);
});

test('a store bookmark hands over at the last event passed on, not at the bookmark', async () => {
  const store = arrayWatch([ev('ADDED', 'a', 5), ev('BOOKMARK', '', 9), ev('ADDED', 'b', 7), ev('ADDED', 'c', 9)]);
  const from: number[] = [];
  const w = new CatchUpWatch(store, 3, (rev) => {
    from.push(rev);
    // the cache's history starts at 5: it replays what follows 5, b and c
    return rev >= 5 ? arrayWatch([ev('ADDED', 'b', 7), ev('ADDED', 'c', 9), ev('BOOKMARK', '', 9)]) : undefined;
  });
  assert.deepEqual(await drain(w), ['ADDED a@5', 'ADDED b@7', 'ADDED c@9', 'BOOKMARK @9']);
  assert.deepEqual(from, [3, 5]);
  assert.equal(store.stopped, true);
  assert.equal(w.servedByCache, true);
});
