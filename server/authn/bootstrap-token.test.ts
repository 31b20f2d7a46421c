import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../storage/interface.js';
import { createBootstrapTokenAuthenticator, parseBootstrapToken } from './bootstrap-token.js';
import { staticLookup } from './object-lookup.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

function secret(data: Record<string, string>, extra: Partial<KubeObject> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'bootstrap-token-abcdef', namespace: 'kube-system', uid: 'u1', ...(extra.metadata ?? {}) },
    type: 'bootstrap.kubernetes.io/token',
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
    ...(extra.type ? { type: extra.type } : {}),
  };
}

const base = { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true' };
const TOKEN = 'abcdef.0123456789abcdef';
const now = () => new Date('2026-01-01T00:00:00Z');
const authFor = (s: KubeObject) =>
  createBootstrapTokenAuthenticator(staticLookup({ 'secrets/kube-system/bootstrap-token-abcdef': s }), now);

describe('bootstrap tokens', () => {
  it('parses <6>.<16> lowercase alphanumerics only', () => {
    assert.deepEqual(parseBootstrapToken(TOKEN), { id: 'abcdef', secret: '0123456789abcdef' });
    assert.equal(parseBootstrapToken('ABCDEF.0123456789abcdef'), undefined);
    assert.equal(parseBootstrapToken('abcdef.0123'), undefined);
  });

  it('authenticates as system:bootstrap:<id> in system:bootstrappers plus the extra groups', async () => {
    const auth = authFor(secret({ ...base, 'auth-extra-groups': 'system:bootstrappers:a, system:bootstrappers:b,system:bootstrappers:a' }));
    assert.deepEqual(await auth(TOKEN), {
      username: 'system:bootstrap:abcdef',
      groups: ['system:bootstrappers', 'system:bootstrappers:a', 'system:bootstrappers:b'],
    });
  });

  it('is no token when the secret is wrong, expired, unmarked, deleting, of another type, or has a bad group', async () => {
    assert.equal(await authFor(secret(base))('abcdef.ffffffffffffffff'), null);
    assert.equal(await authFor(secret({ ...base, expiration: '2025-12-31T23:59:59Z' }))(TOKEN), null);
    assert.notEqual(await authFor(secret({ ...base, expiration: '2026-01-02T00:00:00Z' }))(TOKEN), null);
    assert.equal(await authFor(secret({ ...base, expiration: 'tomorrow' }))(TOKEN), null);
    assert.equal(await authFor(secret({ ...base, 'usage-bootstrap-authentication': 'false' }))(TOKEN), null);
    assert.equal(await authFor(secret({ ...base, 'token-id': 'zzzzzz' }))(TOKEN), null);
    assert.equal(await authFor(secret(base, { metadata: { deletionTimestamp: '2025-01-01T00:00:00Z' } }))(TOKEN), null);
    assert.equal(await authFor(secret(base, { type: 'Opaque' }))(TOKEN), null);
    assert.equal(await authFor(secret({ ...base, 'auth-extra-groups': 'admins' }))(TOKEN), null);
    assert.equal(await createBootstrapTokenAuthenticator(staticLookup({}), now)(TOKEN), null);
  });
});
