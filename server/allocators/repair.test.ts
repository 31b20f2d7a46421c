// The repair pass over real etcd: allocations left behind are freed once old enough, Services
// without allocation objects get them, double claims are reported, the default ServiceCIDR
// is created once.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startEtcd, type EtcdProcess } from '../../storage/testing/etcd-server.js';
import { ipAddressKeyPrefix } from './cluster-ip.js';
import { nodePortKeyPrefix } from './node-port.js';
import { ensureDefaultServiceCIDR, repairOnce, serviceCIDRKeyPrefix } from './repair.js';
import { ctx, ensureNamespace, service, startReplica, type Replica } from './testing.js';

let etcd: EtcdProcess;
let r: Replica;

before(async () => {
  etcd = await startEtcd();
  r = startReplica(etcd, { serviceClusterIPRange: '10.70.0.0/16' });
  await ensureNamespace(r, 'rep');
});

after(async () => {
  await r.close();
  await etcd.stop();
});

const later = (minutes: number) => () => new Date(Date.now() + minutes * 60_000);

test('leaked allocations are freed once older than the grace period; fresh ones are left alone', async () => {
  const ghost = { namespace: 'rep', name: 'ghost' };
  await r.allocator.clusterIPs[0]!.allocate('10.70.0.77', ghost);
  await r.allocator.nodePorts.allocate(30077, ghost);
  const fresh = await repairOnce({ allocator: r.allocator, storage: r.store });
  assert.deepEqual(fresh.freed, []);
  assert.ok(await r.store.get(`${ipAddressKeyPrefix}/10.70.0.77`, { ignoreNotFound: true }));
  const old = await repairOnce({ allocator: r.allocator, storage: r.store, now: later(10) });
  assert.deepEqual(old.freed.sort(), ['ClusterIP 10.70.0.77', 'node port 30077']);
  assert.equal(await r.store.get(`${ipAddressKeyPrefix}/10.70.0.77`, { ignoreNotFound: true }), null);
  assert.equal(await r.store.get(`${nodePortKeyPrefix}/30077`, { ignoreNotFound: true }), null);
});

test('allocations of live Services are kept; a Service stored without them gets them back', async () => {
  const svc = await r.services.create(ctx('rep'), service('live', { type: 'NodePort' }));
  const spec = svc.spec as { clusterIP: string; ports: Array<{ nodePort: number }> };
  // as if written before allocation existed: drop its allocation objects
  await r.store.delete(`${ipAddressKeyPrefix}/${spec.clusterIP}`);
  await r.store.delete(`${nodePortKeyPrefix}/${spec.ports[0]!.nodePort}`);
  const report = await repairOnce({ allocator: r.allocator, storage: r.store, now: later(10) });
  assert.deepEqual(
    report.backfilled.sort(),
    [`ClusterIP ${spec.clusterIP} -> rep/live`, `node port ${spec.ports[0]!.nodePort} -> rep/live`].sort(),
  );
  assert.deepEqual(report.freed, []);
  assert.deepEqual(await r.allocator.clusterIPs[0]!.holder(spec.clusterIP), { namespace: 'rep', name: 'live' });
  const again = await repairOnce({ allocator: r.allocator, storage: r.store, now: later(10) });
  assert.deepEqual([again.backfilled, again.freed, again.conflicts], [[], [], []]);
});

test('an address two Services claim is reported, not moved', async () => {
  const svc = await r.services.create(ctx('rep'), service('owner'));
  const ip = (svc.spec as { clusterIP: string }).clusterIP;
  // a second Service with the same address, written behind the allocator's back
  const copy = service('intruder', {
    clusterIP: ip,
    clusterIPs: [ip],
    ipFamilies: ['IPv4'],
    ipFamilyPolicy: 'SingleStack',
    type: 'ClusterIP',
  });
  copy.metadata.namespace = 'rep';
  await r.store.create('/services/rep/intruder', copy);
  const report = await repairOnce({ allocator: r.allocator, storage: r.store, now: later(10) });
  assert.equal(report.conflicts.length, 1);
  assert.match(report.conflicts[0]!, /held by rep\/owner, used by rep\/intruder/);
  assert.deepEqual(await r.allocator.clusterIPs[0]!.holder(ip), { namespace: 'rep', name: 'owner' });
});

test('the default ServiceCIDR names the configured ranges and is created once', async () => {
  assert.equal(await ensureDefaultServiceCIDR(r.store, r.allocator), true);
  assert.equal(await ensureDefaultServiceCIDR(r.store, r.allocator), false);
  const cidr = await r.store.get(`${serviceCIDRKeyPrefix}/kubernetes`);
  assert.deepEqual(cidr?.spec, { cidrs: ['10.70.0.0/16'] });
  const got = await r.registry.lookup('networking.k8s.io', 'v1', 'servicecidrs')!.get(ctx(), 'kubernetes', {});
  assert.equal((got.status as { conditions: Array<{ type: string; status: string }> }).conditions[0]!.status, 'True');
});
