// Done-when (clients): @kubernetes/client-node 1.x and Debian's python3-kubernetes work
// against kapi: list namespaces, configmap create/read/delete, watches and informers.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { CoreV1Api, KubeConfig, Watch, makeInformer, type V1ConfigMap } from '@kubernetes/client-node';
import { pythonKubernetesAvailable, startKapi, uniqueName, waitFor, type KapiProcess } from './harness.js';

describe('@kubernetes/client-node 1.x', () => {
  let kapi: KapiProcess;
  let kc: KubeConfig;
  let core: CoreV1Api;
  const ns = uniqueName('clientnode');

  before(async () => {
    kapi = await startKapi();
    kc = new KubeConfig();
    kc.loadFromFile(kapi.kubeconfig);
    core = kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: ns } } });
  });
  after(async () => {
    await kapi?.stop();
  });

  it('lists namespaces', async () => {
    const list = await core.listNamespace();
    const names = list.items.map((n) => n.metadata?.name);
    for (const n of ['default', 'kube-system', 'kube-public', 'kube-node-lease', ns]) assert.ok(names.includes(n), n);
    assert.match(list.metadata?.resourceVersion ?? '', /^\d+$/);
  });

  it('creates, reads and deletes a configmap', async () => {
    const created = await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'from-node' }, data: { lang: 'ts' } },
    });
    assert.equal(created.metadata?.name, 'from-node');
    assert.ok(created.metadata?.uid);
    const read = await core.readNamespacedConfigMap({ name: 'from-node', namespace: ns });
    assert.deepEqual(read.data, { lang: 'ts' });
    assert.equal(read.metadata?.uid, created.metadata?.uid);
    await core.deleteNamespacedConfigMap({ name: 'from-node', namespace: ns });
    await assert.rejects(core.readNamespacedConfigMap({ name: 'from-node', namespace: ns }), (err: { code?: number }) => {
      assert.equal(err.code, 404);
      return true;
    });
  });

  it('surfaces kube errors as ApiException with the Status body', async () => {
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'dup' } } });
    await assert.rejects(
      core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'dup' } } }),
      (err: { code?: number; body?: string }) => {
        assert.equal(err.code, 409);
        const status = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
        assert.equal(status.reason, 'AlreadyExists');
        return true;
      },
    );
  });

  it('a Watch receives ADDED for a new configmap', async () => {
    const events: [string, string | undefined][] = [];
    const watch = new Watch(kc);
    let ended: unknown;
    const ctrl = await watch.watch(
      `/api/v1/namespaces/${ns}/configmaps`,
      { allowWatchBookmarks: true },
      (phase, obj: V1ConfigMap) => events.push([phase, obj.metadata?.name]),
      (err) => (ended = err ?? 'ended'),
    );
    try {
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'watched' } } });
      await waitFor('ADDED watched', () => events.some(([t, n]) => t === 'ADDED' && n === 'watched'));
      assert.equal(ended, undefined);
    } finally {
      ctrl.abort();
    }
  });

  it('an informer lists, then receives add, update and delete', async () => {
    const seen: string[] = [];
    const informer = makeInformer<V1ConfigMap>(kc, `/api/v1/namespaces/${ns}/configmaps`, () =>
      core.listNamespacedConfigMap({ namespace: ns }),
    );
    informer.on('add', (o) => seen.push(`add ${o.metadata?.name}`));
    informer.on('update', (o) => seen.push(`update ${o.metadata?.name}`));
    informer.on('delete', (o) => seen.push(`delete ${o.metadata?.name}`));
    const errors: unknown[] = [];
    informer.on('error', (e) => errors.push(e));
    await informer.start();
    try {
      // the initial list: objects that already exist arrive as adds
      await waitFor('the initial list', () => seen.includes('add dup'));
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'informed' } } });
      await waitFor('add informed', () => seen.includes('add informed'));
      // client-node sends application/json-patch+json by default
      await core.patchNamespacedConfigMap({
        name: 'informed',
        namespace: ns,
        body: [{ op: 'add', path: '/data', value: { x: '1' } }],
      });
      await waitFor('update informed', () => seen.includes('update informed'));
      assert.deepEqual(informer.get('informed', ns)?.data, { x: '1' });
      await core.deleteNamespacedConfigMap({ name: 'informed', namespace: ns });
      await waitFor('delete informed', () => seen.includes('delete informed'));
      assert.equal(informer.get('informed', ns), undefined);
      assert.deepEqual(errors, []);
    } finally {
      await informer.stop();
    }
  });
});

function python(script: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/python3', ['-c', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => child.pid !== undefined && process.kill(child.pid, 'SIGKILL'), 60000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const PY_SCRIPT = `
import json, sys, threading
from kubernetes import client, config, watch
kubeconfig, ns = sys.argv[1], sys.argv[2]
config.load_kube_config(config_file=kubeconfig)
v1 = client.CoreV1Api()
out = {}
out["namespaces"] = sorted(n.metadata.name for n in v1.list_namespace().items)
v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))
cm = v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="from-python"), data={"lang": "py"}))
out["created_uid"] = cm.metadata.uid
read = v1.read_namespaced_config_map("from-python", ns)
out["read_data"] = read.data
try:
    v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="from-python")))
except client.exceptions.ApiException as e:
    out["duplicate"] = [e.status, json.loads(e.body)["reason"]]
rv = v1.list_namespaced_config_map(ns).metadata.resource_version
w = watch.Watch()
events = []
def create_later():
    v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="watched-python")))
t = threading.Timer(0.5, create_later)
t.start()
for ev in w.stream(v1.list_namespaced_config_map, ns, resource_version=rv, timeout_seconds=20):
    events.append([ev["type"], ev["object"].metadata.name])
    if ev["object"].metadata.name == "watched-python":
        w.stop()
t.join()
out["events"] = events
v1.delete_namespaced_config_map("from-python", ns)
print(json.dumps(out))
`;

describe('python3-kubernetes (Debian)', () => {
  let kapi: KapiProcess | undefined;
  let available = false;
  before(async () => {
    available = await pythonKubernetesAvailable();
    if (available) kapi = await startKapi();
  });
  after(async () => {
    await kapi?.stop();
  });

  it('lists namespaces, creates a configmap, watches', async (t) => {
    if (!available) {
      t.skip('python3-kubernetes is not installed for /usr/bin/python3 (apt-get install -y python3-kubernetes)');
      return;
    }
    const ns = uniqueName('py');
    const r = await python(PY_SCRIPT, [kapi!.kubeconfig, ns]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
      namespaces: string[];
      created_uid: string;
      read_data: Record<string, string>;
      duplicate: [number, string];
      events: [string, string][];
    };
    for (const n of ['default', 'kube-node-lease', 'kube-public', 'kube-system']) assert.ok(out.namespaces.includes(n), n);
    assert.ok(out.created_uid);
    assert.deepEqual(out.read_data, { lang: 'py' });
    assert.deepEqual(out.duplicate, [409, 'AlreadyExists']);
    assert.deepEqual(out.events.at(-1), ['ADDED', 'watched-python']);
  });
});
