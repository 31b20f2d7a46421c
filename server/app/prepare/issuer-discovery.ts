// The service account issuer discovery endpoints (/.well-known/openid-configuration and the
// JWKS), served when the issuer and address allow a valid document.

import type { Authentication } from '../../authn/index.js';
import { createIssuerDiscoveryHandler, issuerDiscoveryProblem } from '../../nonresource/oidc.js';
import type { NonResourceHandler } from '../../request/non-resource.js';
import { createLogger } from '../../log.js';

const log = createLogger('kapi');

/** undefined (logged) when the endpoints cannot be served */
export async function issuerDiscovery(authn: Authentication, externalAddress: string): Promise<NonResourceHandler | undefined> {
  const options = {
    issuer: authn.serviceAccounts.issuers[0]!,
    jwksUri: authn.serviceAccounts.jwksUri,
    externalAddress,
    keys: authn.serviceAccounts.keys,
  };
  const problem = issuerDiscoveryProblem(options);
  if (problem) {
    log.warn('service account issuer discovery endpoints are not served', { reason: problem });
    return undefined;
  }
  return createIssuerDiscoveryHandler(options);
}
