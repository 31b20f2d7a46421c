// kubectl's everyday write verbs against one kapi (issue 4, done-when 1 and 3): client-side
// apply creating, updating and pruning list items of a Deployment and a Service, `diff`
// showing the pending change, `patch` of each type, `label`, `annotate`, `scale`,
// `set image` and `replace`.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectl, kubectlOk, startKapi, uniqueName, type KapiProcess } from './harness.js';

const ns = uniqueName('verbs');

interface Port {
  name?: string;
  port: number;
  targetPort?: number | string;
  protocol?: string;
}
interface Container {
  name: string;
  image: string;
  ports?: { containerPort: number }[];
}
interface Obj {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string>; resourceVersion?: string; generation?: number };
  spec: {
    replicas?: number;
    ports?: Port[];
    template?: { spec: { containers: Container[] } };
  };
  data?: Record<string, string>;
}

function manifest(opts: { image: string; sidecar: boolean; metricsPort: boolean }): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${ns}}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: app, image: ${opts.image}, ports: [{containerPort: 8080}]}
${opts.sidecar ? '      - {name: sidecar, image: busybox:1.36}\n' : ''}---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ${ns}}
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: 8080}
${opts.metricsPort ? '  - {name: metrics, port: 9090, targetPort: 9090}\n' : ''}`;
}

describe('kubectl write verbs', () => {
  let kapi: KapiProcess;
  const run = (args: string[], input?: string) => kubectlOk(args, { kubeconfig: kapi.kubeconfig, input });
  const getJson = async (kind: string, name: string): Promise<Obj> =>
    JSON.parse(await run(['get', kind, name, '-n', ns, '-o', 'json'])) as Obj;

  before(async () => {
    kapi = await startKapi();
    await run(['create', 'namespace', ns]);
  });
  after(async () => {
    await kapi?.stop();
  });

  it('client-side apply creates, updates and prunes list items; diff shows the pending change', async () => {
    assert.match(
      await run(['apply', '-f', '-'], manifest({ image: 'nginx:1.25', sidecar: true, metricsPort: true })),
      /deployment.apps\/web created/,
    );
    let dep = await getJson('deployment', 'web');
    assert.deepEqual(
      dep.spec.template!.spec.containers.map((c) => c.name),
      ['app', 'sidecar'],
    );
    let svc = await getJson('service', 'web');
    assert.deepEqual(
      svc.spec.ports!.map((p) => p.name),
      ['http', 'metrics'],
    );

    const next = manifest({ image: 'nginx:1.27', sidecar: false, metricsPort: false });
    // kubectl diff exits 1 when there are differences and prints a unified diff
    const diff = await kubectl(['diff', '-f', '-'], { kubeconfig: kapi.kubeconfig, input: next });
    assert.equal(diff.code, 1, diff.stderr);
    assert.match(diff.stdout, /^-.*image: nginx:1\.25$/m);
    assert.match(diff.stdout, /^\+.*image: nginx:1\.27$/m);
    assert.match(diff.stdout, /^-.*name: sidecar$/m);
    assert.match(diff.stdout, /^-.*name: metrics$/m);
    // nothing changed yet
    assert.equal((await getJson('deployment', 'web')).spec.template!.spec.containers[0]!.image, 'nginx:1.25');

    const out = await run(['apply', '-f', '-'], next);
    assert.match(out, /deployment.apps\/web configured/);
    assert.match(out, /service\/web configured/);
    dep = await getJson('deployment', 'web');
    assert.deepEqual(
      dep.spec.template!.spec.containers.map((c) => [c.name, c.image]),
      [['app', 'nginx:1.27']],
    );
    svc = await getJson('service', 'web');
    assert.deepEqual(
      svc.spec.ports!.map((p) => p.name),
      ['http'],
    );

    const same = await kubectl(['diff', '-f', '-'], { kubeconfig: kapi.kubeconfig, input: next });
    assert.equal(same.code, 0, same.stdout + same.stderr);
    assert.match(await run(['apply', '-f', '-'], next), /deployment.apps\/web unchanged/);
  });

  it('patch with --type=json, merge and strategic', async () => {
    await run(['create', 'configmap', 'p', '-n', ns, '--from-literal=a=1', '--from-literal=b=2']);
    await run([
      'patch',
      'configmap',
      'p',
      '-n',
      ns,
      '--type=json',
      '-p',
      '[{"op":"test","path":"/data/a","value":"1"},{"op":"replace","path":"/data/a","value":"10"},{"op":"remove","path":"/data/b"}]',
    ]);
    assert.deepEqual((await getJson('configmap', 'p')).data, { a: '10' });
    const failed = await kubectl(
      ['patch', 'configmap', 'p', '-n', ns, '--type=json', '-p', '[{"op":"test","path":"/data/a","value":"1"}]'],
      { kubeconfig: kapi.kubeconfig },
    );
    assert.notEqual(failed.code, 0);
    // kube-apiserver answers a failed `test` with a generic 422, which kubectl prints so
    assert.match(failed.stderr, /The request is invalid: the server rejected our request due to an error in our request/);

    await run(['patch', 'configmap', 'p', '-n', ns, '--type=merge', '-p', '{"data":{"c":"3","a":null}}']);
    assert.deepEqual((await getJson('configmap', 'p')).data, { c: '3' });

    await run([
      'patch',
      'deployment',
      'web',
      '-n',
      ns,
      '--type=strategic',
      '-p',
      '{"spec":{"template":{"spec":{"containers":[{"name":"extra","image":"busybox:1.36"}]}}}}',
    ]);
    const dep = await getJson('deployment', 'web');
    assert.deepEqual(
      dep.spec.template!.spec.containers.map((c) => c.name),
      ['extra', 'app'],
    );
  });

  it('label, annotate, scale, set image and replace', async () => {
    await run(['label', 'deployment', 'web', '-n', ns, 'tier=front']);
    await run(['annotate', 'deployment', 'web', '-n', ns, 'owner=team-a']);
    let dep = await getJson('deployment', 'web');
    assert.equal(dep.metadata.labels?.tier, 'front');
    assert.equal(dep.metadata.annotations?.owner, 'team-a');
    const relabel = await kubectl(['label', 'deployment', 'web', '-n', ns, 'tier=back'], { kubeconfig: kapi.kubeconfig });
    assert.notEqual(relabel.code, 0, 'changing a label needs --overwrite');
    await run(['label', 'deployment', 'web', '-n', ns, 'tier-']);
    assert.equal((await getJson('deployment', 'web')).metadata.labels?.tier, undefined);

    assert.match(await run(['scale', 'deployment', 'web', '-n', ns, '--replicas=3']), /scaled/);
    dep = await getJson('deployment', 'web');
    assert.equal(dep.spec.replicas, 3);
    const stale = await kubectl(['scale', 'deployment', 'web', '-n', ns, '--replicas=4', '--current-replicas=2'], {
      kubeconfig: kapi.kubeconfig,
    });
    assert.notEqual(stale.code, 0, '--current-replicas is a precondition');
    assert.equal((await getJson('deployment', 'web')).spec.replicas, 3);

    await run(['set', 'image', 'deployment/web', '-n', ns, 'app=nginx:1.28']);
    dep = await getJson('deployment', 'web');
    assert.equal(dep.spec.template!.spec.containers.find((c) => c.name === 'app')!.image, 'nginx:1.28');

    const cm = JSON.parse(await run(['get', 'configmap', 'p', '-n', ns, '-o', 'json'])) as Obj & { data: Record<string, string> };
    cm.data = { replaced: 'yes' };
    await run(['replace', '-f', '-'], JSON.stringify(cm));
    assert.deepEqual((await getJson('configmap', 'p')).data, { replaced: 'yes' });
    // the same (now stale) resourceVersion again: 409
    const conflict = await kubectl(['replace', '-f', '-'], { kubeconfig: kapi.kubeconfig, input: JSON.stringify(cm) });
    assert.notEqual(conflict.code, 0);
    assert.match(conflict.stderr, /Conflict|the object has been modified/);
  });
});
