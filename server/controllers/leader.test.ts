import assert from 'node:assert/strict';
import { after, afterEach, before, test } from 'node:test';
import { createEtcdClient } from '../../storage/etcd/client.js';
import type { EtcdClient } from '../../storage/etcd/types.js';
import { startEtcd, type EtcdProcess } from '../../storage/testing/etcd-server.js';
import { readLeader, runLeaderElected } from './leader.js';
import { silentLogger } from './types.js';
import { sleep } from './util.js';

let etcd: EtcdProcess;
const clients: EtcdClient[] = [];
/** every contender a test started, stopped after it even when an assertion failed */
const running: Array<{ stop(): Promise<void> }> = [];

before(async () => {
  etcd = await startEtcd();
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.stop()));
});

after(async () => {
  for (const c of clients) c.close();
  await etcd.stop();
});

function newClient(): EtcdClient {
  const c = createEtcdClient({ endpoints: [etcd.endpoint] });
  clients.push(c);
  return c;
}

/** one contender: records what its work saw; `stop()` ends contention and awaits it */
function contender(name: string, identity: string, journal: string[], client = newClient()) {
  const ac = new AbortController();
  let becameLeader!: () => void;
  const leading = new Promise<void>((resolve) => {
    becameLeader = resolve;
  });
  let lostLeadership!: () => void;
  const lost = new Promise<void>((resolve) => {
    lostLeadership = resolve;
  });
  const done = runLeaderElected(
    name,
    { etcd: client, prefix: '/registry', identity, signal: ac.signal, leaseDurationSeconds: 3, retryPeriodMs: 200, log: silentLogger },
    async (signal) => {
      journal.push(`${identity} start`);
      becameLeader();
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      journal.push(`${identity} end`);
      lostLeadership();
    },
  );
  const handle = {
    identity,
    client,
    leading,
    lost,
    async stop() {
      ac.abort();
      await done;
    },
  };
  running.push(handle);
  return handle;
}

/** the journal must never show two leaders working at once */
function assertNoOverlap(journal: string[]): void {
  let active: string | null = null;
  for (const entry of journal) {
    const [who, what] = entry.split(' ') as [string, string];
    if (what === 'start') {
      assert.equal(active, null, `${who} started while ${active} was leading: ${journal.join(', ')}`);
      active = who;
    } else {
      assert.equal(active, who, `unexpected ${entry}: ${journal.join(', ')}`);
      active = null;
    }
  }
}

test('two contenders: exactly one leads, keeps leading past its lease, and a clean stop hands over', async () => {
  const journal: string[] = [];
  const a = contender('ctl-handover', 'a', journal);
  const b = contender('ctl-handover', 'b', journal);
  const first = await Promise.race([a.leading.then(() => a), b.leading.then(() => b)]);
  const second = first === a ? b : a;
  assert.equal((await readLeader(first.client, '/registry', 'ctl-handover'))?.holderIdentity, first.identity);

  // several lease durations later the leader still holds it: the keepalive works, and the
  // other contender never got in
  await sleep(7_000);
  assert.deepEqual(journal, [`${first.identity} start`]);
  assert.equal((await readLeader(first.client, '/registry', 'ctl-handover'))?.holderIdentity, first.identity);

  await first.stop();
  await second.leading;
  assert.deepEqual(journal, [`${first.identity} start`, `${first.identity} end`, `${second.identity} start`]);
  assert.equal((await readLeader(second.client, '/registry', 'ctl-handover'))?.holderIdentity, second.identity);
  await second.stop();
  assertNoOverlap(journal);
  assert.equal(await readLeader(second.client, '/registry', 'ctl-handover'), null, 'a clean stop releases the key');
});

test('a leader cut off from etcd steps down and another contender takes over once its lease expires', async () => {
  const journal: string[] = [];
  const a = contender('ctl-crash', 'a', journal);
  await a.leading;
  const b = contender('ctl-crash', 'b', journal);
  // a's etcd connection dies: it can no longer renew
  a.client.close();
  await a.lost;
  await b.leading;
  assertNoOverlap(journal);
  assert.deepEqual(journal, ['a start', 'a end', 'b start']);
  assert.equal((await readLeader(b.client, '/registry', 'ctl-crash'))?.holderIdentity, 'b');
  await a.stop();
  await b.stop();
});

test('separate controller names elect independently', async () => {
  const journal: string[] = [];
  const x = contender('ctl-x', 'a', journal);
  const y = contender('ctl-y', 'a', journal);
  await Promise.all([x.leading, y.leading]);
  assert.equal((await readLeader(x.client, '/registry', 'ctl-x'))?.holderIdentity, 'a');
  assert.equal((await readLeader(y.client, '/registry', 'ctl-y'))?.holderIdentity, 'a');
  await x.stop();
  await y.stop();
});
