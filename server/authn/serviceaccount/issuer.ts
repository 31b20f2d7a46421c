// Signs service account tokens (TokenRequest) with --service-account-signing-key-file for the
// first --service-account-issuer. The header names the key (`kid`) as kube-apiserver's does;
// claims are written in Go's map order (sorted keys), as kube-apiserver's tokens are.

import { randomUUID } from 'node:crypto';
import { CompactSign } from 'jose';
import type { SigningKey } from './keys.js';
import type { BoundClaims, BoundPrivateClaims } from './claims.js';
import { serviceAccountUsername } from './claims.js';
import type { BoundTokenRequest } from '../../registry/core/serviceaccount-token.js';

export interface TokenIssuer {
  readonly issuer: string;
  readonly signingKey: SigningKey;
  /** a signed token and its claims */
  issue(req: BoundTokenRequest): Promise<{ token: string; claims: BoundClaims }>;
}

function sortedJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedJson);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = sortedJson(v);
    }
    return out;
  }
  return value;
}

export function createTokenIssuer(issuer: string, signingKey: SigningKey): TokenIssuer {
  return {
    issuer,
    signingKey,
    async issue(req) {
      const now = Math.floor((req.now ?? new Date()).getTime() / 1000);
      const priv: BoundPrivateClaims = {
        namespace: req.namespace,
        serviceaccount: { name: req.serviceAccount.name, uid: req.serviceAccount.uid },
      };
      if (req.pod) priv.pod = { ...req.pod };
      else if (req.secret) priv.secret = { ...req.secret };
      if (req.node) priv.node = { ...req.node };
      if (req.warnAfterSeconds) priv.warnafter = now + req.warnAfterSeconds;
      const claims: BoundClaims = {
        aud: [...req.audiences],
        exp: now + req.expirationSeconds,
        iat: now,
        iss: issuer,
        jti: randomUUID(),
        'kubernetes.io': priv,
        nbf: now,
        sub: serviceAccountUsername(req.namespace, req.serviceAccount.name),
      };
      const payload = new TextEncoder().encode(JSON.stringify(sortedJson(claims)));
      const token = await new CompactSign(payload)
        .setProtectedHeader({ alg: signingKey.algorithm, kid: signingKey.keyId })
        .sign(signingKey.privateKey);
      return { token, claims };
    },
  };
}
