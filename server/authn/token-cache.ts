// The bearer token cache kube-apiserver puts in front of its token authenticators: a token
// that authenticated is taken as that user again for 10 s (TokenSuccessCacheTTL) for the same
// audiences, without checking it anew; rejections and errors are not cached (a failure TTL of
// 0), and lookups of one token that overlap share one check. A service account token costs a
// signature verification and lookups of the account and the object it is bound to on every
// check, which is most of a request for the controllers that use them. As in kube-apiserver, a
// token whose account or bound object has just been deleted may still be accepted for that long.

import type { TokenAuthenticator, TokenAuthResult } from './token.js';

/** kube-apiserver's TokenSuccessCacheTTL (a default, with no flag of its own) */
export const TOKEN_SUCCESS_CACHE_TTL_MS = 10_000;

/** past this many remembered tokens the cache starts over */
const MAX_CACHED_TOKENS = 16_384;

interface CachedResult {
  token: string;
  result: TokenAuthResult;
  expires: number;
}

/** how much of a token names its cache entry: hashing a whole JWT (a kilobyte) for the lookup
 *  cost more than the rest of it; its end is the signature, and a hit is compared whole */
const KEY_CHARS = 64;

const keyOf = (token: string): string => (token.length > KEY_CHARS ? token.slice(-KEY_CHARS) : token);

export interface TokenCacheOptions {
  successTtlMs: number;
  now?: () => number;
}

/** one string per audience list, its members length-prefixed so that no two lists share one */
const audienceKeys = new WeakMap<readonly string[], string>();

function audienceKey(audiences: readonly string[]): string {
  let key = audienceKeys.get(audiences);
  if (key === undefined) {
    key = audiences.map((a) => `${a.length}:${a}`).join('');
    audienceKeys.set(audiences, key);
  }
  return key;
}

export interface CachedTokenAuthenticator extends TokenAuthenticator {
  /** forgets every answer (the authenticators behind the cache were replaced) */
  forget(): void;
}

export function cachedTokenAuthenticator(inner: TokenAuthenticator, opts: TokenCacheOptions): CachedTokenAuthenticator {
  const now = opts.now ?? Date.now;
  /** by audience list, then by token */
  const cached = new Map<string, Map<string, CachedResult>>();
  /** checks under way, by audience list and token (only misses come here) */
  const checking = new Map<string, Promise<TokenAuthResult | null>>();
  let size = 0;
  /** counts forget()s: a check that began before one is not remembered */
  let generation = 0;

  const remember = (audiences: string, token: string, result: TokenAuthResult): void => {
    if (size >= MAX_CACHED_TOKENS) {
      cached.clear();
      size = 0;
    }
    let byToken = cached.get(audiences);
    if (!byToken) cached.set(audiences, (byToken = new Map()));
    const key = keyOf(token);
    if (!byToken.has(key)) size++;
    byToken.set(key, { token, result, expires: now() + opts.successTtlMs });
  };

  const authenticate: TokenAuthenticator = (token, audiences) => {
    const audKey = audienceKey(audiences);
    const byToken = cached.get(audKey);
    const key = keyOf(token);
    const hit = byToken?.get(key);
    if (hit && hit.token === token) {
      if (hit.expires > now()) return Promise.resolve(hit.result);
      byToken!.delete(key);
      if (byToken!.size === 0) cached.delete(audKey);
      size--;
    }
    // the audience key is length-prefixed and never holds a NUL between members
    const checkKey = `${audKey}\0${token}`;
    const shared = checking.get(checkKey);
    if (shared) return shared;
    const began = generation;
    const check = inner(token, audiences).then((result) => {
      if (result && opts.successTtlMs > 0 && began === generation) remember(audKey, token, result);
      return result;
    });
    checking.set(checkKey, check);
    // a forget() in between may have let a newer check take the key
    const done = (): void => {
      if (checking.get(checkKey) === check) checking.delete(checkKey);
    };
    check.then(done, done);
    return check;
  };
  return Object.assign(authenticate, {
    forget(): void {
      cached.clear();
      size = 0;
      generation++;
      // checks under way were made by what is gone: later callers check anew
      checking.clear();
    },
  });
}
