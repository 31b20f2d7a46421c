import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startEtcd } from '../testing/etcd-server.js';
import { createEtcdClient, isCompactedError } from '../etcd/client.js';
import { compactKey, compactNow, startCompactor, type CompactionRound } from './compactor.js';

async function until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("two compactors on one etcd: one compaction per round, to the previous round's revision", async () => {
  const etcd = await startEtcd();
  const a = createEtcdClient({ endpoints: [etcd.endpoint] });
  const b = createEtcdClient({ endpoints: [etcd.endpoint] });
  const rounds: Array<CompactionRound & { who: string }> = [];
  const errors: unknown[] = [];
  const compactors: Array<{ stop(): Promise<void> }> = [];
  try {
    const firstRev = (await a.put(Buffer.from('/registry/x'), Buffer.from('0'))).header.revision;
    let writing = true;
    const writer = (async () => {
      for (let i = 1; writing; i++) {
        await a.put(Buffer.from('/registry/x'), Buffer.from(String(i)));
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    for (const [who, client] of [
      ['a', a],
      ['b', b],
    ] as const) {
      compactors.push(
        startCompactor(client, {
          prefix: '/registry',
          intervalMs: 150,
          onRound: (r) => rounds.push({ ...r, who }),
          onError: (err) => errors.push(err),
        }),
      );
    }
    const compactions = () => rounds.flatMap((r) => (r.won && r.compacted > 0 ? [r] : []));
    await until('three compactions', () => compactions().length >= 3);
    for (const c of compactors) await c.stop();
    writing = false;
    await writer;

    assert.deepEqual(errors, []);
    const wins = rounds.filter((r) => r.won);
    // every round (a version of the shared key) has exactly one winner
    const versions = wins.map((r) => r.version);
    assert.equal(new Set(versions).size, versions.length);
    const key = (await a.range({ key: compactKey('/registry') })).kvs[0]!;
    assert.equal(key.version, wins.length);
    assert.equal(key.key.toString(), '/registry/compact_rev_key');
    // the other replica saw the rounds it lost
    assert.ok(rounds.some((r) => !r.won));
    // each compaction goes to a newer revision, recorded one round earlier
    const revs = compactions().map((r) => r.compacted);
    assert.deepEqual(
      revs,
      [...revs].sort((x, y) => x - y),
    );
    assert.equal(new Set(revs).size, revs.length);
    for (const r of compactions()) assert.ok(r.compacted < r.revision);
    await assert.rejects(a.range({ key: Buffer.from('/registry/x'), revision: firstRev }), (err) => isCompactedError(err));
  } finally {
    for (const c of compactors) await c.stop();
    a.close();
    b.close();
    await etcd.stop();
  }
});

test('compactNow compacts to the current revision and tolerates a repeat', async () => {
  const etcd = await startEtcd();
  const client = createEtcdClient({ endpoints: [etcd.endpoint] });
  try {
    const first = (await client.put(Buffer.from('/registry/y'), Buffer.from('1'))).header.revision;
    await client.put(Buffer.from('/registry/y'), Buffer.from('2'));
    const rev = await compactNow(client, '/registry');
    assert.ok(rev > first);
    assert.equal(await compactNow(client, '/registry'), rev);
    await assert.rejects(client.range({ key: Buffer.from('/registry/y'), revision: first }), (err) => isCompactedError(err));
    assert.equal((await client.range({ key: Buffer.from('/registry/y'), revision: rev })).kvs[0]!.value.toString(), '2');
  } finally {
    client.close();
    await etcd.stop();
  }
});
