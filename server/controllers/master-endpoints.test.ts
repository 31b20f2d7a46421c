import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runBootstrap } from './bootstrap.js';
import { desiredEndpoints, desiredEndpointSlice, listMasters, masterEndpointsController } from './master-endpoints.js';
import { eventually, prefix, startHarness, testContext, type Harness } from './testing/harness.js';
import { sleep } from './util.js';

test('one port: a single subset, as kube-apiserver writes it', () => {
  const ep = desiredEndpoints([
    { ip: '10.1.0.3', port: 6443 },
    { ip: '10.1.0.2', port: 6443 },
  ]);
  assert.deepEqual(ep.subsets, [
    { addresses: [{ ip: '10.1.0.2' }, { ip: '10.1.0.3' }], ports: [{ name: 'https', port: 6443, protocol: 'TCP' }] },
  ]);
  const slice = desiredEndpointSlice([{ ip: 'fd00::2', port: 6443 }]);
  assert.equal(slice.addressType, 'IPv6');
  assert.deepEqual(slice.endpoints, [{ addresses: ['fd00::2'], conditions: { ready: true } }]);
});

test('replicas on one IP with different ports: one subset per port; the slice carries the most common port', () => {
  const masters = [
    { ip: '127.0.0.1', port: 7001 },
    { ip: '127.0.0.1', port: 7000 },
    { ip: '127.0.0.2', port: 7001 },
  ];
  assert.deepEqual(desiredEndpoints(masters).subsets, [
    { addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: 7000, protocol: 'TCP' }] },
    { addresses: [{ ip: '127.0.0.1' }, { ip: '127.0.0.2' }], ports: [{ name: 'https', port: 7001, protocol: 'TCP' }] },
  ]);
  const slice = desiredEndpointSlice(masters);
  assert.deepEqual(slice.ports, [{ name: 'https', port: 7001, protocol: 'TCP' }]);
  assert.equal((slice.endpoints as unknown[]).length, 2);
});

let h: Harness;

before(async () => {
  h = await startHarness();
  await runBootstrap(h.main.deps());
});

after(async () => {
  await h.close();
});

test('two replicas on one IP with different ports settle on one Endpoints object and stop writing it', async () => {
  const other = h.replica();
  const stop = new AbortController();
  const a = masterEndpointsController(h.main.deps({ advertiseAddress: '127.0.0.9', securePort: 7000 }), { intervalMs: 50 });
  const b = masterEndpointsController(other.deps({ advertiseAddress: '127.0.0.9', securePort: 7001 }), { intervalMs: 50 });
  const running = [a.start(stop.signal), b.start(stop.signal)];
  try {
    const endpoints = h.main.rest('', 'v1', 'endpoints');
    const settled = await eventually('both ports in the Endpoints', async () => {
      const ep = await endpoints.get(testContext('default'), 'kubernetes', {});
      return (ep.subsets as unknown[]).length === 2 ? ep : undefined;
    });
    // many passes of both replicas later, nothing was rewritten
    await sleep(600);
    const later = await endpoints.get(testContext('default'), 'kubernetes', {});
    assert.equal(later.metadata.resourceVersion, settled.metadata.resourceVersion);
    assert.deepEqual((await listMasters(h.main.etcd, prefix)).map((m) => m.port).sort(), [7000, 7001]);
  } finally {
    stop.abort();
    await Promise.all(running);
  }
  assert.deepEqual(await listMasters(h.main.etcd, prefix), [], 'stopped replicas remove their keys');
});
