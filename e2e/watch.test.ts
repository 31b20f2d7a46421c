// Done-when 3: `kubectl get pods -w` prints the changes another kubectl makes. Also the raw
// watch stream: event types, resourceVersions, bookmarks.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { jsonOf, kubectlOk, kubectlSpawn, startKapi, uniqueName, waitFor, type KapiProcess } from './harness.js';
import { createNamespace } from './harness.js';

const podYaml = (name: string, ns: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${ns}
spec:
  containers:
  - name: c
    image: busybox:1.36
`;

describe('watch', () => {
  let kapi: KapiProcess;
  const ns = uniqueName('watch');
  before(async () => {
    kapi = await startKapi();
    await createNamespace(kapi.http, ns);
  });
  after(async () => {
    await kapi?.stop();
  });

  it('kubectl get pods -w prints create, label and delete made by another kubectl', async () => {
    const opts = { kubeconfig: kapi.kubeconfig };
    const w = kubectlSpawn(['get', 'pods', '-n', ns, '-w', '--output-watch-events'], opts);
    try {
      // the initial list is empty: kubectl says so on stderr and then waits for events
      await kubectlOk(['create', '-f', '-'], { ...opts, input: podYaml('p1', ns) });
      await w.waitForOutput(/^ADDED\s+p1\s+0\/1\s+Pending/m);
      await kubectlOk(['label', 'pod', 'p1', '-n', ns, 'color=green'], opts);
      await w.waitForOutput(/^MODIFIED\s+p1\s+0\/1\s+Pending/m);
      await kubectlOk(['delete', 'pod', 'p1', '-n', ns], opts);
      await w.waitForOutput(/^DELETED\s+p1\s/m);
      const lines = w.stdout().trim().split('\n');
      assert.match(lines[0]!, /^EVENT\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
      // kube-apiserver deletes an unscheduled pod in two writes: deletionTimestamp with grace
      // period 0 (MODIFIED), then the removal (DELETED)
      assert.deepEqual(
        lines.slice(1).map((l) => l.split(/\s+/).slice(0, 2).join(' ')),
        ['ADDED p1', 'MODIFIED p1', 'MODIFIED p1', 'DELETED p1'],
      );
    } finally {
      await w.stop();
    }
  });

  it('kubectl get pods -w (plain) starts with the current list, then prints changes', async () => {
    const opts = { kubeconfig: kapi.kubeconfig };
    await kubectlOk(['create', '-f', '-'], { ...opts, input: podYaml('p2', ns) });
    const w = kubectlSpawn(['get', 'pods', '-n', ns, '-w'], opts);
    try {
      await w.waitForOutput(/^p2\s+0\/1\s+Pending\s+0\s+\S+$/m);
      await kubectlOk(['create', '-f', '-'], { ...opts, input: podYaml('p3', ns) });
      await w.waitForOutput(/^p3\s+0\/1\s+Pending/m);
      await kubectlOk(['delete', 'pod', 'p2', 'p3', '-n', ns], opts);
      // each deletion is two events (deletionTimestamp set, then removed): two rows per pod
      const rows = () =>
        w
          .stdout()
          .trim()
          .split('\n')
          .slice(1)
          .map((l) => l.split(/\s+/)[0]);
      await waitFor('four more rows after the deletes', () => rows().length >= 6 || undefined, 30000).catch((e: Error) => {
        throw new Error(`${e.message}\n${w.stdout()}\n${w.stderr()}`);
      });
      assert.deepEqual(rows().slice(0, 2), ['p2', 'p3']);
      assert.deepEqual(rows().slice(2).sort(), ['p2', 'p2', 'p3', 'p3']);
    } finally {
      await w.stop();
    }
  });

  it('a raw watch from a list resourceVersion delivers ADDED, MODIFIED, DELETED in order', async () => {
    const base = `/api/v1/namespaces/${ns}/configmaps`;
    const list = jsonOf<{ metadata: { resourceVersion: string } }>(await kapi.http.get(base));
    const rv = list.metadata.resourceVersion;
    const w = kapi.http.watch(`${base}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true`);
    try {
      assert.equal(await w.status, 200);
      const created = await kapi.http.post(base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w1' }, data: { a: '1' } });
      assert.equal(created.status, 201, created.body);
      const updated = await kapi.http.patch(`${base}/w1`, { data: { a: '2' } });
      assert.equal(updated.status, 200, updated.body);
      const deleted = await kapi.http.delete(`${base}/w1`);
      assert.equal(deleted.status, 200, deleted.body);
      await w.waitFor((e) => e.type === 'DELETED');
      const evs = w.events.filter((e) => e.type !== 'BOOKMARK');
      assert.deepEqual(
        evs.map((e) => e.type),
        ['ADDED', 'MODIFIED', 'DELETED'],
      );
      assert.deepEqual(
        evs.map((e) => e.object.kind),
        ['ConfigMap', 'ConfigMap', 'ConfigMap'],
      );
      const rvs = evs.map((e) => Number(e.object.metadata?.resourceVersion));
      assert.ok(rvs[0]! > Number(rv) && rvs[0]! < rvs[1]! && rvs[1]! < rvs[2]!, `increasing resourceVersions: ${rvs}`);
      assert.equal(
        evs[0]!.object.metadata?.resourceVersion,
        jsonOf<{ metadata: { resourceVersion: string } }>(created).metadata.resourceVersion,
      );
    } finally {
      w.close();
    }
  });

  it('a watch with sendInitialEvents starts with the current objects, then a BOOKMARK marked initial-events-end', async () => {
    const base = `/api/v1/namespaces/${ns}/configmaps`;
    for (const name of ['i1', 'i2']) {
      const r = await kapi.http.post(base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { initial: 'yes' } } });
      assert.equal(r.status, 201, r.body);
    }
    // selected by label: controllers add their own ConfigMaps (kube-root-ca.crt) to every namespace
    const w = kapi.http.watch(
      `${base}?watch=1&labelSelector=initial%3Dyes&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
    );
    try {
      assert.equal(await w.status, 200);
      const bm = await w.waitFor(
        (e) =>
          e.type === 'BOOKMARK' &&
          (e.object.metadata as { annotations?: Record<string, string> } | undefined)?.annotations?.['k8s.io/initial-events-end'] ===
            'true',
      );
      const before = w.events.slice(0, w.events.indexOf(bm));
      assert.deepEqual(before.map((e) => [e.type, e.object.metadata?.name]).sort(), [
        ['ADDED', 'i1'],
        ['ADDED', 'i2'],
      ]);
    } finally {
      w.close();
    }
  });
});
