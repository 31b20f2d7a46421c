// One JWT issuer of the authentication configuration (or of the --oidc-* flags): tokens whose
// `iss` is this issuer's URL are verified against the keys its discovery document points at,
// then mapped to a user by claim or CEL rules and checked by the validation rules. Keys are
// fetched in the background at start (a token before that fails, as in kube-apiserver) and
// again when a token names a key id not yet seen.

import { OPENID_CONFIGURATION_PATH } from '../../machinery/oidc-paths.js';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import type { UserInfo } from '../../machinery/user.js';
import type { PlainTokenAuthenticator } from '../token.js';
import { compileExpression, stringList, type CompiledExpression } from './cel.js';
import type { JWTAuthenticatorConfig } from './config.js';
import { getJson } from './fetch.js';

export const EXTRA_CREDENTIAL_ID = 'authentication.kubernetes.io/credential-id';

export interface JWTAuthenticator {
  readonly issuer: string;
  authenticate: PlainTokenAuthenticator;
  /** resolves once keys were fetched (or rejects with the first failure) */
  readonly initialized: Promise<void>;
  /** undefined when healthy */
  healthError(): string | undefined;
  close(): void;
}

export interface JWTAuthenticatorOptions {
  signingAlgorithms: readonly string[];
  /** retry interval while discovery or JWKS fetching fails */
  retryMs?: number;
  /** the shortest time between two JWKS refreshes for unknown key ids */
  refreshMinIntervalMs?: number;
  now?: () => Date;
}

type Claims = Record<string, unknown>;

function unverifiedIssuer(token: string): string | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as Claims;
    return typeof claims.iss === 'string' ? claims.iss : undefined;
  } catch {
    return undefined;
  }
}

function claimString(c: Claims, name: string): string {
  if (!(name in c)) throw new Error('claim not present');
  const v = c[name];
  if (typeof v !== 'string')
    throw new Error(`json: cannot unmarshal ${Array.isArray(v) ? 'array' : typeof v} into Go value of type string`);
  return v;
}

interface Compiled {
  username?: CompiledExpression;
  groups?: CompiledExpression;
  uid?: CompiledExpression;
  extra: { key: string; expr: CompiledExpression }[];
  claimRules: { expr: CompiledExpression; message: string }[];
  userRules: { expr: CompiledExpression; message: string }[];
}

function compileAll(cfg: JWTAuthenticatorConfig): Compiled {
  const cm = cfg.claimMappings;
  const c = (e?: string) => (e ? compileExpression('claims', e) : undefined);
  return {
    username: c(cm.username.expression),
    groups: c(cm.groups?.expression),
    uid: c(cm.uid?.expression),
    extra: (cm.extra ?? []).map((m) => ({ key: m.key, expr: compileExpression('claims', m.valueExpression) })),
    claimRules: (cfg.claimValidationRules ?? [])
      .filter((r) => r.expression)
      .map((r) => ({ expr: compileExpression('claims', r.expression!), message: r.message ?? '' })),
    userRules: (cfg.userValidationRules ?? []).map((r) => ({ expr: compileExpression('user', r.expression), message: r.message ?? '' })),
  };
}

function checkRules(rules: Compiled['claimRules'], value: Claims): void {
  for (const r of rules) {
    const out = r.expr.evaluate(value);
    if (typeof out !== 'boolean') throw new Error('validation expression must return a boolean');
    if (!out) throw new Error(`validation expression '${r.expr.expression}' failed: ${r.message}`);
  }
}

export function createJWTAuthenticator(cfg: JWTAuthenticatorConfig, opts: JWTAuthenticatorOptions): JWTAuthenticator {
  const issuer = cfg.issuer.url;
  const compiled = compileAll(cfg);
  const audiences = cfg.issuer.audiences;
  const retryMs = opts.retryMs ?? 10_000;
  const refreshMin = opts.refreshMinIntervalMs ?? 10_000;
  let jwksUri: string | undefined;
  let keySet: JWTVerifyGetKey | undefined;
  let knownKids = new Set<string>();
  let lastFetch = 0;
  let health: string | undefined = 'not initialized';
  let closed = false;
  let timer: NodeJS.Timeout | undefined;

  const fetchKeys = async (): Promise<void> => {
    if (!jwksUri) {
      const discoveryURL = cfg.issuer.discoveryURL || issuer.replace(/\/+$/, '') + OPENID_CONFIGURATION_PATH;
      const doc = (await getJson(discoveryURL, { ca: cfg.issuer.certificateAuthority })) as Record<string, unknown>;
      if (doc.issuer !== issuer) {
        throw new Error(
          `oidc: issuer did not match the issuer returned by provider, expected ${JSON.stringify(issuer)} got ${JSON.stringify(doc.issuer)}`,
        );
      }
      if (typeof doc.jwks_uri !== 'string') throw new Error('oidc: discovery document has no jwks_uri');
      jwksUri = doc.jwks_uri;
    }
    const jwks = (await getJson(jwksUri, { ca: cfg.issuer.certificateAuthority })) as JSONWebKeySet;
    if (!jwks || !Array.isArray(jwks.keys)) throw new Error('oidc: JWKS has no keys');
    keySet = createLocalJWKSet(jwks);
    knownKids = new Set(jwks.keys.map((k) => k.kid).filter((k): k is string => typeof k === 'string'));
    lastFetch = Date.now();
    health = undefined;
  };

  let resolveInit!: () => void;
  let rejectInit!: (e: Error) => void;
  const initialized = new Promise<void>((res, rej) => {
    resolveInit = res;
    rejectInit = rej;
  });
  initialized.catch(() => {});
  let firstFailure = true;
  const init = async (): Promise<void> => {
    if (closed) return;
    try {
      await fetchKeys();
      resolveInit();
    } catch (err) {
      health = (err as Error).message;
      if (firstFailure) {
        firstFailure = false;
        rejectInit(err as Error);
      }
      if (!closed) {
        timer = setTimeout(() => void init(), retryMs);
        timer.unref();
      }
    }
  };
  void init();

  const verify = async (token: string): Promise<Claims> => {
    if (!keySet) throw new Error('oidc: authenticator not initialized');
    const kid = (() => {
      try {
        return (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8')) as { kid?: unknown }).kid;
      } catch {
        return undefined;
      }
    })();
    if (typeof kid === 'string' && !knownKids.has(kid) && Date.now() - lastFetch > refreshMin) {
      try {
        await fetchKeys();
      } catch {
        // keep the keys we have
      }
    }
    try {
      const { payload } = await jwtVerify(token, keySet, {
        algorithms: [...opts.signingAlgorithms],
        currentDate: opts.now?.(),
      });
      return payload as Claims;
    } catch (err) {
      throw new Error(`oidc: verify token: ${(err as Error).message}`);
    }
  };

  const username = (c: Claims): string => {
    if (compiled.username) {
      let out: unknown;
      try {
        out = compiled.username.evaluate(c);
      } catch (err) {
        throw new Error(`oidc: error evaluating username claim expression: ${(err as Error).message}`);
      }
      if (typeof out !== 'string')
        throw new Error('oidc: error evaluating username claim expression: username claim expression must return a string');
      if (out === '') throw new Error('oidc: empty username via CEL expression is not allowed');
      return out;
    }
    const claim = cfg.claimMappings.username.claim ?? 'sub';
    let name: string;
    try {
      name = claimString(c, claim);
    } catch (err) {
      throw new Error(`oidc: parse username claims ${JSON.stringify(claim)}: ${(err as Error).message}`);
    }
    if (claim === 'email' && 'email_verified' in c) {
      if (typeof c.email_verified !== 'boolean') throw new Error("oidc: parse 'email_verified' claim: not a boolean");
      if (!c.email_verified) throw new Error('oidc: email not verified');
    }
    return (cfg.claimMappings.username.prefix ?? '') + name;
  };

  const groups = (c: Claims): string[] => {
    const claim = cfg.claimMappings.groups?.claim;
    if (claim) {
      if (!(claim in c)) return [];
      const v = c[claim];
      let list: string[];
      if (typeof v === 'string') list = [v];
      else if (Array.isArray(v) && v.every((x) => typeof x === 'string')) list = v as string[];
      else throw new Error(`oidc: parse groups claim ${JSON.stringify(claim)}: claim is not a string or an array of strings`);
      const prefix = cfg.claimMappings.groups?.prefix ?? '';
      return list.map((g) => prefix + g);
    }
    if (!compiled.groups) return [];
    try {
      return stringList(compiled.groups.evaluate(c));
    } catch (err) {
      throw new Error(`oidc: error evaluating group claim expression: ${(err as Error).message}`);
    }
  };

  const uid = (c: Claims): string => {
    const claim = cfg.claimMappings.uid?.claim;
    if (claim) {
      try {
        return claimString(c, claim);
      } catch (err) {
        throw new Error(`oidc: parse uid claim ${JSON.stringify(claim)}: ${(err as Error).message}`);
      }
    }
    if (!compiled.uid) return '';
    let out: unknown;
    try {
      out = compiled.uid.evaluate(c);
    } catch (err) {
      throw new Error(`oidc: error evaluating uid claim expression: ${(err as Error).message}`);
    }
    if (typeof out !== 'string') throw new Error('oidc: error evaluating uid claim expression: uid claim expression must return a string');
    return out;
  };

  const authenticate: PlainTokenAuthenticator = async (token) => {
    if (unverifiedIssuer(token) !== issuer) return null;
    const c = await verify(token);
    const aud = typeof c.aud === 'string' ? [c.aud] : Array.isArray(c.aud) ? c.aud : [];
    if (!aud.some((a) => audiences.includes(a as string))) {
      throw new Error(`oidc: verify token: oidc: expected audience in ${JSON.stringify([...audiences].sort())} got ${JSON.stringify(aud)}`);
    }
    if (typeof c.exp !== 'number') throw new Error('oidc: verify token: token has no expiry');
    const user: UserInfo = { username: username(c), groups: groups(c) };
    const id = uid(c);
    if (id) user.uid = id;
    const extra: Record<string, string[]> = {};
    if (typeof c.jti === 'string' && c.jti) extra[EXTRA_CREDENTIAL_ID] = [`JTI=${c.jti}`];
    for (const m of compiled.extra) {
      let values: string[];
      try {
        values = stringList(m.expr.evaluate(c));
      } catch (err) {
        throw new Error(`oidc: error evaluating extra claim expression: ${m.expr.expression}: ${(err as Error).message}`);
      }
      if (values.length > 0) extra[m.key] = values;
    }
    if (Object.keys(extra).length > 0) user.extra = extra;
    for (const rule of cfg.claimValidationRules ?? []) {
      if (!rule.claim) continue;
      if (!(rule.claim in c)) throw new Error(`oidc: required claim ${rule.claim} not present in ID token`);
      let value: string;
      try {
        value = claimString(c, rule.claim);
      } catch (err) {
        throw new Error(`oidc: parse claim ${rule.claim}: ${(err as Error).message}`);
      }
      if (value !== (rule.requiredValue ?? '')) {
        throw new Error(`oidc: required claim ${rule.claim} value does not match. Got = ${value}, want = ${rule.requiredValue ?? ''}`);
      }
    }
    try {
      checkRules(compiled.claimRules, c);
    } catch (err) {
      throw new Error(`oidc: error evaluating claim validation expression: ${(err as Error).message}`);
    }
    if (compiled.userRules.length > 0) {
      const u = { username: user.username, uid: user.uid ?? '', groups: user.groups, extra: user.extra ?? {} };
      try {
        checkRules(compiled.userRules, u);
      } catch (err) {
        throw new Error(`oidc: error evaluating user info validation rule: ${(err as Error).message}`);
      }
    }
    return user;
  };

  return {
    issuer,
    authenticate,
    initialized,
    healthError: () => (health ? `oidc: authenticator for issuer ${JSON.stringify(issuer)} is not healthy: ${health}` : undefined),
    close() {
      closed = true;
      clearTimeout(timer);
    },
  };
}
