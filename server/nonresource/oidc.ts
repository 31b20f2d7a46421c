// Service account issuer discovery: `/.well-known/openid-configuration` and `/openid/v1/jwks`,
// so that relying parties can verify service account tokens the way they verify OIDC ID
// tokens. Served only when the (first) --service-account-issuer is an https URL, as
// kube-apiserver does; `jwks_uri` is --service-account-jwks-uri, else this server's external
// address. Bodies are rendered once (the keys do not change while the server runs).

import { JWKS_PATH, OPENID_CONFIGURATION_PATH } from '../machinery/oidc-paths.js';
import { exportJWK } from 'jose';
import type { NonResourceHandler, RawResponse } from '../request/non-resource.js';
import type { VerificationKey } from '../authn/serviceaccount/keys.js';

export { JWKS_PATH, OPENID_CONFIGURATION_PATH };

export interface IssuerDiscoveryOptions {
  issuer: string;
  /** --service-account-jwks-uri; '' for https://<externalAddress>/openid/v1/jwks */
  jwksUri: string;
  /** host[:port] clients reach this server at */
  externalAddress: string;
  keys: readonly VerificationKey[];
}

/** why discovery cannot be served with these options, or undefined */
export function issuerDiscoveryProblem(opts: Pick<IssuerDiscoveryOptions, 'issuer' | 'jwksUri' | 'externalAddress'>): string | undefined {
  let url: URL;
  try {
    url = new URL(opts.issuer);
  } catch {
    return `issuer ${JSON.stringify(opts.issuer)} is not a valid URL`;
  }
  if (url.protocol !== 'https:') return 'issuer URL must use https scheme, got: ' + opts.issuer;
  if (url.search) return 'issuer URL must not have a query, got: ' + opts.issuer;
  if (!opts.jwksUri && !opts.externalAddress) return 'either the JWKS URI or the API server external address is required';
  return undefined;
}

async function jwk(k: VerificationKey): Promise<Record<string, unknown>> {
  const j = (await exportJWK(k.key)) as Record<string, unknown>;
  // go-jose's field order: use, kty, kid, crv, alg, then the key material
  const out: Record<string, unknown> = { use: 'sig', kty: j.kty, kid: k.keyId };
  if (j.crv !== undefined) out.crv = j.crv;
  out.alg = k.algorithm;
  for (const f of ['x', 'y', 'n', 'e']) if (j[f] !== undefined) out[f] = j[f];
  return out;
}

export async function createIssuerDiscoveryHandler(opts: IssuerDiscoveryOptions): Promise<NonResourceHandler> {
  const jwksUri = opts.jwksUri || `https://${opts.externalAddress}${JWKS_PATH}`;
  const algs = [...new Set(opts.keys.map((k) => k.algorithm))];
  const config = JSON.stringify({
    issuer: opts.issuer,
    jwks_uri: jwksUri,
    response_types_supported: ['id_token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: algs,
  });
  const jwks = JSON.stringify({ keys: await Promise.all(opts.keys.map(jwk)) });
  const answer = (body: string, contentType: string): RawResponse => ({
    status: 200,
    body,
    contentType,
    headers: { 'Cache-Control': 'public, max-age=3600' },
  });
  return (req) => {
    if (req.path === OPENID_CONFIGURATION_PATH) return answer(config, 'application/json');
    if (req.path === JWKS_PATH) return answer(jwks, 'application/jwk-set+json');
    return undefined;
  };
}
