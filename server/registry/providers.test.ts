// The descriptors: one per built-in resource of the generated catalog, none twice, none for a
// resource the catalog lacks; a resource without one is refused, not served with defaults;
// and the field selector facets some of them carry.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadCatalog } from '../apis/catalog.js';
import type { ResourceInfo } from '../apis/types.js';
import { parseFieldSelector } from '../selectors/fields.js';
import { objectMetaFieldLabels, selectableFields, type FieldLabelConverter } from '../selectors/field-sets.js';
import { SelectorError } from '../selectors/labels.js';
import { isVirtual } from './descriptor.js';
import { builtinDescriptors, DescriptorIndex, groupProviders } from './providers.js';
import { createRegistry } from './registry.js';
import type { Storage } from '../../storage/interface.js';

/** every resource the generated catalog can serve: all versions, all gates on */
function everyBuiltinResource(): ResourceInfo[] {
  return loadCatalog({ runtimeConfig: { 'api/all': true }, featureEnabled: () => true }).resources();
}

test('every built-in resource of the generated catalog has exactly one descriptor', () => {
  const described = groupProviders.flatMap((p) => p.resources.map((d) => d.key));
  const catalogKeys = new Set(everyBuiltinResource().map((r) => `${r.group}/${r.resource}`));
  for (const key of catalogKeys) assert.equal(described.filter((k) => k === key).length, 1, `descriptors of ${key}`);
  for (const key of described) assert.ok(catalogKeys.has(key), `${key} is described but not in the catalog`);
});

test('each provider describes only its own group', () => {
  for (const p of groupProviders) {
    for (const d of p.resources) assert.equal(d.key.slice(0, d.key.lastIndexOf('/')), p.group, d.key);
  }
});

test('a resource without a descriptor is refused, not served with defaults', () => {
  const widgets = { ...everyBuiltinResource()[0]!, group: 'example.com', resource: 'widgets', kind: 'Widget' };
  assert.throws(
    () => createRegistry({ resources: [widgets], storageFor: () => assert.fail('no storage is asked for') }),
    /no descriptor for the resource example\.com\/widgets/,
  );
  assert.throws(() => builtinDescriptors().require(widgets), /add one to its group's provider/);
  assert.equal(builtinDescriptors().find(widgets), undefined);
});

test('two descriptors of one resource are refused', () => {
  const pods = { key: '/pods', serve: () => assert.fail('not built') } as const;
  assert.throws(() => new DescriptorIndex([{ group: '', resources: [pods, pods] }]), /two descriptors for \/pods/);
});

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof SelectorError);
    return e.message;
  }
  assert.fail('no error');
}

function fieldLabelsOf(group: string, resource: string): FieldLabelConverter {
  return builtinDescriptors().require({ group, resource }).fieldLabels ?? objectMetaFieldLabels;
}

function fieldsOf(group: string, resource: string, namespaced: boolean) {
  const d = builtinDescriptors().require({ group, resource });
  assert.ok(!isVirtual(d));
  return selectableFields(namespaced, d.selectableFields);
}

test('per-resource field labels: supported, renamed, rejected', () => {
  const pod = fieldLabelsOf('', 'pods');
  assert.deepEqual(pod('spec.nodeName', 'n1'), ['spec.nodeName', 'n1']);
  assert.deepEqual(pod('spec.host', 'n1'), ['spec.nodeName', 'n1']);
  assert.equal(
    message(() => pod('spec.bogus', 'x')),
    'field label not supported: spec.bogus',
  );
  const cm = fieldLabelsOf('', 'configmaps');
  assert.deepEqual(cm('metadata.namespace', 'a'), ['metadata.namespace', 'a']);
  assert.equal(
    message(() => cm('data.x', 'a')),
    '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"',
  );
  const node = fieldLabelsOf('', 'nodes');
  assert.equal(
    message(() => node('metadata.namespace', '')),
    'field label not supported: metadata.namespace',
  );
  const job = fieldLabelsOf('batch', 'jobs');
  assert.equal(
    message(() => job('spec.x', '')),
    'field label "spec.x" not supported for "Job"',
  );
  const ev = fieldLabelsOf('events.k8s.io', 'events');
  assert.deepEqual(ev('regarding.name', 'p'), ['involvedObject.name', 'p']);
  assert.deepEqual(ev('reportingController', 'c'), ['reportingComponent', 'c']);
  assert.equal(
    message(() => ev('involvedObject.name', 'p')),
    'field label not supported: involvedObject.name',
  );
});

test('selectable fields of stored objects', () => {
  const podFields = fieldsOf(
    '',
    'pods',
    true,
  )({
    metadata: { name: 'p', namespace: 'ns' },
    spec: { nodeName: 'n1', restartPolicy: 'Always', hostNetwork: true },
    status: { phase: 'Running', podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }] },
  });
  assert.equal(podFields['metadata.name'], 'p');
  assert.equal(podFields['metadata.namespace'], 'ns');
  assert.equal(podFields['spec.hostNetwork'], 'true');
  assert.equal(podFields['status.podIP'], '10.0.0.1');
  assert.equal(parseFieldSelector('spec.nodeName=n1,status.phase=Running').matches(podFields), true);
  const ns = fieldsOf('', 'namespaces', false)({ metadata: { name: 'a' }, status: { phase: 'Active' } });
  assert.deepEqual(ns, { 'metadata.name': 'a', 'status.phase': 'Active' });
  const job = fieldsOf('batch', 'jobs', true)({ metadata: { name: 'j', namespace: 'd' }, status: { succeeded: 2 } });
  assert.equal(job['status.successful'], '2');
  // events.k8s.io Events are matched as the core Events they are stored as
  const ev = fieldsOf('events.k8s.io', 'events', true)({ metadata: { name: 'e', namespace: 'd' }, involvedObject: { name: 'p' } });
  assert.equal(ev['involvedObject.name'], 'p');
});

test("a status endpoint keeps the stored labels where the resource's descriptor says so", () => {
  const resources = everyBuiltinResource().filter(
    (r) => r.version === 'v1' && (r.resource === 'deployments' || r.resource === 'persistentvolumeclaims'),
  );
  const registry = createRegistry({ resources, storageFor: () => ({}) as Storage });
  assert.equal(registry.lookup('apps', 'v1', 'deployments', 'status')?.statusKeepsLabels, true);
  assert.notEqual(registry.lookup('', 'v1', 'persistentvolumeclaims', 'status')?.statusKeepsLabels, true);
  assert.notEqual(registry.lookup('apps', 'v1', 'deployments')?.statusKeepsLabels, true);
});
