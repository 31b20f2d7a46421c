import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import type { AuthenticationRequest } from './authenticator.js';
import { createTestPKI, type TestPKI } from '../pki/testing.js';
import { createRequestHeaderAuthenticator } from './request-header.js';

let proxyPki: TestPKI;
let clientPki: TestPKI;

before(() => {
  proxyPki = createTestPKI();
  clientPki = createTestPKI();
});
after(() => {
  proxyPki?.cleanup();
  clientPki?.cleanup();
});

function req(cert: string | undefined, rawHeaders: string[]): AuthenticationRequest {
  const headers: Record<string, string> = {};
  for (let i = 0; i < rawHeaders.length; i += 2) headers[rawHeaders[i]!.toLowerCase()] = rawHeaders[i + 1]!;
  return { headers, rawHeaders, path: '/api', peerCertificates: cert ? [new X509Certificate(cert)] : [], peerVerified: true };
}

describe('authenticating proxy (--requestheader-*)', () => {
  const options = () => ({
    clientCA: proxyPki.ca.cert,
    allowedNames: ['front-proxy'],
    usernameHeaders: ['X-Remote-User', 'X-Other-User'],
    uidHeaders: ['X-Remote-Uid'],
    groupHeaders: ['X-Remote-Group'],
    extraHeaderPrefixes: ['X-Remote-Extra-'],
  });

  it('trusts the headers of an allowed proxy certificate: first user header, every group, decoded extras', async () => {
    const auth = createRequestHeaderAuthenticator(options());
    const proxy = proxyPki.client('front-proxy');
    const user = await auth(
      req(proxy.cert, [
        'X-Other-User',
        'ignored',
        'X-Remote-User',
        'alice',
        'X-Remote-Uid',
        'alice-uid',
        'X-Remote-Group',
        'g1',
        'X-Remote-Group',
        'g2',
        'X-Remote-Extra-Acme.com%2fProject',
        'p1',
        'X-Remote-Extra-Scopes',
        'a',
        'X-Remote-Extra-Scopes',
        'b',
      ]),
    );
    assert.deepEqual(user, {
      username: 'alice',
      uid: 'alice-uid',
      groups: ['g1', 'g2'],
      extra: { 'acme.com/project': ['p1'], scopes: ['a', 'b'] },
    });
  });

  it('ignores requests without the user header or without a certificate; rejects other CAs and names', async () => {
    const auth = createRequestHeaderAuthenticator(options());
    assert.equal(await auth(req(proxyPki.client('front-proxy').cert, ['X-Remote-Group', 'g'])), null);
    assert.equal(await auth(req(undefined, ['X-Remote-User', 'mallory'])), null);
    await assert.rejects(
      auth(req(clientPki.client('front-proxy').cert, ['X-Remote-User', 'mallory'])),
      /not signed by the requestheader client CA/,
    );
    await assert.rejects(auth(req(proxyPki.client('someone-else').cert, ['X-Remote-User', 'mallory'])), /is not in the allowed list/);
    const anyName = createRequestHeaderAuthenticator({ ...options(), allowedNames: [] });
    assert.equal((await anyName(req(proxyPki.client('someone-else').cert, ['X-Remote-User', 'bob'])))?.username, 'bob');
  });
});
