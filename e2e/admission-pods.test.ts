// The built-in pod admission plugins behind kubectl 1.33: in a namespace with a LimitRange and a
// globalDefault PriorityClass, `kubectl create` of a plain pod stores it with serviceAccountName
// default, the kube-api-access projected volume mounted in every container, the not-ready and
// unreachable tolerations (one from --default-unreachable-toleration-seconds), the default
// class's priority and the LimitRange's defaults with the `kubernetes.io/limit-ranger`
// annotation; a pod naming a missing ServiceAccount, PriorityClass or RuntimeClass is refused
// with kube's message; the system PriorityClasses exist; a new Node gets the not-ready taint.
// A second kapi started with --disable-admission-plugins naming all six does none of it.
// With --enable-admission-plugins=NodeRestriction a kubelet (system:node:n1) registers only its
// own Node and creates only mirror pods.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kubectl, kubectlOk, startKapi, uniqueName, waitFor, writeKubeconfig, type KapiProcess } from './harness.js';

type Json = Record<string, unknown>;
type Kc = { kubeconfig: string };

const SIX = 'ServiceAccount,Priority,DefaultTolerationSeconds,LimitRanger,RuntimeClass,TaintNodesByCondition';

async function createNamespace(name: string, kc: Kc, waitForAccount = true): Promise<void> {
  await kubectlOk(['create', 'namespace', name], kc);
  if (waitForAccount) {
    await waitFor(
      `serviceaccount default in ${name}`,
      async () => (await kubectl(['get', 'serviceaccount', 'default', '-n', name], kc)).code === 0,
      60_000,
      200,
    );
  }
}

function podJson(name: string, namespace: string, spec: Json = {}): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: { initContainers: [{ name: 'init', image: 'busybox:1.36' }], containers: [{ name: 'app', image: 'nginx:1.27' }], ...spec },
  });
}

async function getJson(args: string[], kc: Kc): Promise<Json> {
  return JSON.parse(await kubectlOk([...args, '-o', 'json'], kc)) as Json;
}

describe('pod admission plugins with kubectl 1.33', () => {
  let kapi: KapiProcess;
  let off: KapiProcess;
  let kc: Kc;
  let kcOff: Kc;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-adm-pods-'));
    writeFileSync(path.join(dir, 'tokens.csv'), 'tok-n1,system:node:n1,uid-n1,"system:nodes"\n');
    const started = await Promise.allSettled([
      startKapi({
        extraArgs: [
          '--default-unreachable-toleration-seconds=120',
          '--enable-admission-plugins=NodeRestriction',
          '--token-auth-file',
          path.join(dir, 'tokens.csv'),
        ],
      }),
      startKapi({ extraArgs: [`--disable-admission-plugins=${SIX}`] }),
    ]);
    // whichever started is stopped in after() even when the other failed
    if (started[0].status === 'fulfilled') kapi = started[0].value;
    if (started[1].status === 'fulfilled') off = started[1].value;
    for (const s of started) if (s.status === 'rejected') throw s.reason;
    kc = { kubeconfig: kapi.kubeconfig };
    kcOff = { kubeconfig: off.kubeconfig };
  });
  after(async () => {
    await Promise.all([kapi?.stop(), off?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('the system PriorityClasses are created at start-up', async () => {
    const out = await waitFor(
      'system PriorityClasses',
      async () => {
        const r = await kubectl(
          [
            'get',
            'priorityclasses',
            '-o',
            'custom-columns=NAME:.metadata.name,VALUE:.value,DEFAULT:.globalDefault,POLICY:.preemptionPolicy',
            '--no-headers',
          ],
          kc,
        );
        return r.code === 0 && r.stdout.split('\n').filter(Boolean).length === 2 ? r.stdout : undefined;
      },
      60_000,
      200,
    );
    assert.deepEqual(
      out
        .trim()
        .split('\n')
        .map((l) => l.split(/\s+/)),
      [
        ['system-cluster-critical', '2000000000', '<none>', 'PreemptLowerPriority'],
        ['system-node-critical', '2000001000', '<none>', 'PreemptLowerPriority'],
      ],
    );
  });

  it('a plain pod gets its service account, token volume, tolerations, priority and LimitRange defaults', async () => {
    const ns = uniqueName('adm');
    await createNamespace(ns, kc);
    await kubectlOk(['create', '-f', '-'], {
      ...kc,
      input: JSON.stringify({
        apiVersion: 'scheduling.k8s.io/v1',
        kind: 'PriorityClass',
        metadata: { name: `${ns}-default` },
        value: 1000,
        globalDefault: true,
      }),
    });
    // only one globalDefault class
    const second = await kubectl(['create', '-f', '-'], {
      ...kc,
      input: JSON.stringify({
        apiVersion: 'scheduling.k8s.io/v1',
        kind: 'PriorityClass',
        metadata: { name: `${ns}-other` },
        value: 5,
        globalDefault: true,
      }),
    });
    assert.notEqual(second.code, 0);
    assert.equal(
      second.stderr.trim(),
      `Error from server (Forbidden): error when creating "STDIN": priorityclasses.scheduling.k8s.io "${ns}-other" is forbidden: PriorityClass ${ns}-default is already marked as default. Only one default can exist`,
    );
    await kubectlOk(['create', '-n', ns, '-f', '-'], {
      ...kc,
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'LimitRange',
        metadata: { name: 'defaults' },
        spec: { limits: [{ type: 'Container', default: { cpu: '500m', memory: '128Mi' }, defaultRequest: { cpu: '100m' } }] },
      }),
    });
    try {
      const created = await kubectl(['create', '-f', '-'], { ...kc, input: podJson('web', ns) });
      assert.equal(created.code, 0, created.stderr);
      assert.equal(created.stdout.trim(), 'pod/web created');
      const pod = await getJson(['get', 'pod', 'web', '-n', ns], kc);
      const spec = pod.spec as Json;
      assert.equal(spec.serviceAccountName, 'default');
      assert.equal(spec.serviceAccount, 'default');
      assert.equal(spec.priorityClassName, `${ns}-default`);
      assert.equal(spec.priority, 1000);
      assert.equal(spec.preemptionPolicy, 'PreemptLowerPriority');
      assert.deepEqual(spec.tolerations, [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 120 },
      ]);
      const volumes = spec.volumes as Json[];
      assert.equal(volumes.length, 1);
      const vol = volumes[0]!;
      assert.match(String(vol.name), /^kube-api-access-[a-z0-9]{5}$/);
      assert.deepEqual(vol.projected, {
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
        ],
        defaultMode: 420,
      });
      for (const key of ['initContainers', 'containers']) {
        const c = (spec[key] as Json[])[0]!;
        assert.deepEqual(
          c.volumeMounts,
          [{ name: vol.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }],
          key,
        );
        assert.deepEqual(c.resources, { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '100m', memory: '128Mi' } }, key);
      }
      assert.equal(
        (pod.metadata as Json & { annotations: Json }).annotations['kubernetes.io/limit-ranger'],
        'LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app; cpu, memory request for init container init; cpu, memory limit for init container init',
      );
      // kubectl's own column shows the volume like kube's
      const described = await kubectlOk(['describe', 'pod', 'web', '-n', ns], kc);
      assert.match(described, /kube-api-access-[a-z0-9]{5}:\n\s+Type:\s+Projected/);
    } finally {
      await kubectlOk(['delete', 'priorityclass', `${ns}-default`], kc);
    }
  });

  it('a pod naming a missing ServiceAccount, PriorityClass or RuntimeClass is refused with kube message', async () => {
    const ns = uniqueName('adm-x');
    await createNamespace(ns, kc);
    const cases: Array<[Json, string]> = [
      [{ serviceAccountName: 'ghost' }, `error looking up service account ${ns}/ghost: serviceaccount "ghost" not found`],
      [{ priorityClassName: 'ghost' }, 'no PriorityClass with name ghost was found'],
      [{ runtimeClassName: 'ghost' }, 'pod rejected: RuntimeClass "ghost" not found'],
    ];
    for (const [spec, why] of cases) {
      const r = await kubectl(['create', '-f', '-'], { ...kc, input: podJson('bad', ns, spec) });
      assert.notEqual(r.code, 0);
      assert.equal(r.stderr.trim(), `Error from server (Forbidden): error when creating "STDIN": pods "bad" is forbidden: ${why}`);
    }
    // kubectl run names the pod on the command line
    const run = await kubectl(['run', 'r', '--image=nginx', '-n', ns, '--overrides={"spec":{"serviceAccountName":"nobody"}}'], kc);
    assert.equal(
      run.stderr.trim(),
      `Error from server (Forbidden): pods "r" is forbidden: error looking up service account ${ns}/nobody: serviceaccount "nobody" not found`,
    );
  });

  it('a pod with a system class gets its priority; a new Node gets the not-ready taint', async () => {
    const ns = uniqueName('adm-s');
    await createNamespace(ns, kc);
    await kubectlOk(['create', '-f', '-'], { ...kc, input: podJson('crit', ns, { priorityClassName: 'system-cluster-critical' }) });
    const pod = await getJson(['get', 'pod', 'crit', '-n', ns], kc);
    assert.equal((pod.spec as Json).priority, 2000000000);
    const node = uniqueName('node');
    await kubectlOk(['create', '-f', '-'], { ...kc, input: JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: node } }) });
    const got = await getJson(['get', 'node', node], kc);
    assert.deepEqual((got.spec as Json).taints, [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
    await kubectlOk(['delete', 'node', node], kc);
  });

  it('NodeRestriction: a kubelet registers only its own Node and creates only mirror pods', async () => {
    const node = { kubeconfig: writeKubeconfig(path.join(dir, 'n1.kubeconfig'), kapi.kubeconfig, { token: 'tok-n1' }) };
    const other = await kubectl(['create', '-f', '-'], {
      ...node,
      input: JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n2' } }),
    });
    assert.equal(
      other.stderr.trim(),
      'Error from server (Forbidden): error when creating "STDIN": nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"',
    );
    const own = await kubectl(['create', '-f', '-'], {
      ...node,
      input: JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }),
    });
    assert.equal(own.code, 0, own.stderr);
    const run = await kubectl(['run', 'kubelet-pod', '--image=nginx', '-n', 'default'], node);
    assert.equal(
      run.stderr.trim(),
      'Error from server (Forbidden): pods "kubelet-pod" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods',
    );
    await kubectlOk(['delete', 'node', 'n1'], kc);
  });

  it(`--disable-admission-plugins=${SIX} turns each of them off`, async () => {
    const ns = uniqueName('adm-off');
    // no need to wait for the default ServiceAccount: nothing asks for it
    await createNamespace(ns, kcOff, false);
    await kubectlOk(['create', '-n', ns, '-f', '-'], {
      ...kcOff,
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'LimitRange',
        metadata: { name: 'defaults' },
        spec: { limits: [{ type: 'Container', default: { cpu: '500m' } }] },
      }),
    });
    const created = await kubectl(['create', '-f', '-'], {
      ...kcOff,
      input: podJson('plain', ns, { serviceAccountName: 'ghost', priorityClassName: 'ghost', runtimeClassName: 'ghost' }),
    });
    assert.equal(created.code, 0, created.stderr);
    const pod = await getJson(['get', 'pod', 'plain', '-n', ns], kcOff);
    const spec = pod.spec as Json;
    assert.equal(spec.volumes, undefined);
    assert.equal(spec.tolerations, undefined);
    assert.equal(spec.priority, undefined);
    assert.equal(spec.overhead, undefined);
    assert.deepEqual((spec.containers as Json[])[0]!.resources, {});
    assert.equal((pod.metadata as Json).annotations, undefined);
    const bare = await kubectl(['create', '-f', '-'], { ...kcOff, input: podJson('bare', ns) });
    assert.equal(bare.code, 0, bare.stderr);
    assert.equal(((await getJson(['get', 'pod', 'bare', '-n', ns], kcOff)).spec as Json).serviceAccountName, undefined);
    const node = uniqueName('node');
    await kubectlOk(['create', '-f', '-'], {
      ...kcOff,
      input: JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: node } }),
    });
    assert.equal(((await getJson(['get', 'node', node], kcOff)).spec as Json | undefined)?.taints, undefined);
  });
});
