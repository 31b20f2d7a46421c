// Bearer token authentication: each method (static file, bootstrap Secrets, service account
// JWTs, OIDC/JWT issuers) is a TokenAuthenticator; they are asked in order and the first that
// recognises the token decides.
//
// Audiences follow kube-apiserver: a request to the API carries the API audiences
// (--api-audiences, default the service account issuers); a TokenReview may name others.
// Methods that do not issue audience-bound tokens (static, bootstrap, OIDC) are
// "audience agnostic": they answer only when the requested audiences include an API audience.

import type { UserInfo } from '../machinery/user.js';

export interface TokenAuthResult {
  user: UserInfo;
  /** the audiences the token is valid for among those requested */
  audiences: string[];
}

/**
 * null: not a token of this method (another may know it). Throws: a token of this method that
 * is invalid (expired, bad signature, deleted account): the request fails with 401.
 */
export type TokenAuthenticator = (token: string, audiences: readonly string[]) => Promise<TokenAuthResult | null>;

/** a method that knows nothing of audiences: a user, or null */
export type PlainTokenAuthenticator = (token: string) => Promise<UserInfo | null>;

/** Wraps a method without audiences: valid only for the API's own audiences. */
export function audienceAgnostic(apiAudiences: readonly string[], method: PlainTokenAuthenticator): TokenAuthenticator {
  return async (token, audiences) => {
    let matched: string[] = [];
    if (apiAudiences.length > 0 && audiences.length > 0) {
      matched = apiAudiences.filter((a) => audiences.includes(a));
      if (matched.length === 0) return null;
    }
    const user = await method(token);
    return user ? { user, audiences: matched } : null;
  };
}

export class TokenAuthenticationError extends Error {
  constructor(readonly causes: Error[]) {
    super(causes.map((c) => c.message).join(', ') || 'invalid bearer token');
    this.name = 'TokenAuthenticationError';
  }
}

/** The first method to recognise the token wins; when none does, the token is invalid. */
export function unionTokenAuthenticator(methods: readonly TokenAuthenticator[]): TokenAuthenticator {
  return async (token, audiences) => {
    const failures: Error[] = [];
    for (const method of methods) {
      try {
        const res = await method(token, audiences);
        if (res) return res;
      } catch (err) {
        failures.push(err instanceof Error ? err : new Error(String(err)));
      }
    }
    if (failures.length > 0) throw new TokenAuthenticationError(failures);
    return null;
  };
}
