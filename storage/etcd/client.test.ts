import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startEtcd, freePort, type EtcdProcess } from '../testing/etcd-server.js';
import { createEtcdClient, isCompactedError, isFutureRevisionError, EtcdError } from './client.js';
import { prefixEnd, type EtcdClient, type WatchMessage, type EtcdEvent } from './types.js';

const b = (s: string) => Buffer.from(s);

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

/** polls `check` until it returns true; fails (instead of hanging) after a generous deadline */
async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function events(msgs: WatchMessage[]): EtcdEvent[] {
  return msgs.flatMap((m) => (m.kind === 'events' ? m.events : []));
}

async function metric(endpoint: string, name: string): Promise<number> {
  const text = await (await fetch(`${endpoint}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`etcd exposes no metric ${name}`);
  return Number(line.split(' ')[1]);
}

test('put, range, deleteRange', async () => {
  const put = await client.put(b('/t1/a'), b('one'));
  assert.ok(put.header.revision > 0);
  const second = await client.put(b('/t1/a'), b('two'), { prevKv: true });
  assert.equal(second.prevKv?.value.toString(), 'one');
  assert.equal(second.header.revision, put.header.revision + 1);

  const got = await client.range({ key: b('/t1/a') });
  assert.equal(got.kvs.length, 1);
  const kv = got.kvs[0]!;
  assert.equal(kv.value.toString(), 'two');
  assert.equal(kv.createRevision, put.header.revision);
  assert.equal(kv.modRevision, second.header.revision);
  assert.equal(kv.version, 2);

  const old = await client.range({ key: b('/t1/a'), revision: put.header.revision });
  assert.equal(old.kvs[0]!.value.toString(), 'one');

  await client.put(b('/t1/b'), b('x'));
  const count = await client.range({ key: b('/t1/'), rangeEnd: prefixEnd(b('/t1/')), countOnly: true });
  assert.equal(count.count, 2);
  assert.equal(count.kvs.length, 0);
  const keysOnly = await client.range({ key: b('/t1/'), rangeEnd: prefixEnd(b('/t1/')), keysOnly: true, serializable: true });
  assert.deepEqual(
    keysOnly.kvs.map((k) => [k.key.toString(), k.value.length]),
    [
      ['/t1/a', 0],
      ['/t1/b', 0],
    ],
  );

  const del = await client.deleteRange(b('/t1/'), { rangeEnd: prefixEnd(b('/t1/')), prevKv: true });
  assert.equal(del.deleted, 2);
  assert.deepEqual(
    del.prevKvs.map((k) => k.value.toString()),
    ['two', 'x'],
  );
  assert.equal((await client.range({ key: b('/t1/a') })).kvs.length, 0);
});

test('txn compares each target with its own enum number', async () => {
  const lease = await client.leaseGrant(60);
  const first = await client.put(b('/t2/k'), b('v1'));
  const second = await client.put(b('/t2/k'), b('v2'), { lease: lease.id });
  const create = first.header.revision;
  const mod = second.header.revision;
  const cases = [
    { target: 'VERSION', value: 2, wrong: 1 },
    { target: 'CREATE', value: create, wrong: mod },
    { target: 'MOD', value: mod, wrong: create },
    { target: 'VALUE', value: b('v2'), wrong: b('v1') },
    { target: 'LEASE', value: lease.id, wrong: 0 },
  ] as const;
  for (const c of cases) {
    for (const [value, expected] of [
      [c.value, true],
      [c.wrong, false],
    ] as const) {
      const res = await client.txn({
        compare: [{ key: b('/t2/k'), target: c.target, result: 'EQUAL', value }],
        success: [{ range: { key: b('/t2/k') } }],
        failure: [],
      });
      assert.equal(res.succeeded, expected, `${c.target} == ${String(value)}`);
    }
  }
  // a failed compare runs the failure branch; a write in a branch commits
  const failed = await client.txn({
    compare: [{ key: b('/t2/k'), target: 'MOD', result: 'EQUAL', value: create }],
    success: [{ put: { key: b('/t2/k'), value: b('never') } }],
    failure: [{ range: { key: b('/t2/k') } }],
  });
  assert.equal(failed.succeeded, false);
  const r = failed.responses[0];
  assert.ok(r && 'range' in r);
  assert.equal(r.range.kvs[0]!.value.toString(), 'v2');

  const won = await client.txn({
    compare: [{ key: b('/t2/new'), target: 'CREATE', result: 'EQUAL', value: 0 }],
    success: [{ put: { key: b('/t2/new'), value: b('n') } }],
    failure: [],
  });
  assert.equal(won.succeeded, true);
  const p = won.responses[0];
  assert.ok(p && 'put' in p);
  assert.equal((await client.range({ key: b('/t2/new') })).kvs[0]!.modRevision, won.header.revision);

  const greater = await client.txn({
    compare: [
      { key: b('/t2/k'), target: 'MOD', result: 'GREATER', value: create },
      { key: b('/t2/k'), target: 'VERSION', result: 'NOT_EQUAL', value: 5 },
    ],
    success: [{ deleteRange: { key: b('/t2/k'), prevKv: true } }],
    failure: [],
  });
  assert.equal(greater.succeeded, true);
  const d = greater.responses[0];
  assert.ok(d && 'deleteRange' in d);
  assert.equal(d.deleteRange.deleted, 1);
  assert.equal(d.deleteRange.prevKvs[0]!.value.toString(), 'v2');
  await client.leaseRevoke(lease.id);
});

test('rangeAll pages through more than 4 MiB at one revision', async () => {
  const value = Buffer.alloc(10 * 1024, 'x');
  const prefix = b('/t3/');
  for (let i = 0; i < 600; i += 50) {
    await Promise.all(Array.from({ length: 50 }, (_, j) => client.put(b(`/t3/${String(i + j).padStart(4, '0')}`), value)));
  }
  // writes racing with the paging must not show up: every page reads at the first page's revision
  let writing = true;
  const racer = (async () => {
    for (let i = 0; writing; i++) await client.put(b(`/t3/zz-${i}`), b('late'));
  })();
  const all = await client.rangeAll({ key: prefix, rangeEnd: prefixEnd(prefix), pageSize: 50 });
  writing = false;
  await racer;
  assert.equal(all.kvs.length, all.count);
  assert.ok(all.kvs.length >= 600);
  assert.equal(all.more, false);
  assert.ok(all.kvs.every((kv) => kv.modRevision <= all.header.revision));
  const keys = all.kvs.map((kv) => kv.key.toString());
  assert.deepEqual(keys, [...keys].sort());
  assert.equal(new Set(keys).size, keys.length);
  assert.equal(keys.filter((k) => !k.startsWith('/t3/zz-')).length, 600);

  // a single range over all of it also works: the receive limit is raised
  const whole = await client.range({ key: prefix, rangeEnd: prefixEnd(prefix) });
  assert.ok(whole.kvs.reduce((n, kv) => n + kv.value.length, 0) > 4 * 1024 * 1024);

  const limited = await client.rangeAll({ key: prefix, rangeEnd: prefixEnd(prefix), pageSize: 7, limit: 20 });
  assert.equal(limited.kvs.length, 20);
  assert.equal(limited.more, true);
  await client.deleteRange(prefix, { rangeEnd: prefixEnd(prefix) });
});

test('many watchers share one watch stream', async () => {
  const n = 40;
  const streamsBefore = await metric(etcd.endpoint, 'etcd_debugging_mvcc_watch_stream_total');
  const seen: WatchMessage[][] = Array.from({ length: n }, () => []);
  const watchers = seen.map((msgs, i) => client.watch({ key: b(`/t4/${i}`) }, (m) => msgs.push(m)));
  // a progress round trip proves all creates were processed before we write
  const probe: WatchMessage[] = [];
  const probeWatcher = client.watch({ key: b('/t4/probe') }, (m) => probe.push(m));
  probeWatcher.requestProgress();
  await until('progress answer', () => probe.some((m) => m.kind === 'progress'));
  for (let i = 0; i < n; i++) await client.put(b(`/t4/${i}`), b(`v${i}`));
  await until('every watcher got its event', () => seen.every((msgs) => events(msgs).length === 1));
  seen.forEach((msgs, i) => {
    const [e] = events(msgs);
    assert.equal(e!.kv.key.toString(), `/t4/${i}`);
    assert.equal(e!.kv.value.toString(), `v${i}`);
  });
  const streamsDuring = await metric(etcd.endpoint, 'etcd_debugging_mvcc_watch_stream_total');
  assert.ok(streamsDuring - streamsBefore <= 1, `watch streams: ${streamsBefore} -> ${streamsDuring}`);
  assert.ok((await metric(etcd.endpoint, 'etcd_debugging_mvcc_watcher_total')) >= n + 1);
  for (const w of watchers) w.cancel();
  probeWatcher.cancel();
  // canceled watchers hear nothing more
  await client.put(b('/t4/0'), b('after'));
  const wake: WatchMessage[] = [];
  const w2 = client.watch({ key: b('/t4/0'), startRevision: 1 }, (m) => wake.push(m));
  await until('new watcher sees history', () => events(wake).length === 2);
  w2.cancel();
  assert.equal(events(seen[0]!).length, 1);
});

test('prev_kv on put and delete events', async () => {
  const msgs: WatchMessage[] = [];
  const start = (await client.put(b('/t5/a'), b('1'))).header.revision;
  const w = client.watch({ key: b('/t5/'), rangeEnd: prefixEnd(b('/t5/')), startRevision: start, prevKv: true }, (m) => msgs.push(m));
  await client.put(b('/t5/a'), b('2'));
  await client.deleteRange(b('/t5/a'));
  await until('three events', () => events(msgs).length === 3);
  w.cancel();
  const [created, updated, deleted] = events(msgs);
  assert.equal(created!.type, 'PUT');
  assert.equal(created!.prevKv, undefined);
  assert.equal(updated!.prevKv?.value.toString(), '1');
  assert.equal(deleted!.type, 'DELETE');
  assert.equal(deleted!.prevKv?.value.toString(), '2');
  assert.equal(deleted!.kv.modRevision, start + 2);
  // a message's revision is that of its last event (history may arrive in one batch)
  for (const m of msgs) if (m.kind === 'events') assert.equal(m.revision, m.events.at(-1)!.kv.modRevision);
});

test('events held back behind a lone write and events handled at once stay one sequence', async () => {
  // a write one at a time has its answer handled before its event (held back to the loop's
  // check phase); a burst of concurrent writes has its events handled as they come. Switching
  // between the two must neither reorder nor lose an event.
  const msgs: WatchMessage[] = [];
  const prefix = b('/t5b/');
  const start = (await client.put(b('/t5b/start'), b('0'))).header.revision;
  const w = client.watch({ key: prefix, rangeEnd: prefixEnd(prefix), startRevision: start + 1 }, (m) => msgs.push(m));
  const revisions: number[] = [];
  for (let round = 0; round < 10; round++) {
    for (let i = 0; i < 5; i++) revisions.push((await client.put(b(`/t5b/one-${round}-${i}`), b('x'))).header.revision);
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => client.put(b(`/t5b/burst-${round}-${i}`), b('y'))));
    revisions.push(...burst.map((r) => r.header.revision));
  }
  await until('every event', () => events(msgs).length >= revisions.length);
  w.cancel();
  assert.deepEqual(
    events(msgs).map((e) => e.kv.modRevision),
    revisions.sort((x, y) => x - y),
  );
});

test('a progress request is answered with the current revision', async () => {
  const msgs: WatchMessage[] = [];
  const w = client.watch({ key: b('/t6/quiet') }, (m) => msgs.push(m));
  const rev = (await client.put(b('/t6/elsewhere'), b('x'))).header.revision;
  w.requestProgress();
  await until('progress', () => msgs.some((m) => m.kind === 'progress' && m.revision >= rev));
  w.cancel();
  assert.equal(events(msgs).length, 0);
});

test('a watch from a compacted revision is canceled with the compact revision', async () => {
  const first = (await client.put(b('/t7/a'), b('1'))).header.revision;
  const latest = (await client.put(b('/t7/a'), b('2'))).header.revision;
  await client.compact(latest);
  await assert.rejects(client.range({ key: b('/t7/a'), revision: first }), (err) => isCompactedError(err));
  const msgs: WatchMessage[] = [];
  client.watch({ key: b('/t7/a'), startRevision: first }, (m) => msgs.push(m));
  await until('cancel', () => msgs.length > 0);
  assert.deepEqual(msgs[0], { kind: 'canceled', compactRevision: latest, reason: 'canceled by etcd' });
});

test("etcd's refusals keep their gRPC code and etcd's message", async () => {
  const rev = (await client.put(b('/t10/a'), b('x'))).header.revision;
  await assert.rejects(client.range({ key: b('/t10/a'), revision: rev + 1000 }), (err) => {
    assert.ok(isFutureRevisionError(err), String(err));
    assert.equal((err as EtcdError).code, 11); // OUT_OF_RANGE
    return true;
  });
  // etcd's default --max-request-bytes is 1.5 MiB; its gRPC server takes 512 KiB more
  await assert.rejects(client.put(b('/t10/big'), Buffer.alloc(1600 * 1024, 'x')), (err) => {
    assert.ok(err instanceof EtcdError);
    assert.equal(err.code, 3); // INVALID_ARGUMENT
    assert.match(err.message, /request is too large/);
    return true;
  });
  await assert.rejects(client.put(b('/t10/big'), Buffer.alloc(3 * 1024 * 1024, 'x')), (err) => {
    assert.ok(err instanceof EtcdError);
    assert.equal(err.code, 8); // RESOURCE_EXHAUSTED
    assert.match(err.message, /larger than max/);
    return true;
  });
  assert.equal((await client.range({ key: b('/t10/big') })).kvs.length, 0);
});

test('an aborted read rejects with the abort reason; the client carries on', async () => {
  await client.put(b('/t11/a'), b('x'));
  const ac = new AbortController();
  const read = client.range({ key: b('/t11/a'), signal: ac.signal });
  ac.abort();
  await assert.rejects(read, (err: Error) => err.name === 'AbortError');
  const already = new AbortController();
  already.abort();
  await assert.rejects(client.range({ key: b('/t11/a'), signal: already.signal }), (err: Error) => err.name === 'AbortError');
  const reads = await Promise.all(Array.from({ length: 50 }, () => client.range({ key: b('/t11/a') })));
  assert.ok(reads.every((r) => r.kvs[0]?.value.toString() === 'x'));
  // aborted while the first call of a new client waits for its connection
  const fresh = createEtcdClient({ endpoints: [etcd.endpoint] });
  try {
    const waiting = new AbortController();
    const first = fresh.range({ key: b('/t11/a'), signal: waiting.signal });
    waiting.abort();
    await assert.rejects(first, (err: Error) => err.name === 'AbortError');
    assert.equal((await fresh.range({ key: b('/t11/a') })).kvs[0]?.value.toString(), 'x');
  } finally {
    fresh.close();
  }
});

test('lease grant, keepalive, revoke', async () => {
  const lease = await client.leaseGrant(30);
  assert.equal(lease.ttlSeconds, 30);
  assert.ok(Number.isSafeInteger(lease.id) && lease.id > 0);
  await client.put(b('/t8/leased'), b('x'), { lease: lease.id });
  assert.equal((await client.range({ key: b('/t8/leased') })).kvs[0]!.lease, lease.id);
  assert.equal(await client.leaseKeepAliveOnce(lease.id), 30);
  await client.leaseRevoke(lease.id);
  assert.equal((await client.range({ key: b('/t8/leased') })).kvs.length, 0);
  assert.equal(await client.leaseKeepAliveOnce(lease.id), 0);
});

test('memberList and status', async () => {
  const members = await client.memberList();
  assert.equal(members.length, 1);
  assert.equal(members[0]!.name, 'default');
  assert.deepEqual(members[0]!.clientURLs, [etcd.endpoint]);
  assert.match(members[0]!.id, /^[0-9a-f]+$/);
  const status = await client.status();
  assert.match(status.version, /^3\.\d+\.\d+/);
  assert.equal(status.leader, members[0]!.id);
  assert.equal(status.header.memberId, members[0]!.id);
  assert.ok(status.dbSize > 0);
  assert.ok(status.raftIndex > 0);
});

test('fails over from a dead endpoint to a live one', async () => {
  const dead = `http://127.0.0.1:${await freePort()}`;
  const c = createEtcdClient({ endpoints: [dead, etcd.endpoint] });
  try {
    // a write is retried on the next endpoint because it never left this process
    const put = await c.put(b('/t9/a'), b('x'));
    assert.ok(put.header.revision > 0);
    assert.equal((await c.range({ key: b('/t9/a') })).kvs[0]!.value.toString(), 'x');
    const msgs: WatchMessage[] = [];
    const w = c.watch({ key: b('/t9/a'), startRevision: put.header.revision }, (m) => msgs.push(m));
    await until('watch through the live endpoint', () => events(msgs).length === 1);
    w.cancel();
  } finally {
    c.close();
  }
  const down = createEtcdClient({ endpoints: [dead], requestTimeoutMs: 2000 });
  try {
    await assert.rejects(down.range({ key: b('/t9/a') }), (err: Error & { code?: number }) => err.name === 'EtcdError' && err.code === 14);
  } finally {
    down.close();
  }
});

test('watchers resume after etcd is killed and restarted: every event once, in order', async () => {
  const own = await startEtcd();
  const port = Number(new URL(own.endpoint).port);
  let current = own;
  const watching = createEtcdClient({ endpoints: [own.endpoint] });
  try {
    const prefix = b('/t10/');
    const start = (await watching.put(b('/t10/k0'), b('before-0'))).header.revision;
    const fromStart: WatchMessage[] = [];
    const fromNow: WatchMessage[] = [];
    watching.watch({ key: prefix, rangeEnd: prefixEnd(prefix), startRevision: start, prevKv: true }, (m) => fromStart.push(m));
    const nowWatcher = watching.watch({ key: prefix, rangeEnd: prefixEnd(prefix) }, (m) => fromNow.push(m));
    nowWatcher.requestProgress();
    await until('from-now watcher created', () => fromNow.some((m) => m.kind === 'progress'));
    for (let i = 1; i <= 5; i++) await watching.put(b(`/t10/k${i}`), b(`before-${i}`));
    await until('events before the kill', () => events(fromStart).length === 6);

    await current.kill();
    // writes while etcd is down fail; the watchers keep trying to reconnect
    await assert.rejects(watching.put(b('/t10/lost'), b('x')));
    current = await startEtcd({ dataDir: own.dataDir, clientPort: port });
    const writer = createEtcdClient({ endpoints: [current.endpoint] });
    try {
      for (let i = 0; i < 5; i++) await writer.put(b(`/t10/after-${i}`), b(`after-${i}`));
      await writer.deleteRange(b('/t10/k1'));
    } finally {
      writer.close();
    }
    await until('events after the restart', () => events(fromStart).length === 12);
    await until('from-now watcher caught up', () => events(fromNow).length === 11);

    const expected = [
      ...Array.from({ length: 6 }, (_, i) => `PUT /t10/k${i}`),
      ...Array.from({ length: 5 }, (_, i) => `PUT /t10/after-${i}`),
      'DELETE /t10/k1',
    ];
    const describe = (e: EtcdEvent) => `${e.type} ${e.kv.key.toString()}`;
    assert.deepEqual(events(fromStart).map(describe), expected);
    assert.deepEqual(events(fromNow).map(describe), expected.slice(1));
    const revs = events(fromStart).map((e) => e.kv.modRevision);
    assert.deepEqual(
      revs,
      Array.from({ length: 12 }, (_, i) => start + i),
    );
    assert.equal(events(fromStart).at(-1)!.prevKv?.value.toString(), 'before-1');
  } finally {
    watching.close();
    await current.stop();
    if (current !== own) await import('node:fs').then((fs) => fs.rmSync(own.dataDir, { recursive: true, force: true }));
  }
});
