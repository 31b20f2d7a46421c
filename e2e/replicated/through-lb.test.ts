// kubectl 1.33 through the load balancer (issue 3, done-when 1): what the foundation issue
// lists, against 3 replicas behind haproxy. Every kubectl run is a new connection, so
// haproxy's round robin spreads consecutive commands over the replicas: a create, the get
// after it and the delete after that usually land on different replicas.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { fixturePath, jsonOf, kubectl, kubectlOk, kubectlSpawn, uniqueName } from '../harness.js';
import type { KubeHttpClient } from '../http-client.js';
import { startCluster, type TestCluster } from './cluster.js';

const ns = uniqueName('lb');

/** rows that differ, so that a failure names them */
function rowDiff(expected: string, got: string): string {
  const norm = (s: string) =>
    s
      .split('\n')
      .map((l) => l.trimEnd())
      .filter(Boolean);
  const e = norm(expected);
  const g = norm(got);
  return `missing rows:\n  ${e.filter((l) => !g.includes(l)).join('\n  ')}\nunexpected rows:\n  ${g.filter((l) => !e.includes(l)).join('\n  ')}`;
}

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
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ${ns}
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
---
apiVersion: v1
kind: Pod
metadata:
  name: solo
  namespace: ${ns}
spec:
  containers:
  - name: busybox
    image: busybox:1.36
`;

describe('kubectl 1.33 through the load balancer', { timeout: 600_000 }, () => {
  let cluster: TestCluster;
  let k: (args: string[], input?: string) => Promise<string>;
  let kc: string;
  let replicas: KubeHttpClient[];

  before(async () => {
    cluster = await startCluster();
    kc = cluster.kubeconfig;
    k = (args, input) => kubectlOk(args, { kubeconfig: kc, input });
    replicas = cluster.replicas.map((_, i) => cluster.replicaClient(i));
  });
  after(async () => {
    for (const r of replicas ?? []) r.close();
    await cluster?.stop();
  });

  it('the kubeconfig points at haproxy; every replica is ready behind it', async () => {
    assert.match(readFileSync(kc, 'utf8'), new RegExp(`server: ${cluster.lbURL}`));
    for (const r of replicas) assert.equal((await r.get('/readyz')).status, 200);
    // a new connection each time: haproxy's round robin visits every replica
    for (let i = 0; i < 6; i++) {
      const c = cluster.lbClient({ maxSockets: 1 });
      try {
        const res = await c.get('/readyz');
        assert.equal(res.status, 200, res.body);
      } finally {
        c.close();
      }
    }
  });

  it('get ns, api-resources and api-versions equal kube-apiserver 1.33', async () => {
    const out = await k(['get', 'ns', '--no-headers', '-o', 'custom-columns=NAME:.metadata.name,PHASE:.status.phase']);
    for (const n of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) assert.match(out, new RegExp(`^${n}\\s+Active$`, 'm'));
    for (const [args, fixture] of [
      [['api-resources'], 'api-resources-1.33.txt'],
      [['api-versions'], 'api-versions-1.33.txt'],
    ] as const) {
      const expected = readFileSync(fixturePath(fixture), 'utf8');
      const got = await k([...args]);
      assert.equal(got, expected, rowDiff(expected, got));
    }
  });

  it('create -f a multi-document YAML', async () => {
    assert.equal(
      await k(['create', '-f', '-'], manifest),
      [
        `namespace/${ns} created`,
        'configmap/settings created',
        'deployment.apps/web created',
        'service/web created',
        'pod/solo created',
        '',
      ].join('\n'),
    );
  });

  it('get -o yaml / json / wide / name / jsonpath, and get all', async () => {
    const cm = parseYaml(await k(['get', 'cm', 'settings', '-n', ns, '-o', 'yaml'])) as {
      metadata: { name: string; resourceVersion: string };
      data: unknown;
    };
    assert.equal(cm.metadata.name, 'settings');
    assert.deepEqual(cm.data, { color: 'blue' });
    const d = JSON.parse(await k(['get', 'deploy', 'web', '-n', ns, '-o', 'json'])) as {
      spec: { replicas: number; strategy: { type: string } };
    };
    assert.equal(d.spec.replicas, 1);
    assert.equal(d.spec.strategy.type, 'RollingUpdate');
    const wide = await k(['get', 'pods', '-n', ns, '-o', 'wide']);
    assert.match(wide, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES\n/);
    assert.match(wide, /^solo\s+0\/1\s+Pending\s+0\s+\S+\s+<none>\s+<none>\s+<none>\s+<none>$/m);
    assert.equal(await k(['get', 'cm', 'settings', '-n', ns, '-o', 'name']), 'configmap/settings\n');
    assert.equal(await k(['get', 'cm', 'settings', '-n', ns, '-o', 'jsonpath={.data.color}']), 'blue');
    const all = (await k(['get', 'all', '-n', ns, '-o', 'name'])).trim().split('\n').sort();
    assert.deepEqual(all, ['deployment.apps/web', 'pod/solo', 'service/web']);
    // the same object, read at once from every replica, is the same
    const rvs = await Promise.all(
      replicas.map(
        async (r) =>
          jsonOf<{ metadata: { resourceVersion: string } }>(await r.get(`/api/v1/namespaces/${ns}/configmaps/settings`)).metadata
            .resourceVersion,
      ),
    );
    assert.deepEqual(rvs, [cm.metadata.resourceVersion, cm.metadata.resourceVersion, cm.metadata.resourceVersion]);
  });

  it('explain', async () => {
    const out = await k(['explain', 'deployment.spec.template.spec.containers']);
    assert.match(out, /^KIND:\s+Deployment$/m);
    assert.match(out, /^FIELD: containers <\[\]Container>$/m);
    assert.match(out, /^ {2}image\t<string>$/m);
  });

  it('get -w prints the changes another kubectl makes', async () => {
    const w = kubectlSpawn(['get', 'cm', '-n', ns, '-w', '--output-watch-events', '-l', 'watched=yes'], { kubeconfig: kc });
    try {
      // whether kubectl lists before or after the create, it prints ADDED once (as an event,
      // or as the initial list with --output-watch-events)
      await k(['create', 'cm', 'w1', '-n', ns, '--from-literal=a=1']);
      await k(['label', 'cm', 'w1', '-n', ns, 'watched=yes']);
      await w.waitForOutput(/^ADDED\s+w1\s+1\s/m);
      await k(['label', 'cm', 'w1', '-n', ns, 'more=1']);
      await w.waitForOutput(/^MODIFIED\s+w1\s/m);
      await k(['delete', 'cm', 'w1', '-n', ns]);
      await w.waitForOutput(/^DELETED\s+w1\s/m);
      const rows = w
        .stdout()
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => l.split(/\s+/).slice(0, 2).join(' '));
      assert.deepEqual(rows, ['ADDED w1', 'MODIFIED w1', 'DELETED w1']);
    } finally {
      await w.stop();
    }
  });

  it('--chunk-size, and a continue token from one replica accepted by another', async () => {
    for (let i = 0; i < 7; i++) await k(['create', 'cm', `chunk-${i}`, '-n', ns, '--from-literal=i=' + i]);
    const r = await kubectl(['get', 'cm', '-n', ns, '--chunk-size=2', '-o', 'name', '-v=6'], { kubeconfig: kc });
    assert.equal(r.code, 0, r.stderr);
    const names = r.stdout
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('configmap/chunk-'));
    assert.deepEqual(
      names,
      Array.from({ length: 7 }, (_, i) => `configmap/chunk-${i}`),
    );
    assert.ok(r.stderr.split('\n').filter((l) => /limit=2/.test(l)).length >= 4, r.stderr);
    // raw: page 1 from replica 0, the rest from replicas 1 and 2, all at page 1's revision
    const base = `/api/v1/namespaces/${ns}/configmaps?limit=3`;
    const pages: { metadata: { resourceVersion: string; continue?: string }; items: { metadata: { name: string } }[] }[] = [];
    let cont = '';
    for (let i = 0; i < 10; i++) {
      const res = await replicas[i % 3]!.get(cont ? `${base}&continue=${encodeURIComponent(cont)}` : base);
      assert.equal(res.status, 200, res.body);
      const page = jsonOf<(typeof pages)[number]>(res);
      pages.push(page);
      cont = page.metadata.continue ?? '';
      if (!cont) break;
    }
    assert.ok(pages.length >= 3);
    assert.equal(new Set(pages.map((p) => p.metadata.resourceVersion)).size, 1, 'one revision across pages');
    const listed = pages.flatMap((p) => p.items.map((i) => i.metadata.name));
    assert.equal(new Set(listed).size, listed.length, 'no item twice');
    assert.ok(Array.from({ length: 7 }, (_, i) => `chunk-${i}`).every((n) => listed.includes(n)));
  });

  it('errors: 409 AlreadyExists and Conflict, 404 NotFound, 422 Invalid', async () => {
    const dup = await kubectl(['create', 'cm', 'settings', '-n', ns], { kubeconfig: kc });
    assert.equal(dup.code, 1);
    assert.equal(dup.stderr, 'error: failed to create configmap: configmaps "settings" already exists\n');
    const missing = await kubectl(['get', 'cm', 'nope', '-n', ns], { kubeconfig: kc });
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, 'Error from server (NotFound): configmaps "nope" not found\n');
    const invalid = await kubectl(['create', 'cm', 'Bad_Name', '-n', ns], { kubeconfig: kc });
    assert.equal(invalid.code, 1);
    assert.match(
      invalid.stderr,
      /^error: failed to create configmap: ConfigMap "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
    );
    const invalidFile = await kubectl(['create', '-f', '-'], {
      kubeconfig: kc,
      input: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Bad_Name', namespace: ns } }),
    });
    assert.equal(invalidFile.code, 1);
    assert.match(
      invalidFile.stderr,
      /^The ConfigMap "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
    );
    // a stale update through one replica after a fresh one through another: 409 Conflict
    const path = `/api/v1/namespaces/${ns}/configmaps/settings`;
    const orig = jsonOf<{ metadata: { resourceVersion: string }; data: Record<string, string> }>(await replicas[0]!.get(path));
    assert.equal((await replicas[1]!.put(path, { ...orig, data: { color: 'red' } })).status, 200);
    const stale = await replicas[2]!.put(path, { ...orig, data: { color: 'green' } });
    assert.equal(stale.status, 409, stale.body);
    assert.equal(jsonOf<{ reason: string }>(stale).reason, 'Conflict');
    const stdin = await kubectl(['replace', '-f', '-'], {
      kubeconfig: kc,
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'settings', namespace: ns, resourceVersion: orig.metadata.resourceVersion },
        data: { color: 'green' },
      }),
    });
    assert.equal(stdin.code, 1);
    assert.match(
      stdin.stderr,
      /Operation cannot be fulfilled on configmaps "settings": the object has been modified; please apply your changes to the latest version and try again/,
    );
  });

  it('finalizers hold an object until the last one is removed, whichever replica is asked', async () => {
    await k(
      ['create', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', namespace: ns, finalizers: ['example.com/hold'] } }),
    );
    assert.equal(await k(['delete', 'cm', 'held', '-n', ns, '--wait=false']), 'configmap "held" deleted\n');
    for (const r of replicas) {
      const held = jsonOf<{ metadata: { deletionTimestamp?: string; finalizers?: string[] } }>(
        await r.get(`/api/v1/namespaces/${ns}/configmaps/held`),
      );
      assert.ok(held.metadata.deletionTimestamp);
      assert.deepEqual(held.metadata.finalizers, ['example.com/hold']);
    }
    await k(['patch', 'cm', 'held', '-n', ns, '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
    for (const r of replicas) assert.equal((await r.get(`/api/v1/namespaces/${ns}/configmaps/held`)).status, 404);
  });

  it('delete ns empties and removes the namespace (its controller runs on one replica)', async () => {
    assert.equal(await k(['delete', 'ns', ns, '--timeout=90s']), `namespace "${ns}" deleted\n`);
    for (const r of replicas) {
      assert.equal((await r.get(`/api/v1/namespaces/${ns}`)).status, 404);
      const left = jsonOf<{ items: unknown[] }>(await r.get(`/api/v1/namespaces/${ns}/configmaps`));
      assert.equal(left.items.length, 0);
    }
  });
});
