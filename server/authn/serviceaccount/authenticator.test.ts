import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync } from 'node:crypto';
import type { KubeObject } from '../../../storage/interface.js';
import { staticLookup } from '../object-lookup.js';
import { createServiceAccountAuthenticator } from './authenticator.js';
import { createTokenIssuer } from './issuer.js';
import { keyIdOf, parsePublicKeys, parseSigningKey } from './keys.js';
import { splitServiceAccountUsername } from './claims.js';

const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const rsaPem = rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
const ecPem = ec.privateKey.export({ type: 'sec1', format: 'pem' }) as string;

const sa: KubeObject = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot', namespace: 'ns', uid: 'sa-uid' } };
const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', uid: 'pod-uid' } };

function setup(objects: Record<string, KubeObject>, signingPem = rsaPem) {
  const signingKey = parseSigningKey(signingPem);
  const issuer = createTokenIssuer(ISSUER, signingKey);
  const auth = createServiceAccountAuthenticator({
    issuers: [ISSUER],
    keys: [signingKey],
    lookup: staticLookup(objects),
    legacyLookup: true,
  });
  return { issuer, auth };
}

const base = { namespace: 'ns', serviceAccount: { name: 'robot', uid: 'sa-uid' }, audiences: [ISSUER], expirationSeconds: 3600 };

describe('service account keys', () => {
  it('key ids are base64url(SHA-256(PKIX DER)); private keys, public keys and certificates all give public keys', () => {
    const der = rsa.publicKey.export({ type: 'spki', format: 'der' });
    assert.equal(keyIdOf(rsa.publicKey), createHash('sha256').update(der).digest('base64url'));
    const pub = rsa.publicKey.export({ type: 'spki', format: 'pem' }) as string;
    const keys = parsePublicKeys(pub + ecPem);
    assert.deepEqual(
      keys.map((k) => k.algorithm),
      ['RS256', 'ES256'],
    );
    assert.throws(() => parsePublicKeys('nothing'), /does not contain any valid RSA or ECDSA public keys/);
  });
  it('splits service account user names', () => {
    assert.deepEqual(splitServiceAccountUsername('system:serviceaccount:ns:robot'), { namespace: 'ns', name: 'robot' });
    assert.equal(splitServiceAccountUsername('system:serviceaccount:ns'), undefined);
    assert.equal(splitServiceAccountUsername('system:serviceaccount:NS:robot'), undefined);
    assert.equal(splitServiceAccountUsername('jane'), undefined);
  });
});

describe('bound service account tokens', () => {
  it('signs kube-shaped claims (sorted, kid header) and authenticates the account with its uid, groups and credential id', async () => {
    const { issuer, auth } = setup({ 'serviceaccounts/ns/robot': sa });
    const { token, claims } = await issuer.issue(base);
    const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as Record<string, unknown>;
    assert.deepEqual(header, { alg: 'RS256', kid: issuer.signingKey.keyId });
    const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(payload), ['aud', 'exp', 'iat', 'iss', 'jti', 'kubernetes.io', 'nbf', 'sub']);
    assert.equal(payload.sub, 'system:serviceaccount:ns:robot');
    assert.equal(claims.exp - claims.iat, 3600);
    const res = await auth(token, [ISSUER]);
    assert.deepEqual(res, {
      user: {
        username: 'system:serviceaccount:ns:robot',
        uid: 'sa-uid',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:ns'],
        extra: { 'authentication.kubernetes.io/credential-id': [`JTI=${claims.jti}`] },
      },
      audiences: [ISSUER],
    });
  });

  it('ECDSA signing keys sign ES256', async () => {
    const { issuer, auth } = setup({ 'serviceaccounts/ns/robot': sa }, ecPem);
    const { token } = await issuer.issue(base);
    assert.equal(JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).alg, 'ES256');
    assert.ok(await auth(token, [ISSUER]));
  });

  it('fails for a deleted or recreated account, other audiences, expiry, a bad signature; ignores other issuers', async () => {
    const { issuer } = setup({});
    const { token } = await issuer.issue(base);
    await assert.rejects(setup({})['auth'](token, [ISSUER]), /serviceaccounts "robot" not found/);
    const recreated = { ...sa, metadata: { ...sa.metadata, uid: 'other' } };
    await assert.rejects(setup({ 'serviceaccounts/ns/robot': recreated }).auth(token, [ISSUER]), /does not match claim/);
    const { auth } = setup({ 'serviceaccounts/ns/robot': sa });
    await assert.rejects(
      auth(token, ['vault']),
      /token audiences \["https:\/\/kubernetes.default.svc.cluster.local"\] is invalid for the target audiences \["vault"\]/,
    );
    const old = await issuer.issue({ ...base, now: new Date(Date.now() - 7200_000) });
    await assert.rejects(auth(old.token, [ISSUER]), /has expired/);
    const parts = token.split('.');
    await assert.rejects(auth(`${parts[0]}.${parts[1]}.${Buffer.from('forged').toString('base64url')}`, [ISSUER]), /invalid signature/);
    const foreign = await createTokenIssuer('https://elsewhere', issuer.signingKey).issue(base);
    assert.equal(await auth(foreign.token, [ISSUER]), null);
    assert.equal(await auth('not-a-jwt', [ISSUER]), null);
  });

  it('pod-bound tokens name the pod (and node) in extra and die with the pod', async () => {
    const objects: Record<string, KubeObject> = { 'serviceaccounts/ns/robot': sa, 'pods/ns/p': pod };
    const { issuer, auth } = setup(objects);
    const { token } = await issuer.issue({ ...base, pod: { name: 'p', uid: 'pod-uid' }, node: { name: 'n1', uid: 'node-uid' } });
    const res = await auth(token, [ISSUER]);
    assert.deepEqual(res?.user.extra?.['authentication.kubernetes.io/pod-name'], ['p']);
    assert.deepEqual(res?.user.extra?.['authentication.kubernetes.io/node-name'], ['n1']);
    delete objects['pods/ns/p'];
    await assert.rejects(auth(token, [ISSUER]), /invalidated/);
  });

  it('legacy Secret-based tokens must still be in their Secret when lookup is on', async () => {
    const signingKey = parseSigningKey(rsaPem);
    const { CompactSign } = await import('jose');
    const payload = {
      iss: 'kubernetes/serviceaccount',
      'kubernetes.io/serviceaccount/namespace': 'ns',
      'kubernetes.io/serviceaccount/secret.name': 'robot-token',
      'kubernetes.io/serviceaccount/service-account.name': 'robot',
      'kubernetes.io/serviceaccount/service-account.uid': 'sa-uid',
      sub: 'system:serviceaccount:ns:robot',
    };
    const token = await new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
      .setProtectedHeader({ alg: 'RS256' })
      .sign(signingKey.privateKey);
    const secret: KubeObject = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'robot-token', namespace: 'ns', uid: 's' },
      data: { token: Buffer.from(token).toString('base64') },
    };
    const objects: Record<string, KubeObject> = { 'serviceaccounts/ns/robot': sa, 'secrets/ns/robot-token': secret };
    const auth = createServiceAccountAuthenticator({
      issuers: [ISSUER],
      keys: [signingKey],
      lookup: staticLookup(objects),
      legacyLookup: true,
    });
    assert.equal((await auth(token, [ISSUER]))?.user.username, 'system:serviceaccount:ns:robot');
    delete objects['secrets/ns/robot-token'];
    await assert.rejects(auth(token, [ISSUER]), /invalidated/);
    const noLookup = createServiceAccountAuthenticator({
      issuers: [ISSUER],
      keys: [signingKey],
      lookup: staticLookup({}),
      legacyLookup: false,
    });
    assert.equal((await noLookup(token, [ISSUER]))?.user.uid, 'sa-uid');
  });
});
