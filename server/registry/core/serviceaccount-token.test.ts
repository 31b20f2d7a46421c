// The TokenRequest subresource over a real registry and etcd: tokens for an account (and bound
// to a Pod or Secret of its namespace), kube-apiserver's defaults, limits and errors, and the
// tokens verifying through the service account authenticator reading the same registry.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import type { KubeObject } from '../../../storage/interface.js';
import { createServiceAccountAuthenticator } from '../../authn/serviceaccount/authenticator.js';
import { createTokenIssuer } from '../../authn/serviceaccount/issuer.js';
import { parseSigningKey } from '../../authn/serviceaccount/keys.js';
import { lookupFromResolver } from '../../authn/object-lookup.js';
import { ctx, startRegistry, statusOf, type RegistryHarness } from '../testing/harness.js';

const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const key = parseSigningKey(
  generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }) as string,
);

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
}

describe('serviceaccounts/<name>/token', () => {
  let h: RegistryHarness;
  const ns = 'tokens';
  const tokenRequest = (spec: Record<string, unknown> = {}): KubeObject =>
    ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata: {}, spec }) as KubeObject;
  const create = (name: string, spec?: Record<string, unknown>, extra = {}) =>
    h.rest('', 'v1', 'serviceaccounts', 'token').create(ctx(ns, { name, ...extra }), tokenRequest(spec));

  before(async () => {
    h = await startRegistry({
      serviceAccountTokens: {
        issuer: createTokenIssuer(ISSUER, key),
        apiAudiences: () => [ISSUER],
        maxExpirationSeconds: 0,
        extendExpiration: true,
      },
    });
    await h.rest('', 'v1', 'namespaces').create(ctx(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await h
      .rest('', 'v1', 'serviceaccounts')
      .create(ctx(ns), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot', namespace: ns } });
  });
  after(async () => h?.close());

  it('issues a token for the API audiences, an hour by default, answered as a TokenRequest', async () => {
    const out = await create('robot');
    assert.equal(out.kind, 'TokenRequest');
    assert.equal(out.metadata.name, 'robot');
    assert.equal(out.metadata.namespace, ns);
    const spec = out.spec as Record<string, unknown>;
    assert.deepEqual(spec, { audiences: [ISSUER], expirationSeconds: 3600, boundObjectRef: null });
    const status = out.status as { token: string; expirationTimestamp: string };
    const claims = claimsOf(status.token);
    assert.equal((claims.exp as number) - (claims.iat as number), 3600);
    assert.ok(Math.abs(Date.parse(status.expirationTimestamp) / 1000 - (claims.exp as number)) <= 1);

    const auth = createServiceAccountAuthenticator({
      issuers: [ISSUER],
      keys: [key],
      lookup: lookupFromResolver(() => h.registry),
      legacyLookup: true,
    });
    const res = await auth(status.token, [ISSUER]);
    assert.equal(res?.user.username, `system:serviceaccount:${ns}:robot`);
  });

  it('validates expirationSeconds and needs the account', async () => {
    const short = await statusOf(create('robot', { expirationSeconds: 599 }));
    assert.equal(short.code, 422);
    assert.match(
      short.message,
      /TokenRequest.authentication.k8s.io "robot" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes/,
    );
    const missing = await statusOf(create('nobody'));
    assert.equal(missing.code, 404);
    assert.equal(missing.message, 'serviceaccounts "nobody" not found');
  });

  it('binds to a Pod of the account (and refuses a pod of another account or a stale uid)', async () => {
    const pods = h.rest('', 'v1', 'pods');
    const pod = await pods.create(ctx(ns), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p1', namespace: ns },
      spec: { serviceAccountName: 'robot', containers: [{ name: 'c', image: 'busybox' }] },
    });
    const out = await create('robot', {
      audiences: ['vault'],
      boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p1', uid: pod.metadata.uid },
    });
    const priv = claimsOf((out.status as { token: string }).token)['kubernetes.io'] as Record<string, unknown>;
    assert.deepEqual(priv.pod, { name: 'p1', uid: pod.metadata.uid });
    assert.deepEqual(claimsOf((out.status as { token: string }).token).aud, ['vault']);
    const stale = await statusOf(create('robot', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p1', uid: 'old' } }));
    assert.equal(stale.code, 409);
    await h
      .rest('', 'v1', 'serviceaccounts')
      .create(ctx(ns), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'other', namespace: ns } });
    const wrong = await statusOf(create('other', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p1' } }));
    assert.equal(wrong.code, 400);
    assert.equal(wrong.message, 'cannot bind token for serviceaccount "other" to pod running with serviceaccount "robot"');
    const kind = await statusOf(create('robot', { boundObjectRef: { kind: 'Deployment', apiVersion: 'apps/v1', name: 'd' } }));
    assert.equal(kind.message, 'cannot bind token to object of type apps/v1, Kind=Deployment');
  });

  it('a dry run answers without a token', async () => {
    const out = await create('robot', {}, { dryRun: true });
    assert.equal((out.status as { token: string }).token, '');
  });
});
