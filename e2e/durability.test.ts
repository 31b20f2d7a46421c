// Done-when 8: restarting kapi on the same data dir keeps every object; killing it with
// SIGKILL during a stream of writes loses no acknowledged (201) write. Both with the embedded
// etcd (the crash takes etcd down too, as a machine crash would) and with an external etcd
// (only kapi dies).

import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jsonOf, kubectlOk, startEtcd, startKapi, uniqueName, waitFor, type KapiProcess, type KubeHttpClient } from './harness.js';
import { createNamespace } from './harness.js';

interface Meta {
  metadata: { name: string; uid: string; resourceVersion: string };
}
interface List<T = Meta> {
  metadata: { resourceVersion: string };
  items: T[];
}

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-durable-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Creates configmaps as fast as `concurrency` loops allow until stopped; records the names
 * the server acknowledged with 201. Failures (the server died) are expected and ignored.
 */
function writeStream(http: KubeHttpClient, ns: string, concurrency = 4) {
  const acked: string[] = [];
  let attempted = 0;
  let stopped = false;
  let seq = 0;
  const loop = async () => {
    while (!stopped) {
      const name = `w-${seq++}`;
      attempted++;
      try {
        const res = await http.post(
          `/api/v1/namespaces/${ns}/configmaps`,
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name },
            data: { seq: String(seq) },
          },
          { timeoutMs: 10000 },
        );
        if (res.status === 201) acked.push(name);
      } catch {
        // connection reset: the server is gone, the write is not acknowledged
        if (stopped) return;
        await new Promise((r) => setTimeout(r, 5));
      }
    }
  };
  const loops = Array.from({ length: concurrency }, loop);
  return {
    acked,
    get attempted() {
      return attempted;
    },
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

async function listNames(kapi: KapiProcess, p: string): Promise<Map<string, Meta['metadata']>> {
  const res = await kapi.http.get(p);
  assert.equal(res.status, 200, res.body);
  return new Map(jsonOf<List>(res).items.map((i) => [i.metadata.name, i.metadata]));
}

describe('durability', () => {
  it('a graceful restart on the same data dir keeps every object', async () => {
    const dataDir = tempDir();
    const ns = uniqueName('keep');
    let kapi = await startKapi({ dataDir });
    cleanups.push(() => kapi.kill());
    await createNamespace(kapi.http, ns);
    for (let i = 0; i < 20; i++) {
      const r = await kapi.http.post(`/api/v1/namespaces/${ns}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `cm-${i}`, labels: { i: String(i) } },
        data: { i: String(i) },
      });
      assert.equal(r.status, 201, r.body);
    }
    const dep = await kapi.http.post(`/apis/apps/v1/namespaces/${ns}/deployments`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    });
    assert.equal(dep.status, 201, dep.body);
    const cmsBefore = await listNames(kapi, `/api/v1/namespaces/${ns}/configmaps`);
    const nsBefore = await listNames(kapi, '/api/v1/namespaces');
    const depBefore = jsonOf<Meta>(dep).metadata;
    const port = kapi.port;

    await kapi.stop();
    assert.deepEqual(kapi.warnings, []);
    kapi = await startKapi({ dataDir, port });

    const cmsAfter = await listNames(kapi, `/api/v1/namespaces/${ns}/configmaps`);
    for (const [name, meta] of cmsBefore) {
      assert.deepEqual(cmsAfter.get(name), meta, `configmap ${name} survived unchanged`);
    }
    const nsAfter = await listNames(kapi, '/api/v1/namespaces');
    for (const [name, meta] of nsBefore) assert.equal(nsAfter.get(name)?.uid, meta.uid, `namespace ${name}`);
    const depAfter = jsonOf<Meta>(await kapi.http.get(`/apis/apps/v1/namespaces/${ns}/deployments/web`)).metadata;
    assert.equal(depAfter.uid, depBefore.uid);
    assert.equal(depAfter.resourceVersion, depBefore.resourceVersion);
    // the same credentials keep working: kubectl with the admin kubeconfig
    // (controllers may add their own ConfigMaps, e.g. kube-root-ca.crt, at any time)
    const out = await kubectlOk(['get', 'cm', '-n', ns, '-o', 'name'], { kubeconfig: kapi.kubeconfig });
    const shown = new Set(out.trim().split('\n'));
    for (const name of cmsBefore.keys()) assert.ok(shown.has(`configmap/${name}`), `kubectl shows ${name}`);
    await kapi.stop();
  });

  it("SIGKILL of kapi alone (embedded etcd left to kapi's watchdog) during writes loses no acknowledged write", async () => {
    const dataDir = tempDir();
    const ns = uniqueName('crash-kapi');
    const first = await startKapi({ dataDir });
    cleanups.push(() => first.killOrphans());
    cleanups.push(() => first.kill());
    await createNamespace(first.http, ns);
    const port = first.port;

    const stream = writeStream(first.http, ns);
    while (stream.acked.length < 150) await new Promise((r) => setTimeout(r, 10));
    await first.kill({ onlyKapi: true });
    await stream.stop();
    const acked = [...stream.acked];

    const second = await startKapi({ dataDir, port });
    cleanups.push(() => second.kill());
    const names = await listNames(second, `/api/v1/namespaces/${ns}/configmaps`);
    const lost = acked.filter((n) => !names.has(n));
    assert.deepEqual(lost, [], `${lost.length} of ${acked.length} acknowledged writes lost`);
    await second.stop();
    assert.deepEqual(second.warnings, []);
    await waitFor("the crashed kapi's processes to be gone", () => first.orphans().length === 0, 30000).catch(() => {
      throw new Error(`processes the SIGKILLed kapi started are still running: ${first.orphans().join(', ')}`);
    });
  });

  it('SIGKILL (kapi and its embedded etcd) during writes loses no acknowledged write', async () => {
    const dataDir = tempDir();
    const ns = uniqueName('crash');
    let kapi = await startKapi({ dataDir });
    cleanups.push(() => kapi.kill());
    await createNamespace(kapi.http, ns);
    const port = kapi.port;

    const stream = writeStream(kapi.http, ns);
    while (stream.acked.length < 150) await new Promise((r) => setTimeout(r, 10));
    await kapi.kill();
    await stream.stop();
    const acked = [...stream.acked];
    assert.ok(acked.length >= 150);

    kapi = await startKapi({ dataDir, port });
    const names = await listNames(kapi, `/api/v1/namespaces/${ns}/configmaps`);
    const lost = acked.filter((n) => !names.has(n));
    assert.deepEqual(lost, [], `${lost.length} of ${acked.length} acknowledged writes lost`);
    // the server works normally after the crash
    const r = await kapi.http.post(`/api/v1/namespaces/${ns}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'after-crash' },
    });
    assert.equal(r.status, 201, r.body);
    await kapi.stop();
  });

  it('SIGKILL of kapi against an external etcd loses no acknowledged write', async () => {
    const etcd = await startEtcd();
    cleanups.push(() => etcd.stop());
    const ns = uniqueName('crash-ext');
    let kapi = await startKapi({ etcdServers: etcd.endpoint });
    cleanups.push(() => kapi.kill());
    await createNamespace(kapi.http, ns);
    const { dataDir, port } = kapi;
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));

    const stream = writeStream(kapi.http, ns);
    while (stream.acked.length < 150) await new Promise((r) => setTimeout(r, 10));
    await kapi.kill();
    await stream.stop();
    const acked = [...stream.acked];

    kapi = await startKapi({ etcdServers: etcd.endpoint, dataDir, port });
    const names = await listNames(kapi, `/api/v1/namespaces/${ns}/configmaps`);
    const lost = acked.filter((n) => !names.has(n));
    assert.deepEqual(lost, [], `${lost.length} of ${acked.length} acknowledged writes lost`);
    await kapi.stop();
  });
});
