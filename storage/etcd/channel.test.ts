// The gRPC transport (channel.ts on h2-connection.ts) against a real etcd: flow control with
// messages larger than every window, many calls at once, etcd's errors, and a watch stream
// carrying large events.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { GrpcStatus } from './grpc-codes.js';
import { startEtcd, type EtcdProcess } from '../testing/etcd-server.js';
import { createEtcdClient, EtcdError } from './client.js';
import { prefixEnd, type EtcdClient } from './types.js';
import { GrpcChannel } from './channel.js';

const b = (s: string) => Buffer.from(s);
const MB = 1024 * 1024;

let etcd: EtcdProcess;
let client: EtcdClient;

before(async () => {
  // etcd refuses requests over 1.5 MiB unless told otherwise
  etcd = await startEtcd({ extraArgs: ['--max-request-bytes', String(8 * MB)] });
  client = createEtcdClient({ endpoints: [etcd.endpoint] });
});

after(async () => {
  client.close();
  await etcd.stop();
});

function patterned(size: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

test('a 3 MB value goes through put and comes back from range (flow control both ways)', async () => {
  const value = patterned(3 * MB, 7);
  const put = await client.put(b('/unary/big'), value);
  const got = await client.range({ key: b('/unary/big') });
  assert.equal(got.kvs.length, 1);
  assert.equal(got.kvs[0]!.modRevision, put.header.revision);
  assert.ok(got.kvs[0]!.value.equals(value), 'the value read back is the value written');
});

test('a range response larger than 16 MB (several connection window updates) arrives whole', async () => {
  const values = Array.from({ length: 7 }, (_, i) => patterned(3 * MB, i));
  for (const [i, value] of values.entries()) await client.put(b(`/unary/many/${i}`), value);
  const key = b('/unary/many/');
  const got = await client.range({ key, rangeEnd: prefixEnd(key) });
  assert.equal(got.kvs.length, values.length);
  got.kvs.forEach((kv, i) => assert.ok(kv.value.equals(values[i]!), `value ${i}`));
});

test('200 concurrent calls all succeed', async () => {
  const puts = await Promise.all(Array.from({ length: 200 }, (_, i) => client.put(b(`/unary/concurrent/${i}`), b(`value-${i}`))));
  assert.equal(new Set(puts.map((p) => p.header.revision)).size, 200, 'each put its own revision');
  const reads = await Promise.all(Array.from({ length: 200 }, (_, i) => client.range({ key: b(`/unary/concurrent/${i}`) })));
  reads.forEach((r, i) => assert.equal(r.kvs[0]?.value.toString(), `value-${i}`));
});

test("etcd's error status and message reach the caller", async () => {
  const key = b('/unary/err');
  const { header } = await client.put(key, b('x'));
  await assert.rejects(client.range({ key, revision: header.revision + 1000 }), (err: unknown) => {
    assert.ok(err instanceof EtcdError);
    assert.equal(err.code, GrpcStatus.OUT_OF_RANGE);
    assert.match(err.message, /required revision is a future revision/);
    return true;
  });
});

test('an unknown method is UNIMPLEMENTED; a call without a connection is marked not sent', async () => {
  const channel = new GrpcChannel(etcd.endpoint, etcd.endpoint, null);
  try {
    await assert.rejects(channel.call('/etcdserverpb.Maintenance/Status', Buffer.alloc(0), 5_000), (err: unknown) => {
      assert.ok(err instanceof EtcdError);
      assert.equal(err.code, GrpcStatus.UNAVAILABLE);
      assert.equal(err.notSent, true);
      return true;
    });
    assert.equal(await channel.connect(5_000), true);
    assert.equal(channel.ready, true);
    await assert.rejects(channel.call('/etcdserverpb.KV/NoSuchMethod', Buffer.alloc(0), 5_000), (err: unknown) => {
      assert.ok(err instanceof EtcdError);
      assert.equal(err.code, GrpcStatus.UNIMPLEMENTED);
      return true;
    });
    // an empty StatusRequest is a valid one
    const res = await channel.call('/etcdserverpb.Maintenance/Status', Buffer.alloc(0), 5_000);
    assert.ok(Buffer.isBuffer(res));
  } finally {
    channel.close();
  }
  assert.equal(channel.ready, false);
});

test('an aborted call is CANCELLED and the connection carries the next one', async () => {
  const channel = new GrpcChannel(etcd.endpoint, etcd.endpoint, null);
  try {
    assert.equal(await channel.connect(5_000), true);
    const controller = new AbortController();
    const pending = channel.call('/etcdserverpb.Maintenance/Status', Buffer.alloc(0), 5_000, controller.signal);
    controller.abort();
    await assert.rejects(pending, (err: unknown) => err instanceof EtcdError && err.code === GrpcStatus.CANCELLED);
    assert.ok(Buffer.isBuffer(await channel.call('/etcdserverpb.Maintenance/Status', Buffer.alloc(0), 5_000)));
  } finally {
    channel.close();
  }
});

test('a watch stream carries events larger than a frame and more than 16 MiB in all, whole and in order', async () => {
  const prefix = b('/unary/watched/');
  const values = Array.from({ length: 6 }, (_, i) => patterned(3 * MB, 100 + i));
  const seen: Buffer[] = [];
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  // from the revision after this one: every later write is seen, however late the watch starts
  const from = (await client.put(b('/unary/watched-start'), b('x'))).header.revision + 1;
  const watcher = client.watch({ key: prefix, rangeEnd: prefixEnd(prefix), startRevision: from }, (msg) => {
    if (msg.kind !== 'events') return;
    for (const ev of msg.events) seen.push(Buffer.from(ev.kv.value));
    if (seen.length === values.length) done();
  });
  try {
    for (const [i, value] of values.entries()) await client.put(b(`/unary/watched/${i}`), value);
    await all;
    assert.equal(seen.length, values.length);
    seen.forEach((v, i) => assert.ok(v.equals(values[i]!), `event ${i} intact`));
  } finally {
    watcher.cancel();
  }
});
