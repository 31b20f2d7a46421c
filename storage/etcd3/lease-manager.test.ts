// The lease manager against a real etcd: one lease for writes within the reuse window, a
// fresh one after it, the window capped at 5% of the TTL, concurrent callers sharing one grant.
// The manager's clock is moved by hand, so nothing here waits for time to pass.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startEtcd, type EtcdProcess } from '../testing/etcd-server.js';
import { createEtcdClient } from '../etcd/client.js';
import type { EtcdClient, LeaseGrant } from '../etcd/types.js';
import { LeaseManager } from './lease-manager.js';

let etcd: EtcdProcess;
let client: EtcdClient;

before(async () => {
  etcd = await startEtcd();
  client = createEtcdClient({ endpoints: [etcd.endpoint] });
});

after(async () => {
  client.close();
  await etcd.stop();
});

/** the real client, counting the grants that reach etcd */
function countingGrants(): { client: EtcdClient; grants: LeaseGrant[] } {
  const grants: LeaseGrant[] = [];
  const counting: EtcdClient = Object.create(client) as EtcdClient;
  counting.leaseGrant = async (ttl: number) => {
    const g = await client.leaseGrant(ttl);
    grants.push(g);
    return g;
  };
  return { client: counting, grants };
}

test('one lease serves the writes within the reuse window; the next one after it is new', async () => {
  const { client: c, grants } = countingGrants();
  let now = 1_000_000;
  const leases = new LeaseManager(c, { reuseDurationSeconds: 60, now: () => now });

  const first = await leases.getLease(3600);
  assert.equal(grants.length, 1);
  // granted for the TTL plus the window (min(60 s, 5% of 3600 s = 180 s))
  assert.equal(grants[0]!.ttlSeconds, 3660);
  assert.equal(await client.leaseKeepAliveOnce(first), 3660, 'etcd holds the lease with TTL + window');

  now += 30_000;
  assert.equal(await leases.getLease(3600), first, 'reused 30 s later');
  now += 29_000;
  assert.equal(await leases.getLease(3600), first, 'reused 59 s later');
  assert.equal(grants.length, 1);

  // 61 s after the grant the old lease would keep a new object for less than the TTL
  now += 2_000;
  const second = await leases.getLease(3600);
  assert.notEqual(second, first);
  assert.equal(grants.length, 2);
  assert.equal(await leases.getLease(3600), second);
});

test('the reuse window is at most 5% of the TTL: a short TTL gets a lease per write', async () => {
  const { client: c, grants } = countingGrants();
  let now = 5_000_000;
  const leases = new LeaseManager(c, { reuseDurationSeconds: 60, now: () => now });
  assert.equal(leases.reuseWindowSeconds(3600), 60);
  assert.equal(leases.reuseWindowSeconds(100), 5);
  assert.equal(leases.reuseWindowSeconds(3), 0);

  const a = await leases.getLease(100);
  assert.equal(grants[0]!.ttlSeconds, 105);
  now += 4_000;
  assert.equal(await leases.getLease(100), a, 'within the 5 s window');
  now += 2_000;
  assert.notEqual(await leases.getLease(100), a, 'past the 5 s window');

  const x = await leases.getLease(3);
  const y = await leases.getLease(3);
  assert.notEqual(x, y, 'no window: every write of a 3 s TTL has its own lease');
  assert.equal(grants.at(-1)!.ttlSeconds, 3);
});

test('a lease is not reused for a longer TTL than it can keep, nor for one it would far outlive', async () => {
  const { client: c, grants } = countingGrants();
  const now = 9_000_000;
  const leases = new LeaseManager(c, { reuseDurationSeconds: 60, now: () => now });
  const short = await leases.getLease(600); // 600 + 30
  const long = await leases.getLease(3600);
  assert.notEqual(long, short, 'a 630 s lease cannot keep an object for 3600 s');
  const shortAgain = await leases.getLease(600);
  assert.notEqual(shortAgain, long, 'a 3660 s lease would keep a 600 s object far too long');
  assert.equal(grants.length, 3);
});

test('concurrent writers share one grant', async () => {
  const { client: c, grants } = countingGrants();
  const leases = new LeaseManager(c, { reuseDurationSeconds: 60 });
  const ids = await Promise.all(Array.from({ length: 50 }, () => leases.getLease(3600)));
  assert.equal(grants.length, 1);
  assert.equal(new Set(ids).size, 1);
});

test('a lease carries at most maxObjectsPerLease writes', async () => {
  const { client: c, grants } = countingGrants();
  const leases = new LeaseManager(c, { reuseDurationSeconds: 60, maxObjectsPerLease: 3, now: () => 42_000 });
  const ids = [];
  for (let i = 0; i < 7; i++) ids.push(await leases.getLease(3600));
  assert.equal(grants.length, 3);
  assert.deepEqual(
    ids.map((id) => grants.findIndex((g) => g.id === id)),
    [0, 0, 0, 1, 1, 1, 2],
  );
});

test('a forgotten lease is not handed out again; a failed grant fails only its own caller', async () => {
  const { client: c, grants } = countingGrants();
  const leases = new LeaseManager(c, { reuseDurationSeconds: 60, now: () => 77_000 });
  const a = await leases.getLease(3600);
  leases.forget(a);
  const b = await leases.getLease(3600);
  assert.notEqual(b, a);
  assert.equal(grants.length, 2);

  // etcd refuses a TTL beyond its maximum (9e9 s): that caller fails, the next one is served
  await assert.rejects(leases.getLease(1e10));
  assert.equal(await leases.getLease(3600), b);
});
