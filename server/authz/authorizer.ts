// Authorization: may this user do this. Authorizers answer allow, deny or no opinion; the
// chain forbids anything not allowed. RBAC and friends plug in here later.

import type { UserInfo } from '../machinery/user.js';
import { StatusError } from '../machinery/status.js';

export interface AuthorizationAttributes {
  user: UserInfo;
  /** API verb for resource requests, lower-cased HTTP method otherwise */
  verb: string;
  isResourceRequest: boolean;
  path: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  fieldSelector?: string;
  labelSelector?: string;
}

export type Decision = 'allow' | 'deny' | 'noOpinion';

export interface AuthorizationResult {
  decision: Decision;
  /** shown to the client after the forbidden message */
  reason?: string;
}

export interface Authorizer {
  authorize(attrs: AuthorizationAttributes): Promise<AuthorizationResult>;
}

export const alwaysAllow: Authorizer = {
  authorize: async () => ({ decision: 'allow' }),
};

export const alwaysDeny: Authorizer = {
  authorize: async () => ({ decision: 'deny' }),
};

/** consults each in order; the first allow or deny decides */
export function unionAuthorizer(list: readonly Authorizer[]): Authorizer {
  return {
    async authorize(attrs) {
      const reasons: string[] = [];
      for (const a of list) {
        const r = await a.authorize(attrs);
        if (r.decision !== 'noOpinion') return r;
        if (r.reason) reasons.push(r.reason);
      }
      return { decision: 'noOpinion', reason: reasons.join(', ') || undefined };
    },
  };
}

function htmlEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** kube-apiserver's wording: `User "x" cannot list resource "pods" in API group "" ...` */
export function forbiddenMessage(attrs: AuthorizationAttributes): string {
  const user = JSON.stringify(attrs.user.username);
  if (!attrs.isResourceRequest) {
    return `User ${user} cannot ${attrs.verb} path ${JSON.stringify(attrs.path)}`;
  }
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  const scope = attrs.namespace ? `in the namespace ${JSON.stringify(attrs.namespace)}` : 'at the cluster scope';
  return `User ${user} cannot ${attrs.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(attrs.apiGroup)} ${scope}`;
}

/** the 403 Status for a denied request */
export function forbidden(attrs: AuthorizationAttributes, reason?: string): StatusError {
  const msg = htmlEscape(forbiddenMessage(attrs));
  const why = reason ? `${msg}: ${reason}` : msg;
  const qualified = attrs.apiGroup && attrs.resource ? `${attrs.resource}.${attrs.apiGroup}` : attrs.resource;
  let message: string;
  if (!attrs.resource) message = `forbidden: ${why}`;
  else if (!attrs.name) message = `${qualified} is forbidden: ${why}`;
  else message = `${qualified} ${JSON.stringify(attrs.name)} is forbidden: ${why}`;
  return new StatusError(
    403,
    'Forbidden',
    message,
    { name: attrs.name, group: attrs.apiGroup, kind: attrs.resource },
    { 'X-Content-Type-Options': 'nosniff' },
  );
}
