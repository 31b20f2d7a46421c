import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareKubeAwareVersions, knownGroupVersions, loadCatalog, RuntimeConfigError } from './catalog.js';
import type { ResourceInfo } from './types.js';
import { API_RESOURCES_1_33, API_VERSIONS_1_33, STORAGE_VERSION_HASHES_1_33 } from './testdata-1.33.js';

const gvr = (r: ResourceInfo): string => `${r.group ? `${r.group}/` : ''}${r.version}/${r.resource}`;
const gvString = (group: string, version: string): string => (group ? `${group}/${version}` : version);

test('the default catalog is what kubectl api-resources shows for kube-apiserver 1.33', () => {
  const catalog = loadCatalog();
  // one row per resource name and group, in its preferred version
  const rows = new Map<string, string>();
  for (const r of catalog.resources()) {
    if (r.version !== r.preferredVersion) continue;
    rows.set(`${r.resource} ${r.group}`, [r.shortNames.join(','), gvString(r.group, r.version), r.namespaced, r.kind].join(' '));
  }
  const expected = new Map(
    API_RESOURCES_1_33.map(([name, short, gv, namespaced, kind]) => [
      `${name} ${gv.includes('/') ? gv.split('/')[0] : ''}`,
      [short, gv, namespaced, kind].join(' '),
    ]),
  );
  assert.deepEqual(rows, expected);
});

test('the served group versions are kubectl api-versions of 1.33', () => {
  const versions = loadCatalog()
    .groupVersions()
    .map((g) => gvString(g.group, g.version))
    .sort();
  assert.deepEqual(versions, API_VERSIONS_1_33);
  assert.equal(loadCatalog().resources().length, 61);
});

test('storage version hashes equal kube-apiserver 1.33 for every stored resource', () => {
  const catalog = loadCatalog();
  const got: Record<string, string> = {};
  const unstored: string[] = [];
  for (const r of catalog.resources()) {
    if (r.storageVersionHash) got[gvr(r)] = r.storageVersionHash;
    else unstored.push(gvr(r));
  }
  assert.deepEqual(got, STORAGE_VERSION_HASHES_1_33);
  assert.deepEqual(unstored.sort(), [
    'authentication.k8s.io/v1/selfsubjectreviews',
    'authentication.k8s.io/v1/tokenreviews',
    'authorization.k8s.io/v1/localsubjectaccessreviews',
    'authorization.k8s.io/v1/selfsubjectaccessreviews',
    'authorization.k8s.io/v1/selfsubjectrulesreviews',
    'authorization.k8s.io/v1/subjectaccessreviews',
    'v1/bindings',
    'v1/componentstatuses',
  ]);
});

test('pods: verbs, kinds and subresources as discovery shows them', () => {
  const pods = loadCatalog().lookup('', 'v1', 'pods');
  assert.ok(pods);
  assert.equal(pods.kind, 'Pod');
  assert.equal(pods.listKind, 'PodList');
  assert.equal(pods.singularName, 'pod');
  assert.equal(pods.namespaced, true);
  assert.equal(pods.definition, 'io.k8s.api.core.v1.Pod');
  assert.deepEqual(pods.verbs, ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
  assert.deepEqual(pods.shortNames, ['po']);
  assert.deepEqual(pods.categories, ['all']);
  const subs = Object.fromEntries(
    pods.subresources.map((s) => [s.name, `${gvString(s.kind.group, s.kind.version)} ${s.kind.kind} ${s.verbs.join(',')}`]),
  );
  assert.deepEqual(subs, {
    attach: 'v1 PodAttachOptions create,get',
    binding: 'v1 Binding create',
    ephemeralcontainers: 'v1 Pod get,patch,update',
    eviction: 'policy/v1 Eviction create',
    exec: 'v1 PodExecOptions create,get',
    log: 'v1 Pod get',
    portforward: 'v1 PodPortForwardOptions create,get',
    proxy: 'v1 PodProxyOptions create,delete,get,patch,update',
    resize: 'v1 Pod get,patch,update',
    status: 'v1 Pod get,patch,update',
  });
});

test('scale subresources speak autoscaling/v1 Scale; namespaces have finalize and no deletecollection', () => {
  const catalog = loadCatalog();
  for (const [group, resource] of [
    ['apps', 'deployments'],
    ['apps', 'replicasets'],
    ['apps', 'statefulsets'],
    ['', 'replicationcontrollers'],
  ] as const) {
    const scale = catalog.lookup(group, 'v1', resource)?.subresources.find((s) => s.name === 'scale');
    assert.deepEqual(scale?.kind, { group: 'autoscaling', version: 'v1', kind: 'Scale' }, resource);
    assert.deepEqual(scale?.verbs, ['get', 'patch', 'update']);
  }
  const ns = catalog.lookup('', 'v1', 'namespaces');
  assert.deepEqual(ns?.verbs, ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
  assert.deepEqual(
    ns?.subresources.map((s) => `${s.name}:${s.verbs.join(',')}`),
    ['finalize:update', 'status:get,patch,update'],
  );
  assert.deepEqual(catalog.lookup('', 'v1', 'componentstatuses')?.verbs, ['get', 'list']);
  assert.deepEqual(catalog.lookup('authorization.k8s.io', 'v1', 'localsubjectaccessreviews')?.verbs, ['create']);
  assert.equal(catalog.lookup('authorization.k8s.io', 'v1', 'localsubjectaccessreviews')?.namespaced, true);
  assert.deepEqual(
    catalog.lookup('', 'v1', 'serviceaccounts')?.subresources.map((s) => `${s.name} ${s.kind.group} ${s.kind.kind}`),
    ['token authentication.k8s.io TokenRequest'],
  );
});

test('storage versions: HPAs are one autoscaling/v2 object, events.k8s.io Events are core Events', () => {
  const catalog = loadCatalog();
  for (const v of ['v1', 'v2']) {
    const hpa = catalog.lookup('autoscaling', v, 'horizontalpodautoscalers');
    assert.equal(hpa?.storageVersion, 'v2');
    assert.equal(hpa?.storageGroup, undefined);
    assert.equal(hpa?.preferredVersion, 'v2');
  }
  const events = catalog.lookup('events.k8s.io', 'v1', 'events');
  assert.equal(events?.storageGroup, '');
  assert.equal(events?.storageVersion, 'v1');
  assert.equal(catalog.lookup('apps', 'v1', 'deployments')?.storageVersion, 'v1');
});

test("deprecated resources carry kube-apiserver's warning", () => {
  const catalog = loadCatalog();
  assert.equal(
    catalog.lookup('', 'v1', 'endpoints')?.deprecationWarning,
    'v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice',
  );
  assert.equal(catalog.lookup('', 'v1', 'componentstatuses')?.deprecated, true);
  assert.equal(catalog.lookup('', 'v1', 'pods')?.deprecated, undefined);
});

test('lookupByKind finds the top-level resource of a kind', () => {
  const catalog = loadCatalog();
  assert.equal(catalog.lookupByKind('apps', 'v1', 'Deployment')?.resource, 'deployments');
  assert.equal(catalog.lookupByKind('', 'v1', 'Endpoints')?.resource, 'endpoints');
  assert.equal(catalog.lookupByKind('apps', 'v1', 'Scale'), undefined);
  assert.equal(catalog.lookupByKind('batch', 'v1beta1', 'CronJob'), undefined);
});

test('catalog entries cannot be modified by a caller', () => {
  const pods = loadCatalog().lookup('', 'v1', 'pods');
  assert.ok(pods);
  assert.throws(() => {
    (pods.verbs as string[]).push('proxy');
  }, TypeError);
});

test('--runtime-config: group versions, single resources and api/* switches', () => {
  const noBatch = loadCatalog({ runtimeConfig: { 'batch/v1': 'false' } });
  assert.equal(noBatch.isServed('batch', 'v1'), false);
  assert.equal(noBatch.lookup('batch', 'v1', 'jobs'), undefined);
  assert.ok(!noBatch.groups().some((g) => g.name === 'batch'));

  const noDeployments = loadCatalog({ runtimeConfig: { 'apps/v1/deployments': false } });
  assert.equal(noDeployments.lookup('apps', 'v1', 'deployments'), undefined);
  assert.ok(noDeployments.lookup('apps', 'v1', 'replicasets'));

  const v1Only = loadCatalog({ runtimeConfig: { 'autoscaling/v2': 'false' } });
  assert.equal(v1Only.preferredVersion('autoscaling'), 'v1');
  assert.equal(v1Only.lookup('autoscaling', 'v1', 'horizontalpodautoscalers')?.preferredVersion, 'v1');
  assert.deepEqual(v1Only.groups().find((g) => g.name === 'autoscaling')?.versions, ['v1']);

  const nothing = loadCatalog({ runtimeConfig: { 'api/all': 'false' } });
  assert.deepEqual(nothing.resources(), []);
  assert.deepEqual(nothing.groupVersions(), []);

  const onlyDeployments = loadCatalog({ runtimeConfig: { 'api/all': false, 'apps/v1/deployments': true } });
  assert.deepEqual(onlyDeployments.resources().map(gvr), ['apps/v1/deployments']);
  assert.deepEqual(onlyDeployments.groups(), [{ name: 'apps', versions: ['v1'], preferredVersion: 'v1', groupPriority: 17800 }]);
  // as in kube-apiserver, the core group has no <group>/<version> key of its own: `v1/pods`
  // reads as group "v1", which is not a built-in group, and is ignored
  assert.equal(loadCatalog({ runtimeConfig: { 'api/all': false, 'v1/pods': true } }).resources().length, 0);

  const betas = loadCatalog({ runtimeConfig: { 'api/beta': '' } });
  assert.ok(betas.isServed('resource.k8s.io', 'v1beta1'));
  assert.ok(!betas.isServed('resource.k8s.io', 'v1alpha3'));
  assert.equal(betas.preferredVersion('resource.k8s.io'), 'v1beta2');
  assert.equal(betas.preferredVersion('networking.k8s.io'), 'v1');

  // a single resource of a disabled group version
  const one = loadCatalog({ runtimeConfig: { 'storage.k8s.io/v1beta1/volumeattributesclasses': 'true' } });
  assert.deepEqual(
    one.resourcesFor('storage.k8s.io', 'v1beta1').map((r) => r.resource),
    ['volumeattributesclasses'],
  );
  assert.deepEqual(one.groups().find((g) => g.name === 'storage.k8s.io')?.versions, ['v1', 'v1beta1']);
});

test("--runtime-config errors are kube-apiserver's", () => {
  assert.throws(() => loadCatalog({ runtimeConfig: { 'apps/v2': 'true' } }), RuntimeConfigError);
  assert.throws(() => loadCatalog({ runtimeConfig: { 'batch/v1': 'maybe' } }), /invalid value of batch\/v1: maybe/);
  assert.throws(() => loadCatalog({ runtimeConfig: { 'api/all': 'yes' } }), /invalid value api\/all=yes/);
  assert.throws(() => loadCatalog({ runtimeConfig: { 'apps/v1/Deployments': 'false' } }), /always lowercase plural/);
  // groups the catalog does not know (CRD groups) are not its business
  assert.equal(loadCatalog({ runtimeConfig: { 'example.com/v1': 'false' } }).resources().length, 61);
});

test('every known group version has a discovery priority', () => {
  const gvs = knownGroupVersions();
  assert.equal(gvs.length, 35);
  for (const g of gvs) {
    assert.ok(g.groupPriority > 0 && g.versionPriority > 0, `${g.group}/${g.version}`);
  }
});

test('kube-aware version ordering', () => {
  const versions = ['foo10', 'v1', 'v12alpha1', 'v3beta1', 'foo1', 'v2', 'v11beta2', 'v10beta3', 'v11alpha2', 'v10'];
  versions.sort((a, b) => compareKubeAwareVersions(b, a));
  assert.deepEqual(versions, ['v10', 'v2', 'v1', 'v11beta2', 'v10beta3', 'v3beta1', 'v12alpha1', 'v11alpha2', 'foo1', 'foo10']);
});

test('MutatingAdmissionPolicy kinds are served only with their feature gate and their group version', () => {
  const runtimeConfig = { 'admissionregistration.k8s.io/v1alpha1': true };
  assert.equal(loadCatalog({ runtimeConfig }).isServed('admissionregistration.k8s.io', 'v1alpha1'), false);
  const gated = loadCatalog({ runtimeConfig, featureEnabled: (gate) => gate === 'MutatingAdmissionPolicy' });
  assert.deepEqual(
    gated.resourcesFor('admissionregistration.k8s.io', 'v1alpha1').map((r) => r.resource),
    ['mutatingadmissionpolicies', 'mutatingadmissionpolicybindings'],
  );
  assert.equal(loadCatalog({ featureEnabled: () => true }).isServed('admissionregistration.k8s.io', 'v1alpha1'), false);
});
