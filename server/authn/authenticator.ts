// Authentication: who is calling. Each method is an Authenticator; the chain asks them in
// order (the first to recognise the caller decides), adds `system:authenticated`, and falls
// back to the anonymous user only when no method saw credentials at all.

import type { IncomingHttpHeaders } from 'node:http';
import type { X509Certificate } from 'node:crypto';
import { frozenUser, type UserInfo } from '../machinery/user.js';

export interface AuthenticationRequest {
  readonly headers: IncomingHttpHeaders;
  /** name, value, name, value, ... as received: repeated headers stay apart (node joins them in `headers`) */
  readonly rawHeaders?: readonly string[];
  readonly path: string;
  /** the client's TLS certificate chain, leaf first (empty when it sent none) */
  readonly peerCertificates: readonly X509Certificate[];
  /** the TLS layer verified that chain against the server's trusted client CAs */
  readonly peerVerified: boolean;
}

/**
 * Resolves the caller, or null when this method finds no credentials of its kind.
 * Throws (any Error) when it finds credentials and they are invalid: the request then fails
 * with 401 even if anonymous access is enabled, as kube-apiserver does.
 */
export type Authenticator = (req: AuthenticationRequest) => Promise<UserInfo | null>;

export const ANONYMOUS_USER = 'system:anonymous';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
export const AUTHENTICATED_GROUP = 'system:authenticated';

export function anonymousUser(): UserInfo {
  return { username: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] };
}

export class AuthenticationFailure extends Error {
  constructor(readonly causes: Error[]) {
    super(causes.map((c) => c.message).join(', ') || 'invalid credentials');
    this.name = 'AuthenticationFailure';
  }
}

/** Tries each method in order; the first user wins. If none finds a user and some method
 *  failed, the whole attempt fails. */
export function unionAuthenticator(methods: readonly Authenticator[]): Authenticator {
  return async (req) => {
    const failures: Error[] = [];
    for (const method of methods) {
      try {
        const user = await method(req);
        if (user) return user;
      } catch (err) {
        failures.push(err instanceof Error ? err : new Error(String(err)));
      }
    }
    if (failures.length > 0) throw new AuthenticationFailure(failures);
    return null;
  };
}

/** every authenticated (non-anonymous) user is in `system:authenticated` */
export function withAuthenticatedGroup(method: Authenticator): Authenticator {
  // a method that answers with the same user object each time (a static token's user, a
  // cached one) gets the same completed user back, not a copy per request
  const completed = new WeakMap<UserInfo, UserInfo>();
  return async (req) => {
    const user = await method(req);
    if (!user) return null;
    const isAnonymous = user.username === ANONYMOUS_USER || user.groups.includes(UNAUTHENTICATED_GROUP);
    if (isAnonymous || user.groups.includes(AUTHENTICATED_GROUP)) return user;
    let withGroup = completed.get(user);
    if (!withGroup) {
      withGroup = frozenUser({ ...user, groups: [...user.groups, AUTHENTICATED_GROUP] });
      completed.set(user, withGroup);
    }
    return withGroup;
  };
}

/** --anonymous-auth, and the paths anonymous requests may reach (`/livez*` for a prefix) */
export interface AnonymousOptions {
  enabled: boolean;
  /** when set, anonymous requests are accepted only for these paths (`/livez*` for a prefix) */
  paths?: readonly string[];
}
