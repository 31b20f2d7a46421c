import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubeObject } from '../../storage/interface.js';
import { runBootstrap, systemNamespaces } from './bootstrap.js';
import { startControllers } from './index.js';
import { eventually, startHarness, testContext, type Harness } from './testing/harness.js';

let h: Harness;

before(async () => {
  h = await startHarness();
});

after(async () => {
  await h.close();
});

test('bootstrap run concurrently by two replicas (twice each) creates the system namespaces and the kubernetes Service once', async () => {
  const other = h.replica();
  await Promise.all([runBootstrap(h.main.deps()), runBootstrap(other.deps()), runBootstrap(h.main.deps()), runBootstrap(other.deps())]);

  const namespaces = h.main.rest('', 'v1', 'namespaces');
  const list = await namespaces.list(testContext(), {});
  assert.deepEqual(list.items.map((n) => n.metadata.name).sort(), [...systemNamespaces].sort());
  for (const ns of list.items) {
    assert.equal((ns.status as { phase?: string }).phase, 'Active');
    assert.deepEqual((ns.spec as { finalizers?: string[] }).finalizers, ['kubernetes']);
  }

  const services = h.main.rest('', 'v1', 'services');
  const svc = await services.get(testContext('default'), 'kubernetes', {});
  const spec = svc.spec as Record<string, unknown>;
  assert.equal(spec.clusterIP, '10.0.0.1');
  assert.deepEqual(spec.clusterIPs, ['10.0.0.1']);
  assert.equal(spec.type, 'ClusterIP');
  assert.deepEqual(spec.ports, [{ name: 'https', protocol: 'TCP', port: 443, targetPort: 6443 }]);
  assert.deepEqual(svc.metadata.labels, { component: 'apiserver', provider: 'kubernetes' });
  assert.equal((await services.list(testContext('default'), {})).items.length, 1);

  // a further pass writes nothing
  const before = svc.metadata.resourceVersion;
  await runBootstrap(other.deps());
  assert.equal((await services.get(testContext('default'), 'kubernetes', {})).metadata.resourceVersion, before);
});

test('bootstrap puts changed ports of the kubernetes Service back', async () => {
  await runBootstrap(h.main.deps());
  const services = h.main.rest('', 'v1', 'services');
  await services.update(
    testContext('default'),
    'kubernetes',
    (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), ports: [{ name: 'web', protocol: 'TCP', port: 8080, targetPort: 8080 }] } }),
    { allowCreate: false },
  );
  await runBootstrap(h.main.deps({ securePort: 7443 }));
  const svc = await services.get(testContext('default'), 'kubernetes', {});
  assert.deepEqual((svc.spec as { ports: unknown }).ports, [{ name: 'https', protocol: 'TCP', port: 443, targetPort: 7443 }]);
});

function endpointIPs(ep: KubeObject): string[] {
  const subsets = (ep.subsets ?? []) as Array<{ addresses?: Array<{ ip: string }> }>;
  return subsets.flatMap((s) => (s.addresses ?? []).map((a) => a.ip));
}

test('startControllers on two replicas: both addresses in the kubernetes Endpoints and EndpointSlice; a stopped replica is removed', async () => {
  const other = h.replica();
  const a = startControllers(h.main.deps());
  const b = startControllers(other.deps());
  try {
    await Promise.all([a.bootstrapped, b.bootstrapped]);
    const endpoints = h.main.rest('', 'v1', 'endpoints');
    const slices = h.main.rest('discovery.k8s.io', 'v1', 'endpointslices');
    const both = ['127.0.0.1', other.deps().advertiseAddress].sort();
    await eventually('both replicas in the Endpoints', async () => {
      const ep = await endpoints.get(testContext('default'), 'kubernetes', {});
      return JSON.stringify(endpointIPs(ep)) === JSON.stringify(both);
    });
    const ep = await endpoints.get(testContext('default'), 'kubernetes', {});
    assert.equal(ep.metadata.labels?.['endpointslice.kubernetes.io/skip-mirror'], 'true');
    assert.deepEqual((ep.subsets as Array<{ ports: unknown }>)[0]!.ports, [{ name: 'https', port: 6443, protocol: 'TCP' }]);
    const slice = await eventually('both replicas in the EndpointSlice', async () => {
      const s = await slices.get(testContext('default'), 'kubernetes', {});
      const ips = (s.endpoints as Array<{ addresses: string[] }>).flatMap((e) => e.addresses);
      return JSON.stringify(ips) === JSON.stringify(both) ? s : undefined;
    });
    assert.equal(slice.addressType, 'IPv4');
    assert.equal(slice.metadata.labels?.['kubernetes.io/service-name'], 'kubernetes');
    assert.deepEqual(slice.ports, [{ name: 'https', port: 6443, protocol: 'TCP' }]);

    await b.stop();
    const ep2 = await endpoints.get(testContext('default'), 'kubernetes', {});
    assert.deepEqual(endpointIPs(ep2), ['127.0.0.1']);
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
});
