// Two kapi replicas on one etcd: a write through one is visible to a consistent read and to
// a watch on the other (the design's stateless replicas; kubectl behind a load balancer
// sees either).

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createNamespace, jsonOf, kubectlOk, startEtcd, startKapi, uniqueName, type EtcdProcess, type KapiProcess } from './harness.js';

describe('two replicas on one etcd', () => {
  let etcd: EtcdProcess;
  let a: KapiProcess;
  let b: KapiProcess;
  const ns = uniqueName('replicas');

  before(async () => {
    etcd = await startEtcd();
    a = await startKapi({ etcdServers: etcd.endpoint });
    b = await startKapi({ etcdServers: etcd.endpoint });
    await createNamespace(a.http, ns);
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await etcd?.stop();
  });

  it('a write through A is read back at once through B (consistent read, no stale answer)', async () => {
    for (let i = 0; i < 20; i++) {
      const created = await a.http.post(`/api/v1/namespaces/${ns}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `cm-${i}` },
      });
      assert.equal(created.status, 201, created.body);
      const rv = Number(jsonOf<{ metadata: { resourceVersion: string } }>(created).metadata.resourceVersion);
      const list = await b.http.get(`/api/v1/namespaces/${ns}/configmaps`);
      assert.equal(list.status, 200, list.body);
      const body = jsonOf<{ metadata: { resourceVersion: string }; items: { metadata: { name: string } }[] }>(list);
      assert.ok(Number(body.metadata.resourceVersion) >= rv, `list revision ${body.metadata.resourceVersion} >= write ${rv}`);
      assert.ok(
        body.items.some((it) => it.metadata.name === `cm-${i}`),
        `cm-${i} listed by B`,
      );
      assert.equal((await b.http.get(`/api/v1/namespaces/${ns}/configmaps/cm-${i}`)).status, 200);
    }
  });

  it('a watch on B sees writes made through A, in order', async () => {
    const base = `/api/v1/namespaces/${ns}/configmaps`;
    const rv = jsonOf<{ metadata: { resourceVersion: string } }>(await b.http.get(base)).metadata.resourceVersion;
    const w = b.http.watch(`${base}?watch=1&resourceVersion=${rv}`);
    try {
      assert.equal(await w.status, 200);
      for (let i = 0; i < 5; i++) {
        assert.equal((await a.http.patch(`${base}/cm-0`, { data: { n: String(i) } })).status, 200);
      }
      await w.waitFor((e) => (e.object as { data?: { n?: string } }).data?.n === '4');
      assert.deepEqual(
        w.events.map((e) => `${e.type} ${(e.object as { data?: { n?: string } }).data?.n}`),
        ['MODIFIED 0', 'MODIFIED 1', 'MODIFIED 2', 'MODIFIED 3', 'MODIFIED 4'],
      );
    } finally {
      w.close();
    }
  });

  it('kubectl against B deletes what kubectl created against A', async () => {
    await kubectlOk(['-n', ns, 'create', '-f', '-'], {
      kubeconfig: a.kubeconfig,
      input: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\ndata:\n  k: v\n`,
    });
    assert.equal(await kubectlOk(['-n', ns, 'get', 'cm', 'shared', '-o', 'jsonpath={.data.k}'], { kubeconfig: b.kubeconfig }), 'v');
    assert.equal(await kubectlOk(['-n', ns, 'delete', 'cm', 'shared'], { kubeconfig: b.kubeconfig }), 'configmap "shared" deleted\n');
    assert.equal((await a.http.get(`/api/v1/namespaces/${ns}/configmaps/shared`)).status, 404);
  });
});
