// The generic store over real etcd: create (names, generateName, validation, namespaces),
// update (preconditions, status, generation), finalizers, graceful deletion, lists,
// selectors, watch, dry run, scale, deleteCollection.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject, WatchEvent } from '../../storage/interface.js';
import { ctx, startRegistry, statusOf, type RegistryHarness } from './testing/harness.js';
import type { RESTResource } from './rest.js';

let h: RegistryHarness;
let namespaces: RESTResource;
let pods: RESTResource;
let configmaps: RESTResource;
let deployments: RESTResource;

before(async () => {
  h = await startRegistry();
  namespaces = h.rest('', 'v1', 'namespaces');
  pods = h.rest('', 'v1', 'pods');
  configmaps = h.rest('', 'v1', 'configmaps');
  deployments = h.rest('apps', 'v1', 'deployments');
  for (const name of ['default', 'store', 'lists', 'graceful', 'fin', 'scale', 'dry']) {
    await namespaces.create(ctx(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }
});

after(async () => {
  await h.close();
});

function pod(name: string, extra: Partial<KubeObject> = {}, labels?: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, ...(labels ? { labels } : {}) },
    spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] },
    ...extra,
  };
}

function cm(name: string, extra: Partial<KubeObject['metadata']> = {}, data: Record<string, string> = { a: '1' }): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra }, data };
}

function deployment(name: string, replicas = 2): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    },
  };
}

const put = (obj: KubeObject) => () => obj;

test('create fills system metadata in kube order and answers in the request version', async () => {
  const created = await configmaps.create(ctx('store'), cm('fill', { resourceVersion: undefined }));
  assert.deepEqual(Object.keys(created), ['kind', 'apiVersion', 'metadata', 'data']);
  // the creator's Update entry (fieldManager unset: "unknown") comes last, as in kube
  assert.deepEqual(Object.keys(created.metadata), ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp', 'managedFields']);
  assert.equal((created.metadata.managedFields?.[0] as { manager?: string }).manager, 'unknown');
  assert.equal(created.metadata.namespace, 'store');
  assert.match(created.metadata.uid ?? '', /^[0-9a-f-]{36}$/);
  assert.match(String(created.metadata.creationTimestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.match(created.metadata.resourceVersion ?? '', /^\d+$/);
  assert.equal(created.metadata.generation, undefined);
  const got = await configmaps.get(ctx('store'), 'fill', {});
  assert.deepEqual(got, created);
});

test('create: AlreadyExists, namespace mismatch, resourceVersion set', async () => {
  await configmaps.create(ctx('store'), cm('dup'));
  const dup = await statusOf(configmaps.create(ctx('store'), cm('dup')));
  assert.equal(dup.code, 409);
  assert.equal(dup.reason, 'AlreadyExists');
  assert.equal(dup.message, 'configmaps "dup" already exists');
  const mismatch = await statusOf(configmaps.create(ctx('store'), cm('x', { namespace: 'other' })));
  assert.equal(mismatch.code, 400);
  assert.equal(mismatch.message, 'the namespace of the provided object does not match the namespace sent on the request');
  const rv = await statusOf(configmaps.create(ctx('store'), cm('rv', { resourceVersion: '12' })));
  assert.equal(rv.code, 500);
  assert.equal(rv.reason, '');
  assert.equal(rv.message, 'resourceVersion should not be set on objects to be created');
  // kube's versioner does not parse these, so they are dropped and the create goes on
  for (const [i, junk] of ['99.', 'abc', '-1', '0', '18446744073709551616'].entries()) {
    const created = await configmaps.create(ctx('store'), cm(`rv-junk-${i}`, { resourceVersion: junk }));
    assert.match(created.metadata.resourceVersion ?? '', /^[1-9]\d*$/);
  }
});

test('generateName: prefix plus five characters of the kube alphabet', async () => {
  const a = await configmaps.create(ctx('store'), cm('', { name: undefined, generateName: 'gen-' }));
  const b = await configmaps.create(ctx('store'), cm('', { name: undefined, generateName: 'gen-' }));
  assert.match(a.metadata.name ?? '', /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  assert.notEqual(a.metadata.name, b.metadata.name);
  assert.equal(a.metadata.generateName, 'gen-');
  const none = await statusOf(configmaps.create(ctx('store'), cm('', { name: undefined })));
  assert.equal(none.code, 422);
  assert.equal(none.message, 'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required');
});

test('invalid names, labels and annotations are 422 naming the field', async () => {
  const name = await statusOf(configmaps.create(ctx('store'), cm('Bad_Name')));
  assert.equal(name.code, 422);
  assert.equal(name.reason, 'Invalid');
  assert.equal(
    name.message,
    "ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
  );
  assert.deepEqual(name.details?.causes?.[0], {
    reason: 'FieldValueInvalid',
    message:
      "Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    field: 'metadata.name',
  });
  assert.equal(name.details?.kind, 'ConfigMap');
  const label = await statusOf(configmaps.create(ctx('store'), cm('lbl', { labels: { ok: 'yes', bad: 'no way' } })));
  assert.equal(label.details?.causes?.[0]?.field, 'metadata.labels');
  assert.match(label.message, /^ConfigMap "lbl" is invalid: metadata.labels: Invalid value: "no way": a valid label must be/);
  const ann = await statusOf(configmaps.create(ctx('store'), cm('ann', { annotations: { big: 'x'.repeat(256 * 1024) } })));
  assert.equal(ann.message, 'ConfigMap "ann" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes');
  // services follow DNS-1035: no leading digit
  const svc = await statusOf(
    h
      .rest('', 'v1', 'services')
      .create(ctx('store'), { apiVersion: 'v1', kind: 'Service', metadata: { name: '1svc' }, spec: { ports: [{ port: 80 }] } }),
  );
  assert.equal(svc.details?.causes?.[0]?.field, 'metadata.name');
  assert.match(svc.message, /a DNS-1035 label must consist of/);
});

test('namespaced creates need an existing namespace', async () => {
  const missing = await statusOf(configmaps.create(ctx('nope'), cm('x')));
  assert.equal(missing.code, 404);
  assert.equal(missing.message, 'namespaces "nope" not found');
  assert.deepEqual(missing.details, { name: 'nope', group: '', kind: 'namespaces' });
});

test('pods are defaulted and start Pending with a QoS class', async () => {
  const created = await pods.create(ctx('store'), {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web' },
    spec: {
      containers: [
        { name: 'a', image: 'nginx', ports: [{ containerPort: 80 }] },
        { name: 'b', image: 'busybox:1.36', resources: { limits: { cpu: '1', memory: '1Gi' } } },
      ],
    },
    status: { phase: 'Running' },
  });
  assert.deepEqual(Object.keys(created), ['kind', 'apiVersion', 'metadata', 'spec', 'status']);
  assert.equal(created.metadata.generation, 1);
  const spec = created.spec as Record<string, unknown>;
  assert.equal(spec.restartPolicy, 'Always');
  assert.equal(spec.dnsPolicy, 'ClusterFirst');
  assert.equal(spec.terminationGracePeriodSeconds, 30);
  assert.equal(spec.schedulerName, 'default-scheduler');
  assert.deepEqual(spec.securityContext, {});
  const [a, b] = spec.containers as Record<string, unknown>[];
  assert.equal(a.imagePullPolicy, 'Always');
  assert.equal(b.imagePullPolicy, 'IfNotPresent');
  assert.equal(a.terminationMessagePath, '/dev/termination-log');
  assert.equal(a.terminationMessagePolicy, 'File');
  assert.deepEqual(a.ports, [{ containerPort: 80, protocol: 'TCP' }]);
  assert.deepEqual(b.resources, { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1', memory: '1Gi' } });
  assert.equal(spec.enableServiceLinks, true);
  assert.deepEqual(created.status, { phase: 'Pending', qosClass: 'Burstable' });
  const missing = await statusOf(pods.create(ctx('store'), { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'empty' }, spec: {} }));
  assert.equal(missing.message, 'Pod "empty" is invalid: spec.containers: Required value');
});

test('update: resourceVersion precondition, unconditional update, immutable metadata', async () => {
  const created = await configmaps.create(ctx('store'), cm('upd'));
  const stale = { ...created, metadata: { ...created.metadata, resourceVersion: '1' } };
  const conflict = await statusOf(configmaps.update(ctx('store'), 'upd', put(stale), { allowCreate: false }));
  assert.equal(conflict.code, 409);
  assert.equal(conflict.reason, 'Conflict');
  assert.equal(
    conflict.message,
    'Operation cannot be fulfilled on configmaps "upd": the object has been modified; please apply your changes to the latest version and try again',
  );
  // no resourceVersion: configmaps allow an unconditional update
  const { object: updated, created: wasCreated } = await configmaps.update(ctx('store'), 'upd', put(cm('upd', {}, { a: '2' })), {
    allowCreate: false,
  });
  assert.equal(wasCreated, false);
  assert.equal((updated.data as Record<string, string>).a, '2');
  assert.equal(updated.metadata.uid, created.metadata.uid);
  assert.equal(updated.metadata.creationTimestamp, created.metadata.creationTimestamp);
  assert.notEqual(updated.metadata.resourceVersion, created.metadata.resourceVersion);
  const wrongUid = await statusOf(configmaps.update(ctx('store'), 'upd', put(cm('upd', { uid: 'nope' })), { allowCreate: false }));
  assert.equal(wrongUid.code, 409);
  assert.match(wrongUid.message, /Precondition failed: UID in precondition: nope, UID in object meta: /);
  const missing = await statusOf(configmaps.update(ctx('store'), 'absent', put(cm('absent')), { allowCreate: false }));
  assert.equal(missing.code, 404);
  const made = await configmaps.update(ctx('store'), 'absent', put(cm('absent')), { allowCreate: true });
  assert.equal(made.created, true);
  assert.ok(made.object.metadata.uid);
});

test('updates without resourceVersion where the kind requires one are 422', async () => {
  // the generic rule, exercised through a strategy that forbids unconditional updates
  const { GenericStore } = await import('./store.js');
  const { strategyFor } = await import('./registry.js');
  const info = configmaps.info;
  const strict = new GenericStore({
    info,
    strategy: { ...strategyFor(info), allowUnconditionalUpdate: false },
    storage: h.storage,
    fieldsOf: () => ({}),
  });
  await configmaps.create(ctx('store'), cm('strict'));
  const err = await statusOf(strict.update(ctx('store'), 'strict', put(cm('strict')), { allowCreate: false }));
  assert.equal(err.code, 422);
  assert.equal(
    err.message,
    'configmaps "strict" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
  );
});

test('status: the main resource ignores it, /status changes only it', async () => {
  const created = await pods.create(ctx('store'), pod('st'));
  const withStatus = { ...created, status: { phase: 'Running' } };
  const main = await pods.update(ctx('store'), 'st', put(withStatus), { allowCreate: false });
  assert.equal((main.object.status as Record<string, unknown>).phase, 'Pending');
  const status = h.rest('', 'v1', 'pods', 'status');
  const changed = {
    ...main.object,
    spec: { ...(main.object.spec as object), activeDeadlineSeconds: 5 },
    status: { phase: 'Running', podIP: '10.0.0.9' },
  };
  const viaStatus = await status.update(ctx('store'), 'st', put(changed), { allowCreate: false });
  assert.equal((viaStatus.object.status as Record<string, unknown>).phase, 'Running');
  assert.equal((viaStatus.object.spec as Record<string, unknown>).activeDeadlineSeconds, undefined);
  assert.equal(viaStatus.object.metadata.generation, main.object.metadata.generation);
  const noCreate = await statusOf(status.update(ctx('store'), 'ghost', put(pod('ghost')), { allowCreate: true }));
  assert.equal(noCreate.code, 404);
});

test('generation grows only when the spec changes', async () => {
  const d = await deployments.create(ctx('store'), deployment('gen'));
  assert.equal(d.metadata.generation, 1);
  assert.deepEqual(d.status, {});
  const labelsOnly = await deployments.update(
    ctx('store'),
    'gen',
    (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { x: 'y' } } }),
    { allowCreate: false },
  );
  assert.equal(labelsOnly.object.metadata.generation, 1);
  const specChange = await deployments.update(
    ctx('store'),
    'gen',
    (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), replicas: 5 } }),
    { allowCreate: false },
  );
  assert.equal(specChange.object.metadata.generation, 2);
  const spec = specChange.object.spec as Record<string, unknown>;
  assert.equal(spec.revisionHistoryLimit, 10);
  assert.equal(spec.progressDeadlineSeconds, 600);
  assert.deepEqual(spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
  const template = spec.template as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
  assert.equal(template.metadata.creationTimestamp, null);
  assert.equal(template.spec.enableServiceLinks, undefined);
  assert.equal(template.spec.restartPolicy, 'Always');
  const immutable = await statusOf(
    deployments.update(
      ctx('store'),
      'gen',
      (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), selector: { matchLabels: { app: 'other' } } } }),
      { allowCreate: false },
    ),
  );
  assert.equal(immutable.code, 422);
  assert.ok(immutable.details?.causes?.some((c) => c.field === 'spec.selector' && /field is immutable/.test(c.message ?? '')));
});

test('lists: <Kind>List, selectors, single-name form, unsupported field labels', async () => {
  await pods.create(ctx('lists'), pod('a', {}, { app: 'web', tier: 'front' }));
  await pods.create(ctx('lists'), pod('b', {}, { app: 'web', tier: 'back' }));
  await pods.create(ctx('lists'), pod('c', {}, { app: 'db' }));
  const all = await pods.list(ctx('lists'), {});
  assert.equal(all.kind, 'PodList');
  assert.equal(all.apiVersion, 'v1');
  assert.match(all.metadata.resourceVersion, /^\d+$/);
  assert.deepEqual(
    all.items.map((p) => p.metadata.name),
    ['a', 'b', 'c'],
  );
  assert.equal(all.items[0].kind, undefined);
  const web = await pods.list(ctx('lists'), { labelSelector: 'app=web,tier!=back' });
  assert.deepEqual(
    web.items.map((p) => p.metadata.name),
    ['a'],
  );
  const byName = await pods.list(ctx('lists'), { fieldSelector: 'metadata.name=c' });
  assert.deepEqual(
    byName.items.map((p) => p.metadata.name),
    ['c'],
  );
  const acrossNamespaces = await pods.list(ctx(''), { fieldSelector: 'metadata.namespace=lists,status.phase=Pending' });
  assert.equal(acrossNamespaces.items.length, 3);
  const unscheduled = await pods.list(ctx('lists'), { fieldSelector: 'spec.nodeName=' });
  assert.equal(unscheduled.items.length, 3);
  const bad = await statusOf(pods.list(ctx('lists'), { fieldSelector: 'spec.bogus=x' }));
  assert.equal(bad.code, 400);
  assert.equal(bad.message, 'field label not supported: spec.bogus');
  const badLabel = await statusOf(pods.list(ctx('lists'), { labelSelector: 'app in web' }));
  assert.equal(badLabel.code, 400);
  assert.equal(badLabel.message, "unable to parse requirement: found 'web' expected: '('");
  const page = await pods.list(ctx('lists'), { limit: 2 });
  assert.equal(page.items.length, 2);
  assert.ok(page.metadata.continue);
  const rest = await pods.list(ctx('lists'), { limit: 2, continue: page.metadata.continue });
  assert.deepEqual(
    rest.items.map((p) => p.metadata.name),
    ['c'],
  );
});

test('watch: events in the request version; selectors apply', async () => {
  const list = await configmaps.list(ctx('lists'), {});
  const w = await configmaps.watch(ctx('lists'), { resourceVersion: list.metadata.resourceVersion, labelSelector: 'watched=yes' });
  const it = w[Symbol.asyncIterator]();
  await configmaps.create(ctx('lists'), cm('ignored'));
  await configmaps.create(ctx('lists'), cm('seen', { labels: { watched: 'yes' } }));
  const first = (await it.next()).value as WatchEvent;
  assert.equal(first.type, 'ADDED');
  assert.equal(first.object.metadata.name, 'seen');
  assert.equal(first.object.kind, 'ConfigMap');
  assert.equal(first.object.apiVersion, 'v1');
  await configmaps.delete(ctx('lists'), 'seen', {});
  const second = (await it.next()).value as WatchEvent;
  assert.equal(second.type, 'DELETED');
  w.stop();
});

test('delete without finalizers answers a Status for most kinds', async () => {
  const created = await configmaps.create(ctx('fin'), cm('plain'));
  const res = await configmaps.delete(ctx('fin'), 'plain', {});
  assert.equal(res.deleted, true);
  assert.deepEqual(res.object, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { name: 'plain', kind: 'configmaps', uid: created.metadata.uid },
  });
  const gone = await statusOf(configmaps.get(ctx('fin'), 'plain', {}));
  assert.equal(gone.code, 404);
  assert.equal(gone.message, 'configmaps "plain" not found');
});

test('finalizers keep an object; removing the last one removes it', async () => {
  await configmaps.create(ctx('fin'), cm('held', { finalizers: ['example.com/hold'] }));
  const first = await configmaps.delete(ctx('fin'), 'held', {});
  assert.equal(first.deleted, false);
  assert.ok(first.object.metadata.deletionTimestamp);
  assert.equal(first.object.metadata.deletionGracePeriodSeconds, 0);
  const again = await configmaps.delete(ctx('fin'), 'held', {});
  assert.equal(again.deleted, false);
  assert.equal(again.object.metadata.resourceVersion, first.object.metadata.resourceVersion);
  const added = await statusOf(
    configmaps.update(
      ctx('fin'),
      'held',
      (cur) => ({ ...cur!, metadata: { ...cur!.metadata, finalizers: ['example.com/hold', 'example.com/more'] } }),
      { allowCreate: false },
    ),
  );
  assert.equal(added.code, 422);
  assert.match(added.message, /no new finalizers can be added if the object is being deleted/);
  const cleared = await configmaps.update(ctx('fin'), 'held', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, finalizers: [] } }), {
    allowCreate: false,
  });
  assert.equal(cleared.created, false);
  assert.equal((await statusOf(configmaps.get(ctx('fin'), 'held', {}))).code, 404);
});

test('propagation policies record the garbage collector finalizers', async () => {
  await configmaps.create(ctx('fin'), cm('orphaned'));
  const orphan = await configmaps.delete(ctx('fin'), 'orphaned', { propagationPolicy: 'Orphan' });
  assert.equal(orphan.deleted, false);
  assert.deepEqual(orphan.object.metadata.finalizers, ['orphan']);
  await configmaps.create(ctx('fin'), cm('fg'));
  const fg = await configmaps.delete(ctx('fin'), 'fg', { propagationPolicy: 'Foreground' });
  assert.deepEqual(fg.object.metadata.finalizers, ['foregroundDeletion']);
  await configmaps.create(ctx('fin'), cm('bg'));
  assert.equal((await configmaps.delete(ctx('fin'), 'bg', { propagationPolicy: 'Background' })).deleted, true);
  const both = await statusOf(configmaps.delete(ctx('fin'), 'fg', { propagationPolicy: 'Orphan', orphanDependents: true }));
  assert.equal(both.code, 422);
  assert.equal(
    both.message,
    'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set',
  );
});

test('delete preconditions', async () => {
  const created = await configmaps.create(ctx('fin'), cm('pre'));
  const uid = await statusOf(configmaps.delete(ctx('fin'), 'pre', { preconditions: { uid: 'other' } }));
  assert.equal(uid.code, 409);
  assert.match(
    uid.message,
    /^Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition \(other\) does not match the UID in record/,
  );
  const rv = await statusOf(configmaps.delete(ctx('fin'), 'pre', { preconditions: { resourceVersion: '1' } }));
  assert.equal(rv.code, 409);
  const ok = await configmaps.delete(ctx('fin'), 'pre', {
    preconditions: { uid: created.metadata.uid, resourceVersion: created.metadata.resourceVersion },
  });
  assert.equal(ok.deleted, true);
});

test('pods: unbound pods go at once, bound pods wait for their grace period', async () => {
  await pods.create(ctx('graceful'), pod('unbound'));
  const gone = await pods.delete(ctx('graceful'), 'unbound', {});
  assert.equal(gone.deleted, true);
  assert.equal(gone.object.kind, 'Pod');
  assert.equal((await statusOf(pods.get(ctx('graceful'), 'unbound', {}))).code, 404);

  await pods.create(ctx('graceful'), pod('bound', { spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'nginx' }] } }));
  const before = Date.now();
  const pending = await pods.delete(ctx('graceful'), 'bound', {});
  assert.equal(pending.deleted, false);
  assert.equal(pending.object.metadata.deletionGracePeriodSeconds, 30);
  const ts = Date.parse(String(pending.object.metadata.deletionTimestamp));
  assert.ok(ts >= Math.floor(before / 1000) * 1000 + 29_000, 'deletionTimestamp is about now + 30s');
  assert.equal(pending.object.metadata.generation, 2);
  // a longer grace period changes nothing
  const again = await pods.delete(ctx('graceful'), 'bound', { gracePeriodSeconds: 60 });
  assert.equal(again.deleted, false);
  assert.equal(again.object.metadata.deletionGracePeriodSeconds, 30);
  // shortening it to zero removes the pod
  const now = await pods.delete(ctx('graceful'), 'bound', { gracePeriodSeconds: 0 });
  assert.equal(now.deleted, true);
  assert.equal((await statusOf(pods.get(ctx('graceful'), 'bound', {}))).code, 404);

  await pods.create(
    ctx('graceful'),
    pod('custom', { spec: { nodeName: 'n', terminationGracePeriodSeconds: 5, containers: [{ name: 'c', image: 'x' }] } }),
  );
  const custom = await pods.delete(ctx('graceful'), 'custom', { gracePeriodSeconds: 7 });
  assert.equal(custom.object.metadata.deletionGracePeriodSeconds, 7);
});

test('deleteCollection deletes what it lists and returns the list', async () => {
  await configmaps.create(ctx('fin'), cm('col-1', { labels: { col: 'x' } }));
  await configmaps.create(ctx('fin'), cm('col-2', { labels: { col: 'x' }, finalizers: ['example.com/keep'] }));
  await configmaps.create(ctx('fin'), cm('col-3'));
  const res = await configmaps.deleteCollection(ctx('fin'), {}, { labelSelector: 'col=x' });
  assert.equal(res.kind, 'ConfigMapList');
  assert.deepEqual(
    res.items.map((i) => i.metadata.name),
    ['col-1', 'col-2'],
  );
  const left = await configmaps.list(ctx('fin'), { labelSelector: 'col=x' });
  assert.deepEqual(
    left.items.map((i) => i.metadata.name),
    ['col-2'],
  );
  assert.ok(left.items[0].metadata.deletionTimestamp);
  assert.ok(await configmaps.get(ctx('fin'), 'col-3', {}));
});

test('dry run: everything but the write', async () => {
  const created = await configmaps.create(ctx('dry', { dryRun: true }), cm('dry'));
  assert.ok(created.metadata.uid);
  assert.equal((await statusOf(configmaps.get(ctx('dry'), 'dry', {}))).code, 404);
  const bad = await statusOf(configmaps.create(ctx('dry', { dryRun: true }), cm('Bad')));
  assert.equal(bad.code, 422);
  await configmaps.create(ctx('dry'), cm('real'));
  const del = await configmaps.delete(ctx('dry', { dryRun: true }), 'real', {});
  assert.equal(del.deleted, true);
  assert.ok(await configmaps.get(ctx('dry'), 'real', {}));
  const upd = await configmaps.update(ctx('dry', { dryRun: true }), 'real', put(cm('real', {}, { a: 'dry' })), { allowCreate: false });
  assert.equal((upd.object.data as Record<string, string>).a, 'dry');
  assert.equal(((await configmaps.get(ctx('dry'), 'real', {})).data as Record<string, string>).a, '1');
});

test('scale: a Scale view of replicas; writing it updates the deployment', async () => {
  const scale = h.rest('apps', 'v1', 'deployments', 'scale');
  const d = await deployments.create(ctx('scale'), deployment('web', 3));
  const s = await scale.get(ctx('scale'), 'web', {});
  assert.deepEqual(s, {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: 'web',
      namespace: 'scale',
      uid: d.metadata.uid,
      resourceVersion: d.metadata.resourceVersion,
      creationTimestamp: d.metadata.creationTimestamp,
    },
    spec: { replicas: 3 },
    status: { replicas: 0, selector: 'app=web' },
  });
  const updated = await scale.update(ctx('scale'), 'web', (cur) => ({ ...cur!, spec: { replicas: 5 } }), { allowCreate: false });
  assert.deepEqual(updated.object.spec, { replicas: 5 });
  const after = await deployments.get(ctx('scale'), 'web', {});
  assert.equal((after.spec as Record<string, unknown>).replicas, 5);
  assert.equal(after.metadata.generation, 2);
  const negative = await statusOf(
    scale.update(ctx('scale'), 'web', (cur) => ({ ...cur!, spec: { replicas: -1 } }), { allowCreate: false }),
  );
  assert.equal(negative.code, 422);
  assert.equal(
    negative.message,
    'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
  );
  const stale = await statusOf(
    scale.update(ctx('scale'), 'web', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, resourceVersion: '1' }, spec: { replicas: 1 } }), {
      allowCreate: false,
    }),
  );
  assert.equal(stale.code, 409);
  const missing = await statusOf(scale.get(ctx('scale'), 'nope', {}));
  assert.equal(missing.code, 404);
  assert.equal(missing.message, 'deployments/scale.apps "nope" not found');
});

test('pods/binding assigns a node once', async () => {
  const binding = h.rest('', 'v1', 'pods', 'binding');
  await pods.create(ctx('graceful'), pod('tobind'));
  const res = await binding.create(ctx('graceful', { name: 'tobind' }), {
    apiVersion: 'v1',
    kind: 'Binding',
    metadata: { name: 'tobind', annotations: { 'example.com/by': 'test' } },
    target: { kind: 'Node', name: 'node-7' },
  });
  assert.equal(res.kind, 'Status');
  const bound = await pods.get(ctx('graceful'), 'tobind', {});
  assert.equal((bound.spec as Record<string, unknown>).nodeName, 'node-7');
  assert.equal(bound.metadata.annotations?.['example.com/by'], 'test');
  const cond = ((bound.status as Record<string, unknown>).conditions as Record<string, unknown>[])[0];
  assert.equal(cond.type, 'PodScheduled');
  assert.equal(cond.status, 'True');
  const again = await statusOf(
    binding.create(ctx('graceful', { name: 'tobind' }), {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name: 'tobind' },
      target: { name: 'node-8' },
    }),
  );
  assert.equal(again.code, 409);
  assert.equal(again.message, 'Operation cannot be fulfilled on pods "tobind": pod tobind is already assigned to node "node-7"');
  const noTarget = await statusOf(
    binding.create(ctx('graceful', { name: 'tobind' }), { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'tobind' }, target: {} }),
  );
  assert.equal(noTarget.code, 422);
});

test('the single-object form of list and watch selects one name', async () => {
  await configmaps.create(ctx('lists'), cm('one'));
  await configmaps.create(ctx('lists'), cm('two'));
  const one = await configmaps.list(ctx('lists'), { name: 'one' });
  assert.deepEqual(
    one.items.map((i) => i.metadata.name),
    ['one'],
  );
  const across = await configmaps.list(ctx(''), { name: 'two' });
  assert.deepEqual(
    across.items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`),
    ['lists/two'],
  );
});

test('scale of a ReplicationController uses its map selector; the selector defaults from the template', async () => {
  const rcs = h.rest('', 'v1', 'replicationcontrollers');
  const created = await rcs.create(ctx('scale'), {
    apiVersion: 'v1',
    kind: 'ReplicationController',
    metadata: { name: 'rc' },
    spec: { template: { metadata: { labels: { app: 'rc', tier: 'x' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
  });
  assert.deepEqual((created.spec as Record<string, unknown>).selector, { app: 'rc', tier: 'x' });
  assert.deepEqual(created.metadata.labels, { app: 'rc', tier: 'x' });
  assert.deepEqual(created.status, { replicas: 0 });
  const scale = h.rest('', 'v1', 'replicationcontrollers', 'scale');
  const s = await scale.get(ctx('scale'), 'rc', {});
  assert.deepEqual(s.spec, { replicas: 1 });
  assert.deepEqual(s.status, { replicas: 0, selector: 'app=rc,tier=x' });
  const zero = await scale.update(ctx('scale'), 'rc', (cur) => ({ ...cur!, spec: { replicas: 0 } }), { allowCreate: false });
  assert.deepEqual(zero.object.spec, {});
  // deleting through core/v1 orphans the pods by default
  const del = await rcs.delete(ctx('scale'), 'rc', {});
  assert.deepEqual(del.object.metadata.finalizers, ['orphan']);
});
