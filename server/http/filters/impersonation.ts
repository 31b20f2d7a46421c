// Impersonation (Impersonate-User / -Group / -Extra-<key> / -Uid): the authenticated caller
// acts as another user. Every requested value is authorized on its own with the `impersonate`
// verb: `users`, `groups` or (for system:serviceaccount:<ns>:<name>) `serviceaccounts` in the
// core group, `userextras/<key>` and `uids` in authentication.k8s.io, each with the value as
// the resource name, so RBAC's resourceNames can restrict what may be impersonated. A single
// denial is a 403 naming that check; the request then runs as the impersonated user.

import { distinctHeaders } from '../../request/headers.js';
import { forbidden, type AuthorizationAttributes, type Authorizer } from '../../authz/authorizer.js';
import { AUTHENTICATED_GROUP, ANONYMOUS_USER, UNAUTHENTICATED_GROUP } from '../../authn/authenticator.js';
import { writeStatusError } from '../../request/response.js';
import { errors } from '../../machinery/status.js';
import type { Filter, Handler, HttpRequest, RequestState } from '../../request/types.js';
import type { UserInfo } from '../../machinery/user.js';
import { serviceAccountGroups, splitServiceAccountUsername } from '../../authn/serviceaccount/claims.js';

export const IMPERSONATE_USER = 'impersonate-user';
export const IMPERSONATE_GROUP = 'impersonate-group';
export const IMPERSONATE_UID = 'impersonate-uid';
export const IMPERSONATE_EXTRA_PREFIX = 'impersonate-extra-';
/** what every impersonation header's name starts with */
const IMPERSONATE_HEADER_PREFIX = 'impersonate-';

/** one thing to impersonate, as kube-apiserver lists them (an ObjectReference) */
export interface ImpersonationRequest {
  kind: 'User' | 'ServiceAccount' | 'Group' | 'UserExtra' | 'UID';
  namespace?: string;
  name: string;
  /** the extra key of a UserExtra */
  extraKey?: string;
}

function unescapeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

/** Go's %v of an ObjectReference list, for kube-apiserver's error text */
function formatRequests(list: readonly ImpersonationRequest[]): string {
  const apiVersion = (r: ImpersonationRequest) => (r.kind === 'UserExtra' || r.kind === 'UID' ? 'authentication.k8s.io/v1' : '');
  return `[${list.map((r) => `{${r.kind} ${r.namespace ?? ''} ${r.name}  ${apiVersion(r)}  ${r.extraKey ?? ''}}`).join(' ')}]`;
}

/** The requested impersonations, in kube-apiserver's order; throws when groups, extras or a
 *  uid come without a user. */
export function impersonationRequests(headers: ReadonlyMap<string, string[]>): ImpersonationRequest[] {
  const out: ImpersonationRequest[] = [];
  const user = headers.get(IMPERSONATE_USER)?.[0] ?? '';
  if (user) {
    const sa = splitServiceAccountUsername(user);
    out.push(sa ? { kind: 'ServiceAccount', namespace: sa.namespace, name: sa.name } : { kind: 'User', name: user });
  }
  let others = false;
  for (const g of headers.get(IMPERSONATE_GROUP) ?? []) {
    others = true;
    out.push({ kind: 'Group', name: g });
  }
  for (const [name, values] of headers) {
    if (!name.startsWith(IMPERSONATE_EXTRA_PREFIX)) continue;
    others = true;
    const extraKey = unescapeExtraKey(name.slice(IMPERSONATE_EXTRA_PREFIX.length));
    for (const v of values) out.push({ kind: 'UserExtra', name: v, extraKey });
  }
  const uid = headers.get(IMPERSONATE_UID)?.[0] ?? '';
  if (uid) {
    others = true;
    out.push({ kind: 'UID', name: uid });
  }
  if (others && !user) throw new Error(`requested ${formatRequests(out)} without impersonating a user`);
  return out;
}

function checkFor(caller: UserInfo, r: ImpersonationRequest): AuthorizationAttributes {
  const base: AuthorizationAttributes = {
    user: caller,
    verb: 'impersonate',
    isResourceRequest: true,
    path: '',
    apiGroup: '',
    apiVersion: 'v1',
    resource: '',
    subresource: '',
    namespace: r.namespace ?? '',
    name: r.name,
  };
  switch (r.kind) {
    case 'ServiceAccount':
      return { ...base, resource: 'serviceaccounts' };
    case 'User':
      return { ...base, resource: 'users' };
    case 'Group':
      return { ...base, resource: 'groups' };
    case 'UserExtra':
      return { ...base, apiGroup: 'authentication.k8s.io', resource: 'userextras', subresource: r.extraKey ?? '' };
    case 'UID':
      return { ...base, apiGroup: 'authentication.k8s.io', resource: 'uids' };
  }
}

/** the user the requests describe, with kube-apiserver's implicit groups */
export function impersonatedUser(list: readonly ImpersonationRequest[], groupsSpecified: boolean): UserInfo {
  let username = '';
  let groups: string[] = [];
  const extra: Record<string, string[]> = {};
  let uid = '';
  for (const r of list) {
    switch (r.kind) {
      case 'ServiceAccount':
        username = `system:serviceaccount:${r.namespace}:${r.name}`;
        if (!groupsSpecified) groups = serviceAccountGroups(r.namespace ?? '');
        break;
      case 'User':
        username = r.name;
        break;
      case 'Group':
        groups.push(r.name);
        break;
      case 'UserExtra':
        (extra[r.extraKey ?? ''] ??= []).push(r.name);
        break;
      case 'UID':
        uid = r.name;
        break;
    }
  }
  if (username !== ANONYMOUS_USER) {
    if (!groups.includes(AUTHENTICATED_GROUP) && !groups.includes(UNAUTHENTICATED_GROUP)) groups.push(AUTHENTICATED_GROUP);
  } else if (!groups.includes(UNAUTHENTICATED_GROUP)) {
    groups.push(UNAUTHENTICATED_GROUP);
  }
  const user: UserInfo = { username, groups };
  if (uid) user.uid = uid;
  if (Object.keys(extra).length > 0) user.extra = extra;
  return user;
}

export interface ImpersonationOptions {
  /** called with who impersonates whom (for logs and audit) */
  onImpersonate?: (from: UserInfo, to: UserInfo) => void;
}

/** node lower-cases the names of its parsed headers (HTTP/1.1 and HTTP/2 alike) */
function hasImpersonationHeader(headers: HttpRequest['headers']): boolean {
  for (const name in headers) if (name.startsWith(IMPERSONATE_HEADER_PREFIX)) return true;
  return false;
}

export function withImpersonation(authorizer: Authorizer, opts: ImpersonationOptions = {}): Filter {
  // most requests impersonate no one: they go on in the same promise, their headers not
  // copied apart for it
  return (next) => (state) => (hasImpersonationHeader(state.req.headers) ? impersonate(state, next, authorizer, opts) : next(state));
}

async function impersonate(state: RequestState, next: Handler, authorizer: Authorizer, opts: ImpersonationOptions): Promise<void> {
  const headers = distinctHeaders(state.req as HttpRequest & { rawHeaders?: readonly string[] });
  let list: ImpersonationRequest[];
  try {
    list = impersonationRequests(headers);
  } catch (err) {
    await writeStatusError(state, errors.internal((err as Error).message));
    return;
  }
  if (list.length === 0) {
    await next(state);
    return;
  }
  const caller = state.user;
  if (!caller) {
    await writeStatusError(state, errors.internal('no user found for request'));
    return;
  }
  for (const r of list) {
    const attrs = checkFor(caller, r);
    let decision;
    try {
      decision = await authorizer.authorize(attrs);
    } catch (err) {
      decision = { decision: 'noOpinion' as const, reason: (err as Error).message };
    }
    if (decision.decision !== 'allow') {
      await writeStatusError(state, forbidden(attrs, decision.reason));
      return;
    }
  }
  const impersonated = impersonatedUser(list, (headers.get(IMPERSONATE_GROUP) ?? []).length > 0);
  opts.onImpersonate?.(caller, impersonated);
  state.user = impersonated;
  await next(state);
}
