// Service account JWTs: bound tokens from the TokenRequest API (issuer one of
// --service-account-issuer) and legacy Secret-based tokens (issuer `kubernetes/serviceaccount`).
// A token of another issuer is not ours (null); one of ours with a bad signature, past its
// expiry, for other audiences, or whose account/bound object is gone or recreated fails (401).
//
// Bound tokens are always checked against the API (the account, and the Pod, Secret or Node
// they are bound to, by name and uid), as kube-apiserver does; --service-account-lookup
// governs legacy tokens (their Secret must still exist and hold the token).

import { compactVerify, decodeProtectedHeader } from 'jose';
import type { KubeObject } from '../../../storage/interface.js';
import type { UserInfo } from '../../machinery/user.js';
import type { ObjectLookup } from '../object-lookup.js';
import type { TokenAuthenticator } from '../token.js';
import type { VerificationKey } from './keys.js';
import {
  EXTRA_CREDENTIAL_ID,
  EXTRA_NODE_NAME,
  EXTRA_NODE_UID,
  EXTRA_POD_NAME,
  EXTRA_POD_UID,
  LEGACY_ISSUER,
  serviceAccountGroups,
  serviceAccountUsername,
  type ObjectRef,
} from './claims.js';

/** go-jose's default leeway for exp/nbf/iat, and for objects deleted a moment ago */
const LEEWAY_SECONDS = 60;

export interface ServiceAccountAuthenticatorOptions {
  /** accepted issuers of bound tokens (--service-account-issuer) */
  issuers: readonly string[];
  keys: readonly VerificationKey[];
  lookup: ObjectLookup;
  /** --service-account-lookup: legacy tokens must still exist in the API */
  legacyLookup: boolean;
  /** legacy tokens carry no audience: they are valid for these (the API audiences) only */
  apiAudiences?: readonly string[];
  now?: () => Date;
}

type Claims = Record<string, unknown>;

function unverifiedClaims(token: string): Claims | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as unknown;
    return claims && typeof claims === 'object' && !Array.isArray(claims) ? (claims as Claims) : undefined;
  } catch {
    return undefined;
  }
}

async function verifySignature(token: string, keys: readonly VerificationKey[]): Promise<void> {
  let header;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw new Error('invalid token header');
  }
  const candidates = keys.filter((k) => k.algorithm === header.alg && (!header.kid || k.keyId === header.kid));
  // a kid we do not know may still be one of our keys under another id scheme
  const tryKeys = candidates.length > 0 ? candidates : keys.filter((k) => k.algorithm === header.alg);
  for (const k of tryKeys) {
    try {
      await compactVerify(token, k.key, { algorithms: [k.algorithm] });
      return;
    } catch {
      // try the next key
    }
  }
  throw new Error('invalid signature');
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function refOf(v: unknown): ObjectRef | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const r = v as Record<string, unknown>;
  return { name: str(r.name), uid: str(r.uid) };
}

function audiencesOf(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.filter((a): a is string => typeof a === 'string');
  return [];
}

function deletedBefore(obj: KubeObject, cutoffMs: number): boolean {
  const ts = obj.metadata.deletionTimestamp;
  return typeof ts === 'string' && Date.parse(ts) < cutoffMs;
}

function checkTimes(claims: Claims, nowSec: number): void {
  if (typeof claims.exp === 'number' && nowSec > claims.exp + LEEWAY_SECONDS) throw new Error('service account token has expired');
  if (typeof claims.nbf === 'number' && nowSec + LEEWAY_SECONDS < claims.nbf) throw new Error('service account token is not valid yet');
  if (typeof claims.iat === 'number' && nowSec + LEEWAY_SECONDS < claims.iat) throw new Error('service account token is not valid yet');
}

export function createServiceAccountAuthenticator(opts: ServiceAccountAuthenticatorOptions): TokenAuthenticator {
  const now = opts.now ?? (() => new Date());
  const issuers = new Set(opts.issuers);

  const validateBound = async (claims: Claims, audiences: readonly string[]): Promise<{ user: UserInfo; audiences: string[] }> => {
    const nowMs = now().getTime();
    checkTimes(claims, Math.floor(nowMs / 1000));
    const tokenAudiences = audiencesOf(claims.aud);
    const matched = audiences.length > 0 ? tokenAudiences.filter((a) => audiences.includes(a)) : tokenAudiences;
    if (audiences.length > 0 && matched.length === 0) {
      throw new Error(`token audiences ${JSON.stringify(tokenAudiences)} is invalid for the target audiences ${JSON.stringify(audiences)}`);
    }
    const priv = (claims['kubernetes.io'] ?? {}) as Record<string, unknown>;
    const namespace = str(priv.namespace);
    const sa = refOf(priv.serviceaccount);
    if (!namespace || !sa?.name) throw new Error('service account token claims are incomplete');
    const cutoff = nowMs - LEEWAY_SECONDS * 1000;

    const account = await opts.lookup('serviceaccounts', namespace, sa.name);
    if (!account) throw new Error(`serviceaccounts "${sa.name}" not found`);
    if (deletedBefore(account, cutoff)) throw new Error(`service account ${namespace}/${sa.name} has been deleted`);
    if (account.metadata.uid !== sa.uid) throw new Error(`service account UID (${account.metadata.uid}) does not match claim (${sa.uid})`);

    const secretRef = refOf(priv.secret);
    if (secretRef) {
      const secret = await opts.lookup('secrets', namespace, secretRef.name);
      if (!secret || deletedBefore(secret, cutoff)) throw new Error('service account token has been invalidated');
      if (secret.metadata.uid !== secretRef.uid)
        throw new Error(`secret UID (${secret.metadata.uid}) does not match service account secret ref claim (${secretRef.uid})`);
    }
    const podRef = refOf(priv.pod);
    if (podRef) {
      const pod = await opts.lookup('pods', namespace, podRef.name);
      if (!pod || deletedBefore(pod, cutoff)) throw new Error('service account token has been invalidated');
      if (pod.metadata.uid !== podRef.uid)
        throw new Error(`pod UID (${pod.metadata.uid}) does not match service account pod ref claim (${podRef.uid})`);
    }
    const nodeRef = refOf(priv.node);
    if (nodeRef && !podRef) {
      const node = await opts.lookup('nodes', '', nodeRef.name);
      if (!node || deletedBefore(node, cutoff)) throw new Error('service account token has been invalidated');
      if (nodeRef.uid && node.metadata.uid !== nodeRef.uid)
        throw new Error(`node UID (${node.metadata.uid}) does not match service account node ref claim (${nodeRef.uid})`);
    }

    const extra: Record<string, string[]> = {};
    const jti = str(claims.jti);
    if (jti) extra[EXTRA_CREDENTIAL_ID] = [`JTI=${jti}`];
    if (nodeRef) {
      extra[EXTRA_NODE_NAME] = [nodeRef.name];
      if (nodeRef.uid) extra[EXTRA_NODE_UID] = [nodeRef.uid];
    }
    if (podRef) {
      extra[EXTRA_POD_NAME] = [podRef.name];
      extra[EXTRA_POD_UID] = [podRef.uid];
    }
    const user: UserInfo = {
      username: serviceAccountUsername(namespace, sa.name),
      uid: sa.uid,
      groups: serviceAccountGroups(namespace),
    };
    if (Object.keys(extra).length > 0) user.extra = extra;
    return { user, audiences: matched };
  };

  const validateLegacy = async (
    token: string,
    claims: Claims,
    audiences: readonly string[],
  ): Promise<{ user: UserInfo; audiences: string[] } | null> => {
    const namespace = str(claims['kubernetes.io/serviceaccount/namespace']);
    const secretName = str(claims['kubernetes.io/serviceaccount/secret.name']);
    const saName = str(claims['kubernetes.io/serviceaccount/service-account.name']);
    const saUid = str(claims['kubernetes.io/serviceaccount/service-account.uid']);
    if (!namespace) throw new Error('namespace claim is missing');
    if (!secretName) throw new Error('secretName claim is missing');
    if (!saName) throw new Error('serviceAccountName claim is missing');
    if (!saUid) throw new Error('serviceAccountUID claim is missing');
    const api = opts.apiAudiences ?? [];
    const matched = api.length > 0 && audiences.length > 0 ? api.filter((a) => audiences.includes(a)) : [...audiences];
    if (api.length > 0 && audiences.length > 0 && matched.length === 0) return null;
    if (opts.legacyLookup) {
      const secret = await opts.lookup('secrets', namespace, secretName);
      if (!secret) throw new Error('token has been invalidated');
      if (secret.metadata.deletionTimestamp) throw new Error('token has been invalidated');
      const stored = (secret.data as Record<string, unknown> | undefined)?.token;
      if (typeof stored !== 'string' || Buffer.from(stored, 'base64').toString('utf8') !== token) {
        throw new Error("token does not match server's copy");
      }
      const account = await opts.lookup('serviceaccounts', namespace, saName);
      if (!account) throw new Error(`serviceaccounts "${saName}" not found`);
      if (account.metadata.deletionTimestamp) throw new Error('service account has been deleted');
      if (account.metadata.uid !== saUid) throw new Error(`service account UID (${account.metadata.uid}) does not match claim (${saUid})`);
    }
    return {
      user: { username: serviceAccountUsername(namespace, saName), uid: saUid, groups: serviceAccountGroups(namespace) },
      audiences: matched,
    };
  };

  return async (token, audiences) => {
    const claims = unverifiedClaims(token);
    if (!claims) return null;
    const iss = claims.iss;
    if (typeof iss !== 'string') return null;
    const legacy = iss === LEGACY_ISSUER;
    if (!legacy && !issuers.has(iss)) return null;
    await verifySignature(token, opts.keys);
    return legacy ? validateLegacy(token, claims, audiences) : validateBound(claims, audiences);
  };
}
