// ClusterIP and node port allocators over real etcd: requested values, conflicts, ranges,
// exhaustion, releases that check the holder, and two allocators (two replicas, two etcd
// clients) taking from one small range at once.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createEtcdClient } from '../../storage/etcd/client.js';
import type { EtcdClient } from '../../storage/etcd/types.js';
import { createEtcd3Store } from '../../storage/etcd3/store.js';
import type { Storage } from '../../storage/interface.js';
import { startEtcd, type EtcdProcess } from '../../storage/testing/etcd-server.js';
import { ClusterIPAllocator, ipAddressKeyPrefix } from './cluster-ip.js';
import { AllocationError } from './errors.js';
import { NodePortAllocator } from './node-port.js';
import { parsePortRange } from './port-range.js';

let etcd: EtcdProcess;
const clients: EtcdClient[] = [];
const stores: Storage[] = [];

function newStore(): Storage {
  const client = createEtcdClient({ endpoints: [etcd.endpoint] });
  const store = createEtcd3Store(client, { prefix: '/registry' });
  clients.push(client);
  stores.push(store);
  return store;
}

before(async () => {
  etcd = await startEtcd();
});

after(async () => {
  for (const s of stores) await s.close();
  for (const c of clients) c.close();
  await etcd.stop();
});

async function failure(p: Promise<unknown>): Promise<AllocationError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof AllocationError, `expected an AllocationError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected the allocation to fail');
}

const web = { namespace: 'default', name: 'web' };
const other = { namespace: 'default', name: 'other' };

test('a requested address becomes an IPAddress object naming the Service; a second request for it fails', async () => {
  const store = newStore();
  const a = new ClusterIPAllocator('10.96.0.0/12', store);
  const uid = await a.allocate('10.96.0.10', web);
  const obj = await store.get(`${ipAddressKeyPrefix}/10.96.0.10`);
  assert.ok(obj);
  assert.equal(obj.kind, 'IPAddress');
  assert.equal(obj.apiVersion, 'networking.k8s.io/v1');
  assert.equal(obj.metadata.uid, uid);
  assert.deepEqual(obj.metadata.labels, {
    'ipaddress.kubernetes.io/ip-family': 'IPv4',
    'ipaddress.kubernetes.io/managed-by': 'ipallocator.k8s.io',
  });
  assert.deepEqual(obj.spec, { parentRef: { resource: 'services', namespace: 'default', name: 'web' } });
  assert.deepEqual(Object.keys(obj), ['kind', 'apiVersion', 'metadata', 'spec']);
  const taken = await failure(a.allocate('10.96.0.10', other));
  assert.equal(taken.message, 'provided IP is already allocated');
  assert.equal((await failure(a.checkAvailable('10.96.0.10'))).reason, 'Allocated');
  assert.deepEqual(await a.holder('10.96.0.10'), web);
});

test('addresses outside the range, and the network address, are refused with kube-apiserver 1.33 wording', async () => {
  const a = new ClusterIPAllocator('10.96.0.0/12', newStore());
  assert.equal((await failure(a.allocate('192.168.1.1', web))).message, 'the provided network does not match the current range');
  assert.equal(
    (await failure(a.allocate('10.96.0.0', web))).message,
    'the provided IP (10.96.0.0) is not in the valid range. The range of valid IPs is 10.96.0.0/12',
  );
  assert.equal((await failure(a.allocate('fd00::1', web))).reason, 'MismatchedNetwork');
});

test('release frees only what the named holder (or exact allocation) holds', async () => {
  const a = new ClusterIPAllocator('10.96.0.0/12', newStore());
  const uid = await a.allocate('10.96.0.20', web);
  assert.equal(await a.release('10.96.0.20', other), false);
  assert.equal(await a.release('10.96.0.20', web, 'not-the-uid'), false);
  assert.equal(await a.release('10.96.0.20', web, uid), true);
  assert.equal(await a.release('10.96.0.20', web), false);
  await a.allocate('10.96.0.20', other);
});

test('dynamic allocation fills a small range (never the reserved first address), then reports it full', async () => {
  const store = newStore();
  // 10.1.0.8/29: .9 to .14 allocatable, .9 reserved for the kubernetes Service
  const a = new ClusterIPAllocator('10.1.0.8/29', store, { reserved: ['10.1.0.9'] });
  const got = new Set<string>();
  for (let i = 0; i < 5; i++) got.add((await a.allocateNext(web)).ip);
  assert.deepEqual([...got].sort(), ['10.1.0.10', '10.1.0.11', '10.1.0.12', '10.1.0.13', '10.1.0.14']);
  assert.equal((await failure(a.allocateNext(web))).message, 'range is full');
  // the reserved address can still be requested
  await a.allocate('10.1.0.9', { namespace: 'default', name: 'kubernetes' });
  await a.release('10.1.0.12', web);
  assert.equal((await a.allocateNext(other)).ip, '10.1.0.12');
});

test('dynamic allocation prefers the upper part of the range', async () => {
  const a = new ClusterIPAllocator('10.2.0.0/24', newStore());
  for (let i = 0; i < 20; i++) {
    const { ip } = await a.allocateNext(web);
    assert.ok(Number(ip.split('.')[3]) >= 17, `${ip} is in the static band`);
  }
});

test('two allocators on two etcd clients take 60 distinct addresses from a 62-address range at once', async () => {
  const a = new ClusterIPAllocator('10.3.0.0/26', newStore());
  const b = new ClusterIPAllocator('10.3.0.0/26', newStore());
  const results = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).allocateNext({ namespace: 'ns', name: `s${i}` })));
  const ips = results.map((r) => r.ip);
  assert.equal(new Set(ips).size, 60);
  // and etcd agrees: one object per address, each naming the Service that got it
  for (const [i, r] of results.entries()) assert.deepEqual(await a.holder(r.ip), { namespace: 'ns', name: `s${i}` });
});

test('IPv6 ranges allocate canonical names', async () => {
  const a = new ClusterIPAllocator('fd00:10:96::/112', newStore());
  await a.allocate('FD00:10:96:0::a', web);
  assert.deepEqual(await a.holder('fd00:10:96::a'), web);
  const { ip } = await a.allocateNext(web);
  assert.match(ip, /^fd00:10:96::[0-9a-f]+$/);
});

test('node ports: requested, taken, out of range, dynamic above the static band, full', async () => {
  const store = newStore();
  const p = new NodePortAllocator(parsePortRange('30000-32767'), store);
  await p.allocate(30080, web);
  assert.equal((await failure(p.allocate(30080, other))).message, 'provided port is already allocated');
  assert.equal(
    (await failure(p.allocate(80, other))).message,
    'provided port is not in the valid range. The range of valid ports is 30000-32767',
  );
  for (let i = 0; i < 10; i++) {
    const { port } = await p.allocateNext(web);
    assert.ok(port >= 30086 && port <= 32767, `${port}`);
  }
  assert.deepEqual(await p.holder(30080), web);
  assert.equal(await p.release(30080, other), false);
  assert.equal(await p.release(30080, web), true);

  const tiny = new NodePortAllocator(parsePortRange('31000-31003'), store);
  const ports = await Promise.all([1, 2, 3, 4].map(() => tiny.allocateNext(web)));
  assert.deepEqual(ports.map((x) => x.port).sort(), [31000, 31001, 31002, 31003]);
  assert.equal((await failure(tiny.allocateNext(web))).message, 'range is full');
});
