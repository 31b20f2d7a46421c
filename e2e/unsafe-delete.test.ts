// Unsafe deletion of corrupt objects (AllowUnsafeMalformedObjectDeletion, alpha in 1.33) with
// kubectl 1.33: a ConfigMap made unreadable in etcd by the test (etcdctl put of bytes that do
// not decode) breaks `get` and `delete`; `delete --raw` with
// ?ignoreStoreReadErrorWithClusterBreakingPotential=true removes it only with the
// `unsafe-delete-ignore-read-errors` verb, refuses readable objects, other options and
// DELETECOLLECTION with kube's 422s, and is audited; with the gate off the option is ignored.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { etcdctl, kubectl, kubectlOk, startEtcd, startKapi, writeKubeconfig, type EtcdProcess, type KapiProcess } from './harness.js';

const UNSAFE = 'ignoreStoreReadErrorWithClusterBreakingPotential=true';
const POLICY = 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  verbs: ["delete"]\n';

let etcd: EtcdProcess;
let dir: string;

before(async () => {
  etcd = await startEtcd();
  dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-unsafe-delete-'));
});

after(async () => {
  await etcd?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function corrupt(kubeconfig: string, prefix: string, name: string): Promise<void> {
  await kubectlOk(['create', 'configmap', name, '--from-literal=a=b'], { kubeconfig });
  const put = await etcdctl(etcd.endpoint, ['put', `${prefix}/configmaps/default/${name}`, 'not an object {']);
  assert.equal(put.code, 0, put.stderr);
}

describe('with AllowUnsafeMalformedObjectDeletion', () => {
  let kapi: KapiProcess;
  let limited: string;
  const prefix = '/unsafe-on';
  const auditLog = () => path.join(dir, 'audit.log');

  before(async () => {
    writeFileSync(path.join(dir, 'tokens.csv'), 'tok-dana,dana,dana-uid\n');
    writeFileSync(path.join(dir, 'policy.yaml'), POLICY);
    kapi = await startKapi({
      etcdServers: etcd.endpoint,
      extraArgs: [
        '--etcd-prefix',
        prefix,
        '--feature-gates=AllowUnsafeMalformedObjectDeletion=true',
        '--authorization-mode=RBAC',
        '--token-auth-file',
        path.join(dir, 'tokens.csv'),
        '--audit-policy-file',
        path.join(dir, 'policy.yaml'),
        '--audit-log-path',
        auditLog(),
      ],
    });
    limited = writeKubeconfig(path.join(dir, 'dana.kubeconfig'), kapi.kubeconfig, { token: 'tok-dana' });
    // dana may delete ConfigMaps, but not unsafely
    await kubectlOk(['create', 'role', 'cm-deleter', '--verb=get,list,delete', '--resource=configmaps'], { kubeconfig: kapi.kubeconfig });
    await kubectlOk(['create', 'rolebinding', 'dana', '--role=cm-deleter', '--user=dana'], { kubeconfig: kapi.kubeconfig });
  });

  after(async () => {
    await kapi?.stop();
  });

  test('a corrupt object can only go unsafely, with the verb for it, and is then gone', async () => {
    const admin = { kubeconfig: kapi.kubeconfig };
    await corrupt(kapi.kubeconfig, prefix, 'broken');
    await kubectlOk(['create', 'configmap', 'fine', '--from-literal=a=b'], admin);

    const get = await kubectl(['get', 'configmap', 'broken'], admin);
    assert.notEqual(get.code, 0);
    assert.match(get.stderr, /InternalError/);
    const plain = await kubectl(['delete', 'configmap', 'broken'], admin);
    assert.notEqual(plain.code, 0);

    const uri = `/api/v1/namespaces/default/configmaps/broken?${UNSAFE}`;
    const denied = await kubectl(['delete', '--raw', uri], { kubeconfig: limited });
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /configmaps "broken" is forbidden: not permitted to do "unsafe-delete-ignore-read-errors", reason: /);

    const combined = await kubectl(['delete', '--raw', `${uri}&gracePeriodSeconds=0`], admin);
    assert.match(
      combined.stderr,
      /ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with \.gracePeriodSeconds/,
    );

    const readable = await kubectl(['delete', '--raw', `/api/v1/namespaces/default/configmaps/fine?${UNSAFE}`], admin);
    assert.match(
      readable.stderr,
      /configmaps "fine" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is exclusively used to delete corrupt object\(s\), try again by removing this option/,
    );
    const collection = await kubectl(['delete', '--raw', `/api/v1/namespaces/default/configmaps?${UNSAFE}`], admin);
    assert.match(collection.stderr, /is not allowed with DELETECOLLECTION, try again after removing the option/);

    const done = JSON.parse(await kubectlOk(['delete', '--raw', uri], admin)) as {
      status: string;
      details: { name: string; kind: string };
    };
    assert.equal(done.status, 'Success');
    assert.deepEqual(done.details, { name: 'broken', kind: 'ConfigMap' });
    const names = await kubectlOk(['get', 'configmaps', '-o', 'name'], admin);
    assert.match(names, /^configmap\/fine$/m);
    assert.doesNotMatch(names, /broken/);

    const events = readFileSync(auditLog(), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map(
        (l) =>
          JSON.parse(l) as {
            stage: string;
            objectRef?: { name?: string };
            responseStatus?: { code?: number };
            annotations?: Record<string, string>;
          },
      );
    const unsafe = events.filter((e) => e.stage === 'ResponseComplete' && e.objectRef?.name === 'broken' && e.responseStatus?.code === 200);
    assert.equal(unsafe.length, 1);
    assert.equal(unsafe[0]!.annotations?.['apiserver.k8s.io/unsafe-delete-ignore-read-error'], '');
  });
});

describe('without the gate', () => {
  test('the option is ignored: a readable object is deleted as usual, a corrupt one stays', async () => {
    const prefix = '/unsafe-off';
    const kapi = await startKapi({ etcdServers: etcd.endpoint, extraArgs: ['--etcd-prefix', prefix] });
    try {
      const admin = { kubeconfig: kapi.kubeconfig };
      await corrupt(kapi.kubeconfig, prefix, 'broken');
      await kubectlOk(['create', 'configmap', 'fine', '--from-literal=a=b'], admin);
      const broken = await kubectl(['delete', '--raw', `/api/v1/namespaces/default/configmaps/broken?${UNSAFE}`], admin);
      assert.notEqual(broken.code, 0);
      assert.match(broken.stderr, /InternalError/);
      const fine = JSON.parse(await kubectlOk(['delete', '--raw', `/api/v1/namespaces/default/configmaps/fine?${UNSAFE}`], admin)) as {
        details: { kind: string; uid?: string };
      };
      assert.equal(fine.details.kind, 'configmaps');
      assert.ok(fine.details.uid);
    } finally {
      await kapi.stop();
    }
  });
});
