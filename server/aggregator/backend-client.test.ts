import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { authProxyHeaders, describeNetworkError, escapeExtraKey } from './backend-client.js';

describe('front-proxy headers', () => {
  it('names the user, each group and each extra value, escaping extra keys as client-go does', () => {
    assert.deepEqual(authProxyHeaders('alice', ['g1', 'system:authenticated'], { 'example.com/scope': ['a', 'b'], 'x%y': ['c'] }), {
      'x-remote-user': 'alice',
      'x-remote-group': ['g1', 'system:authenticated'],
      'x-remote-extra-example.com%2Fscope': ['a', 'b'],
      'x-remote-extra-x%25y': ['c'],
    });
    assert.deepEqual(authProxyHeaders('bob', [], undefined), { 'x-remote-user': 'bob' });
  });

  it('escapes every byte outside the header token characters', () => {
    assert.equal(escapeExtraKey('plain-Key_1.~'), 'plain-Key_1.~');
    assert.equal(escapeExtraKey('a b/ü'), 'a%20b%2F%C3%BC');
  });
});

describe('network errors', () => {
  it('reads like Go', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    assert.equal(describeNetworkError(refused, '127.0.0.1:4443'), 'dial tcp 127.0.0.1:4443: connect: connection refused');
    const unknownCA = Object.assign(new Error('self-signed certificate'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' });
    assert.equal(
      describeNetworkError(unknownCA, 'x:1'),
      'tls: failed to verify certificate: x509: certificate signed by unknown authority',
    );
  });
});
