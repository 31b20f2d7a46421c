import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { importJWK, compactVerify, CompactSign } from 'jose';
import { parseSigningKey } from '../authn/serviceaccount/keys.js';
import { createIssuerDiscoveryHandler, issuerDiscoveryProblem } from './oidc.js';

const key = parseSigningKey(
  generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }) as string,
);
const req = (path: string) => ({ method: 'GET', path, query: new URLSearchParams(), headers: {} });

describe('service account issuer discovery', () => {
  it("serves kube-apiserver's discovery document and a JWKS that verifies issued tokens", async () => {
    const h = await createIssuerDiscoveryHandler({
      issuer: 'https://kubernetes.default.svc.cluster.local',
      jwksUri: '',
      externalAddress: '10.0.0.1:6443',
      keys: [key],
    });
    const doc = await h(req('/.well-known/openid-configuration'));
    assert.equal(doc?.contentType, 'application/json');
    assert.equal(doc?.headers?.['Cache-Control'], 'public, max-age=3600');
    assert.equal(
      doc?.body,
      '{"issuer":"https://kubernetes.default.svc.cluster.local","jwks_uri":"https://10.0.0.1:6443/openid/v1/jwks","response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["RS256"]}',
    );
    const jwks = await h(req('/openid/v1/jwks'));
    assert.equal(jwks?.contentType, 'application/jwk-set+json');
    const [jwk] = (JSON.parse(String(jwks?.body)) as { keys: Record<string, unknown>[] }).keys;
    assert.deepEqual(Object.keys(jwk!), ['use', 'kty', 'kid', 'alg', 'n', 'e']);
    assert.equal(jwk!.kid, key.keyId);
    const token = await new CompactSign(new TextEncoder().encode('{}')).setProtectedHeader({ alg: 'RS256' }).sign(key.privateKey);
    await compactVerify(token, await importJWK(jwk as never, 'RS256'));
    assert.equal(await h(req('/other')), undefined);
  });

  it('is not served for an issuer that is not an https URL', () => {
    assert.match(issuerDiscoveryProblem({ issuer: 'kapi', jwksUri: '', externalAddress: 'x' }) ?? '', /not a valid URL/);
    assert.match(issuerDiscoveryProblem({ issuer: 'http://kapi', jwksUri: '', externalAddress: 'x' }) ?? '', /https/);
    assert.equal(issuerDiscoveryProblem({ issuer: 'https://kapi', jwksUri: '', externalAddress: 'x' }), undefined);
  });
});
