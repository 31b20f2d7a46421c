// Server-side apply and managedFields through kubectl 1.33 and raw HTTP against real kapi:
// two field managers on one ConfigMap and one Deployment (the second gets a conflict naming
// the field and its owner, --force-conflicts takes ownership, `get --show-managed-fields` shows
// both as kube-apiserver would), `apply --server-side` creating objects, pruning of dropped
// fields, dry run, and the managedFields rules of an update.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { jsonOf, kubectl, kubectlOk, startKapi, uniqueName, type KapiProcess } from './harness.js';

const ns = uniqueName('ssa');

interface Entry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}
interface Obj {
  metadata: { name: string; resourceVersion: string; managedFields?: Entry[]; annotations?: Record<string, string> };
  data?: Record<string, string>;
  spec?: { replicas?: number; template?: { spec?: { containers?: { name: string; image: string }[] } } };
}

describe('server-side apply', () => {
  let kapi: KapiProcess;
  const run = (args: string[], input?: string) => kubectl(args, { kubeconfig: kapi.kubeconfig, input });
  const ok = (args: string[], input?: string) => kubectlOk(args, { kubeconfig: kapi.kubeconfig, input });
  const getJson = async (kind: string, name: string): Promise<Obj> =>
    JSON.parse(await ok(['get', kind, name, '-n', ns, '-o', 'json', '--show-managed-fields'])) as Obj;
  const entries = (o: Obj) =>
    (o.metadata.managedFields ?? []).map((e) => ({ manager: e.manager, operation: e.operation, fieldsV1: e.fieldsV1 }));
  const cmPath = (name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;

  before(async () => {
    kapi = await startKapi();
    await ok(['create', 'namespace', ns]);
  });
  after(async () => {
    await kapi?.stop();
  });

  it('two managers on one ConfigMap: conflict, --force-conflicts, shared view of ownership', async () => {
    const config = (value: string, extra = '') => `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: ${ns}
  labels:
    app: demo
data:
  mode: "${value}"
${extra}`;
    assert.match(
      await ok(['apply', '--server-side', '--field-manager=team-a', '-f', '-'], config('fast')),
      /configmap\/settings serverside-applied/,
    );

    const conflict = await run(['apply', '--server-side', '--field-manager=team-b', '-f', '-'], config('safe', '  owner: b\n'));
    assert.equal(conflict.code, 1);
    assert.match(conflict.stderr, /error: Apply failed with 1 conflict: conflict with "team-a": \.data\.mode\n/);
    assert.equal((await getJson('configmap', 'settings')).data?.mode, 'fast');

    await ok(['apply', '--server-side', '--field-manager=team-b', '--force-conflicts', '-f', '-'], config('safe', '  owner: b\n'));
    const o = await getJson('configmap', 'settings');
    assert.deepEqual(o.data, { mode: 'safe', owner: 'b' });
    assert.deepEqual(entries(o), [
      { manager: 'team-a', operation: 'Apply', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } } } },
      {
        manager: 'team-b',
        operation: 'Apply',
        fieldsV1: { 'f:data': { 'f:mode': {}, 'f:owner': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } },
      },
    ]);
    for (const e of o.metadata.managedFields ?? []) {
      assert.equal(e.apiVersion, 'v1');
      assert.equal(e.fieldsType, 'FieldsV1');
      assert.match(e.time ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    }
    // the YAML view lists the same managers
    const yaml = await ok(['get', 'configmap', 'settings', '-n', ns, '-o', 'yaml', '--show-managed-fields']);
    assert.match(yaml, /manager: team-a\n {4}operation: Apply/);
    assert.match(yaml, /manager: team-b\n {4}operation: Apply/);
    assert.doesNotMatch(await ok(['get', 'configmap', 'settings', '-n', ns, '-o', 'yaml']), /managedFields/);
  });

  it('a Deployment from client-side apply, then a second manager: conflict on replicas naming kubectl-client-side-apply', async () => {
    const deployment = (replicas: number, image: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ${ns}
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: ${image}
`;
    await ok(['apply', '-f', '-'], deployment(2, 'nginx:1'));
    let o = await getJson('deployment', 'web');
    assert.deepEqual(
      o.metadata.managedFields?.map((e) => [e.manager, e.operation, e.apiVersion]),
      [['kubectl-client-side-apply', 'Update', 'apps/v1']],
    );

    const conflict = await run(['apply', '--server-side', '--field-manager=scaler', '-f', '-'], deployment(5, 'nginx:1'));
    assert.equal(conflict.code, 1);
    assert.match(
      conflict.stderr,
      /Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps\/v1: \.spec\.replicas/,
    );

    await ok(['apply', '--server-side', '--field-manager=scaler', '--force-conflicts', '-f', '-'], deployment(5, 'nginx:1'));
    o = await getJson('deployment', 'web');
    assert.equal(o.spec?.replicas, 5);
    // kubectl then moves what its client-side apply owned to the new manager (and re-applies)
    assert.deepEqual(
      o.metadata.managedFields?.map((e) => [e.manager, e.operation]),
      [['scaler', 'Apply']],
    );
    assert.ok(JSON.stringify(o.metadata.managedFields?.[0]?.fieldsV1).includes('"f:replicas":{}'));
  });

  it('two server-side appliers on one Deployment: conflict naming the owner, force, both managers shown', async () => {
    const deployment = (replicas: number) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: ${ns}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
      - {name: api, image: "api:1"}
`;
    await ok(['apply', '--server-side', '--field-manager=team-a', '-f', '-'], deployment(2));
    const conflict = await run(['apply', '--server-side', '--field-manager=team-b', '-f', '-'], deployment(4));
    assert.equal(conflict.code, 1);
    assert.match(conflict.stderr, /error: Apply failed with 1 conflict: conflict with "team-a": \.spec\.replicas\n/);
    await ok(['apply', '--server-side', '--field-manager=team-b', '--force-conflicts', '-f', '-'], deployment(4));
    const o = await getJson('deployment', 'api');
    assert.equal(o.spec?.replicas, 4);
    const shared = {
      'f:selector': {},
      'f:template': {
        'f:metadata': { 'f:labels': { 'f:app': {} } },
        'f:spec': { 'f:containers': { 'k:{"name":"api"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
      },
    };
    assert.deepEqual(entries(o), [
      { manager: 'team-a', operation: 'Apply', fieldsV1: { 'f:spec': shared } },
      { manager: 'team-b', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:replicas': {}, ...shared } } },
    ]);
    for (const e of o.metadata.managedFields ?? []) assert.equal(e.apiVersion, 'apps/v1');
  });

  it('two server-side appliers on one Deployment share the containers list by name', async () => {
    const app = `apiVersion: apps/v1
kind: Deployment
metadata: {name: mesh, namespace: ${ns}}
spec:
  selector: {matchLabels: {app: mesh}}
  template:
    metadata: {labels: {app: mesh}}
    spec:
      containers:
      - {name: app, image: "app:1"}
`;
    const sidecar = `apiVersion: apps/v1
kind: Deployment
metadata: {name: mesh, namespace: ${ns}}
spec:
  template:
    spec:
      containers:
      - {name: proxy, image: "envoy:1"}
`;
    await ok(['apply', '--server-side', '--field-manager=app-team', '-f', '-'], app);
    await ok(['apply', '--server-side', '--field-manager=mesh-injector', '-f', '-'], sidecar);
    const o = await getJson('deployment', 'mesh');
    assert.deepEqual(
      o.spec?.template?.spec?.containers?.map((c) => c.name),
      ['app', 'proxy'],
    );
    const injector = (o.metadata.managedFields ?? []).find((e) => e.manager === 'mesh-injector');
    assert.deepEqual(injector?.fieldsV1, {
      'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"proxy"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } } },
    });
    const conflict = await run(
      ['apply', '--server-side', '--field-manager=mesh-injector', '-f', '-'],
      sidecar.replace('{name: proxy, image: "envoy:1"}', '{name: app, image: "app:2"}'),
    );
    assert.equal(conflict.code, 1);
    assert.match(conflict.stderr, /conflict with "app-team": \.spec\.template\.spec\.containers\[name="app"\]\.image/);
  });

  it('apply --server-side creates; a field the applier drops is removed; dry run changes nothing', async () => {
    const v1 = `apiVersion: v1
kind: ConfigMap
metadata: {name: pruned, namespace: ${ns}}
data: {keep: "1", drop: "2"}
`;
    assert.match(await ok(['apply', '--server-side', '-f', '-'], v1), /configmap\/pruned serverside-applied/);
    let o = await getJson('configmap', 'pruned');
    assert.deepEqual(entries(o), [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:data': { 'f:drop': {}, 'f:keep': {} } } }]);

    const v2 = v1.replace(', drop: "2"', '');
    const dry = JSON.parse(await ok(['apply', '--server-side', '--dry-run=server', '-o', 'json', '-f', '-'], v2)) as Obj;
    assert.deepEqual(dry.data, { keep: '1' });
    o = await getJson('configmap', 'pruned');
    assert.deepEqual(o.data, { keep: '1', drop: '2' });
    assert.equal(dry.metadata.resourceVersion, o.metadata.resourceVersion);

    await ok(['apply', '--server-side', '-f', '-'], v2);
    o = await getJson('configmap', 'pruned');
    assert.deepEqual(o.data, { keep: '1' });
    assert.deepEqual(entries(o), [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:data': { 'f:keep': {} } } }]);

    // applying the same configuration again is a no-op: same resourceVersion
    await ok(['apply', '--server-side', '-f', '-'], v2);
    assert.equal((await getJson('configmap', 'pruned')).metadata.resourceVersion, o.metadata.resourceVersion);
  });

  it('raw HTTP: fieldManager is required, managedFields may not be applied, conflicts list causes', async () => {
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'raw' }, data: { a: '1' } };
    let res = await kapi.http.patch(cmPath('raw'), body, 'application/apply-patch+yaml');
    assert.equal(res.status, 422);
    assert.equal(jsonOf(res).message, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');

    res = await kapi.http.patch(
      `${cmPath('raw')}?fieldManager=one`,
      { ...body, metadata: { name: 'raw', managedFields: [] } },
      'application/apply-patch+yaml',
    );
    assert.equal(res.status, 400);
    assert.equal(jsonOf(res).message, 'metadata.managedFields must be nil');

    res = await kapi.http.patch(
      `${cmPath('raw')}?fieldManager=one`,
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: raw}\ndata: {a: "1", b: "2"}\n',
      'application/apply-patch+yaml',
    );
    assert.equal(res.status, 201);
    res = await kapi.http.patch(`${cmPath('raw')}?fieldManager=two`, { ...body, data: { a: 'x', b: 'y' } }, 'application/apply-patch+yaml');
    assert.equal(res.status, 409);
    const status = jsonOf<{ reason: string; message: string; details: { causes: { reason: string; message: string; field: string }[] } }>(
      res,
    );
    assert.equal(status.reason, 'Conflict');
    assert.equal(status.message, 'Apply failed with 2 conflicts: conflicts with "one":\n- .data.a\n- .data.b');
    assert.deepEqual(status.details, {
      causes: [
        { reason: 'FieldManagerConflict', message: 'conflict with "one"', field: '.data.a' },
        { reason: 'FieldManagerConflict', message: 'conflict with "one"', field: '.data.b' },
      ],
    });
    res = await kapi.http.patch(
      `${cmPath('raw')}?fieldManager=two&force=true`,
      { ...body, data: { a: 'x' } },
      'application/apply-patch+yaml',
    );
    assert.equal(res.status, 200);
    assert.deepEqual(jsonOf<Obj>(res).data, { a: 'x', b: '2' });
  });

  it('an object etcd takes only without its managedFields is written without them; apply is refused', async () => {
    // ~0.9 MB of data and as much again of managedFields: over etcd's 1.5 MiB request limit
    // together, under it alone
    const data = (extra: string): Record<string, string> => {
      const d: Record<string, string> = { extra };
      for (let i = 0; i < 70_000; i++) d[`k${String(i).padStart(5, '0')}`] = 'v';
      return d;
    };
    const created = await kapi.http.post(`/api/v1/namespaces/${ns}/configmaps?fieldManager=writer`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'too-large' },
      data: data('1'),
    });
    assert.equal(created.status, 201, created.body.slice(0, 300));
    const createdObj = jsonOf<Obj>(created);
    assert.equal(createdObj.metadata.managedFields, undefined);
    assert.equal(Object.keys(createdObj.data ?? {}).length, 70_001);

    const updated = await kapi.http.put(cmPath('too-large'), { ...createdObj, data: data('2') });
    assert.equal(updated.status, 200, updated.body.slice(0, 300));
    assert.equal(jsonOf<Obj>(updated).metadata.managedFields, undefined);
    assert.equal(jsonOf<Obj>(updated).data?.extra, '2');

    const patched = await kapi.http.patch(cmPath('too-large'), { data: { extra: '3' } });
    assert.equal(patched.status, 200, patched.body.slice(0, 300));
    assert.equal(jsonOf<Obj>(patched).data?.extra, '3');

    const stored = await getJson('configmap', 'too-large');
    assert.equal(stored.data?.extra, '3');

    const applied = await kapi.http.patch(
      `${cmPath('too-large-applied')}?fieldManager=applier`,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'too-large-applied' }, data: data('1') },
      'application/apply-patch+yaml',
    );
    assert.equal(applied.status, 500, applied.body.slice(0, 300));
    assert.equal(jsonOf(applied).message, 'Internal error occurred: etcdserver: request is too large');
    assert.equal((await kapi.http.get(cmPath('too-large-applied'))).status, 404);
  });

  it('managedFields rules: [{}] strips, [] does not reset, a reset with changes gives the changes to the requester', async () => {
    const create = async (name: string) => {
      const res = await kapi.http.post(`/api/v1/namespaces/${ns}/configmaps?fieldManager=creator`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, labels: { l: '1' } },
        data: { a: '1' },
      });
      assert.equal(res.status, 201);
      const o = jsonOf<Obj>(res);
      assert.deepEqual(entries(o), [
        {
          manager: 'creator',
          operation: 'Update',
          fieldsV1: { 'f:data': { '.': {}, 'f:a': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:l': {} } } },
        },
      ]);
      return o;
    };

    // rule 3: [{}] (here by JSON patch) strips managedFields entirely
    await create('rule3');
    let res = await kapi.http.patch(
      `${cmPath('rule3')}?fieldManager=stripper`,
      [{ op: 'replace', path: '/metadata/managedFields', value: [{}] }],
      'application/json-patch+json',
    );
    assert.equal(res.status, 200);
    assert.equal(jsonOf<Obj>(res).metadata.managedFields, undefined);
    assert.equal(jsonOf<Obj>(await kapi.http.get(cmPath('rule3'))).metadata.managedFields, undefined);

    // rule 4: [] (here by PUT) does not reset
    const o4 = await create('rule4');
    res = await kapi.http.put(`${cmPath('rule4')}?fieldManager=editor`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'rule4', resourceVersion: o4.metadata.resourceVersion, labels: { l: '1' }, managedFields: [] },
      data: { a: '1', b: '2' },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(entries(jsonOf<Obj>(res)), [
      {
        manager: 'creator',
        operation: 'Update',
        fieldsV1: { 'f:data': { '.': {}, 'f:a': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:l': {} } } },
      },
      { manager: 'editor', operation: 'Update', fieldsV1: { 'f:data': { 'f:b': {} } } },
    ]);

    // rule 5: the reset comes first, then the requester owns what it changed
    await create('rule5');
    res = await kapi.http.patch(
      `${cmPath('rule5')}?fieldManager=resetter`,
      { metadata: { managedFields: [{}] }, data: { c: '3' } },
      'application/merge-patch+json',
    );
    assert.equal(res.status, 200);
    assert.deepEqual(entries(jsonOf<Obj>(res)), [{ manager: 'resetter', operation: 'Update', fieldsV1: { 'f:data': { 'f:c': {} } } }]);
  });

  it('every write records its manager: fieldManager, else the User-Agent product', async () => {
    await ok(['create', 'configmap', 'who', '-n', ns, '--from-literal=a=1']);
    await ok(['label', 'configmap', 'who', '-n', ns, 'x=y']);
    await ok(['patch', 'configmap', 'who', '-n', ns, '--type=merge', '-p', '{"data":{"b":"2"}}']);
    const res = await kapi.http.patch(cmPath('who'), { data: { c: '3' } }, 'application/merge-patch+json', {
      headers: { 'user-agent': 'my-controller/v1.2 (linux)' },
    });
    assert.equal(res.status, 200);
    const o = await getJson('configmap', 'who');
    assert.deepEqual(
      o.metadata.managedFields?.map((e) => [e.manager, e.operation]),
      [
        ['kubectl-create', 'Update'],
        ['kubectl-label', 'Update'],
        ['kubectl-patch', 'Update'],
        ['my-controller', 'Update'],
      ],
    );
  });
});
