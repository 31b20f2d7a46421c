// Kind-specific behaviour over real etcd: version conversion on shared storage (Events,
// HorizontalPodAutoscalers), Secrets, Services (defaults, an injected IP allocator), Jobs,
// and the virtual review resources.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../storage/interface.js';
import { ctx, startRegistry, statusOf, admin, type RegistryHarness } from './testing/harness.js';
import type { ServiceIPAllocator } from './core/services.js';

let h: RegistryHarness;
const allocated: string[] = [];
const released: string[] = [];
let nextIP = 10;

const allocator: ServiceIPAllocator = {
  async allocate(svc) {
    const spec = svc.spec as Record<string, unknown>;
    if (spec.clusterIP === 'None') return async () => {};
    const ip = `10.0.0.${nextIP++}`;
    spec.clusterIP = ip;
    spec.clusterIPs = [ip];
    spec.ipFamilies = ['IPv4'];
    spec.ipFamilyPolicy = 'SingleStack';
    allocated.push(ip);
    return async (ok) => {
      if (!ok) released.push(ip);
    };
  },
  async release(svc) {
    released.push(String((svc.spec as Record<string, unknown>).clusterIP));
  },
};

before(async () => {
  h = await startRegistry({ serviceIPAllocator: allocator });
  await h.rest('', 'v1', 'namespaces').create(ctx(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'k' } });
});

after(async () => {
  await h.close();
});

test('core and events.k8s.io Events share storage and convert field names', async () => {
  const core = h.rest('', 'v1', 'events');
  const events = h.rest('events.k8s.io', 'v1', 'events');
  await core.create(ctx('k'), {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'e1' },
    involvedObject: { kind: 'Pod', name: 'p', namespace: 'k' },
    reason: 'Started',
    message: 'started container',
    type: 'Normal',
    source: { component: 'kubelet' },
    count: 2,
  });
  const viaNew = await events.get(ctx('k'), 'e1', {});
  assert.equal(viaNew.apiVersion, 'events.k8s.io/v1');
  assert.deepEqual(viaNew.regarding, { kind: 'Pod', name: 'p', namespace: 'k' });
  assert.equal(viaNew.note, 'started container');
  assert.deepEqual(viaNew.deprecatedSource, { component: 'kubelet' });
  assert.equal(viaNew.deprecatedCount, 2);
  assert.equal(viaNew.eventTime, null);
  assert.equal(viaNew.involvedObject, undefined);
  assert.deepEqual(Object.keys(viaNew).slice(0, 4), ['kind', 'apiVersion', 'metadata', 'eventTime']);

  await events.create(ctx('k'), {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: 'e2' },
    eventTime: '2024-01-01T00:00:00.000000Z',
    reportingController: 'example.com/ctl',
    reportingInstance: 'ctl-1',
    action: 'Sync',
    reason: 'Synced',
    // kube requires the event's namespace to be that of the object it is about
    regarding: { kind: 'Pod', name: 'n1', namespace: 'k' },
    note: 'synced',
    type: 'Normal',
  });
  const viaCore = await core.get(ctx('k'), 'e2', {});
  assert.equal(viaCore.apiVersion, 'v1');
  assert.deepEqual(viaCore.involvedObject, { kind: 'Pod', name: 'n1', namespace: 'k' });
  assert.equal(viaCore.message, 'synced');
  assert.equal(viaCore.reportingComponent, 'example.com/ctl');
  assert.equal(viaCore.firstTimestamp, null);
  assert.deepEqual(viaCore.source, {});
  const list = await events.list(ctx('k'), { fieldSelector: 'regarding.name=n1' });
  assert.equal(list.kind, 'EventList');
  assert.equal(list.apiVersion, 'events.k8s.io/v1');
  assert.deepEqual(
    list.items.map((e) => e.metadata.name),
    ['e2'],
  );
  const byReason = await core.list(ctx('k'), { fieldSelector: 'source=kubelet' });
  assert.deepEqual(
    byReason.items.map((e) => e.metadata.name),
    ['e1'],
  );
});

test('HorizontalPodAutoscaler: v1 CPU target <-> v2 metrics, v2-only data round-trips through v1', async () => {
  const v1 = h.rest('autoscaling', 'v1', 'horizontalpodautoscalers');
  const v2 = h.rest('autoscaling', 'v2', 'horizontalpodautoscalers');
  const scaleTargetRef = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
  await v1.create(ctx('k'), {
    apiVersion: 'autoscaling/v1',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'cpu' },
    spec: { scaleTargetRef, maxReplicas: 5, targetCPUUtilizationPercentage: 50 },
  });
  const asV2 = await v2.get(ctx('k'), 'cpu', {});
  assert.deepEqual(asV2.spec, {
    scaleTargetRef,
    minReplicas: 1,
    maxReplicas: 5,
    metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
  });
  assert.equal(asV2.metadata.generation, 1);

  await v1.create(ctx('k'), {
    apiVersion: 'autoscaling/v1',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'defaulted' },
    spec: { scaleTargetRef, maxReplicas: 3 },
  });
  const defaulted = await v1.get(ctx('k'), 'defaulted', {});
  assert.equal((defaulted.spec as Record<string, unknown>).targetCPUUtilizationPercentage, 80);
  assert.deepEqual(defaulted.status, { currentReplicas: 0, desiredReplicas: 0 });

  const memory = { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } };
  await v2.create(ctx('k'), {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'mixed' },
    spec: {
      scaleTargetRef,
      maxReplicas: 4,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } }, memory],
    },
  });
  const asV1 = await v1.get(ctx('k'), 'mixed', {});
  assert.equal((asV1.spec as Record<string, unknown>).targetCPUUtilizationPercentage, 60);
  const ann = asV1.metadata.annotations ?? {};
  assert.deepEqual(JSON.parse(ann['autoscaling.alpha.kubernetes.io/metrics']), [
    { type: 'Resource', resource: { name: 'memory', targetAverageValue: '100Mi' } },
  ]);
  // a v1 client writes back what it read: the memory metric survives
  const { object } = await v1.update(ctx('k'), 'mixed', (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), maxReplicas: 6 } }), {
    allowCreate: false,
  });
  assert.equal((object.spec as Record<string, unknown>).maxReplicas, 6);
  const back = await v2.get(ctx('k'), 'mixed', {});
  assert.deepEqual((back.spec as Record<string, unknown>).metrics, [
    memory,
    { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
  ]);
  assert.equal(back.metadata.annotations, undefined);
  assert.equal(back.metadata.generation, 2);
});

test('Secrets: type Opaque, stringData folded into data, base64 checked, type immutable', async () => {
  const secrets = h.rest('', 'v1', 'secrets');
  const s = await secrets.create(ctx('k'), {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's' },
    data: { a: Buffer.from('x').toString('base64') },
    stringData: { b: 'hello' },
  });
  assert.deepEqual(Object.keys(s), ['kind', 'apiVersion', 'metadata', 'data', 'type']);
  assert.equal(s.type, 'Opaque');
  assert.deepEqual(s.data, { a: 'eA==', b: 'aGVsbG8=' });
  const bad = await statusOf(
    secrets.create(ctx('k'), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'b' }, data: { a: 'not base64!' } }),
  );
  assert.equal(bad.code, 400);
  assert.equal(bad.message, 'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3');
  const tls = await statusOf(
    secrets.create(ctx('k'), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 't' }, type: 'kubernetes.io/tls', data: {} }),
  );
  assert.equal(tls.code, 422);
  assert.deepEqual(
    tls.details?.causes?.map((c) => c.field),
    ['data[tls.crt]', 'data[tls.key]'],
  );
  const retype = await statusOf(secrets.update(ctx('k'), 's', (cur) => ({ ...cur!, type: 'example.com/other' }), { allowCreate: false }));
  assert.equal(retype.code, 422);
  assert.equal(retype.details?.causes?.[0]?.field, 'type');
  const badKey = await statusOf(
    secrets.create(ctx('k'), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'k' }, data: { 'a b': 'eA==' } }),
  );
  assert.equal(badKey.details?.causes?.[0]?.field, 'data[a b]');
});

test('ConfigMaps: immutable ones cannot change', async () => {
  const cms = h.rest('', 'v1', 'configmaps');
  await cms.create(ctx('k'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'frozen' }, immutable: true, data: { a: '1' } });
  const err = await statusOf(cms.update(ctx('k'), 'frozen', (cur) => ({ ...cur!, data: { a: '2' } }), { allowCreate: false }));
  assert.equal(err.code, 422);
  assert.equal(err.message, 'ConfigMap "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set');
});

test('Services: defaults, allocation through the injected allocator, kept on replace, released on delete', async () => {
  const services = h.rest('', 'v1', 'services');
  const svc: KubeObject = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web' },
    spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
  };
  const created = await services.create(ctx('k'), svc);
  const spec = created.spec as Record<string, unknown>;
  assert.equal(spec.type, 'ClusterIP');
  assert.equal(spec.sessionAffinity, 'None');
  assert.equal(spec.internalTrafficPolicy, 'Cluster');
  assert.deepEqual(spec.ports, [{ protocol: 'TCP', port: 80, targetPort: 80 }]);
  assert.equal(spec.clusterIP, allocated[allocated.length - 1]);
  assert.deepEqual(created.status, { loadBalancer: {} });
  // a replace without the allocated values keeps them
  const replaced = await services.update(ctx('k'), 'web', () => svc, { allowCreate: false });
  assert.equal((replaced.object.spec as Record<string, unknown>).clusterIP, spec.clusterIP);
  const changed = await statusOf(
    services.update(ctx('k'), 'web', () => ({ ...svc, spec: { ...(svc.spec as object), clusterIP: '10.0.0.250' } }), {
      allowCreate: false,
    }),
  );
  assert.equal(changed.code, 422);
  assert.equal(changed.details?.causes?.[0]?.field, 'spec.clusterIPs[0]');
  // a failed create gives its IP back
  await statusOf(services.create(ctx('k'), { ...svc, spec: { ports: [{ port: 0 }] } }));
  assert.equal(released[released.length - 1], allocated[allocated.length - 1]);
  const del = await services.delete(ctx('k'), 'web', {});
  assert.equal(del.deleted, true);
  assert.equal(del.object.kind, 'Service');
  assert.equal(released[released.length - 1], spec.clusterIP);
});

test('Jobs: generated selector and labels; restartPolicy must not be Always; batch/v1 orphans by default', async () => {
  const jobs = h.rest('batch', 'v1', 'jobs');
  const job: KubeObject = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'j' },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
  };
  const created = await jobs.create(ctx('k'), job);
  const spec = created.spec as Record<string, any>;
  const uid = created.metadata.uid;
  assert.deepEqual(spec.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } });
  assert.equal(spec.template.metadata.labels['batch.kubernetes.io/job-name'], 'j');
  assert.equal(spec.backoffLimit, 6);
  assert.equal(spec.completions, 1);
  assert.equal(spec.parallelism, 1);
  const always = await statusOf(
    jobs.create(ctx('k'), { ...job, metadata: { name: 'a' }, spec: { template: { spec: { containers: [{ name: 'c', image: 'x' }] } } } }),
  );
  assert.equal(always.code, 422);
  assert.equal(
    always.message,
    'Job.batch "a" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
  );
  const del = await jobs.delete(ctx('k'), 'j', {});
  assert.equal(del.deleted, false);
  assert.deepEqual(del.object.metadata.finalizers, ['orphan']);
});

test('virtual reviews answer without storing', async () => {
  const ssr = h.rest('authentication.k8s.io', 'v1', 'selfsubjectreviews');
  const review = await ssr.create(ctx(), { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: {} });
  assert.equal(review.kind, 'SelfSubjectReview');
  assert.deepEqual(review.status, { userInfo: { username: admin.username, uid: admin.uid, groups: admin.groups } });
  const ssar = h.rest('authorization.k8s.io', 'v1', 'selfsubjectaccessreviews');
  const answer = await ssar.create(ctx(), {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    metadata: {},
    spec: { resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'k' } },
  });
  assert.deepEqual(answer.status, { allowed: true });
  assert.deepEqual(answer.metadata, { creationTimestamp: null });
  const invalid = await statusOf(
    ssar.create(ctx(), { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', metadata: {}, spec: {} }),
  );
  assert.equal(invalid.code, 422);
  assert.equal(
    invalid.message,
    'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified',
  );
  const rules = h.rest('authorization.k8s.io', 'v1', 'selfsubjectrulesreviews');
  const r = await rules.create(ctx(), {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectRulesReview',
    metadata: {},
    spec: { namespace: 'k' },
  });
  assert.deepEqual(r.status, {
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
  });
  const tr = h.rest('authentication.k8s.io', 'v1', 'tokenreviews');
  const t = await tr.create(ctx(), { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: {}, spec: { token: 'abc' } });
  assert.deepEqual(t.status, { user: {} });
  const noToken = await statusOf(tr.create(ctx(), { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: {}, spec: {} }));
  assert.equal(noToken.message, 'token is required for TokenReview in authentication');
  assert.equal((await statusOf(ssr.get(ctx(), 'x', {}))).code, 405);
});

test('RBAC names are path segments; RBAC objects may be created by PUT', async () => {
  const roles = h.rest('rbac.authorization.k8s.io', 'v1', 'clusterroles');
  const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'system:controller:x' }, rules: [] };
  const created = await roles.create(ctx(), role);
  assert.equal(created.metadata.name, 'system:controller:x');
  const bad = await statusOf(roles.create(ctx(), { ...role, metadata: { name: 'a/b' } }));
  assert.equal(bad.code, 422);
  assert.equal(
    bad.message,
    'ClusterRole.rbac.authorization.k8s.io "a/b" is invalid: metadata.name: Invalid value: "a/b": may not contain \'/\'',
  );
  const viaPut = await roles.update(ctx(), 'made-by-put', () => ({ ...role, metadata: { name: 'made-by-put' } }), { allowCreate: false });
  assert.equal(viaPut.created, true);
  const cms = h.rest('', 'v1', 'configmaps');
  const notForConfigMaps = await statusOf(
    cms.update(ctx('k'), 'nope', () => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nope' } }), { allowCreate: false }),
  );
  assert.equal(notForConfigMaps.code, 404);
});

test('CertificateSigningRequests: requester recorded, approval changes only Approved/Denied', async () => {
  const csrs = h.rest('certificates.k8s.io', 'v1', 'certificatesigningrequests');
  const approval = h.rest('certificates.k8s.io', 'v1', 'certificatesigningrequests', 'approval');
  const status = h.rest('certificates.k8s.io', 'v1', 'certificatesigningrequests', 'status');
  const request = Buffer.from('-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n').toString('base64');
  const created = await csrs.create(ctx(), {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name: 'csr-1' },
    spec: {
      request,
      signerName: 'kubernetes.io/kube-apiserver-client',
      usages: ['client auth'],
      username: 'mallory',
      groups: ['system:masters'],
    },
    status: { conditions: [{ type: 'Approved', status: 'True' }] },
  });
  const spec = created.spec as Record<string, unknown>;
  assert.equal(spec.username, admin.username);
  assert.deepEqual(spec.groups, admin.groups);
  assert.deepEqual(created.status, {});
  const approved = await approval.update(
    ctx(),
    'csr-1',
    (cur) => ({
      ...cur!,
      spec: { ...(cur!.spec as object), username: 'x' },
      status: { conditions: [{ type: 'Approved', reason: 'KubectlApprove', message: 'ok' }] },
    }),
    { allowCreate: false },
  );
  const cond = ((approved.object.status as Record<string, unknown>).conditions as Record<string, unknown>[])[0];
  assert.equal(cond.type, 'Approved');
  assert.equal(cond.status, 'True');
  assert.ok(cond.lastUpdateTime);
  assert.ok(cond.lastTransitionTime);
  assert.equal((approved.object.spec as Record<string, unknown>).username, admin.username);
  const signed = await status.update(
    ctx(),
    'csr-1',
    (cur) => ({ ...cur!, status: { certificate: 'Y2VydA==', conditions: [{ type: 'Denied', status: 'True' }] } }),
    { allowCreate: false },
  );
  const st = signed.object.status as Record<string, unknown>;
  assert.equal(st.certificate, 'Y2VydA==');
  assert.deepEqual(
    (st.conditions as Record<string, unknown>[]).map((c) => c.type),
    ['Approved'],
  );
  const noSigner = await statusOf(
    csrs.create(ctx(), {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name: 'bad' },
      spec: { request, usages: ['x'] },
    }),
  );
  assert.equal(noSigner.details?.causes?.[0]?.field, 'spec.signerName');
});

test('pods/eviction respects PodDisruptionBudgets', async () => {
  const pods = h.rest('', 'v1', 'pods');
  const podStatus = h.rest('', 'v1', 'pods', 'status');
  const eviction = h.rest('', 'v1', 'pods', 'eviction');
  const pdbs = h.rest('policy', 'v1', 'poddisruptionbudgets');
  const pdbStatus = h.rest('policy', 'v1', 'poddisruptionbudgets', 'status');
  const evict = (name: string) =>
    eviction.create(ctx('k', { name }), { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'k' } });
  const running = async (name: string) => {
    await pods.create(ctx('k'), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { app: 'guarded' } },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    });
    await podStatus.update(
      ctx('k'),
      name,
      (cur) => ({ ...cur!, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } }),
      {
        allowCreate: false,
      },
    );
  };

  // a Pending pod is not guarded
  await pods.create(ctx('k'), {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'pending', labels: { app: 'guarded' } },
    spec: { containers: [{ name: 'c', image: 'x' }] },
  });
  assert.equal((await evict('pending')).status, 'Success');
  assert.equal((await statusOf(pods.get(ctx('k'), 'pending', {}))).code, 404);

  await pdbs.create(ctx('k'), {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'budget' },
    spec: { minAvailable: 1, selector: { matchLabels: { app: 'guarded' } } },
  });
  await running('r1');
  const unprocessed = await statusOf(evict('r1'));
  assert.equal(unprocessed.code, 429);
  assert.deepEqual(unprocessed.details?.causes, [
    { reason: 'DisruptionBudget', message: 'The disruption budget budget is still being processed by the server.' },
  ]);

  await pdbStatus.update(
    ctx('k'),
    'budget',
    (cur) => ({ ...cur!, status: { observedGeneration: 1, disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 } }),
    { allowCreate: false },
  );
  const blocked = await statusOf(evict('r1'));
  assert.equal(blocked.code, 429);
  assert.equal(blocked.message, "Cannot evict pod as it would violate the pod's disruption budget.");
  assert.equal(blocked.details?.causes?.[0]?.message, 'The disruption budget budget needs 1 healthy pods and has 1 currently');

  await pdbStatus.update(
    ctx('k'),
    'budget',
    (cur) => ({ ...cur!, status: { ...(cur!.status as object), disruptionsAllowed: 1, currentHealthy: 2 } }),
    {
      allowCreate: false,
    },
  );
  assert.equal((await evict('r1')).status, 'Success');
  assert.equal((await statusOf(pods.get(ctx('k'), 'r1', {}))).code, 404);
  const after = (await pdbs.get(ctx('k'), 'budget', {})).status as Record<string, unknown>;
  assert.equal(after.disruptionsAllowed, 0);
  assert.ok((after.disruptedPods as Record<string, string>).r1);
  const mismatch = await statusOf(
    eviction.create(ctx('k', { name: 'a' }), { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'b' } }),
  );
  assert.equal(mismatch.code, 400);
});
