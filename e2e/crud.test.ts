// Done-when 2: `kubectl create -f` of a multi-document YAML, then `get` in every output
// format, `get all`, and `kubectl explain`.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { kubectl, kubectlOk, startKapi, uniqueName, type KapiProcess } from './harness.js';

const ns = uniqueName('crud');

const manifest = `apiVersion: v1
kind: Namespace
metadata:
  name: ${ns}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: ${ns}
  labels:
    app: web
data:
  color: blue
  size: large
---
apiVersion: v1
kind: Secret
metadata:
  name: creds
  namespace: ${ns}
type: Opaque
stringData:
  password: s3cr3t
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ${ns}
  labels:
    app: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports:
        - containerPort: 80
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: ${ns}
spec:
  selector:
    app: web
  ports:
  - port: 80
    targetPort: 80
---
apiVersion: v1
kind: Pod
metadata:
  name: solo
  namespace: ${ns}
  labels:
    app: solo
spec:
  containers:
  - name: busybox
    image: busybox:1.36
    command: ["sleep", "3600"]
`;

describe('crud with kubectl 1.33', () => {
  let kapi: KapiProcess;
  let k: (args: string[]) => Promise<string>;
  before(async () => {
    kapi = await startKapi();
    k = (args) => kubectlOk(args, { kubeconfig: kapi.kubeconfig });
  });
  after(async () => {
    await kapi?.stop();
  });

  it('kubectl create -f a multi-document YAML creates every object', async () => {
    const r = await kubectl(['create', '-f', '-'], { kubeconfig: kapi.kubeconfig, input: manifest });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stdout,
      [
        `namespace/${ns} created`,
        'configmap/settings created',
        'secret/creds created',
        'deployment.apps/web created',
        'service/web created',
        'pod/solo created',
        '',
      ].join('\n'),
    );
  });

  it('get -o yaml returns the object with server-set metadata', async () => {
    const cm = parseYaml(await k(['get', 'cm', 'settings', '-n', ns, '-o', 'yaml'])) as Record<string, any>;
    assert.equal(cm.apiVersion, 'v1');
    assert.equal(cm.kind, 'ConfigMap');
    assert.equal(cm.metadata.name, 'settings');
    assert.equal(cm.metadata.namespace, ns);
    assert.deepEqual(cm.data, { color: 'blue', size: 'large' });
    assert.match(cm.metadata.uid, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.match(cm.metadata.resourceVersion, /^\d+$/);
    assert.match(cm.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('get -o json returns defaulted objects in kube-apiserver field order', async () => {
    const text = await k(['get', 'deployment', 'web', '-n', ns, '-o', 'json']);
    const d = JSON.parse(text) as Record<string, any>;
    assert.equal(d.kind, 'Deployment');
    assert.equal(d.apiVersion, 'apps/v1');
    assert.equal(d.metadata.generation, 1);
    // defaults kube-apiserver fills in
    assert.equal(d.spec.replicas, 1);
    assert.equal(d.spec.revisionHistoryLimit, 10);
    assert.equal(d.spec.progressDeadlineSeconds, 600);
    assert.equal(d.spec.strategy.type, 'RollingUpdate');
    assert.deepEqual(d.spec.strategy.rollingUpdate, { maxUnavailable: '25%', maxSurge: '25%' });
    const c = d.spec.template.spec.containers[0];
    assert.equal(c.imagePullPolicy, 'IfNotPresent');
    assert.equal(c.terminationMessagePath, '/dev/termination-log');
    assert.equal(c.ports[0].protocol, 'TCP');
    assert.equal(d.spec.template.spec.restartPolicy, 'Always');
    assert.equal(d.spec.template.spec.dnsPolicy, 'ClusterFirst');
  });

  it('raw GET keeps kube-apiserver field order (kind, apiVersion, metadata, spec, status)', async () => {
    const res = await kapi.http.get(`/apis/apps/v1/namespaces/${ns}/deployments/web`);
    assert.equal(res.status, 200, res.body);
    const d = JSON.parse(res.body) as Record<string, any>;
    assert.deepEqual(Object.keys(d), ['kind', 'apiVersion', 'metadata', 'spec', 'status']);
    assert.deepEqual(Object.keys(d.metadata).slice(0, 6), [
      'name',
      'namespace',
      'uid',
      'resourceVersion',
      'generation',
      'creationTimestamp',
    ]);
    const cm = JSON.parse((await kapi.http.get(`/api/v1/namespaces/${ns}/configmaps/settings`)).body) as Record<string, any>;
    assert.deepEqual(Object.keys(cm), ['kind', 'apiVersion', 'metadata', 'data']);
  });

  it("a create's and an update's answers are the very bytes a GET of that version gives", async () => {
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const body = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'answers', labels: { a: 'b' }, annotations: { note: '<a & b> \u2028 é😀' } },
      data: { html: '<p>&amp;</p>', 'x.txt': 'y' },
    };
    const created = await kapi.http.post(path, body);
    assert.equal(created.status, 201, created.body);
    const got = await kapi.http.get(`${path}/answers`);
    assert.equal(created.body, got.body);
    // Go's escapes, as a decode and encode of the object gives them
    assert.match(created.body, /\\u003cp\\u003e\\u0026amp;/);
    const current = JSON.parse(created.body) as { metadata: Record<string, unknown> };
    const updated = await kapi.http.put(`${path}/answers`, {
      ...body,
      metadata: { ...body.metadata, resourceVersion: current.metadata.resourceVersion },
      data: { z: '1' },
    });
    assert.equal(updated.status, 200, updated.body);
    assert.equal(updated.body, (await kapi.http.get(`${path}/answers`)).body);
    assert.notEqual(JSON.parse(updated.body).metadata.resourceVersion, current.metadata.resourceVersion);
  });

  it('the Secret stores stringData as base64 data', async () => {
    const out = await k(['get', 'secret', 'creds', '-n', ns, '-o', 'jsonpath={.data.password}']);
    assert.equal(Buffer.from(out, 'base64').toString(), 's3cr3t');
    const s = JSON.parse(await k(['get', 'secret', 'creds', '-n', ns, '-o', 'json'])) as Record<string, unknown>;
    assert.equal('stringData' in s, false);
  });

  it('the Service got a cluster IP and defaulted ports', async () => {
    const svc = JSON.parse(await k(['get', 'svc', 'web', '-n', ns, '-o', 'json'])) as Record<string, any>;
    assert.match(svc.spec.clusterIP, /^\d+\.\d+\.\d+\.\d+$/);
    assert.deepEqual(svc.spec.clusterIPs, [svc.spec.clusterIP]);
    assert.equal(svc.spec.type, 'ClusterIP');
    assert.equal(svc.spec.ports[0].protocol, 'TCP');
    assert.equal(svc.spec.sessionAffinity, 'None');
  });

  it('get -o name', async () => {
    assert.equal(await k(['get', 'cm', 'settings', '-n', ns, '-o', 'name']), 'configmap/settings\n');
    assert.equal(await k(['get', 'deploy', '-n', ns, '-o', 'name']), 'deployment.apps/web\n');
  });

  it('get -o jsonpath', async () => {
    assert.equal(await k(['get', 'cm', 'settings', '-n', ns, '-o', 'jsonpath={.data.color}']), 'blue');
    assert.equal(
      await k(['get', 'pods', '-n', ns, '-o', 'jsonpath={range .items[*]}{.metadata.name}:{.spec.containers[0].image}{"\\n"}{end}']),
      'solo:busybox:1.36\n',
    );
  });

  it('get (table) and -o wide show the server-side columns', async () => {
    const pods = await k(['get', 'pods', '-n', ns]);
    assert.match(pods, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\n/);
    assert.match(pods, /^solo\s+0\/1\s+Pending\s+0\s+\S+$/m);
    const wide = await k(['get', 'pods', '-n', ns, '-o', 'wide']);
    assert.match(wide, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES\n/);
    assert.match(wide, /^solo\s+0\/1\s+Pending\s+0\s+\S+\s+<none>\s+<none>\s+<none>\s+<none>$/m);
    const deployWide = await k(['get', 'deploy', '-n', ns, '-o', 'wide']);
    assert.match(deployWide, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR\n/);
    assert.match(deployWide, /^web\s+0\/1\s+0\s+0\s+\S+\s+nginx\s+nginx:1\.27\s+app=web$/m);
    const cms = await k(['get', 'cm', '-n', ns]);
    assert.match(cms, /^NAME\s+DATA\s+AGE\n/);
    assert.match(cms, /^settings\s+2\s+\S+$/m);
    const svcs = await k(['get', 'svc', '-n', ns, '-o', 'wide']);
    assert.match(svcs, /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE\s+SELECTOR\n/);
    assert.match(svcs, /^web\s+ClusterIP\s+\d+\.\d+\.\d+\.\d+\s+<none>\s+80\/TCP\s+\S+\s+app=web$/m);
    const secrets = await k(['get', 'secrets', '-n', ns]);
    assert.match(secrets, /^creds\s+Opaque\s+1\s+\S+$/m);
  });

  it('label selectors and field selectors', async () => {
    assert.equal(await k(['get', 'cm', '-n', ns, '-l', 'app=web', '-o', 'name']), 'configmap/settings\n');
    assert.equal(await k(['get', 'cm', '-n', ns, '-l', 'app!=web,app', '-o', 'name']), '');
    assert.equal(await k(['get', 'pods', '-n', ns, '--field-selector', 'status.phase=Pending', '-o', 'name']), 'pod/solo\n');
    assert.equal(await k(['get', 'pods', '-n', ns, '--field-selector', 'spec.nodeName=node-1', '-o', 'name']), '');
  });

  it('kubectl get all lists the pod, the service and the deployment', async () => {
    const out = await k(['get', 'all', '-n', ns]);
    assert.match(out, /^pod\/solo\s+0\/1\s+Pending/m);
    assert.match(out, /^service\/web\s+ClusterIP/m);
    assert.match(out, /^deployment\.apps\/web\s+0\/1/m);
    const names = (await k(['get', 'all', '-n', ns, '-o', 'name'])).trim().split('\n').sort();
    assert.deepEqual(names, ['deployment.apps/web', 'pod/solo', 'service/web']);
  });

  it('kubectl explain deployment.spec.template.spec.containers', async () => {
    const out = await k(['explain', 'deployment.spec.template.spec.containers']);
    assert.match(out, /^GROUP:\s+apps$/m);
    assert.match(out, /^KIND:\s+Deployment$/m);
    assert.match(out, /^VERSION:\s+v1$/m);
    assert.match(out, /^FIELD: containers <\[\]Container>$/m);
    assert.match(out, /^FIELDS:$/m);
    assert.match(out, /^ {2}image\t<string>$/m);
    assert.match(out, /^ {2}name\t<string> -required-$/m);
    assert.match(out, /^ {2}ports\t<\[\]ContainerPort>$/m);
    const recursive = await k(['explain', 'pods.spec.containers.resources', '--recursive']);
    assert.match(recursive, /^ {2}limits\t<map\[string\]Quantity>$/m);
  });

  it('kubectl apply (client-side) and edit-like patches keep working', async () => {
    const r = await kubectl(['label', 'cm', 'settings', '-n', ns, 'tier=front'], { kubeconfig: kapi.kubeconfig });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'configmap/settings labeled\n');
    await k(['patch', 'deploy', 'web', '-n', ns, '--type=merge', '-p', '{"spec":{"replicas":3}}']);
    const d = JSON.parse(await k(['get', 'deploy', 'web', '-n', ns, '-o', 'json'])) as Record<string, any>;
    assert.equal(d.spec.replicas, 3);
    assert.equal(d.metadata.generation, 2);
    await k(['label', 'deploy', 'web', '-n', ns, 'tier=front']);
    const d2 = JSON.parse(await k(['get', 'deploy', 'web', '-n', ns, '-o', 'json'])) as Record<string, any>;
    assert.equal(d2.metadata.generation, 2, 'a label change does not bump generation');
    // Deployments are special: annotations are copied to ReplicaSets, so kube-apiserver bumps
    // generation on annotation changes too
    await k(['annotate', 'deploy', 'web', '-n', ns, 'note=hi']);
    const d3 = JSON.parse(await k(['get', 'deploy', 'web', '-n', ns, '-o', 'json'])) as Record<string, any>;
    assert.equal(d3.metadata.generation, 3, 'a Deployment annotation change bumps generation');
  });

  it('kubectl create -f refuses an unknown field (kubectl sends fieldValidation=Strict)', async () => {
    const bad = `apiVersion: v1
kind: ConfigMap
metadata:
  name: typo
  namespace: ${ns}
dat:
  a: b
`;
    const r = await kubectl(['create', '-f', '-'], { kubeconfig: kapi.kubeconfig, input: bad });
    assert.equal(r.code, 1, `created despite the unknown field: ${r.stdout}`);
    assert.equal(
      r.stderr,
      'Error from server (BadRequest): error when creating "STDIN": ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "dat"\n',
    );
    const raw = await kapi.http.post(`/api/v1/namespaces/${ns}/configmaps?fieldValidation=Warn`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'typo-warn' },
      dat: { a: 'b' },
    });
    assert.equal(raw.status, 201, raw.body);
    assert.equal(raw.headers.warning, '299 - "unknown field \\"dat\\""');
  });

  it('kubectl delete of each object', async () => {
    assert.equal(await k(['delete', 'pod', 'solo', '-n', ns]), 'pod "solo" deleted\n');
    assert.equal(await k(['delete', 'cm', 'settings', '-n', ns]), 'configmap "settings" deleted\n');
    const r = await kubectl(['get', 'cm', 'settings', '-n', ns], { kubeconfig: kapi.kubeconfig });
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'Error from server (NotFound): configmaps "settings" not found\n');
  });
});
