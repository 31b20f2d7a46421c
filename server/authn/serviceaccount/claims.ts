// The claims of service account tokens. Bound tokens (TokenRequest) carry `kubernetes.io`
// private claims naming the account and what the token is bound to; legacy Secret-based
// tokens (issuer `kubernetes/serviceaccount`) carry flat `kubernetes.io/serviceaccount/*`
// claims.

export const LEGACY_ISSUER = 'kubernetes/serviceaccount';
export const SERVICE_ACCOUNT_USER_PREFIX = 'system:serviceaccount:';
export const SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';
export const SERVICE_ACCOUNT_GROUP_PREFIX = 'system:serviceaccounts:';

export const EXTRA_CREDENTIAL_ID = 'authentication.kubernetes.io/credential-id';
export const EXTRA_POD_NAME = 'authentication.kubernetes.io/pod-name';
export const EXTRA_POD_UID = 'authentication.kubernetes.io/pod-uid';
export const EXTRA_NODE_NAME = 'authentication.kubernetes.io/node-name';
export const EXTRA_NODE_UID = 'authentication.kubernetes.io/node-uid';

export interface ObjectRef {
  name: string;
  uid: string;
}

export interface BoundPrivateClaims {
  namespace: string;
  serviceaccount: ObjectRef;
  pod?: ObjectRef;
  secret?: ObjectRef;
  node?: ObjectRef;
  /** seconds since the epoch after which an extended token is stale */
  warnafter?: number;
}

export interface BoundClaims {
  aud: string[];
  exp: number;
  iat: number;
  iss: string;
  jti: string;
  'kubernetes.io': BoundPrivateClaims;
  nbf: number;
  sub: string;
}

export function serviceAccountUsername(namespace: string, name: string): string {
  return `${SERVICE_ACCOUNT_USER_PREFIX}${namespace}:${name}`;
}

export function serviceAccountGroups(namespace: string): string[] {
  return [SERVICE_ACCOUNTS_GROUP, SERVICE_ACCOUNT_GROUP_PREFIX + namespace];
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** `system:serviceaccount:<ns>:<name>` with a valid namespace and name, else undefined */
export function splitServiceAccountUsername(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SERVICE_ACCOUNT_USER_PREFIX)) return undefined;
  const parts = username.slice(SERVICE_ACCOUNT_USER_PREFIX.length).split(':');
  if (parts.length !== 2) return undefined;
  const [namespace, name] = parts as [string, string];
  if (namespace.length > 63 || !DNS_LABEL.test(namespace)) return undefined;
  if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) return undefined;
  return { namespace, name };
}
