import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { loadCatalog } from './catalog.js';
import {
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  discoveryNotModified,
  negotiateDiscovery,
} from './discovery.js';

const catalog = loadCatalog();
const text = (b: Buffer | undefined): string => {
  assert.ok(b);
  return b.toString('utf8');
};

test('/api is APIVersions without apiVersion, one CIDR entry, and a trailing newline', () => {
  const doc = apiVersions('127.0.0.1:6443');
  assert.equal(doc.contentType, 'application/json');
  assert.equal(
    text(doc.body),
    '{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1:6443"}]}\n',
  );
  const inCluster = JSON.parse(text(apiVersions('10.1.1.1:6443', [{ clientCIDR: '10.0.0.0/24', serverAddress: '10.0.0.1:443' }]).body));
  assert.equal(inCluster.serverAddressByClientCIDRs.length, 2);
});

test("/apis lists the groups in the aggregator's order, preferred version first", () => {
  const body = text(apiGroupList(catalog).body);
  assert.ok(
    body.startsWith(
      '{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"apiregistration.k8s.io","versions":[{"groupVersion":"apiregistration.k8s.io/v1","version":"v1"}],' +
        '"preferredVersion":{"groupVersion":"apiregistration.k8s.io/v1","version":"v1"}},{"name":"apps",',
    ),
    body.slice(0, 300),
  );
  assert.ok(body.endsWith('}]}\n'));
  const list = JSON.parse(body) as { groups: { name: string; versions: { version: string }[]; preferredVersion: { version: string } }[] };
  assert.deepEqual(
    list.groups.map((g) => g.name),
    [
      'apiregistration.k8s.io',
      'apps',
      'events.k8s.io',
      'authentication.k8s.io',
      'authorization.k8s.io',
      'autoscaling',
      'batch',
      'certificates.k8s.io',
      'networking.k8s.io',
      'policy',
      'rbac.authorization.k8s.io',
      'storage.k8s.io',
      'admissionregistration.k8s.io',
      'apiextensions.k8s.io',
      'scheduling.k8s.io',
      'coordination.k8s.io',
      'node.k8s.io',
      'discovery.k8s.io',
      'flowcontrol.apiserver.k8s.io',
    ],
  );
  const autoscaling = list.groups.find((g) => g.name === 'autoscaling');
  assert.deepEqual(
    autoscaling?.versions.map((v) => v.version),
    ['v2', 'v1'],
  );
  assert.equal(autoscaling?.preferredVersion.version, 'v2');
  assert.ok(!body.includes('serverAddressByClientCIDRs'));
});

test('/apis/<group> is an APIGroup with type meta; unknown groups have none', () => {
  assert.equal(
    text(apiGroup(catalog, 'autoscaling')?.body),
    '{"kind":"APIGroup","apiVersion":"v1","name":"autoscaling","versions":[{"groupVersion":"autoscaling/v2","version":"v2"},' +
      '{"groupVersion":"autoscaling/v1","version":"v1"}],"preferredVersion":{"groupVersion":"autoscaling/v2","version":"v2"}}\n',
  );
  assert.equal(apiGroup(catalog, 'resource.k8s.io'), undefined);
  assert.equal(apiGroup(catalog, ''), undefined);
});

test("/api/v1 has no apiVersion; resources and subresources in kube's order and field order", () => {
  const body = text(apiResourceList(catalog, '', 'v1')?.body);
  assert.ok(
    body.startsWith(
      '{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"bindings","singularName":"binding","namespaced":true,"kind":"Binding","verbs":["create"]},' +
        '{"name":"componentstatuses","singularName":"componentstatus","namespaced":false,"kind":"ComponentStatus","verbs":["get","list"],"shortNames":["cs"]},' +
        '{"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],' +
        '"shortNames":["cm"],"storageVersionHash":"qFsyl6wFWjQ="},',
    ),
    body.slice(0, 600),
  );
  assert.ok(
    body.includes(
      '{"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],' +
        '"shortNames":["po"],"categories":["all"],"storageVersionHash":"xPOwRZ+Yhw8="},' +
        '{"name":"pods/attach","singularName":"","namespaced":true,"kind":"PodAttachOptions","verbs":["create","get"]},' +
        '{"name":"pods/binding","singularName":"","namespaced":true,"kind":"Binding","verbs":["create"]},' +
        '{"name":"pods/ephemeralcontainers","singularName":"","namespaced":true,"kind":"Pod","verbs":["get","patch","update"]},' +
        '{"name":"pods/eviction","singularName":"","namespaced":true,"group":"policy","version":"v1","kind":"Eviction","verbs":["create"]},' +
        '{"name":"pods/exec","singularName":"","namespaced":true,"kind":"PodExecOptions","verbs":["create","get"]},' +
        '{"name":"pods/log","singularName":"","namespaced":true,"kind":"Pod","verbs":["get"]},' +
        '{"name":"pods/portforward","singularName":"","namespaced":true,"kind":"PodPortForwardOptions","verbs":["create","get"]},' +
        '{"name":"pods/proxy","singularName":"","namespaced":true,"kind":"PodProxyOptions","verbs":["create","delete","get","patch","update"]},' +
        '{"name":"pods/resize","singularName":"","namespaced":true,"kind":"Pod","verbs":["get","patch","update"]},' +
        '{"name":"pods/status","singularName":"","namespaced":true,"kind":"Pod","verbs":["get","patch","update"]},' +
        '{"name":"podtemplates",',
    ),
  );
  assert.ok(
    body.includes(
      '{"name":"serviceaccounts/token","singularName":"","namespaced":true,"group":"authentication.k8s.io","version":"v1","kind":"TokenRequest","verbs":["create"]}',
    ),
  );
  assert.ok(body.endsWith('"verbs":["get","patch","update"]}]}\n'));
});

test("/apis/apps/v1 carries apiVersion and kube's field order", () => {
  const list = JSON.parse(text(apiResourceList(catalog, 'apps', 'v1')?.body)) as Record<string, unknown> & {
    resources: Record<string, unknown>[];
  };
  assert.deepEqual(Object.keys(list), ['kind', 'apiVersion', 'groupVersion', 'resources']);
  assert.equal(list.apiVersion, 'v1');
  assert.equal(list.groupVersion, 'apps/v1');
  assert.deepEqual(
    list.resources.map((r) => r.name),
    [
      'controllerrevisions',
      'daemonsets',
      'daemonsets/status',
      'deployments',
      'deployments/scale',
      'deployments/status',
      'replicasets',
      'replicasets/scale',
      'replicasets/status',
      'statefulsets',
      'statefulsets/scale',
      'statefulsets/status',
    ],
  );
  const deployments = list.resources.find((r) => r.name === 'deployments');
  assert.deepEqual(deployments, {
    name: 'deployments',
    singularName: 'deployment',
    namespaced: true,
    kind: 'Deployment',
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    shortNames: ['deploy'],
    categories: ['all'],
    storageVersionHash: '8aSe+NMegvE=',
  });
  assert.deepEqual(Object.keys(deployments ?? {}), [
    'name',
    'singularName',
    'namespaced',
    'kind',
    'verbs',
    'shortNames',
    'categories',
    'storageVersionHash',
  ]);
  const scale = list.resources.find((r) => r.name === 'deployments/scale');
  assert.deepEqual(Object.keys(scale ?? {}), ['name', 'singularName', 'namespaced', 'group', 'version', 'kind', 'verbs']);
  assert.deepEqual(scale, {
    name: 'deployments/scale',
    singularName: '',
    namespaced: true,
    group: 'autoscaling',
    version: 'v1',
    kind: 'Scale',
    verbs: ['get', 'patch', 'update'],
  });
  assert.equal(apiResourceList(catalog, 'batch', 'v1beta1'), undefined);
  assert.equal(apiResourceList(loadCatalog({ runtimeConfig: { 'apps/v1': 'false' } }), 'apps', 'v1'), undefined);
});

test("aggregated /apis: APIGroupDiscoveryList v2 with kube's ETag", () => {
  const doc = aggregatedDiscovery(catalog, 'apis');
  assert.equal(doc.contentType, 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
  assert.deepEqual(doc.headers, { Vary: 'Accept', 'Cache-Control': 'public' });
  const body = text(doc.body);
  assert.ok(body.endsWith('\n'));
  assert.ok(
    body.startsWith(
      '{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","metadata":{},"items":[{"metadata":{"name":"apiregistration.k8s.io","creationTimestamp":null},"versions":[{"version":"v1","resources":[{"resource":"apiservices","responseKind":{"group":"","version":"","kind":"APIService"},"scope":"Cluster","singularResource":"apiservice","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"categories":["api-extensions"],"subresources":[{"subresource":"status","responseKind":{"group":"","version":"","kind":"APIService"},"verbs":["get","patch","update"]}]}],"freshness":"Current"}]},',
    ),
  );
  // the hash covers the list as Go marshals it without type meta
  const parsed = JSON.parse(body) as { items: unknown[] };
  const expected = createHash('sha512')
    .update(JSON.stringify({ metadata: {}, items: parsed.items }))
    .digest('hex')
    .toUpperCase();
  assert.equal(doc.etag, `"${expected}"`);

  const apps = (
    parsed.items as { metadata: { name: string }; versions: { version: string; resources: Record<string, unknown>[] }[] }[]
  ).find((i) => i.metadata.name === 'apps');
  const deployments = apps?.versions[0]?.resources.find((r) => r.resource === 'deployments');
  assert.deepEqual(Object.keys(deployments ?? {}), [
    'resource',
    'responseKind',
    'scope',
    'singularResource',
    'verbs',
    'shortNames',
    'categories',
    'subresources',
  ]);
  assert.deepEqual(deployments?.subresources, [
    { subresource: 'scale', responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] },
    { subresource: 'status', responseKind: { group: '', version: '', kind: 'Deployment' }, verbs: ['get', 'patch', 'update'] },
  ]);
  const autoscaling = (parsed.items as { metadata: { name: string }; versions: { version: string }[] }[]).find(
    (i) => i.metadata.name === 'autoscaling',
  );
  assert.deepEqual(
    autoscaling?.versions.map((v) => v.version),
    ['v2', 'v1'],
  );
});

test('aggregated /api holds the core group without a name', () => {
  const doc = aggregatedDiscovery(catalog, 'api');
  const parsed = JSON.parse(text(doc.body)) as {
    items: { metadata: Record<string, unknown>; versions: { version: string; resources: { resource: string }[] }[] }[];
  };
  assert.equal(parsed.items.length, 1);
  assert.deepEqual(parsed.items[0]?.metadata, { creationTimestamp: null });
  assert.equal(parsed.items[0]?.versions[0]?.version, 'v1');
  assert.equal(parsed.items[0]?.versions[0]?.resources.length, 17);
  assert.notEqual(doc.etag, aggregatedDiscovery(catalog, 'apis').etag);
});

test('v2beta1 differs only in apiVersion and content type; the ETag is shared', () => {
  const v2 = aggregatedDiscovery(catalog, 'apis', 'v2');
  const beta = aggregatedDiscovery(catalog, 'apis', 'v2beta1');
  assert.equal(beta.contentType, 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList');
  assert.equal(beta.etag, v2.etag);
  assert.equal(text(beta.body).replace('apidiscovery.k8s.io/v2beta1', 'apidiscovery.k8s.io/v2'), text(v2.body));
});

test('If-None-Match with the ETag is a 304; a changed catalog changes the ETag', () => {
  const doc = aggregatedDiscovery(catalog, 'apis');
  assert.equal(discoveryNotModified(doc, doc.etag), true);
  assert.equal(discoveryNotModified(doc, '"other"'), false);
  assert.equal(discoveryNotModified(doc, undefined), false);
  assert.equal(discoveryNotModified(apiGroupList(catalog), '""'), false);
  const fewer = aggregatedDiscovery(loadCatalog({ runtimeConfig: { 'batch/v1': 'false' } }), 'apis');
  assert.notEqual(fewer.etag, doc.etag);
});

test('negotiation: aggregated when any clause asks for it, legacy otherwise', () => {
  const kubectl =
    'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
  assert.equal(negotiateDiscovery(kubectl), 'v2');
  assert.equal(negotiateDiscovery('application/json'), 'legacy');
  assert.equal(negotiateDiscovery(undefined), 'legacy');
  assert.equal(negotiateDiscovery('application/json, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'), 'v2');
  // 1.33 no longer serves v2beta1 (AggregatedDiscoveryRemoveBetaType)
  const betaOnly = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
  assert.equal(negotiateDiscovery(betaOnly), 'legacy');
  assert.equal(negotiateDiscovery(betaOnly, { allowV2beta1: true }), 'v2beta1');
  assert.equal(negotiateDiscovery('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0,application/json'), 'legacy');
  assert.equal(negotiateDiscovery('application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'), 'legacy');
  assert.equal(negotiateDiscovery('*/*;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'), 'v2');
});
