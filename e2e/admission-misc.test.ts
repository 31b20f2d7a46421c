// kube 1.33's built-in storage, networking, certificate and quota admission plugins through
// kubectl 1.33: a claim without a class gets the default StorageClass and the pvc-protection
// finalizer (and grows only when bound and its class allows expansion), an Ingress the default IngressClass, a ConfigMap quota refuses the one too many
// with kube's message and `kubectl describe quota` shows what is used, a CSR for the
// kube-apiserver-client signer asking for system:masters is refused.

import assert from 'node:assert/strict';
import { webcrypto } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import {
  createNamespace,
  jsonOf,
  kubectl,
  kubectlOk,
  startEtcd,
  startKapi,
  uniqueName,
  waitFor,
  type EtcdProcess,
  type KapiProcess,
} from './harness.js';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

async function csrRequest(subject: string): Promise<string> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
  const req = await x509.Pkcs10CertificateRequestGenerator.create({ name: subject, keys, signingAlgorithm: alg });
  return Buffer.from(req.toString('pem')).toString('base64');
}

describe('built-in admission: storage, ingress, quota, certificates', () => {
  let kapi: KapiProcess;
  let k: (args: string[], input?: string) => Promise<string>;
  const ns = uniqueName('adm');

  before(async () => {
    kapi = await startKapi();
    k = (args, input) => kubectlOk(args, { kubeconfig: kapi.kubeconfig, input });
    await createNamespace(kapi.http, ns);
  });
  after(async () => {
    await kapi?.stop();
  });

  it('a claim without a class gets the default StorageClass and the pvc-protection finalizer', async () => {
    await k(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: 'standard', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
        provisioner: 'example.com/provisioner',
      }),
    );
    await k(
      ['create', '-n', ns, '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'data' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      }),
    );
    const got = await k(['get', 'pvc', 'data', '-n', ns, '-o', 'jsonpath={.spec.storageClassName} {.metadata.finalizers}']);
    assert.equal(got, 'standard ["kubernetes.io/pvc-protection"]');
    // once bound, it may grow only when its class allows expansion
    await k(['patch', 'pvc', 'data', '-n', ns, '--subresource=status', '-p', '{"status":{"phase":"Bound"}}']);
    const grow = ['patch', 'pvc', 'data', '-n', ns, '-p', '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}'];
    const refused = await kubectl(grow, { kubeconfig: kapi.kubeconfig });
    assert.notEqual(refused.code, 0);
    assert.match(
      refused.stderr,
      /persistentvolumeclaims "data" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize/,
    );
    await k(['patch', 'storageclass', 'standard', '-p', '{"allowVolumeExpansion":true}']);
    assert.equal(await k(grow), 'persistentvolumeclaim/data patched\n');
    // no pod uses it: the pvc-protection controller lets the delete finish
    assert.equal(await k(['delete', 'pvc', 'data', '-n', ns, '--timeout=60s']), 'persistentvolumeclaim "data" deleted\n');
  });

  it('an Ingress without a class gets the default IngressClass', async () => {
    await k(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'IngressClass',
        metadata: { name: 'nginx', annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } },
        spec: { controller: 'example.com/ingress-controller' },
      }),
    );
    await k(['create', 'ingress', 'web', '-n', ns, '--rule=example.com/=web:80']);
    assert.equal(await k(['get', 'ingress', 'web', '-n', ns, '-o', 'jsonpath={.spec.ingressClassName}']), 'nginx');
  });

  it('a quota of 2 configmaps refuses the one too many; describe quota shows what is used', async () => {
    await k(['create', 'quota', 'cm-quota', '-n', ns, '--hard=configmaps=2']);
    // the quota controller fills in status; until then admission cannot charge the quota
    await waitFor(
      'status.used of the quota',
      async () => (await k(['get', 'quota', 'cm-quota', '-n', ns, '-o', 'jsonpath={.status.used.configmaps}'])) || undefined,
    );
    // kube-root-ca.crt may already take one of the two
    let refused = '';
    for (let i = 1; i <= 3 && !refused; i++) {
      const r = await kubectl(['create', 'configmap', `cm-${i}`, '-n', ns, '--from-literal=a=b'], { kubeconfig: kapi.kubeconfig });
      if (r.code !== 0) refused = r.stderr;
      else assert.equal(r.stdout, `configmap/cm-${i} created\n`);
    }
    assert.match(
      refused,
      /configmaps "cm-\d" is forbidden: exceeded quota: cm-quota, requested: configmaps=1, used: configmaps=2, limited: configmaps=2/,
    );
    const described = await k(['describe', 'quota', 'cm-quota', '-n', ns]);
    assert.match(described, /^Name:\s+cm-quota$/m);
    assert.match(described, /^Resource\s+Used\s+Hard$/m);
    assert.match(described, /^configmaps\s+2\s+2$/m);
    // a deletion gives the quota back at once (its informer started with the first quota that
    // counts configmaps), not at the next full recount minutes later
    await k(['delete', 'configmap', 'cm-1', '-n', ns]);
    await waitFor(
      'the deleted configmap to leave status.used',
      async () => (await k(['get', 'quota', 'cm-quota', '-n', ns, '-o', 'jsonpath={.status.used.configmaps}'])) === '1',
    );
    await k(['create', 'configmap', 'cm-again', '-n', ns, '--from-literal=a=b']);
  });

  it('a compute quota makes pods state their requests', async () => {
    const quotaNs = uniqueName('admq');
    await createNamespace(kapi.http, quotaNs);
    await k(['create', 'quota', 'compute', '-n', quotaNs, '--hard=requests.cpu=1,pods=3']);
    await waitFor(
      'status.used of the compute quota',
      async () => (await k(['get', 'quota', 'compute', '-n', quotaNs, '-o', 'jsonpath={.status.used.pods}'])) || undefined,
    );
    const bare = await kubectl(['run', 'bare', '-n', quotaNs, '--image=nginx'], { kubeconfig: kapi.kubeconfig });
    assert.notEqual(bare.code, 0);
    assert.match(bare.stderr, /pods "bare" is forbidden: failed quota: compute: must specify requests.cpu for: bare/);
    const sized = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'sized' },
      spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '700m' } } }] },
    });
    await k(['create', '-n', quotaNs, '-f', '-'], sized);
    const over = await kubectl(['create', '-n', quotaNs, '-f', '-'], {
      kubeconfig: kapi.kubeconfig,
      input: sized.replace('"sized"', '"second"'),
    });
    assert.notEqual(over.code, 0);
    assert.match(
      over.stderr,
      /pods "second" is forbidden: exceeded quota: compute, requested: requests.cpu=700m, used: requests.cpu=700m, limited: requests.cpu=1/,
    );
    assert.match(await k(['describe', 'quota', 'compute', '-n', quotaNs]), /^requests\.cpu\s+700m\s+1$/m);
  });

  it('a CSR for kube-apiserver-client with group system:masters is refused', async () => {
    const csr = (name: string, request: string) =>
      JSON.stringify({
        apiVersion: 'certificates.k8s.io/v1',
        kind: 'CertificateSigningRequest',
        metadata: { name },
        spec: { request, signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] },
      });
    const r = await kubectl(['create', '-f', '-'], {
      kubeconfig: kapi.kubeconfig,
      input: csr('masters', await csrRequest('CN=eve, O=system:masters')),
    });
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /Error from server \(Forbidden\): error when creating "STDIN": certificatesigningrequests\.certificates\.k8s\.io "masters" is forbidden: use of kubernetes\.io\/kube-apiserver-client signer with system:masters group is not allowed/,
    );
    assert.equal(
      await k(['create', '-f', '-'], csr('devs', await csrRequest('CN=bob, O=devs'))),
      'certificatesigningrequest.certificates.k8s.io/devs created\n',
    );
  });
});

describe('ResourceQuota across two replicas on one etcd', () => {
  let etcd: EtcdProcess;
  let a: KapiProcess;
  let b: KapiProcess;
  const ns = uniqueName('admrep');

  before(async () => {
    etcd = await startEtcd();
    a = await startKapi({ etcdServers: etcd.endpoint });
    b = await startKapi({ etcdServers: etcd.endpoint });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await etcd?.stop();
  });

  it('concurrent creates through both replicas never go past the quota, and status.used counts what is stored', async () => {
    await createNamespace(a.http, ns);
    const created = await a.http.post(`/api/v1/namespaces/${ns}/resourcequotas`, {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'cms' },
      spec: { hard: { configmaps: '8' } },
    });
    assert.equal(created.status, 201, created.body);
    interface Quota {
      status?: { used?: Record<string, string> };
    }
    const usedThrough = async (k: KapiProcess) =>
      jsonOf<Quota>(await k.http.get(`/api/v1/namespaces/${ns}/resourcequotas/cms`)).status?.used?.configmaps;
    await waitFor('status.used on both replicas', async () => (await usedThrough(a)) !== undefined && (await usedThrough(b)) !== undefined);

    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? a : b).http.post(`/api/v1/namespaces/${ns}/configmaps`, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `cm-${i}` },
        }),
      ),
    );
    const ok = results.filter((r) => r.status === 201).length;
    for (const r of results) {
      if (r.status === 201) continue;
      assert.ok(r.status === 403 || r.status === 409, `${r.status} ${r.body}`);
      if (r.status === 403) assert.match(r.body, /exceeded quota: cms, requested: configmaps=1, used: configmaps=8, limited: configmaps=8/);
    }
    assert.ok(ok >= 1);
    const stored = jsonOf<{ items: unknown[] }>(await a.http.get(`/api/v1/namespaces/${ns}/configmaps`)).items.length;
    assert.ok(stored <= 8, `${stored} configmaps stored under a quota of 8`);
    assert.equal(await usedThrough(a), String(stored));
  });
});

describe('CertificateApproval under RBAC', () => {
  let kapi: KapiProcess;
  let k: (args: string[], input?: string) => Promise<string>;

  before(async () => {
    kapi = await startKapi({ extraArgs: ['--authorization-mode=Node,RBAC'] });
    k = (args, input) => kubectlOk(args, { kubeconfig: kapi.kubeconfig, input });
  });
  after(async () => {
    await kapi?.stop();
  });

  it('approving needs `approve` on the signer (or its domain wildcard) besides the approval subresource', async () => {
    await k([
      'create',
      'clusterrole',
      'csr-approver',
      '--verb=get,list,update',
      '--resource=certificatesigningrequests,certificatesigningrequests/approval',
    ]);
    await k(['create', 'clusterrolebinding', 'alice-approves', '--clusterrole=csr-approver', '--user=alice']);
    await k(
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'certificates.k8s.io/v1',
        kind: 'CertificateSigningRequest',
        metadata: { name: 'widget' },
        spec: { request: await csrRequest('CN=widget'), signerName: 'example.com/widgets', usages: ['client auth'] },
      }),
    );
    const denied = await kubectl(['certificate', 'approve', 'widget', '--as=alice'], { kubeconfig: kapi.kubeconfig });
    assert.notEqual(denied.code, 0);
    assert.match(
      denied.stderr,
      /certificatesigningrequests\.certificates\.k8s\.io "widget" is forbidden: user not permitted to approve requests with signerName "example\.com\/widgets"/,
    );

    // (kubectl create clusterrole refuses `signers`: it is not a served resource, only an authorization one)
    await k(
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'example-signer' },
        rules: [{ apiGroups: ['certificates.k8s.io'], resources: ['signers'], resourceNames: ['example.com/*'], verbs: ['approve'] }],
      }),
    );
    await k(['create', 'clusterrolebinding', 'alice-signer', '--clusterrole=example-signer', '--user=alice']);
    await waitFor(
      'alice may approve',
      async () => (await kubectl(['certificate', 'approve', 'widget', '--as=alice'], { kubeconfig: kapi.kubeconfig })).code === 0,
    );
    assert.match(await k(['get', 'csr', 'widget', '-o', 'jsonpath={.status.conditions[0].type}']), /^Approved$/);
  });
});
