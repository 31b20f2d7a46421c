// `Authorization: Bearer <token>`: a present bearer token that no method accepts is a 401
// (kube-apiserver's "invalid bearer token"), never a fall-back to anonymous.

import type { Authenticator } from './authenticator.js';
import type { TokenAuthenticator } from './token.js';

/** the space-separated parts of an `Authorization: Bearer ...` header (Go's SplitN into 3:
 *  the scheme, the token, the rest); undefined when it is not one */
function bearerParts(authorization: string | string[] | undefined): string[] | undefined {
  const value = (Array.isArray(authorization) ? authorization[0] : authorization)?.trim();
  if (!value) return undefined;
  const parts = value.split(' ');
  return parts.length >= 2 && parts[0]!.toLowerCase() === 'bearer' ? parts : undefined;
}

/** the token of an `Authorization: Bearer` header; undefined when there is none */
export function bearerToken(authorization: string | string[] | undefined): string | undefined {
  // "Bearer  x" (two spaces) has an empty token: not a bearer credential at all
  const token = bearerParts(authorization)?.[1];
  return token === '' ? undefined : token;
}

/** kube-apiserver's Warning for "Bearer  x": the token is read as empty and ignored */
export const SPACE_BEFORE_TOKEN_WARNING = 'the provided Authorization header contains extra space before the bearer token, and is ignored';

/** "Bearer" followed by two spaces or more before more text: ignored as no credential, but
 *  the client is told (its token was probably meant to count) */
export function spaceBeforeBearerToken(authorization: string | string[] | undefined): boolean {
  const parts = bearerParts(authorization);
  return parts !== undefined && parts.length >= 3 && parts[1] === '';
}

export function createBearerAuthenticator(tokens: TokenAuthenticator, apiAudiences: () => readonly string[]): Authenticator {
  return async (req) => {
    const token = bearerToken(req.headers.authorization);
    if (token === undefined) return null;
    const res = await tokens(token, apiAudiences());
    if (!res) throw new Error('invalid bearer token');
    return res.user;
  };
}
