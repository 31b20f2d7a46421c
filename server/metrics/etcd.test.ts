import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startEtcd, type EtcdProcess } from '../../storage/testing/etcd-server.js';
import { createEtcdClient } from '../../storage/etcd/client.js';
import type { EtcdClient } from '../../storage/etcd/types.js';
import { createEtcd3Store } from '../../storage/etcd3/store.js';
import { everything, type Storage } from '../../storage/interface.js';
import { ApiserverMetrics } from './apiserver-metrics.js';
import { instrumentEtcdClient, KeyTypes } from './etcd.js';
import { startObjectCountPoller } from './storage-objects.js';

const prefix = '/registry';
const types = new KeyTypes(prefix, [
  { keyPrefix: '/configmaps', label: 'configmaps' },
  { keyPrefix: '/apps/deployments', label: 'deployments.apps' },
]);

let etcd: EtcdProcess;
let client: EtcdClient;
let store: Storage;
const metrics = new ApiserverMetrics();

before(async () => {
  etcd = await startEtcd();
  client = createEtcdClient({ endpoints: [etcd.endpoint] });
  store = createEtcd3Store(instrumentEtcdClient(client, types, metrics), { prefix });
});

after(async () => {
  await store.close();
  client.close();
  await etcd.stop();
});

async function requests(operation: string, type: string): Promise<number> {
  const m = await metrics.etcdRequests.get();
  return m.values.find((v) => v.labels.operation === operation && v.labels.type === type)?.value ?? 0;
}

test('KeyTypes: core resources one segment deep, named groups two; other keys have no type', () => {
  assert.equal(types.typeOf('/registry/configmaps/ns/a'), 'configmaps');
  assert.equal(types.typeOf('/registry/configmaps/'), 'configmaps');
  assert.equal(types.typeOf('/registry/configmaps'), 'configmaps');
  assert.equal(types.typeOf('/registry/apps/deployments/ns/d'), 'deployments.apps');
  assert.equal(types.typeOf('/registry/apps/'), undefined);
  assert.equal(types.typeOf('/registry/kapi/progress-marker'), undefined);
  assert.equal(types.typeOf('/registry/'), undefined);
  assert.equal(types.typeOf('/other/configmaps/a'), undefined);
});

test("the store's etcd calls are counted and timed per operation and group-resource", async () => {
  const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' }, data: { a: '1' } });
  await store.create('/configmaps/ns/a', cm('a'));
  await store.get('/configmaps/ns/a', {});
  await store.guaranteedUpdate('/configmaps/ns/a', async (cur) => ({ ...cur!, data: { a: '2' } }));
  await store.getList('/configmaps/ns/', { recursive: true, predicate: everything });
  assert.equal(await store.count('/configmaps'), 1);
  await store.delete('/configmaps/ns/a');
  await store.create('/apps/deployments/ns/d', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'ns' } });
  await assert.rejects(
    store.create('/apps/deployments/ns/d', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'ns' } }),
  );

  assert.equal(await requests('create', 'configmaps'), 1);
  // the read of the update's and the delete's current state, and the get itself
  assert.equal(await requests('get', 'configmaps'), 3);
  assert.equal(await requests('update', 'configmaps'), 1);
  assert.equal(await requests('delete', 'configmaps'), 1);
  assert.equal(await requests('list', 'configmaps'), 1);
  // kube-apiserver labels count calls with the etcd key prefix
  assert.equal(await requests('listWithCount', '/registry/configmaps/'), 1);
  // a failed create (the key exists) is a request like any other; etcd answered it
  assert.equal(await requests('create', 'deployments.apps'), 2);

  const durations = await metrics.etcdRequestDuration.get();
  const count = durations.values.find(
    (v) => v.metricName === 'etcd_request_duration_seconds_count' && v.labels.operation === 'create' && v.labels.type === 'configmaps',
  );
  assert.equal(count?.value, 1);
  const text = await metrics.registry.metrics();
  assert.match(text, /etcd_request_duration_seconds_bucket\{le="0\.005",operation="create",type="configmaps"\}/);
});

test("apiserver_storage_objects: the poller sets each resource's count", async () => {
  const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'counted' } });
  await store.create('/configmaps/counted/x', cm('x'));
  await store.create('/configmaps/counted/y', cm('y'));
  // a period long enough that only the first round runs; pollOnce runs another on demand
  const poller = startObjectCountPoller([{ label: 'configmaps', keyPrefix: '/configmaps', storage: store }], 3_600_000, metrics);
  try {
    await poller.pollOnce();
    const gauge = await metrics.storageObjects.get();
    assert.equal(gauge.values.find((v) => v.labels.resource === 'configmaps')?.value, 2);
  } finally {
    poller.stop();
  }
});
