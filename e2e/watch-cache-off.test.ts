// kapi without its watch cache: --watch-cache=false for everything, and
// --watch-cache-sizes=configmaps#0 for one resource. Reads and watches are then served by the
// etcd3 store directly; what a client sees must not change (kubectl get -w, chunked lists,
// sendInitialEvents, read-your-writes).

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createNamespace, jsonOf, kubectlOk, kubectlSpawn, startKapi, uniqueName, type KapiProcess } from './harness.js';

for (const flags of [['--watch-cache=false'], ['--watch-cache-sizes=configmaps#0']]) {
  describe(`served without a watch cache (${flags.join(' ')})`, () => {
    let kapi: KapiProcess;
    const ns = uniqueName('nocache');
    before(async () => {
      kapi = await startKapi({ extraArgs: flags });
      await createNamespace(kapi.http, ns);
    });
    after(async () => {
      await kapi?.stop();
    });

    it('kubectl get -w prints the changes another kubectl makes; a write is read back at once', async () => {
      const opts = { kubeconfig: kapi.kubeconfig };
      const w = kubectlSpawn(['get', 'configmaps', '-n', ns, '-l', 'e2e=nocache', '-w', '--output-watch-events'], opts);
      try {
        await kubectlOk(['create', 'configmap', 'c1', '-n', ns, '--from-literal=a=1'], opts);
        await kubectlOk(['label', 'configmap', 'c1', '-n', ns, 'e2e=nocache'], opts);
        assert.match(await kubectlOk(['get', 'configmap', 'c1', '-n', ns, '-o', 'jsonpath={.metadata.labels.e2e}'], opts), /^nocache$/);
        await w.waitForOutput(/^ADDED\s+c1\s/m);
        await kubectlOk(['annotate', 'configmap', 'c1', '-n', ns, 'note=x'], opts);
        await w.waitForOutput(/^MODIFIED\s+c1\s/m);
        await kubectlOk(['delete', 'configmap', 'c1', '-n', ns], opts);
        await w.waitForOutput(/^DELETED\s+c1\s/m);
        // leaving the selection (the label added) is an ADDED for this watcher, then MODIFIED, DELETED
        const events = w
          .stdout()
          .trim()
          .split('\n')
          .slice(1)
          .map((l) => l.split(/\s+/).slice(0, 2).join(' '));
        assert.deepEqual(events, ['ADDED c1', 'MODIFIED c1', 'DELETED c1']);
      } finally {
        await w.stop();
      }
    });

    it('a chunked list returns everything at one resourceVersion', async () => {
      const opts = { kubeconfig: kapi.kubeconfig };
      for (let i = 0; i < 5; i++) await kubectlOk(['create', 'configmap', `chunk-${i}`, '-n', ns, '--from-literal=i=' + i], opts);
      const names = (await kubectlOk(['get', 'configmaps', '-n', ns, '--chunk-size=2', '-o', 'name'], opts)).trim().split('\n');
      for (let i = 0; i < 5; i++) assert.ok(names.includes(`configmap/chunk-${i}`), names.join(' '));
      const page = jsonOf<{ metadata: { continue?: string; resourceVersion: string } }>(
        await kapi.http.get(`/api/v1/namespaces/${ns}/configmaps?limit=2`),
      );
      assert.ok(page.metadata.continue);
      const next = jsonOf<{ metadata: { resourceVersion: string } }>(
        await kapi.http.get(`/api/v1/namespaces/${ns}/configmaps?limit=2&continue=${encodeURIComponent(page.metadata.continue!)}`),
      );
      assert.equal(next.metadata.resourceVersion, page.metadata.resourceVersion);
    });

    it('a watch with sendInitialEvents gets the current objects, then the initial-events-end BOOKMARK', async () => {
      const base = `/api/v1/namespaces/${ns}/configmaps`;
      for (const name of ['i1', 'i2']) {
        const r = await kapi.http.post(base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { initial: 'yes' } } });
        assert.equal(r.status, 201, r.body);
      }
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
        const initial = w.events.slice(0, w.events.indexOf(bm));
        assert.deepEqual(initial.map((e) => [e.type, e.object.metadata?.name]).sort(), [
          ['ADDED', 'i1'],
          ['ADDED', 'i2'],
        ]);
      } finally {
        w.close();
      }
    });
  });
}
