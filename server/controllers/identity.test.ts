import assert from 'node:assert/strict';
import { after, afterEach, before, test } from 'node:test';
import {
  apiserverIdentityLeaseName,
  collectExpiredIdentityLeases,
  identityLeaseController,
  identityLeaseGarbageCollector,
  identityLeaseSelector,
  isIdentityLeaseExpired,
  servingEndpoint,
} from './identity.js';
import { LeaseClient, leaseObject, microTime, type Lease } from './leases.js';
import { eventually, startHarness, testContext, type Harness } from './testing/harness.js';
import type { Controller, ControllerDeps } from './types.js';
import { isNotFound } from './util.js';

let h: Harness;
const running: Array<() => Promise<void>> = [];

before(async () => {
  h = await startHarness();
  await h.main
    .rest('', 'v1', 'namespaces')
    .create(testContext(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system' } });
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((stop) => stop()));
});

after(async () => {
  await h.close();
});

function leases(): LeaseClient {
  return new LeaseClient(h.main.registry, 'test');
}

function run(c: Controller): () => Promise<void> {
  const ac = new AbortController();
  const done = c.start(ac.signal);
  const stop = async () => {
    ac.abort();
    await done;
  };
  running.push(stop);
  return stop;
}

async function gone(name: string): Promise<boolean> {
  try {
    await leases().get(name);
    return false;
  } catch (err) {
    if (isNotFound(err)) return true;
    throw err;
  }
}

const microTimeRe = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

test("the identity Lease name: kube-apiserver's APIServerID, plus the endpoint when given", () => {
  // reference values computed independently (Python: struct-packed lengths, hashlib, b32encode)
  assert.equal(apiserverIdentityLeaseName('node-1'), 'apiserver-lgabes5ywnaqeagh5dny4zlzs4');
  assert.equal(apiserverIdentityLeaseName('kapi-host', '127.0.0.1:6443'), 'apiserver-kgu3syc5ad4wdapsjhl5c2ruti');
  assert.equal(apiserverIdentityLeaseName('kapi-host', servingEndpoint('::1', 6443)), 'apiserver-op3c7qqzd3nhezalgrdj6m2djy');
  assert.notEqual(apiserverIdentityLeaseName('kapi-host', '127.0.0.1:6443'), apiserverIdentityLeaseName('kapi-host', '127.0.0.1:6444'));
  // the workers of one replica (--workers): worker 0 keeps the replica's name, the others differ
  assert.equal(servingEndpoint('127.0.0.1', 6443, 0), '127.0.0.1:6443');
  assert.equal(servingEndpoint('::1', 6443, 2), '[::1]:6443#worker-2');
  const workerNames = [0, 1, 2].map((k) => apiserverIdentityLeaseName('kapi-host', servingEndpoint('127.0.0.1', 6443, k)));
  assert.equal(workerNames[0], 'apiserver-kgu3syc5ad4wdapsjhl5c2ruti');
  assert.equal(new Set(workerNames).size, 3);
});

test('expiry: renewTime + leaseDurationSeconds before now, or either missing', () => {
  const now = new Date('2025-01-01T00:00:10Z');
  const lease = (spec: Lease['spec']): Lease => leaseObject({ name: 'x' }, spec ?? {});
  assert.equal(isIdentityLeaseExpired(lease({ renewTime: '2025-01-01T00:00:00.000000Z', leaseDurationSeconds: 5 }), now), true);
  assert.equal(isIdentityLeaseExpired(lease({ renewTime: '2025-01-01T00:00:00.000000Z', leaseDurationSeconds: 60 }), now), false);
  assert.equal(isIdentityLeaseExpired(lease({ leaseDurationSeconds: 60 }), now), true);
  assert.equal(isIdentityLeaseExpired(lease({ renewTime: '2025-01-01T00:00:00.000000Z' }), now), true);
});

test('every replica keeps its own identity Lease, labelled, and renews it', async () => {
  const a = h.replica();
  const b = h.replica();
  const depsA = a.deps();
  const depsB = b.deps();
  run(identityLeaseController(depsA, { hostname: 'host-1', renewIntervalMs: 200 }));
  run(identityLeaseController(depsB, { hostname: 'host-1', renewIntervalMs: 200 }));
  const nameOf = (d: ControllerDeps) => apiserverIdentityLeaseName('host-1', servingEndpoint(d.advertiseAddress, d.securePort));

  const mine = await eventually('both identity leases', async () => {
    const items = await leases().list(identityLeaseSelector);
    const byName = new Map(items.map((l) => [l.metadata.name, l]));
    const la = byName.get(nameOf(depsA));
    const lb = byName.get(nameOf(depsB));
    return la && lb ? { la, lb } : undefined;
  });
  assert.equal(mine.la.spec?.holderIdentity, depsA.identity);
  assert.equal(mine.lb.spec?.holderIdentity, depsB.identity);
  for (const l of [mine.la, mine.lb]) {
    assert.equal(l.metadata.namespace, 'kube-system');
    assert.deepEqual(l.metadata.labels, { 'apiserver.kubernetes.io/identity': 'kube-apiserver', 'kubernetes.io/hostname': 'host-1' });
    assert.equal(l.spec?.leaseDurationSeconds, 3600);
    assert.match(l.spec?.renewTime ?? '', microTimeRe);
  }
  const before = mine.la.spec?.renewTime ?? '';
  await eventually('a renewal', async () => ((await leases().get(nameOf(depsA))).spec?.renewTime ?? '') > before);
});

test('a replica restarted at the same endpoint takes its Lease over', async () => {
  const r = h.replica();
  const first = r.deps({ identity: 'first-process' });
  const name = apiserverIdentityLeaseName('host-2', servingEndpoint(first.advertiseAddress, first.securePort));
  const stopFirst = run(identityLeaseController(first, { hostname: 'host-2', renewIntervalMs: 200 }));
  await eventually('the first lease', async () => (await leases().get(name)).spec?.holderIdentity === 'first-process');
  await stopFirst();
  run(identityLeaseController(r.deps({ identity: 'second-process' }), { hostname: 'host-2', renewIntervalMs: 200 }));
  const taken = await eventually('the takeover', async () => {
    const l = await leases().get(name);
    return l.spec?.holderIdentity === 'second-process' ? l : undefined;
  });
  assert.equal(taken.spec?.leaseTransitions, 1);
});

test('the collector deletes expired identity Leases and leaves live and unrelated ones', async () => {
  const labels = { 'apiserver.kubernetes.io/identity': 'kube-apiserver', 'kubernetes.io/hostname': 'gone-host' };
  const old = microTime(new Date(Date.now() - 2 * 3600_000));
  await leases().create(
    leaseObject({ name: 'apiserver-expired', labels }, { holderIdentity: 'x', leaseDurationSeconds: 3600, renewTime: old }),
  );
  await leases().create(leaseObject({ name: 'apiserver-no-renew-time', labels }, { holderIdentity: 'y', leaseDurationSeconds: 3600 }));
  await leases().create(
    leaseObject({ name: 'apiserver-fresh', labels }, { holderIdentity: 'z', leaseDurationSeconds: 3600, renewTime: microTime() }),
  );
  await leases().create(leaseObject({ name: 'not-an-identity' }, { holderIdentity: 'w', leaseDurationSeconds: 1, renewTime: old }));

  const deleted = await collectExpiredIdentityLeases(leases());
  assert.deepEqual(deleted.sort(), ['apiserver-expired', 'apiserver-no-renew-time']);
  assert.equal(await gone('apiserver-expired'), true);
  assert.equal(await gone('apiserver-fresh'), false);
  assert.equal(await gone('not-an-identity'), false);
  for (const n of ['apiserver-fresh', 'not-an-identity']) await leases().delete(n);
});

test("a stopped replica's identity Lease is collected once it expires, by the elected collector", async () => {
  const r = h.replica();
  const deps = r.deps({ identity: 'short-lived' });
  const name = apiserverIdentityLeaseName('host-3', servingEndpoint(deps.advertiseAddress, deps.securePort));
  const stop = run(identityLeaseController(deps, { hostname: 'host-3', leaseDurationSeconds: 1, renewIntervalMs: 200 }));
  await eventually('the lease', async () => !(await gone(name)));
  await stop();
  // two replicas run the collector; it is leader-elected, and either deletes the lease
  run(identityLeaseGarbageCollector(h.main.deps(), { gcPeriodMs: 300, leaseDurationSeconds: 6, retryPeriodMs: 200 }));
  run(identityLeaseGarbageCollector(r.deps(), { gcPeriodMs: 300, leaseDurationSeconds: 6, retryPeriodMs: 200 }));
  await eventually('the expired lease to be collected', () => gone(name));
  const gcLease = await leases().get('kapi-apiserver-identity-lease-gc');
  assert.ok([h.main.deps().identity, r.deps().identity].includes(gcLease.spec?.holderIdentity ?? ''));
});
