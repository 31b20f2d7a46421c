import { after, before, describe, test, mock } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import type { AuthenticationRequest } from './authenticator.js';
import { createX509Authenticator } from './x509.js';
import { createTestPKI, type TestPKI } from '../pki/testing.js';

const DAY = 24 * 60 * 60 * 1000;

function requestWith(chain: readonly X509Certificate[]): AuthenticationRequest {
  return { headers: {}, path: '/api', peerCertificates: chain, peerVerified: true };
}

describe('x509 authenticator: the verdict of a connection’s chain', () => {
  let pki: TestPKI;
  before(() => {
    pki = createTestPKI();
  });
  after(() => pki.cleanup());

  test('the same chain asked again names the same user, one frozen object that nobody can change', async () => {
    const authn = createX509Authenticator(pki.ca.cert);
    const chain = [new X509Certificate(pki.client('alice', ['devs', 'ops']).cert)];
    const first = await authn(requestWith(chain));
    assert.deepEqual(first, { username: 'alice', groups: ['devs', 'ops'] });
    assert.throws(() => first!.groups.push('system:masters'), TypeError);
    assert.throws(() => {
      first!.username = 'mallory';
    }, TypeError);
    const again = await authn(requestWith(chain));
    assert.equal(again, first);
    assert.deepEqual(again, { username: 'alice', groups: ['devs', 'ops'] });
  });

  test('an untrusted chain is refused every time it is presented', async () => {
    const authn = createX509Authenticator(pki.ca.cert);
    const chain = [new X509Certificate(pki.stranger('eve').cert)];
    await assert.rejects(authn(requestWith(chain)), /unknown authority/);
    await assert.rejects(authn(requestWith(chain)), /unknown authority/);
  });

  test('a chain verified earlier is refused once its certificate has expired', async (t) => {
    const authn = createX509Authenticator(pki.ca.cert);
    const chain = [new X509Certificate(pki.client('bob').cert)];
    t.after(() => mock.timers.reset());
    mock.timers.enable({ apis: ['Date'], now: Date.now() });
    assert.equal((await authn(requestWith(chain)))?.username, 'bob');
    mock.timers.tick(3 * DAY); // the test certificates are valid for 2 days
    await assert.rejects(authn(requestWith(chain)), /unknown authority/);
  });
});
