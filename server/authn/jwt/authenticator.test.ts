import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createJWTAuthenticator, type JWTAuthenticator } from './authenticator.js';
import type { JWTAuthenticatorConfig } from './config.js';
import { startTestIssuer, type TestIssuer } from './testing-issuer.js';

let issuer: TestIssuer;
const made: JWTAuthenticator[] = [];

before(async () => {
  issuer = await startTestIssuer();
});
after(async () => {
  made.forEach((a) => a.close());
  await issuer?.close();
});

async function authenticator(cfg: Partial<JWTAuthenticatorConfig> = {}): Promise<JWTAuthenticator> {
  const a = createJWTAuthenticator(
    {
      issuer: { url: issuer.url, audiences: ['kapi'], certificateAuthority: issuer.caPem },
      claimMappings: { username: { claim: 'sub', prefix: 'oidc:' }, groups: { claim: 'groups', prefix: '' } },
      ...cfg,
    },
    { signingAlgorithms: ['RS256'], refreshMinIntervalMs: 0 },
  );
  made.push(a);
  await a.initialized;
  return a;
}

describe('JWT authenticator', () => {
  it('verifies against the discovered keys and maps claims (prefix, string or list groups, jti)', async () => {
    const a = await authenticator();
    assert.deepEqual(await a.authenticate(await issuer.sign({ sub: 'dave', groups: ['x', 'y'], jti: 'j1' })), {
      username: 'oidc:dave',
      groups: ['x', 'y'],
      extra: { 'authentication.kubernetes.io/credential-id': ['JTI=j1'] },
    });
    assert.deepEqual((await a.authenticate(await issuer.sign({ sub: 'dave', groups: 'solo' })))?.groups, ['solo']);
    assert.equal(a.healthError(), undefined);
  });

  it('ignores other issuers; rejects other audiences, expired tokens and bad signatures', async () => {
    const a = await authenticator();
    assert.equal(await a.authenticate('a.b.c'), null);
    await assert.rejects(
      a.authenticate(await issuer.sign({ sub: 'd' }, { audience: 'other' })),
      /oidc: expected audience in \["kapi"\] got \["other"\]/,
    );
    await assert.rejects(a.authenticate(await issuer.sign({ sub: 'd' }, { expiresIn: '-1m' })), /oidc: verify token: .*exp/);
    const t = await issuer.sign({ sub: 'd' });
    await assert.rejects(a.authenticate(t.slice(0, -4) + 'AAAA'), /oidc: verify token/);
  });

  it('email usernames need a true email_verified when present; required claims must match', async () => {
    const a = await authenticator({
      claimMappings: { username: { claim: 'email', prefix: '' } },
      claimValidationRules: [{ claim: 'hd', requiredValue: 'example.com' }],
    });
    assert.equal((await a.authenticate(await issuer.sign({ email: 'e@x', hd: 'example.com' })))?.username, 'e@x');
    await assert.rejects(
      a.authenticate(await issuer.sign({ email: 'e@x', email_verified: false, hd: 'example.com' })),
      /oidc: email not verified/,
    );
    await assert.rejects(
      a.authenticate(await issuer.sign({ email: 'e@x', hd: 'other.com' })),
      /oidc: required claim hd value does not match. Got = other.com, want = example.com/,
    );
    await assert.rejects(a.authenticate(await issuer.sign({ email: 'e@x' })), /oidc: required claim hd not present in ID token/);
  });

  it('CEL mappings and validation rules', async () => {
    const a = await authenticator({
      claimMappings: {
        username: { expression: '"cel:" + claims.sub' },
        groups: { expression: 'claims.roles.map(r, "role:" + r)' },
        uid: { expression: 'claims.sub + "-uid"' },
        extra: [{ key: 'example.com/tenant', valueExpression: 'claims.?tenant.orValue("")' }],
      },
      claimValidationRules: [{ expression: 'claims.sub != "mallory"', message: 'no mallory' }],
      userValidationRules: [{ expression: '!user.username.startsWith("cel:system")', message: 'no system users' }],
    });
    assert.deepEqual(await a.authenticate(await issuer.sign({ sub: 'ann', roles: ['dev'], tenant: 't1' })), {
      username: 'cel:ann',
      uid: 'ann-uid',
      groups: ['role:dev'],
      extra: { 'example.com/tenant': ['t1'] },
    });
    await assert.rejects(
      a.authenticate(await issuer.sign({ sub: 'mallory', roles: [] })),
      /validation expression 'claims.sub != "mallory"' failed: no mallory/,
    );
    await assert.rejects(
      a.authenticate(await issuer.sign({ sub: 'system', roles: [] })),
      /oidc: error evaluating user info validation rule: validation expression .* failed: no system users/,
    );
    await assert.rejects(a.authenticate(await issuer.sign({ sub: 'x' })), /oidc: error evaluating group claim expression/);
  });

  it('fetches the keys again for an unknown key id (rotation)', async () => {
    const a = await authenticator();
    const before = issuer.jwksFetches;
    const kid = await issuer.rotate();
    assert.equal((await a.authenticate(await issuer.sign({ sub: 'r' }, { kid })))?.username, 'oidc:r');
    assert.ok(issuer.jwksFetches > before);
  });

  it('is not initialized while the issuer cannot be reached', async () => {
    const a = createJWTAuthenticator(
      { issuer: { url: 'https://127.0.0.1:1', audiences: ['kapi'] }, claimMappings: { username: { claim: 'sub', prefix: '' } } },
      { signingAlgorithms: ['RS256'], retryMs: 60_000 },
    );
    made.push(a);
    await assert.rejects(a.initialized);
    const token = `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from('{"iss":"https://127.0.0.1:1"}').toString('base64url')}.x`;
    await assert.rejects(a.authenticate(token), /oidc: authenticator not initialized/);
    assert.match(a.healthError() ?? '', /is not healthy/);
  });
});
