// Strategic merge patch through kubectl 1.33: client-side `apply` of a changed Deployment,
// `patch` (strategic by default), `set image`, `rollout restart` and `edit` with a scripted
// editor all send application/strategic-merge-patch+json.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kubectl, kubectlOk, startKapi, uniqueName, type KapiProcess } from './harness.js';

const ns = uniqueName('smp');

interface Container {
  name: string;
  image: string;
  env?: { name: string; value?: string }[];
  ports?: { containerPort: number; protocol?: string }[];
}
interface Deployment {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string>; generation?: number };
  spec: { template: { metadata: { annotations?: Record<string, string> }; spec: { containers: Container[] } } };
}

function deploymentYaml(opts: { image: string; envB: boolean; tier: boolean }): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ${ns}
  labels:
    app: web
${opts.tier ? '    tier: front\n' : ''}spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: c
        image: ${opts.image}
        env:
        - name: A
          value: "1"
${opts.envB ? '        - name: B\n          value: "2"\n' : ''}        ports:
        - containerPort: 80
      - name: sidecar
        image: busybox:1
`;
}

describe('strategic merge patch with kubectl 1.33', () => {
  let kapi: KapiProcess;
  let scratch: string;
  let k: (args: string[], input?: string) => Promise<string>;
  const getDeployment = async (): Promise<Deployment> =>
    JSON.parse(await k(['get', 'deploy', 'web', '-n', ns, '-o', 'json'])) as Deployment;
  const images = (d: Deployment) => d.spec.template.spec.containers.map((c) => [c.name, c.image]);

  before(async () => {
    kapi = await startKapi();
    scratch = mkdtempSync(path.join(os.tmpdir(), 'kapi-smp-'));
    k = (args, input) => kubectlOk(args, { kubeconfig: kapi.kubeconfig, input });
    await k(['create', 'namespace', ns]);
  });
  after(async () => {
    await kapi?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('kubectl apply twice: image changed, an env var removed, a label added', async () => {
    const first = await k(['apply', '-f', '-'], deploymentYaml({ image: 'nginx:1', envB: true, tier: false }));
    assert.equal(first, 'deployment.apps/web created\n');
    const second = await k(['apply', '-f', '-'], deploymentYaml({ image: 'nginx:1.1', envB: false, tier: true }));
    assert.equal(second, 'deployment.apps/web configured\n');

    const d = await getDeployment();
    assert.deepEqual(d.metadata.labels, { app: 'web', tier: 'front' });
    assert.deepEqual(images(d), [
      ['c', 'nginx:1.1'],
      ['sidecar', 'busybox:1'],
    ]);
    const c = d.spec.template.spec.containers[0];
    assert.deepEqual(c?.env, [{ name: 'A', value: '1' }]);
    assert.deepEqual(c?.ports, [{ containerPort: 80, protocol: 'TCP' }]);
    assert.equal(d.metadata.generation, 2);
    const applied = JSON.parse(d.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'] ?? '{}') as Deployment;
    assert.deepEqual(applied.metadata.labels, { app: 'web', tier: 'front' });

    // the same manifest again changes nothing
    assert.equal(
      await k(['apply', '-f', '-'], deploymentYaml({ image: 'nginx:1.1', envB: false, tier: true })),
      'deployment.apps/web unchanged\n',
    );
  });

  it('kubectl patch (strategic by default) merges the container by name', async () => {
    const out = await k([
      'patch',
      'deploy',
      'web',
      '-n',
      ns,
      '-p',
      '{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:2"}]}}}}',
    ]);
    assert.equal(out, 'deployment.apps/web patched\n');
    const d = await getDeployment();
    assert.deepEqual(images(d), [
      ['c', 'nginx:2'],
      ['sidecar', 'busybox:1'],
    ]);
    assert.deepEqual(d.spec.template.spec.containers[0]?.env, [{ name: 'A', value: '1' }]);
  });

  it('kubectl set image changes one container', async () => {
    assert.equal(await k(['set', 'image', 'deploy/web', '-n', ns, 'sidecar=busybox:2']), 'deployment.apps/web image updated\n');
    assert.deepEqual(images(await getDeployment()), [
      ['c', 'nginx:2'],
      ['sidecar', 'busybox:2'],
    ]);
  });

  it('kubectl rollout restart adds the restartedAt annotation to the template', async () => {
    assert.equal(await k(['rollout', 'restart', 'deploy/web', '-n', ns]), 'deployment.apps/web restarted\n');
    const d = await getDeployment();
    const restartedAt = d.spec.template.metadata.annotations?.['kubectl.kubernetes.io/restartedAt'];
    assert.match(restartedAt ?? '', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    assert.deepEqual(images(d), [
      ['c', 'nginx:2'],
      ['sidecar', 'busybox:2'],
    ]);
  });

  it('kubectl edit with a scripted editor changes an image', async () => {
    const editor = path.join(scratch, 'editor.sh');
    writeFileSync(editor, '#!/bin/sh\nsed -i "s/image: nginx:2/image: nginx:3/" "$1"\n');
    chmodSync(editor, 0o755);
    // KUBE_EDITOR wins over EDITOR in kubectl: set both so that an inherited one cannot interfere
    const r = await kubectl(['edit', 'deploy', 'web', '-n', ns], {
      kubeconfig: kapi.kubeconfig,
      env: { EDITOR: editor, KUBE_EDITOR: editor },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'deployment.apps/web edited\n');
    const d = await getDeployment();
    assert.deepEqual(images(d), [
      ['c', 'nginx:3'],
      ['sidecar', 'busybox:2'],
    ]);
    assert.ok(d.spec.template.metadata.annotations?.['kubectl.kubernetes.io/restartedAt'], 'the edit keeps the rest of the object');
  });

  it('kubectl patch with $patch: delete removes a container', async () => {
    await k([
      'patch',
      'deploy',
      'web',
      '-n',
      ns,
      '-p',
      '{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}',
    ]);
    assert.deepEqual(images(await getDeployment()), [['c', 'nginx:3']]);
  });

  it('kubectl apply removing a finalizer and a ConfigMap key', async () => {
    const cm = (finalizers: string[], data: Record<string, string>) =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'settings', namespace: ns, finalizers },
        data,
      });
    await k(['apply', '-f', '-'], cm(['example.com/a', 'example.com/b'], { a: '1', b: '2' }));
    await k(['apply', '-f', '-'], cm(['example.com/a'], { a: '1' }));
    const got = JSON.parse(await k(['get', 'cm', 'settings', '-n', ns, '-o', 'json'])) as {
      metadata: { finalizers?: string[] };
      data: Record<string, string>;
    };
    assert.deepEqual(got.metadata.finalizers, ['example.com/a']);
    assert.deepEqual(got.data, { a: '1' });
  });

  it('kubectl apply switching a Deployment to Recreate drops rollingUpdate ($retainKeys)', async () => {
    const manifest = (strategy: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: batchy
  namespace: ${ns}
spec:
  selector:
    matchLabels:
      app: batchy
  strategy:
${strategy}
  template:
    metadata:
      labels:
        app: batchy
    spec:
      containers:
      - name: c
        image: busybox:1
`;
    await k(['apply', '-f', '-'], manifest('    type: RollingUpdate\n    rollingUpdate:\n      maxSurge: 1'));
    await k(['apply', '-f', '-'], manifest('    type: Recreate'));
    const d = JSON.parse(await k(['get', 'deploy', 'batchy', '-n', ns, '-o', 'json'])) as { spec: { strategy: unknown } };
    assert.deepEqual(d.spec.strategy, { type: 'Recreate' });
  });

  it('a malformed strategic patch is a 400 kubectl reports', async () => {
    const r = await kubectl(['patch', 'deploy', 'web', '-n', ns, '-p', '{"spec":{"$retainKeys":["replicas"],"paused":true}}'], {
      kubeconfig: kapi.kubeconfig,
    });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Error from server \(BadRequest\): invalid patch format of retainKeys/);
  });
});
