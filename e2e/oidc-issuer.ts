// An OIDC issuer on loopback for tests: discovery document and JWKS over HTTPS (its own CA,
// written to <dir>/oidc-ca.crt), ID tokens signed with jose for one audience.

import { writeFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { createCA, generateKey, issueCert } from '../server/pki/x509.js';
import { freePort } from './harness.js';

export interface OidcIssuer {
  url: string;
  caFile: string;
  /** an ID token with these claims, issued by this issuer for `audience`, valid 10 minutes */
  sign(claims: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

const KEY_ID = 'e2e-key';

export async function startOidcIssuer(dir: string, audience: string): Promise<OidcIssuer> {
  const ca = await createCA('oidc-e2e-ca', 1, await generateKey('ecdsa'));
  const serverKey = await generateKey('ecdsa');
  const serverCert = await issueCert(ca, { commonName: '127.0.0.1', sans: ['127.0.0.1'], usage: 'server', validDays: 1 }, serverKey);
  const caFile = path.join(dir, 'oidc-ca.crt');
  writeFileSync(caFile, ca.certPem);
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: KEY_ID, alg: 'RS256', use: 'sig' };
  const port = await freePort();
  const url = `https://127.0.0.1:${port}`;
  const server = https.createServer({ cert: serverCert, key: serverKey.privateKeyPem }, (req, res) => {
    res.setHeader('Content-Type', 'application/json');
    if (req.url === '/.well-known/openid-configuration') {
      res.end(JSON.stringify({ issuer: url, jwks_uri: `${url}/keys`, id_token_signing_alg_values_supported: ['RS256'] }));
    } else if (req.url === '/keys') {
      res.end(JSON.stringify({ keys: [jwk] }));
    } else {
      res.statusCode = 404;
      res.end('{}');
    }
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  return {
    url,
    caFile,
    sign: (claims) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: KEY_ID })
        .setIssuer(url)
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(privateKey as CryptoKey),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
