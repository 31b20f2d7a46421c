// Defaulting, validation and dry run of built-in kinds through kubectl 1.33 and raw HTTP: the
// 422 lines kubectl prints for an invalid Deployment (as against kube-apiserver), the defaults
// a minimal Deployment shows, canonical quantities, immutable selectors, and server-side dry
// runs of create and delete that change nothing.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createNamespace, jsonOf, kubectl, kubectlOk, startKapi, uniqueName, type KapiProcess } from './harness.js';

const invalidDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: bad
spec:
  replicas: -1
  template:
    metadata:
      labels:
        app: web
    spec:
      restartPolicy: Never
      containers:
      - name: web
`;

const minimalDeployment = (name: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  selector:
    matchLabels:
      app: ${name}
  template:
    metadata:
      labels:
        app: ${name}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        resources:
          limits:
            cpu: 0.5
            memory: 1024Mi
`;

describe('defaulting, validation and dry run of built-in kinds', () => {
  let kapi: KapiProcess;
  const ns = uniqueName('valid');
  const k = (args: string[], input?: string) => kubectl([...args, '-n', ns], { kubeconfig: kapi.kubeconfig, input });
  const kOk = (args: string[], input?: string) => kubectlOk([...args, '-n', ns], { kubeconfig: kapi.kubeconfig, input });

  before(async () => {
    kapi = await startKapi();
    await createNamespace(kapi.http, ns);
  });
  after(async () => {
    await kapi?.stop();
  });

  it('kubectl create -f of an invalid Deployment prints kube-apiserver error lines', async () => {
    const r = await k(['create', '-f', '-'], invalidDeployment);
    assert.equal(r.code, 1, r.stdout);
    assert.equal(
      r.stderr,
      [
        'The Deployment "bad" is invalid: ',
        '* spec.replicas: Invalid value: -1: must be greater than or equal to 0',
        '* spec.selector: Required value',
        '* spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
        '* spec.template.spec.containers[0].image: Required value',
        '* spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
        '',
      ].join('\n'),
    );
  });

  it('a 422 carries one cause per field with reason and field path', async () => {
    const res = await kapi.http.post(`/apis/apps/v1/namespaces/${ns}/deployments`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'raw' },
      spec: {
        selector: { matchLabels: { app: 'raw' } },
        template: {
          metadata: { labels: { app: 'raw' } },
          spec: { containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 70000 }] }] },
        },
      },
    });
    assert.equal(res.status, 422, res.body);
    const s = jsonOf<{ reason: string; message: string; details: { name: string; group: string; kind: string; causes: unknown[] } }>(res);
    assert.equal(s.reason, 'Invalid');
    assert.equal(
      s.message,
      'Deployment.apps "raw" is invalid: spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
    );
    assert.deepEqual(s.details, {
      name: 'raw',
      group: 'apps',
      kind: 'Deployment',
      causes: [
        {
          reason: 'FieldValueInvalid',
          message: 'Invalid value: 70000: must be between 1 and 65535, inclusive',
          field: 'spec.template.spec.containers[0].ports[0].containerPort',
        },
      ],
    });
  });

  it('kubectl get -o json after a minimal create shows the defaults', async () => {
    await kOk(['create', '-f', '-'], minimalDeployment('web'));
    const d = JSON.parse(await kOk(['get', 'deployment', 'web', '-o', 'json'])) as { spec: Record<string, any> };
    assert.deepEqual(d.spec, {
      progressDeadlineSeconds: 600,
      replicas: 1,
      revisionHistoryLimit: 10,
      selector: { matchLabels: { app: 'web' } },
      strategy: { rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' }, type: 'RollingUpdate' },
      template: {
        metadata: { creationTimestamp: null, labels: { app: 'web' } },
        spec: {
          containers: [
            {
              image: 'nginx:1.27',
              imagePullPolicy: 'IfNotPresent',
              name: 'web',
              resources: { limits: { cpu: '500m', memory: '1Gi' } },
              terminationMessagePath: '/dev/termination-log',
              terminationMessagePolicy: 'File',
            },
          ],
          dnsPolicy: 'ClusterFirst',
          restartPolicy: 'Always',
          schedulerName: 'default-scheduler',
          securityContext: {},
          terminationGracePeriodSeconds: 30,
        },
      },
    });
    const yaml = await kOk(['get', 'deployment', 'web', '-o', 'yaml']);
    assert.match(yaml, /\n {6}restartPolicy: Always\n/);
    assert.match(yaml, /\n {4}type: RollingUpdate\n/);
  });

  it('a selector is immutable; a Job template must not restart Always', async () => {
    const patch = JSON.stringify({
      spec: { selector: { matchLabels: { app: 'other' } }, template: { metadata: { labels: { app: 'other' } } } },
    });
    const r = await k(['patch', 'deployment', 'web', '--type=merge', '-p', patch]);
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      'The Deployment "web" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"other"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable\n',
    );
    const job = `apiVersion: batch/v1
kind: Job
metadata:
  name: j
spec:
  template:
    spec:
      containers:
      - name: c
        image: busybox
`;
    const j = await k(['create', '-f', '-'], job);
    assert.equal(j.code, 1);
    assert.equal(
      j.stderr,
      'The Job "j" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"\n',
    );
  });

  it('kubectl create --dry-run=server returns the defaulted object and persists nothing', async () => {
    const out = await kOk(['create', '--dry-run=server', '-o', 'json', '-f', '-'], minimalDeployment('dry'));
    const d = JSON.parse(out) as { metadata: Record<string, unknown>; spec: Record<string, any> };
    assert.equal(d.metadata.name, 'dry');
    assert.ok(d.metadata.uid);
    assert.equal(d.metadata.generation, 1);
    assert.equal(d.spec.revisionHistoryLimit, 10);
    assert.equal(d.spec.template.spec.dnsPolicy, 'ClusterFirst');
    assert.deepEqual(d.spec.template.spec.containers[0].resources, { limits: { cpu: '500m', memory: '1Gi' } });
    const get = await k(['get', 'deployment', 'dry']);
    assert.equal(get.code, 1);
    assert.match(get.stderr, /deployments\.apps "dry" not found/);
    const invalid = await k(['create', '--dry-run=server', '-f', '-'], invalidDeployment);
    assert.equal(invalid.code, 1);
    assert.match(invalid.stderr, /^The Deployment "bad" is invalid: \n\* spec\.replicas/);
  });

  it('kubectl delete --dry-run=server changes nothing', async () => {
    const before = JSON.parse(await kOk(['get', 'deployment', 'web', '-o', 'json'])) as { metadata: { resourceVersion: string } };
    const out = await kOk(['delete', 'deployment', 'web', '--dry-run=server']);
    assert.equal(out, 'deployment.apps "web" deleted (server dry run)\n');
    const afterDelete = JSON.parse(await kOk(['get', 'deployment', 'web', '-o', 'json'])) as { metadata: Record<string, unknown> };
    assert.equal(afterDelete.metadata.resourceVersion, before.metadata.resourceVersion);
    assert.equal(afterDelete.metadata.deletionTimestamp, undefined);
    // deletecollection with dryRun=All over HTTP: the would-be list, nothing deleted
    const del = await kapi.http.delete(`/apis/apps/v1/namespaces/${ns}/deployments?dryRun=All`);
    assert.equal(del.status, 200, del.body);
    const list = jsonOf<{ kind: string; items: { metadata: { name: string } }[] }>(del);
    assert.equal(list.kind, 'DeploymentList');
    assert.ok(list.items.some((i) => i.metadata.name === 'web'));
    assert.ok(await kOk(['get', 'deployment', 'web', '-o', 'name']));
    const bad = await kapi.http.delete(`/apis/apps/v1/namespaces/${ns}/deployments/web?dryRun=Some`);
    assert.equal(bad.status, 422, bad.body);
    assert.equal(jsonOf<{ reason: string }>(bad).reason, 'Invalid');
  });

  it('a Pod gets its requests from its limits and canonical quantities', async () => {
    const pod = `apiVersion: v1
kind: Pod
metadata:
  name: q
spec:
  containers:
  - name: c
    image: busybox
    resources:
      limits:
        cpu: "1.5"
        memory: 0.5Gi
`;
    await kOk(['create', '-f', '-'], pod);
    const p = JSON.parse(await kOk(['get', 'pod', 'q', '-o', 'json'])) as { spec: Record<string, any>; status: Record<string, unknown> };
    assert.deepEqual(p.spec.containers[0].resources, {
      limits: { cpu: '1500m', memory: '512Mi' },
      requests: { cpu: '1500m', memory: '512Mi' },
    });
    assert.equal(p.spec.enableServiceLinks, true);
    assert.equal(p.status.qosClass, 'Guaranteed');
  });
});
