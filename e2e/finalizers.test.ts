// Done-when 7: finalizers hold an object in Terminating until the last one is removed;
// `kubectl delete ns` (which waits) empties and removes the namespace.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { jsonOf, kubectl, kubectlOk, startKapi, uniqueName, waitFor, type KapiProcess } from './harness.js';
import { createConfigMap, createNamespace } from './harness.js';

interface Obj {
  metadata: {
    name: string;
    finalizers?: string[];
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
    resourceVersion: string;
  };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
  spec?: { finalizers?: string[] };
}

const deployment = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  },
});

describe('finalizers and namespace deletion', () => {
  let kapi: KapiProcess;
  let k: (args: string[]) => Promise<string>;
  const ns = uniqueName('fin');

  before(async () => {
    kapi = await startKapi();
    k = (args) => kubectlOk(args, { kubeconfig: kapi.kubeconfig });
    await createNamespace(kapi.http, ns);
  });
  after(async () => {
    await kapi?.stop();
  });

  it('a custom finalizer keeps a configmap, with deletionTimestamp, until it is patched away', async () => {
    const path = `/api/v1/namespaces/${ns}/configmaps/held`;
    const created = await kapi.http.post(`/api/v1/namespaces/${ns}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'held', finalizers: ['example.com/hold', 'example.com/second'] },
    });
    assert.equal(created.status, 201, created.body);

    assert.equal(await k(['delete', 'cm', 'held', '-n', ns, '--wait=false']), 'configmap "held" deleted\n');
    const held = jsonOf<Obj>(await kapi.http.get(path));
    assert.ok(held.metadata.deletionTimestamp, 'deletionTimestamp set');
    assert.equal(held.metadata.deletionGracePeriodSeconds, 0);
    assert.deepEqual(held.metadata.finalizers, ['example.com/hold', 'example.com/second']);
    const shown = await k(['get', 'cm', 'held', '-n', ns, '-o', 'jsonpath={.metadata.deletionTimestamp}']);
    assert.equal(shown, held.metadata.deletionTimestamp);

    // a second delete changes nothing and still answers 200 with the object
    const again = await kapi.http.delete(path);
    assert.equal(again.status, 200, again.body);
    assert.equal(jsonOf<Obj>(again).metadata.deletionTimestamp, held.metadata.deletionTimestamp);

    // no new finalizer may be added while terminating
    const add = await kapi.http.patch(path, { metadata: { finalizers: ['example.com/hold', 'example.com/second', 'example.com/new'] } });
    assert.equal(add.status, 422, add.body);

    // removing one finalizer keeps the object
    await k(['patch', 'cm', 'held', '-n', ns, '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers/1"}]']);
    const still = jsonOf<Obj>(await kapi.http.get(path));
    assert.deepEqual(still.metadata.finalizers, ['example.com/hold']);
    assert.equal(still.metadata.deletionTimestamp, held.metadata.deletionTimestamp);

    // removing the last one removes the object
    const patched = await kubectl(['patch', 'cm', 'held', '-n', ns, '--type=merge', '-p', '{"metadata":{"finalizers":null}}'], {
      kubeconfig: kapi.kubeconfig,
    });
    assert.equal(patched.code, 0, patched.stderr);
    assert.equal((await kapi.http.get(path)).status, 404);
  });

  it('a watch sees the finalized object as MODIFIED, then DELETED when the last finalizer goes', async () => {
    const base = `/api/v1/namespaces/${ns}/configmaps`;
    const created = await kapi.http.post(base, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'watched', finalizers: ['example.com/hold'] },
    });
    assert.equal(created.status, 201, created.body);
    const rv = jsonOf<Obj>(created).metadata.resourceVersion;
    const w = kapi.http.watch(`${base}?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3Dwatched`);
    try {
      assert.equal((await kapi.http.delete(`${base}/watched`)).status, 200);
      const mod = await w.waitFor((e) => e.type === 'MODIFIED');
      assert.ok((mod.object as unknown as Obj).metadata.deletionTimestamp);
      assert.equal((await kapi.http.patch(`${base}/watched`, { metadata: { finalizers: null } })).status, 200);
      await w.waitFor((e) => e.type === 'DELETED');
      // kube-apiserver deletes instead of writing the emptied finalizer list: no MODIFIED between
      assert.deepEqual(
        w.events.map((e) => e.type),
        ['MODIFIED', 'DELETED'],
      );
    } finally {
      w.close();
    }
  });

  it('kubectl delete ns empties and removes a namespace holding configmaps and a deployment', async () => {
    const doomed = uniqueName('doomed');
    await createNamespace(kapi.http, doomed);
    for (let i = 0; i < 3; i++) await createConfigMap(kapi.http, doomed, `cm${i}`, { k: String(i) });
    const dep = await kapi.http.post(`/apis/apps/v1/namespaces/${doomed}/deployments`, deployment('web'));
    assert.equal(dep.status, 201, dep.body);
    const ns0 = jsonOf<Obj>(await kapi.http.get(`/api/v1/namespaces/${doomed}`));
    assert.deepEqual(ns0.spec?.finalizers, ['kubernetes']);

    const out = await kubectlOk(['delete', 'ns', doomed, '--timeout=90s'], { kubeconfig: kapi.kubeconfig, timeoutMs: 120000 });
    assert.equal(out, `namespace "${doomed}" deleted\n`);

    assert.equal((await kapi.http.get(`/api/v1/namespaces/${doomed}`)).status, 404);
    const cms = jsonOf<{ items: unknown[] }>(await kapi.http.get(`/api/v1/namespaces/${doomed}/configmaps`));
    assert.deepEqual(cms.items, []);
    const deps = jsonOf<{ items: unknown[] }>(await kapi.http.get(`/apis/apps/v1/namespaces/${doomed}/deployments`));
    assert.deepEqual(deps.items, []);
    const get = await kubectl(['get', 'ns', doomed], { kubeconfig: kapi.kubeconfig });
    assert.equal(get.stderr, `Error from server (NotFound): namespaces "${doomed}" not found\n`);
  });

  it('a terminating namespace refuses new content, and goes once its last object is released', async () => {
    const ending = uniqueName('ending');
    await createNamespace(kapi.http, ending);
    const base = `/api/v1/namespaces/${ending}/configmaps`;
    const held = await kapi.http.post(base, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'anchor', finalizers: ['example.com/hold'] },
    });
    assert.equal(held.status, 201, held.body);
    await k(['delete', 'ns', ending, '--wait=false']);

    const terminating = await waitFor('the namespace to report Terminating', async () => {
      const n = jsonOf<Obj>(await kapi.http.get(`/api/v1/namespaces/${ending}`));
      return n.status?.phase === 'Terminating' ? n : undefined;
    });
    assert.ok(terminating.metadata.deletionTimestamp);

    const refused = await kapi.http.post(base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late' } });
    assert.equal(refused.status, 403, refused.body);
    const s = jsonOf<{ reason: string; message: string; details: { causes?: { reason: string; field: string }[] } }>(refused);
    assert.equal(s.reason, 'Forbidden');
    assert.equal(
      s.message,
      `configmaps "late" is forbidden: unable to create new content in namespace ${ending} because it is being terminated`,
    );
    assert.deepEqual(
      s.details.causes?.map((c) => [c.reason, c.field]),
      [['NamespaceTerminating', 'metadata.namespace']],
    );

    // the namespace controller marks the held configmap deleted, and waits for it
    await waitFor('the anchor configmap to be marked deleted', async () => {
      const cm = jsonOf<Obj>(await kapi.http.get(`${base}/anchor`));
      return cm.metadata.deletionTimestamp ? true : undefined;
    });
    assert.equal((await kapi.http.get(`/api/v1/namespaces/${ending}`)).status, 200, 'namespace still there while content remains');

    assert.equal((await kapi.http.patch(`${base}/anchor`, { metadata: { finalizers: null } })).status, 200);
    await waitFor('the namespace to go', async () => (await kapi.http.get(`/api/v1/namespaces/${ending}`)).status === 404, 60000);
  });
});
