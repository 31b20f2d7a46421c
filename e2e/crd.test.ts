// CustomResourceDefinitions with kubectl 1.33 against two kapi replicas on one etcd: a CRD
// applied through A is established and served by both; custom resources are created, listed
// (printer columns, short name, category all), validated, pruned, defaulted, patched, applied
// server-side, scaled, watched and explained; deleting the CRD deletes its resources first.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  etcdctl,
  jsonOf,
  kubectl,
  kubectlOk,
  kubectlSpawn,
  startEtcd,
  startKapi,
  waitFor,
  type EtcdProcess,
  type KapiProcess,
} from './harness.js';

const crdYaml = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
    categories: [all]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - {name: Spec, type: string, jsonPath: .spec.cronSpec}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [cronSpec]
            x-kubernetes-validations:
            - {rule: "!has(self.image) || self.image != 'forbidden'", message: image forbidden is not allowed}
            properties:
              cronSpec:
                type: string
                description: the schedule
                pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'
              image: {type: string}
              replicas: {type: integer, minimum: 1, maximum: 10, default: 1}
              tags: {type: array, items: {type: string}, x-kubernetes-list-type: set}
          status:
            type: object
            properties:
              replicas: {type: integer}
  - name: v1beta1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`;

const cronTab = (name: string, spec: string) => `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: ${name}
spec:
${spec}
`;

describe('CustomResourceDefinitions (kubectl 1.33, two replicas)', () => {
  let etcd: EtcdProcess;
  let a: KapiProcess;
  let b: KapiProcess;
  const onA = () => ({ kubeconfig: a.kubeconfig });
  const onB = () => ({ kubeconfig: b.kubeconfig });

  before(async () => {
    etcd = await startEtcd();
    a = await startKapi({ etcdServers: etcd.endpoint });
    b = await startKapi({ etcdServers: etcd.endpoint });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await etcd?.stop();
  });

  it('a CRD applied through A becomes Established and is served by B', async () => {
    await kubectlOk(['apply', '-f', '-'], { ...onA(), input: crdYaml });
    await kubectlOk(['wait', '--for', 'condition=established', '--timeout=30s', 'crd/crontabs.stable.example.com'], onA());
    const crd = JSON.parse(await kubectlOk(['get', 'crd', 'crontabs.stable.example.com', '-o', 'json'], onA())) as {
      metadata: { finalizers?: string[] };
      status: {
        acceptedNames: { plural: string; shortNames: string[] };
        storedVersions: string[];
        conditions: { type: string; status: string }[];
      };
    };
    assert.equal(crd.status.acceptedNames.plural, 'crontabs');
    // the cleanup finalizer comes with the delete, as in kube
    assert.equal(crd.metadata.finalizers, undefined);
    assert.deepEqual(crd.status.storedVersions, ['v1']);
    assert.deepEqual(
      crd.status.conditions.filter((c) => c.type === 'NamesAccepted' || c.type === 'Established').map((c) => `${c.type}=${c.status}`),
      ['NamesAccepted=True', 'Established=True'],
    );
    await waitFor(
      'B serves crontabs',
      async () => (await b.http.get('/apis/stable.example.com/v1/namespaces/default/crontabs')).status === 200,
    );
    const groups = jsonOf<{ groups: { name: string; preferredVersion: { version: string } }[] }>(await b.http.get('/apis'));
    assert.equal(groups.groups.find((g) => g.name === 'stable.example.com')?.preferredVersion.version, 'v1');
  });

  it('a second CRD of the group asking for a used short name gets NamesAccepted=False and is not served', async () => {
    const clash = crdYaml
      .replace('name: crontabs.stable.example.com', 'name: crontabzs.stable.example.com')
      .replace('plural: crontabs', 'plural: crontabzs')
      .replace('singular: crontab', 'singular: crontabz')
      .replace('kind: CronTab', 'kind: CronTabZ');
    await kubectlOk(['apply', '-f', '-'], { ...onA(), input: clash });
    const conditions = await waitFor('NamesAccepted=False', async () => {
      const crd = JSON.parse(await kubectlOk(['get', 'crd', 'crontabzs.stable.example.com', '-o', 'json'], onB())) as {
        status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
      };
      const c = crd.status?.conditions ?? [];
      return c.some((x) => x.type === 'NamesAccepted') ? c : undefined;
    });
    assert.deepEqual(
      conditions
        .filter((c) => c.type === 'NamesAccepted' || c.type === 'Established')
        .map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`),
      ['NamesAccepted=False ShortNamesConflict: "ct" is already in use', 'Established=False NotAccepted: not all names are accepted'],
    );
    assert.equal((await a.http.get('/apis/stable.example.com/v1/namespaces/default/crontabzs')).status, 404);
    await kubectlOk(['delete', 'crd', 'crontabzs.stable.example.com'], onA());
  });

  it("refuses invalid CRDs with kube-apiserver's messages", async () => {
    const bad = crdYaml.replace(/stable\.example\.com/g, 'example').replace('storage: false', 'storage: true');
    const r = await kubectl(['create', '-f', '-'], { ...onA(), input: bad });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /The CustomResourceDefinition "crontabs\.example" is invalid: /);
    assert.match(r.stderr, /spec\.group: Invalid value: "example": should be a domain with at least one dot/);
    assert.match(r.stderr, /spec\.versions: Invalid value: .*must have exactly one version marked as storage version/);
    const scope = await kubectl(
      ['patch', 'crd', 'crontabs.stable.example.com', '--type=merge', '-p', '{"spec":{"scope":"Cluster"}}'],
      onA(),
    );
    assert.match(scope.stderr, /spec\.scope: Invalid value: "Cluster": field is immutable/);
  });

  it('creates a custom resource with defaults; kubectl get <short> shows the printer columns, get all includes it', async () => {
    await kubectlOk(['apply', '-f', '-'], { ...onA(), input: cronTab('daily', '  cronSpec: "* * * * */5"\n  image: my-image') });
    const table = await kubectlOk(['get', 'ct'], onB());
    const lines = table.trim().split('\n');
    assert.match(lines[0]!, /^NAME\s+SPEC\s+REPLICAS\s+AGE$/);
    assert.match(lines[1]!, /^daily\s+\* \* \* \* \*\/5\s+1\s+\d+s$/);
    const apiResources = await kubectlOk(['api-resources', '--api-group=stable.example.com'], onB());
    assert.match(apiResources, /^crontabs\s+ct\s+stable\.example\.com\/v1\s+true\s+CronTab$/m);
    const all = await kubectlOk(['get', 'all'], onA());
    assert.match(all, /crontab\.stable\.example\.com\/daily/);
    const obj = JSON.parse(await kubectlOk(['get', 'crontab', 'daily', '-o', 'json'], onA())) as {
      spec: Record<string, unknown>;
      metadata: { generation: number };
    };
    assert.deepEqual(obj.spec, { cronSpec: '* * * * */5', image: 'my-image', replicas: 1 });
    assert.equal(obj.metadata.generation, 1);
  });

  it("refuses an invalid custom resource with kube-apiserver's message (schema and x-kubernetes-validations)", async () => {
    const r = await kubectl(['create', '-f', '-'], { ...onA(), input: cronTab('bad', '  cronSpec: "often"\n  replicas: 20') });
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /The CronTab "bad" is invalid: \n\* spec\.cronSpec: Invalid value: "often": spec\.cronSpec in body should match/,
    );
    assert.match(r.stderr, /\* spec\.replicas: Invalid value: 20: spec\.replicas in body should be less than or equal to 10/);
    const cel = await kubectl(['create', '-f', '-'], { ...onA(), input: cronTab('bad', '  cronSpec: "* * * * *"\n  image: forbidden') });
    assert.match(cel.stderr, /The CronTab "bad" is invalid: spec: Invalid value: "object": image forbidden is not allowed/);
    const missing = await kubectl(['create', '-f', '-'], { ...onA(), input: cronTab('bad', '  image: x') });
    assert.match(missing.stderr, /The CronTab "bad" is invalid: spec\.cronSpec: Required value/);
  });

  it('60,000 values outside an enum of 2,000: a bounded 422 listing the first errors and counting the rest', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.flood.example.com' },
      spec: {
        group: 'flood.example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    properties: {
                      colors: { type: 'array', items: { type: 'string', enum: Array.from({ length: 2000 }, (_v, i) => `c${i}`) } },
                    },
                  },
                },
              },
            },
          },
        ],
      },
    };
    const created = await a.http.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    assert.equal(created.status, 201, created.body.slice(0, 300));
    await waitFor(
      'widgets to be served',
      async () => (await a.http.get('/apis/flood.example.com/v1/namespaces/default/widgets')).status === 200,
    );
    const res = await a.http.post('/apis/flood.example.com/v1/namespaces/default/widgets', {
      apiVersion: 'flood.example.com/v1',
      kind: 'Widget',
      metadata: { name: 'flood' },
      spec: { colors: Array.from({ length: 60_000 }, (_v, i) => `x${i}`) },
    });
    assert.equal(res.status, 422, res.body.slice(0, 300));
    assert.ok(res.body.length < 20 * 1024 * 1024, `${res.body.length} bytes`);
    const status = jsonOf<{ message: string; details: { causes: { field: string; message: string }[] } }>(res);
    const shown = status.details.causes.length;
    assert.ok(shown > 100 && shown < 60_000, `${shown} causes`);
    assert.equal(status.details.causes[0]?.field, 'spec.colors[0]');
    assert.ok(
      status.message.startsWith(
        'Widget.flood.example.com "flood" is invalid: [spec.colors[0]: Unsupported value: "x0": supported values: "c0", "c1", ',
      ),
    );
    assert.ok(status.message.endsWith(`, and ${60_000 - shown} more errors]`), status.message.slice(-60));
  });

  it('unknown fields: refused with --validate=strict, warned with warn, pruned otherwise', async () => {
    const body = cronTab('extra', '  cronSpec: "* * * * *"\n  foo: bar');
    const strict = await kubectl(['create', '--validate=strict', '-f', '-'], { ...onA(), input: body });
    assert.notEqual(strict.code, 0);
    assert.match(strict.stderr, /strict decoding error: unknown field "spec\.foo"/);
    const warn = await kubectl(['create', '--validate=warn', '-f', '-'], { ...onA(), input: body });
    assert.equal(warn.code, 0, warn.stderr);
    assert.match(warn.stderr, /Warning: unknown field "spec\.foo"/);
    const stored = JSON.parse(await kubectlOk(['get', 'ct', 'extra', '-o', 'json'], onA())) as { spec: Record<string, unknown> };
    assert.deepEqual(stored.spec, { cronSpec: '* * * * *', replicas: 1 });
    const keys = await etcdctl(etcd.endpoint, ['get', '/registry/stable.example.com/crontabs/default/extra', '--print-value-only']);
    assert.doesNotMatch(keys.stdout, /foo/);
    assert.match(keys.stdout, /"cronSpec"/);
  });

  it('patch, server-side apply (set list type), scale and status; generation counts spec changes only', async () => {
    // client-side apply again: a merge patch (CRs have no strategic merge)
    await kubectlOk(['apply', '-f', '-'], { ...onA(), input: cronTab('daily', '  cronSpec: "* * * * */5"\n  image: v1') });
    assert.match(await kubectlOk(['get', 'ct', 'daily', '-o', 'jsonpath={.spec.image}'], onB()), /^v1$/);
    await kubectlOk(['patch', 'ct', 'daily', '--type=merge', '-p', '{"spec":{"image":"v2"}}'], onA());
    const sp = await kubectl(['patch', 'ct', 'daily', '--type=strategic', '-p', '{"spec":{"image":"v3"}}'], onA());
    assert.notEqual(sp.code, 0);
    assert.match(sp.stderr, /application\/strategic-merge-patch\+json is not supported/);
    await kubectlOk(['apply', '--server-side', '--field-manager=tester', '-f', '-'], {
      ...onA(),
      input: cronTab('applied', '  cronSpec: "0 * * * *"\n  tags: [a]'),
    });
    // a set (x-kubernetes-list-type) merges the items two managers apply
    await kubectlOk(['apply', '--server-side', '--field-manager=other', '-f', '-'], { ...onB(), input: cronTab('applied', '  tags: [b]') });
    const applied = JSON.parse(await kubectlOk(['get', 'ct', 'applied', '-o', 'json', '--show-managed-fields'], onB())) as {
      spec: Record<string, unknown>;
      metadata: { managedFields: { manager: string; operation: string }[] };
    };
    assert.deepEqual(applied.spec, { cronSpec: '0 * * * *', replicas: 1, tags: ['a', 'b'] });
    assert.ok(applied.metadata.managedFields.some((m) => m.manager === 'tester' && m.operation === 'Apply'));
    await kubectlOk(['scale', 'ct', 'daily', '--replicas=3'], onA());
    const scale = JSON.parse(
      await kubectlOk(['get', '--raw', '/apis/stable.example.com/v1/namespaces/default/crontabs/daily/scale'], onB()),
    ) as {
      kind: string;
      spec: { replicas: number };
    };
    assert.equal(scale.kind, 'Scale');
    assert.equal(scale.spec.replicas, 3);
    const scaled = JSON.parse(await kubectlOk(['get', 'ct', 'daily', '-o', 'json', '--show-managed-fields'], onA())) as {
      metadata: { managedFields: { subresource?: string; fieldsV1: unknown }[] };
    };
    assert.deepEqual(scaled.metadata.managedFields.find((m) => m.subresource === 'scale')?.fieldsV1, { 'f:spec': { 'f:replicas': {} } });
    await kubectlOk(['patch', 'ct', 'daily', '--subresource=status', '--type=merge', '-p', '{"status":{"replicas":3}}'], onA());
    const daily = JSON.parse(await kubectlOk(['get', 'ct', 'daily', '-o', 'json'], onA())) as {
      spec: { image: string; replicas: number };
      status: { replicas: number };
      metadata: { generation: number };
    };
    assert.equal(daily.spec.image, 'v2');
    assert.equal(daily.status.replicas, 3);
    // created (1), image v1 (2), image v2 (3), replicas (4); the status write bumps nothing
    assert.equal(daily.metadata.generation, 4);
    // status sent to the main resource is ignored
    await kubectlOk(['patch', 'ct', 'daily', '--type=merge', '-p', '{"status":{"replicas":9}}'], onA());
    assert.equal(
      (JSON.parse(await kubectlOk(['get', 'ct', 'daily', '-o', 'json'], onA())) as { status: { replicas: number } }).status.replicas,
      3,
    );
  });

  it('serves the other version with apiVersion rewritten', async () => {
    const v1beta1 = jsonOf<{ apiVersion: string; spec: { cronSpec: string } }>(
      await b.http.get('/apis/stable.example.com/v1beta1/namespaces/default/crontabs/daily'),
    );
    assert.equal(v1beta1.apiVersion, 'stable.example.com/v1beta1');
    assert.equal(v1beta1.spec.cronSpec, '* * * * */5');
  });

  it('kubectl explain shows the schema', async () => {
    const out = await kubectlOk(['explain', 'crontab.spec'], onA());
    assert.match(out, /KIND:\s+CronTab/);
    assert.match(out, /cronSpec\s+<string> -required-/);
    assert.match(out, /the schedule/);
  });

  it('a watch on B sees changes made through A', async () => {
    const w = kubectlSpawn(['get', 'ct', '-w', '--output-watch-events'], onB());
    try {
      await w.waitForOutput(/daily/);
      await kubectlOk(['label', 'ct', 'daily', 'seen=yes'], onA());
      await kubectlOk(['delete', 'ct', 'applied'], onA());
      await w.waitForOutput(/MODIFIED\s+daily/);
      await w.waitForOutput(/DELETED\s+applied/);
    } finally {
      await w.stop();
    }
  });

  it('deleting the CRD deletes its custom resources, then the CRD; the endpoints go away', async () => {
    // an open watch on B ends when the CRD goes
    const open = b.http.watch('/apis/stable.example.com/v1/namespaces/default/crontabs?watch=1');
    assert.equal(await open.status, 200);
    await kubectlOk(['delete', 'crd', 'crontabs.stable.example.com', '--timeout=60s'], onA());
    await waitFor(
      'the CRD to be gone',
      async () => (await a.http.get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com')).status === 404,
      60000,
    );
    const keys = await etcdctl(etcd.endpoint, ['get', '--prefix', '/registry/stable.example.com/', '--keys-only']);
    assert.equal(keys.stdout.trim(), '');
    await waitFor('A and B to stop serving crontabs', async () => {
      const [ra, rb] = await Promise.all([
        a.http.get('/apis/stable.example.com/v1/namespaces/default/crontabs'),
        b.http.get('/apis/stable.example.com/v1/namespaces/default/crontabs'),
      ]);
      return ra.status === 404 && rb.status === 404;
    });
    assert.doesNotMatch((await b.http.get('/apis')).body, /stable\.example\.com/);
    await open.ended;
    assert.ok(
      open.events.some((e) => e.type === 'DELETED'),
      'the watch saw the CRs deleted before it ended',
    );
  });
});
