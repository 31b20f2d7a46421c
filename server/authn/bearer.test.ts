import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bearerToken, createBearerAuthenticator, spaceBeforeBearerToken } from './bearer.js';
import { audienceAgnostic, TokenAuthenticationError, unionTokenAuthenticator, type TokenAuthenticator } from './token.js';
import { unionAuthenticator, withAuthenticatedGroup, type AuthenticationRequest } from './authenticator.js';

const req = (authorization?: string): AuthenticationRequest => ({
  headers: authorization === undefined ? {} : { authorization },
  path: '/api',
  peerCertificates: [],
  peerVerified: false,
});

describe('bearer tokens', () => {
  it('reads `Bearer <token>` case-insensitively; anything else is no bearer token', () => {
    assert.equal(bearerToken('Bearer abc'), 'abc');
    assert.equal(bearerToken('bearer abc'), 'abc');
    assert.equal(bearerToken('  Bearer abc  '), 'abc');
    assert.equal(bearerToken('Basic abc'), undefined);
    assert.equal(bearerToken('Bearer'), undefined);
    assert.equal(bearerToken('Bearer  abc'), undefined);
    assert.equal(bearerToken(undefined), undefined);
  });

  it('"Bearer" and two spaces before more text is the case kube warns about', () => {
    assert.equal(spaceBeforeBearerToken('Bearer  abc'), true);
    assert.equal(spaceBeforeBearerToken('bearer   abc def'), true);
    assert.equal(spaceBeforeBearerToken('Bearer abc'), false);
    assert.equal(spaceBeforeBearerToken('Bearer  '), false);
    assert.equal(spaceBeforeBearerToken('Basic  abc'), false);
    assert.equal(spaceBeforeBearerToken(undefined), false);
  });

  it('an unknown token fails (401), no token is nobody, a known one is its user with system:authenticated', async () => {
    const tokens: TokenAuthenticator = audienceAgnostic(['api'], async (t) => (t === 'good' ? { username: 'u', groups: ['g'] } : null));
    const auth = withAuthenticatedGroup(unionAuthenticator([createBearerAuthenticator(tokens, () => ['api'])]));
    assert.deepEqual(await auth(req('Bearer good')), { username: 'u', groups: ['g', 'system:authenticated'] });
    assert.equal(await auth(req()), null);
    await assert.rejects(auth(req('Bearer bad')), /invalid bearer token/);
  });

  it('the first method that knows a token wins; failures of others are kept when none does', async () => {
    const failing: TokenAuthenticator = async () => {
      throw new Error('expired');
    };
    const known: TokenAuthenticator = async (t) => (t === 'x' ? { user: { username: 'x', groups: [] }, audiences: [] } : null);
    const union = unionTokenAuthenticator([failing, known]);
    assert.equal((await union('x', []))?.user.username, 'x');
    await assert.rejects(union('y', []), (err: unknown) => err instanceof TokenAuthenticationError && /expired/.test(err.message));
    assert.equal(await unionTokenAuthenticator([known])('y', []), null);
  });

  it('audience-agnostic methods answer only for the API audiences', async () => {
    const m = audienceAgnostic(['https://kubernetes.default.svc'], async () => ({ username: 'a', groups: [] }));
    assert.deepEqual((await m('t', ['https://kubernetes.default.svc', 'other']))?.audiences, ['https://kubernetes.default.svc']);
    assert.equal(await m('t', ['vault']), null);
  });
});
