import assert from 'node:assert/strict';
import { after, afterEach, before, test } from 'node:test';
import type { RESTResource, ResourceResolver } from '../registry/rest.js';
import { leaderLeaseName, readLeader, runLeaderElected, type LeaderElectionDeps } from './leader.js';
import { LeaseClient, type Lease } from './leases.js';
import { eventually, startHarness, testContext, type Harness, type Replica } from './testing/harness.js';
import { silentLogger } from './types.js';
import { sleep } from './util.js';

let h: Harness;
/** every contender a test started, stopped after it even when an assertion failed */
const running: Array<{ stop(): Promise<void> }> = [];

before(async () => {
  h = await startHarness();
  await h.main
    .rest('', 'v1', 'namespaces')
    .create(testContext(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system' } });
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.stop()));
});

after(async () => {
  await h.close();
});

const microTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

function leases(): LeaseClient {
  return new LeaseClient(h.main.registry, 'test');
}

async function lease(name: string): Promise<Lease> {
  return leases().get(leaderLeaseName(name));
}

/**
 * A resolver whose coordination calls can be held back: while paused, every Lease request
 * waits (as from a replica cut off from the cluster, or frozen) and goes on after `resume()`.
 * Watches are left alone: a partitioned replica simply stops renewing.
 */
function pausable(resolver: ResourceResolver) {
  let paused: Promise<void> | null = null;
  let resume = () => undefined as void;
  const gate = async () => {
    while (paused) await paused;
  };
  const wrap = (r: RESTResource): RESTResource => ({
    info: r.info,
    subresource: r.subresource,
    get: async (...a) => (await gate(), r.get(...a)),
    list: async (...a) => (await gate(), r.list(...a)),
    watch: (...a) => r.watch(...a),
    create: async (...a) => (await gate(), r.create(...a)),
    update: async (...a) => (await gate(), r.update(...a)),
    delete: async (...a) => (await gate(), r.delete(...a)),
    deleteCollection: async (...a) => (await gate(), r.deleteCollection(...a)),
  });
  return {
    resolver: {
      lookup(group, version, resource, subresource) {
        const r = resolver.lookup(group, version, resource, subresource);
        return r && group === 'coordination.k8s.io' ? wrap(r) : r;
      },
      all: () => resolver.all(),
    } satisfies ResourceResolver,
    pause() {
      paused ??= new Promise<void>((r) => {
        resume = () => {
          paused = null;
          r();
        };
      });
    },
    resume: () => resume(),
  };
}

type Journal = string[];

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** one contender: its work records start and end in the journal; `stop()` ends contention.
 *  A 6 s lease gives a 4 s renew deadline: more than an event loop stalls on a loaded
 *  two-core machine, so a handover happens only where a test causes one */
function contender(name: string, identity: string, journal: Journal, opts: Partial<LeaderElectionDeps> & { replica?: Replica } = {}) {
  const replica = opts.replica ?? h.replica();
  const net = pausable(replica.registry);
  const ac = new AbortController();
  let leading = deferred();
  let lost = deferred();
  let terms = 0;
  const done = runLeaderElected(
    name,
    { resolver: net.resolver, identity, signal: ac.signal, leaseDurationSeconds: 6, retryPeriodMs: 200, log: silentLogger, ...opts },
    async (signal) => {
      journal.push(`${identity} start`);
      terms++;
      leading.resolve();
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      journal.push(`${identity} end`);
      lost.resolve();
    },
  );
  const handle = {
    identity,
    replica,
    /** resolves when its work (next) starts */
    get leading() {
      return leading.promise;
    },
    /** resolves when its work (next) ends */
    get lost() {
      return lost.promise;
    },
    get terms() {
      return terms;
    },
    /** forget the past term: `leading`/`lost` wait for the next one */
    rearm() {
      leading = deferred();
      lost = deferred();
    },
    pause: () => net.pause(),
    resume: () => net.resume(),
    async stop() {
      net.resume();
      ac.abort();
      await done;
    },
  };
  running.push(handle);
  return handle;
}

/** the journal must never show two leaders working at once */
function assertNoOverlap(journal: Journal): void {
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

async function firstLeader<T extends { leading: Promise<void> }>(cs: T[]): Promise<T> {
  return Promise.race(cs.map((c) => c.leading.then(() => c)));
}

test('three contenders: exactly one leads and keeps leading; the Lease says who, with MicroTimes', async () => {
  const journal: Journal = [];
  const cs = ['a', 'b', 'c'].map((id) => contender('ctl-three', id, journal));
  const leader = await firstLeader(cs);
  const first = await lease('ctl-three');
  assert.equal(first.metadata.namespace, 'kube-system');
  assert.equal(first.metadata.name, 'kapi-ctl-three');
  assert.deepEqual(Object.keys(first.spec ?? {}), [
    'holderIdentity',
    'leaseDurationSeconds',
    'acquireTime',
    'renewTime',
    'leaseTransitions',
  ]);
  assert.equal(first.spec?.holderIdentity, leader.identity);
  assert.equal(first.spec?.leaseDurationSeconds, 6);
  assert.equal(first.spec?.leaseTransitions, 0);
  assert.match(first.spec?.acquireTime ?? '', microTime);
  assert.match(first.spec?.renewTime ?? '', microTime);

  // more than two lease durations later the same leader still holds it, renewing; no one else ran
  await sleep(13_000);
  const later = await lease('ctl-three');
  assert.equal(later.spec?.holderIdentity, leader.identity);
  assert.equal(later.spec?.acquireTime, first.spec?.acquireTime, 'renewals keep acquireTime');
  assert.ok((later.spec?.renewTime ?? '') > (first.spec?.renewTime ?? ''), 'renewals move renewTime');
  assert.equal(later.spec?.leaseTransitions, 0);
  assert.deepEqual(journal, [`${leader.identity} start`]);
  assert.equal((await readLeader(h.main.registry, 'ctl-three'))?.holderIdentity, leader.identity);
});

test('a graceful stop releases the Lease: another contender takes over without waiting out the lease', async () => {
  const journal: Journal = [];
  // a minute-long lease: a takeover within `eventually`'s 30 s can only come from the release
  const opts = { leaseDurationSeconds: 60 };
  const a = contender('ctl-release', 'a', journal, opts);
  await a.leading;
  const b = contender('ctl-release', 'b', journal, opts);
  const c = contender('ctl-release', 'c', journal, opts);
  await a.stop();
  const next = await firstLeader([b, c]);
  await eventually('the new leader in the Lease', async () => (await lease('ctl-release')).spec?.holderIdentity === next.identity);
  const spec = (await lease('ctl-release')).spec;
  assert.equal(spec?.leaseTransitions, 1);
  assert.equal(spec?.leaseDurationSeconds, 60);
  assertNoOverlap(journal);
  assert.deepEqual(journal, ['a start', 'a end', `${next.identity} start`]);

  // the last one out leaves the Lease released, as client-go's ReleaseOnCancel writes it
  const rest = next === b ? c : b;
  await rest.stop();
  await next.stop();
  const released = (await lease('ctl-release')).spec;
  assert.equal(released?.holderIdentity, '');
  assert.equal(released?.leaseDurationSeconds, 1);
  assert.equal(released?.leaseTransitions, 1);
  assert.equal(await readLeader(h.main.registry, 'ctl-release'), null);
});

test('a leader that can no longer renew stops its work before another contender takes over', async () => {
  const journal: Journal = [];
  const a = contender('ctl-partition', 'a', journal);
  await a.leading;
  const b = contender('ctl-partition', 'b', journal);
  const c = contender('ctl-partition', 'c', journal);
  a.pause();
  await a.lost;
  const next = await firstLeader([b, c]);
  assertNoOverlap(journal);
  assert.deepEqual(journal, ['a start', 'a end', `${next.identity} start`]);
  const spec = (await lease('ctl-partition')).spec;
  assert.equal(spec?.holderIdentity, next.identity);
  assert.equal(spec?.leaseTransitions, 1);

  // the partition heals: a's held-back renewal meets a newer Lease and a stays a follower
  a.resume();
  await sleep(2_000);
  assert.equal(a.terms, 1);
  assert.equal((await lease('ctl-partition')).spec?.holderIdentity, next.identity);
  assertNoOverlap(journal);
});

test('a leader whose etcd connection dies steps down and another contender takes over', async () => {
  const journal: Journal = [];
  const a = contender('ctl-crash', 'a', journal);
  await a.leading;
  const b = contender('ctl-crash', 'b', journal);
  a.replica.etcd.close();
  await a.lost;
  await b.leading;
  assertNoOverlap(journal);
  assert.deepEqual(journal, ['a start', 'a end', 'b start']);
  assert.equal((await readLeader(h.main.registry, 'ctl-crash'))?.holderIdentity, 'b');
});

test('handovers under repeated partitions and stops: never two leaders at once', async () => {
  const journal: Journal = [];
  let n = 0;
  const pool = [
    contender('ctl-chaos', `r${n++}`, journal),
    contender('ctl-chaos', `r${n++}`, journal),
    contender('ctl-chaos', `r${n++}`, journal),
  ];
  for (let round = 0; round < 6; round++) {
    const leader = await firstLeader(pool);
    for (const c of pool) c.rearm();
    const others = pool.filter((c) => c !== leader);
    if (round % 2 === 0) {
      // cut the leader off; once someone else leads, let it back in
      leader.pause();
      await firstLeader(others);
      leader.resume();
    } else {
      // stop it cleanly and start a fresh replica in its place
      await leader.stop();
      pool.splice(pool.indexOf(leader), 1, contender('ctl-chaos', `r${n++}`, journal));
      await firstLeader(pool);
    }
    assertNoOverlap(journal);
  }
  const starts = journal.filter((e) => e.endsWith(' start')).length;
  assert.ok(starts >= 7, `every round handed over: ${journal.join(', ')}`);
});

test("someone else writing the Lease ends the leader's term at its next renewal", async () => {
  const journal: Journal = [];
  const a = contender('ctl-overwrite', 'a', journal, { leaseDurationSeconds: 60 });
  await a.leading;
  const current = await lease('ctl-overwrite');
  await leases().update({ ...current, spec: { ...current.spec, holderIdentity: 'operator' } });
  await a.lost;
  assert.deepEqual(journal, ['a start', 'a end']);
  assert.equal((await lease('ctl-overwrite')).spec?.holderIdentity, 'operator');
});

test('work that returns on its own gives the Lease up, and the election goes on', async () => {
  const journal: Journal = [];
  const ac = new AbortController();
  let runs = 0;
  const done = runLeaderElected(
    'ctl-returns',
    { resolver: h.main.registry, identity: 'once', signal: ac.signal, leaseDurationSeconds: 6, retryPeriodMs: 200, log: silentLogger },
    async () => {
      runs++;
      journal.push('once start', 'once end');
    },
  );
  running.push({ stop: async () => (ac.abort(), await done) });
  await eventually('a second term', async () => runs >= 2);
  assertNoOverlap(journal);
});

test('separate controllers elect independently', async () => {
  const journal: Journal = [];
  const replica = h.replica();
  const x = contender('ctl-x', 'a', journal, { replica });
  const y = contender('ctl-y', 'a', journal, { replica });
  await Promise.all([x.leading, y.leading]);
  assert.equal((await readLeader(h.main.registry, 'ctl-x'))?.holderIdentity, 'a');
  assert.equal((await readLeader(h.main.registry, 'ctl-y'))?.holderIdentity, 'a');
});

test('timing that could let two leaders overlap is refused', async () => {
  const base = { resolver: h.main.registry, identity: 'x', signal: new AbortController().signal, log: silentLogger };
  await assert.rejects(
    runLeaderElected('ctl-bad', { ...base, leaseDurationSeconds: 10, renewDeadlineMs: 10_000 }, async () => undefined),
    /shorter than the lease duration/,
  );
  await assert.rejects(
    runLeaderElected('ctl-bad', { ...base, renewDeadlineMs: 2_000, retryPeriodMs: 2_000 }, async () => undefined),
    /retry periods/,
  );
});
