// DefaultIngressClass and the certificate plugins over a real registry on real etcd; the
// signer checks ask a recording authorizer.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';
import type { KubeObject } from '../../../storage/interface.js';
import { StatusError } from '../../machinery/status.js';
import { ctx, startRegistry, type RegistryHarness } from '../../registry/testing/harness.js';
import type { AccessReviewRequest, ReviewAuthorizer } from '../../machinery/access-review.js';
import { certificateApproval, certificateSigning, certificateSubjectRestriction, clusterTrustBundleAttest } from './certificates.js';
import { defaultIngressClass } from './default-ingress-class.js';
import { admit, attrsFor, buildPlugin } from './test-helpers.js';

const ingresses = { group: 'networking.k8s.io', version: 'v1', resource: 'ingresses' };
const csrs = { group: 'certificates.k8s.io', version: 'v1', resource: 'certificatesigningrequests' };

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

async function csrPem(subject: string): Promise<string> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
  const req = await x509.Pkcs10CertificateRequestGenerator.create({ name: subject, keys, signingAlgorithm: alg });
  return Buffer.from(req.toString('pem')).toString('base64');
}

function csr(name: string, signerName: string, request: string, status: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request, signerName, usages: ['client auth'] },
    status,
  };
}

/** allows exactly the (verb, signer name) pairs given; records every question */
function authorizerAllowing(allowed: string[]): ReviewAuthorizer & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    async authorize(req: AccessReviewRequest) {
      const ra = req.resourceAttributes ?? {};
      const key = `${String(ra.verb)} ${String(ra.group)}/${String(ra.resource)} ${String(ra.name)}`;
      asked.push(key);
      return { allowed: allowed.includes(`${String(ra.verb)} ${String(ra.name)}`) };
    },
  };
}

describe('networking and certificate admission plugins', () => {
  let h: RegistryHarness;
  before(async () => {
    h = await startRegistry();
  });
  after(async () => {
    await h.close();
  });

  it('DefaultIngressClass: the default class on new Ingresses without a class or the legacy annotation', async () => {
    const plugin = await buildPlugin(defaultIngressClass, h.registry);
    const ing = (name: string, spec: Record<string, unknown> = {}, annotations?: Record<string, string>): KubeObject => ({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name, namespace: 'default', ...(annotations ? { annotations } : {}) },
      spec: { defaultBackend: { service: { name: 's', port: { number: 80 } } }, ...spec },
    });
    const before = await admit(plugin, attrsFor(h.registry, ingresses, 'CREATE', ing('a')));
    assert.equal((before?.spec as Record<string, unknown>).ingressClassName, undefined);
    await h.rest('networking.k8s.io', 'v1', 'ingressclasses').create(ctx(), {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'IngressClass',
      metadata: { name: 'nginx', annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } },
      spec: { controller: 'example.com/ingress' },
    });
    const got = await admit(plugin, attrsFor(h.registry, ingresses, 'CREATE', ing('b')));
    assert.equal((got?.spec as Record<string, unknown>).ingressClassName, 'nginx');
    const own = await admit(plugin, attrsFor(h.registry, ingresses, 'CREATE', ing('c', { ingressClassName: 'other' })));
    assert.equal((own?.spec as Record<string, unknown>).ingressClassName, 'other');
    const legacy = await admit(plugin, attrsFor(h.registry, ingresses, 'CREATE', ing('d', {}, { 'kubernetes.io/ingress.class': 'x' })));
    assert.equal((legacy?.spec as Record<string, unknown>).ingressClassName, undefined);
  });

  it('CertificateSubjectRestriction: system:masters refused for kube-apiserver-client only', async () => {
    const plugin = await buildPlugin(certificateSubjectRestriction, h.registry);
    const masters = await csrPem('CN=eve, O=system:masters');
    const err = await admit(
      plugin,
      attrsFor(h.registry, csrs, 'CREATE', csr('evil', 'kubernetes.io/kube-apiserver-client', masters)),
    ).catch((e: unknown) => e);
    assert.ok(err instanceof StatusError);
    assert.equal(err.code, 403);
    assert.equal(
      err.message,
      'certificatesigningrequests.certificates.k8s.io "evil" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed',
    );
    await admit(plugin, attrsFor(h.registry, csrs, 'CREATE', csr('other-signer', 'example.com/signer', masters)));
    await admit(
      plugin,
      attrsFor(h.registry, csrs, 'CREATE', csr('fine', 'kubernetes.io/kube-apiserver-client', await csrPem('CN=bob, O=devs'))),
    );
  });

  it('CertificateApproval and CertificateSigning: approve/sign on the signer or its domain wildcard', async () => {
    const request = await csrPem('CN=bob');
    const authz = authorizerAllowing(['approve example.com/*', 'sign example.com/one']);
    const approval = await buildPlugin(certificateApproval, h.registry, { authorizer: authz });
    const signing = await buildPlugin(certificateSigning, h.registry, { authorizer: authz });
    const approved = { conditions: [{ type: 'Approved', status: 'True' }] };

    const one = csr('one', 'example.com/one', request);
    await admit(
      approval,
      attrsFor(h.registry, csrs, 'UPDATE', csr('one', 'example.com/one', request, approved), one, { subresource: 'approval' }),
    );
    assert.deepEqual(authz.asked, [
      'approve certificates.k8s.io/signers example.com/one',
      'approve certificates.k8s.io/signers example.com/*',
    ]);

    const k8s = csr('two', 'kubernetes.io/kube-apiserver-client', request);
    let err = await admit(approval, attrsFor(h.registry, csrs, 'UPDATE', k8s, k8s, { subresource: 'approval' })).catch((e: unknown) => e);
    assert.ok(err instanceof StatusError);
    assert.equal(
      err.message,
      'certificatesigningrequests.certificates.k8s.io "two" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"',
    );

    // signing: only a change of status.certificate is checked
    const signed = csr('one', 'example.com/one', request, { ...approved, certificate: 'Y2VydA==' });
    await admit(
      signing,
      attrsFor(h.registry, csrs, 'UPDATE', signed, csr('one', 'example.com/one', request, approved), { subresource: 'status' }),
    );
    const other = csr('three', 'example.com/three', request, approved);
    await admit(signing, attrsFor(h.registry, csrs, 'UPDATE', other, other, { subresource: 'status' }));
    err = await admit(
      signing,
      attrsFor(h.registry, csrs, 'UPDATE', { ...other, status: { ...approved, certificate: 'Y2VydA==' } }, other, {
        subresource: 'status',
      }),
    ).catch((e: unknown) => e);
    assert.ok(err instanceof StatusError);
    assert.equal(
      err.message,
      'certificatesigningrequests.certificates.k8s.io "three" is forbidden: user not permitted to sign requests with signerName "example.com/three"',
    );
  });

  it('ClusterTrustBundleAttest: off without its feature gate; attest on the signer with it', async () => {
    const authz = authorizerAllowing([]);
    const off = await buildPlugin(clusterTrustBundleAttest, h.registry, { authorizer: authz });
    const info = { ...h.rest('certificates.k8s.io', 'v1', 'certificatesigningrequests').info, resource: 'clustertrustbundles' };
    const bundle: KubeObject = {
      apiVersion: 'certificates.k8s.io/v1beta1',
      kind: 'ClusterTrustBundle',
      metadata: { name: 'example.com:signer:b' },
      spec: { signerName: 'example.com/signer' },
    };
    const attrs = { ...attrsFor(h.registry, csrs, 'CREATE', bundle), resource: info };
    assert.equal(off.handles?.(attrs), false);
    const on = await buildPlugin(clusterTrustBundleAttest, h.registry, { authorizer: authz, featureGates: { ClusterTrustBundle: true } });
    const err = await admit(on, attrs).catch((e: unknown) => e);
    assert.ok(err instanceof StatusError);
    assert.equal(
      err.message,
      'clustertrustbundles.certificates.k8s.io "example.com:signer:b" is forbidden: user not permitted to attest for signerName "example.com/signer"',
    );
  });
});
