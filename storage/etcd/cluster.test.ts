// The client against a three-member etcd cluster: when the member it talks to dies, calls
// and the shared watch stream move to another member, and watchers miss nothing.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { eventually, startCluster } from '../testing/etcd-cluster.js';
import { processAlive } from '../testing/processes.js';
import { createEtcdClient } from './client.js';
import { prefixEnd, type EtcdEvent, type WatchMessage } from './types.js';

async function until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function metric(endpoint: string, name: string): Promise<number> {
  const text = await (await fetch(`${endpoint}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`etcd exposes no metric ${name}`);
  return Number(line.split(' ')[1]);
}

test('three members: the member in use dies; calls and watches continue on the others', async (t) => {
  const members = await startCluster(3);
  const client = createEtcdClient({ endpoints: members.map((m) => m.endpoint) });
  const alive = [...members];
  try {
    // members serve clients once the cluster has elected its first leader
    assert.equal((await eventually(() => client.memberList())).length, 3);
    const prefix = Buffer.from('/ha/');
    const start = (await client.put(Buffer.from('/ha/k0'), Buffer.from('0'))).header.revision;
    const msgs: WatchMessage[] = [];
    client.watch({ key: prefix, rangeEnd: prefixEnd(prefix), startRevision: start, prevKv: true }, (m) => msgs.push(m));
    const events = () => msgs.flatMap((m) => (m.kind === 'events' ? m.events : []));
    for (let i = 1; i < 5; i++) await client.put(Buffer.from(`/ha/k${i}`), Buffer.from(String(i)));
    await until('events before the kill', () => events().length === 5);

    // kill the member that carries the client's watch stream (and its calls)
    const streams = await Promise.all(members.map((m) => metric(m.endpoint, 'etcd_debugging_mvcc_watch_stream_total')));
    assert.deepEqual([...streams].sort(), [0, 0, 1]);
    const victim = members[streams.indexOf(1)]!;
    await victim.kill();
    alive.splice(alive.indexOf(victim), 1);
    // writes with a compare are safe to repeat: an applied one fails its compare
    for (let i = 5; i < 10; i++) {
      const key = Buffer.from(`/ha/k${i}`);
      await eventually(() =>
        client.txn({
          compare: [{ key, target: 'VERSION', result: 'EQUAL', value: 0 }],
          success: [{ put: { key, value: Buffer.from(String(i)) } }],
          failure: [],
        }),
      );
    }
    assert.equal((await client.range({ key: prefix, rangeEnd: prefixEnd(prefix), countOnly: true })).count, 10);
    await until('events after the kill', () => events().length === 10);
    const seen = events().map((e: EtcdEvent) => e.kv.key.toString());
    assert.deepEqual(
      seen,
      Array.from({ length: 10 }, (_, i) => `/ha/k${i}`),
    );
    const revs = events().map((e) => e.kv.modRevision);
    assert.deepEqual(
      revs,
      [...revs].sort((a, b) => a - b),
    );
    assert.equal(new Set(revs).size, revs.length);
    assert.ok(msgs.every((m) => m.kind !== 'canceled'));
  } finally {
    client.close();
    for (const m of alive) {
      // a member should die only when killed here: say why one did (its last words)
      if (!processAlive(m.pid)) t.diagnostic(`member ${m.endpoint} exited by itself: ${m.stderr}`);
      await m.stop();
    }
    for (const m of members) if (!alive.includes(m)) rmSync(m.dataDir, { recursive: true, force: true });
  }
});
