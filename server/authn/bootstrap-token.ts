// --enable-bootstrap-token-auth: `<id>.<secret>` tokens backed by Secrets
// `bootstrap-token-<id>` of type bootstrap.kubernetes.io/token in kube-system. The user is
// `system:bootstrap:<id>` in `system:bootstrappers` plus the Secret's auth-extra-groups.
// A token whose Secret is missing, expired, deleting or not marked for authentication is
// simply not a bootstrap token (another method may still know it), as in kube-apiserver.

import { timingSafeEqual } from 'node:crypto';
import type { KubeObject } from '../../storage/interface.js';
import type { UserInfo } from '../machinery/user.js';
import type { ObjectLookup } from './object-lookup.js';
import type { PlainTokenAuthenticator } from './token.js';

export const BOOTSTRAP_SECRET_TYPE = 'bootstrap.kubernetes.io/token';
export const BOOTSTRAP_SECRET_PREFIX = 'bootstrap-token-';
export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';

const TOKEN_RE = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const EXTRA_GROUP_RE = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

export function parseBootstrapToken(token: string): { id: string; secret: string } | undefined {
  const m = TOKEN_RE.exec(token);
  return m ? { id: m[1]!, secret: m[2]! } : undefined;
}

/** a data value: base64 in `data`, or plain in `stringData` (never stored, but harmless) */
export function bootstrapSecretValue(secret: KubeObject, key: string): string {
  const data = secret.data as Record<string, unknown> | undefined;
  const v = data?.[key];
  if (typeof v === 'string') return Buffer.from(v, 'base64').toString('utf8');
  return '';
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** expired, or an expiration that does not parse (kube treats both alike) */
export function bootstrapSecretExpired(secret: KubeObject, now: Date): boolean {
  const exp = bootstrapSecretValue(secret, 'expiration');
  if (exp === '') return false;
  const t = Date.parse(exp);
  if (Number.isNaN(t) || !/^\d{4}-\d{2}-\d{2}T/.test(exp)) return true;
  return now.getTime() > t;
}

/** system:bootstrappers, then the Secret's extra groups (each system:bootstrappers:...) */
export function bootstrapGroups(secret: KubeObject): string[] {
  const groups = [BOOTSTRAPPERS_GROUP];
  const extra = bootstrapSecretValue(secret, 'auth-extra-groups');
  if (extra === '') return groups;
  for (const raw of extra.split(',')) {
    const g = raw.trim();
    if (!EXTRA_GROUP_RE.test(g)) throw new Error(`${JSON.stringify(g)} is not a valid bootstrap group name`);
    if (!groups.includes(g)) groups.push(g);
  }
  return groups;
}

export function createBootstrapTokenAuthenticator(lookup: ObjectLookup, now: () => Date = () => new Date()): PlainTokenAuthenticator {
  return async (token): Promise<UserInfo | null> => {
    const parsed = parseBootstrapToken(token);
    if (!parsed) return null;
    const secret = await lookup('secrets', 'kube-system', BOOTSTRAP_SECRET_PREFIX + parsed.id);
    if (!secret) return null;
    if (secret.metadata.deletionTimestamp) return null;
    if (secret.type !== BOOTSTRAP_SECRET_TYPE || !secret.data) return null;
    if (!sameText(bootstrapSecretValue(secret, 'token-secret'), parsed.secret)) return null;
    if (bootstrapSecretValue(secret, 'token-id') !== parsed.id) return null;
    if (bootstrapSecretExpired(secret, now())) return null;
    if (bootstrapSecretValue(secret, 'usage-bootstrap-authentication') !== 'true') return null;
    let groups: string[];
    try {
      groups = bootstrapGroups(secret);
    } catch {
      return null;
    }
    return { username: BOOTSTRAP_USER_PREFIX + parsed.id, groups };
  };
}
