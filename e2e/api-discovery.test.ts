// Done-when 1: `kubectl get ns`, `kubectl api-resources` and `kubectl api-versions` show what
// kube-apiserver 1.33 shows for its default built-in API (fixtures/ hold the reference).

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fixturePath, jsonOf, kubectlOk, loadKubeconfig, startKapi, type KapiProcess } from './harness.js';

/** rows that differ, so that a failure names them instead of printing two long blobs */
export function rowDiff(expected: string, got: string): string {
  const norm = (s: string) =>
    s
      .split('\n')
      .map((l) => l.trimEnd())
      .filter(Boolean);
  const e = norm(expected);
  const g = norm(got);
  const missing = e.filter((l) => !g.includes(l));
  const extra = g.filter((l) => !e.includes(l));
  return `missing rows:\n  ${missing.join('\n  ')}\nunexpected rows:\n  ${extra.join('\n  ')}`;
}

describe('api discovery (kubectl 1.33)', () => {
  let kapi: KapiProcess;
  before(async () => {
    kapi = await startKapi();
  });
  after(async () => {
    await kapi?.stop();
  });

  it('admin.kubeconfig names the server kapi listens on', () => {
    assert.equal(loadKubeconfig(kapi.kubeconfig).server, kapi.url);
  });

  it('kubectl get ns lists the four system namespaces, Active', async () => {
    const out = await kubectlOk(['get', 'ns', '--no-headers', '-o', 'custom-columns=NAME:.metadata.name,PHASE:.status.phase'], {
      kubeconfig: kapi.kubeconfig,
    });
    const rows = new Map(
      out
        .trim()
        .split('\n')
        .map((l) => l.trim().split(/\s+/) as [string, string]),
    );
    for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      assert.equal(rows.get(ns), 'Active', `namespace ${ns} in:\n${out}`);
    }
    const table = await kubectlOk(['get', 'ns'], { kubeconfig: kapi.kubeconfig });
    assert.match(table, /^NAME\s+STATUS\s+AGE\n/);
    assert.match(table, /^default\s+Active\s+\S+$/m);
  });

  it('kubectl api-resources equals kube-apiserver 1.33', async () => {
    const expected = readFileSync(fixturePath('api-resources-1.33.txt'), 'utf8');
    const out = await kubectlOk(['api-resources'], { kubeconfig: kapi.kubeconfig });
    assert.equal(out, expected, rowDiff(expected, out));
  });

  it('kubectl api-versions equals kube-apiserver 1.33', async () => {
    const expected = readFileSync(fixturePath('api-versions-1.33.txt'), 'utf8');
    const out = await kubectlOk(['api-versions'], { kubeconfig: kapi.kubeconfig });
    assert.equal(out, expected, rowDiff(expected, out));
  });

  it('the `kubernetes` Service exists in default', async () => {
    const res = await kapi.http.get('/api/v1/namespaces/default/services/kubernetes');
    assert.equal(res.status, 200, res.body);
    const svc = jsonOf<{ spec: { ports: { name: string; port: number }[] } }>(res);
    assert.equal(svc.spec.ports[0]?.port, 443);
  });

  it('/version answers like kube-apiserver 1.33', async () => {
    const res = await kapi.http.get('/version');
    assert.equal(res.status, 200);
    const v = jsonOf<Record<string, string>>(res);
    assert.equal(v.major, '1');
    assert.match(v.minor ?? '', /^33/);
    assert.match(v.gitVersion ?? '', /^v1\.33\./);
  });

  it('aggregated discovery (apidiscovery.k8s.io/v2) carries an ETag and answers 304 to it', async () => {
    const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
    const res = await kapi.http.get('/apis', { accept });
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /as=APIGroupDiscoveryList/);
    const etag = res.headers.etag;
    assert.ok(etag, 'ETag header');
    const again = await kapi.http.get('/apis', { accept, headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    const doc = jsonOf<{ kind: string; items: { metadata: { name: string } }[] }>(res);
    assert.equal(doc.kind, 'APIGroupDiscoveryList');
    assert.ok(doc.items.some((g) => g.metadata.name === 'apps'));
  });

  it('discovery resources keep kube-apiserver field order', async () => {
    const res = await kapi.http.get('/apis/apps/v1');
    assert.equal(res.status, 200);
    const list = jsonOf<{ resources: Record<string, unknown>[] }>(res);
    const deploy = list.resources.find((r) => r.name === 'deployments');
    assert.ok(deploy, res.body.slice(0, 300));
    assert.deepEqual(Object.keys(deploy), [
      'name',
      'singularName',
      'namespaced',
      'kind',
      'verbs',
      'shortNames',
      'categories',
      'storageVersionHash',
    ]);
    assert.deepEqual(deploy.verbs, ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
    assert.deepEqual(deploy.shortNames, ['deploy']);
    assert.deepEqual(deploy.categories, ['all']);
    const scale = list.resources.find((r) => r.name === 'deployments/scale');
    assert.deepEqual(scale && { group: scale.group, version: scale.version, kind: scale.kind }, {
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
    });
  });
});
