// A JWT issuer on loopback for tests: discovery document and JWKS over HTTPS with a
// throwaway CA, ID tokens signed with jose. Counts JWKS fetches (key rotation tests).

import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { createTestPKI, type TestPKI } from '../../pki/testing.js';

export interface TestIssuer {
  url: string;
  caPem: string;
  jwksFetches: number;
  sign(claims: Record<string, unknown>, opts?: { audience?: string | string[]; expiresIn?: string; kid?: string }): Promise<string>;
  /** adds a new signing key (published at once) and returns its kid */
  rotate(): Promise<string>;
  close(): Promise<void>;
}

export async function startTestIssuer(): Promise<TestIssuer> {
  const pki: TestPKI = createTestPKI();
  const keys = new Map<string, { privateKey: CryptoKey; jwk: JWK }>();
  let current = '';
  const addKey = async (): Promise<string> => {
    const kid = `k${keys.size + 1}`;
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    keys.set(kid, { privateKey: privateKey as CryptoKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } });
    current = kid;
    return kid;
  };
  await addKey();
  let url = '';
  const state = { jwksFetches: 0 };
  const server = https.createServer({ cert: pki.server.cert, key: pki.server.key }, (req, res) => {
    res.setHeader('Content-Type', 'application/json');
    if (req.url === '/.well-known/openid-configuration') {
      res.end(JSON.stringify({ issuer: url, jwks_uri: `${url}/jwks` }));
    } else if (req.url === '/jwks') {
      state.jwksFetches++;
      res.end(JSON.stringify({ keys: [...keys.values()].map((k) => k.jwk) }));
    } else {
      res.statusCode = 404;
      res.end('{}');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    caPem: pki.ca.cert,
    get jwksFetches() {
      return state.jwksFetches;
    },
    sign(claims, opts = {}) {
      const kid = opts.kid ?? current;
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid })
        .setIssuer(url)
        .setAudience(opts.audience ?? 'kapi')
        .setIssuedAt()
        .setExpirationTime(opts.expiresIn ?? '10m')
        .sign(keys.get(kid)!.privateKey);
    },
    rotate: addKey,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => {
          pki.cleanup();
          r();
        });
      }),
  } as TestIssuer;
}
