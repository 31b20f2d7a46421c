// The structured authentication configuration (--authentication-config, kind
// AuthenticationConfiguration in apiserver.config.k8s.io v1alpha1/v1beta1/v1): JWT
// authenticators and anonymous access. Decoded strictly (an unknown field is an error) and
// validated with kube-apiserver's field paths and messages; the --oidc-* flags are turned into
// the same shape, as kube-apiserver does.

import { X509Certificate } from 'node:crypto';
import { parseConfigYaml } from '../../request/yaml.js';
import { errorString, fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { CelCompileError, compileExpression, usesClaim } from './cel.js';

export interface PrefixedClaimOrExpression {
  claim?: string;
  /** undefined: not set (required with a claim); '' disables prefixing */
  prefix?: string;
  expression?: string;
}

export interface JWTAuthenticatorConfig {
  issuer: {
    url: string;
    discoveryURL?: string;
    certificateAuthority?: string;
    audiences: string[];
    audienceMatchPolicy?: string;
  };
  claimValidationRules?: { claim?: string; requiredValue?: string; expression?: string; message?: string }[];
  claimMappings: {
    username: PrefixedClaimOrExpression;
    groups?: PrefixedClaimOrExpression;
    uid?: { claim?: string; expression?: string };
    extra?: { key: string; valueExpression: string }[];
  };
  userValidationRules?: { expression: string; message?: string }[];
}

export interface AnonymousConfig {
  enabled: boolean;
  conditions?: { path: string }[];
}

export interface AuthenticationConfiguration {
  jwt: JWTAuthenticatorConfig[];
  anonymous?: AnonymousConfig;
}

export const CONFIG_GROUP = 'apiserver.config.k8s.io';
const VERSIONS = ['v1alpha1', 'v1beta1', 'v1'];

export const ALL_SIGNING_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512'];

/** kube's field.ErrorList.ToAggregate() text */
export function aggregate(errs: readonly FieldError[]): string {
  const texts = [...new Set(errs.map(errorString))];
  if (texts.length === 0) return '';
  return texts.length === 1 ? texts[0]! : `[${texts.join(', ')}]`;
}

export class ConfigError extends Error {}

// ---- strict decoding ------------------------------------------------------------------

type Shape = { [field: string]: Shape | 'string' | 'bool' | 'strings' | [Shape] };

const prefixed: Shape = { claim: 'string', prefix: 'string', expression: 'string' };
const SHAPE: Shape = {
  apiVersion: 'string',
  kind: 'string',
  jwt: [
    {
      issuer: {
        url: 'string',
        discoveryURL: 'string',
        certificateAuthority: 'string',
        audiences: 'strings',
        audienceMatchPolicy: 'string',
      },
      claimValidationRules: [{ claim: 'string', requiredValue: 'string', expression: 'string', message: 'string' }],
      claimMappings: {
        username: prefixed,
        groups: prefixed,
        uid: { claim: 'string', expression: 'string' },
        extra: [{ key: 'string', valueExpression: 'string' }],
      },
      userValidationRules: [{ expression: 'string', message: 'string' }],
    },
  ],
  anonymous: { enabled: 'bool', conditions: [{ path: 'string' }] },
};

function goType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'object' : typeof v;
}

function checkShape(value: unknown, shape: Shape | 'string' | 'bool' | 'strings' | [Shape], path: string, errs: string[]): void {
  if (value === null || value === undefined) return;
  if (shape === 'string') {
    if (typeof value !== 'string') errs.push(`${path}: expected string, got ${goType(value)}`);
    return;
  }
  if (shape === 'bool') {
    if (typeof value !== 'boolean') errs.push(`${path}: expected bool, got ${goType(value)}`);
    return;
  }
  if (shape === 'strings') {
    if (!Array.isArray(value) || value.some((x) => typeof x !== 'string')) errs.push(`${path}: expected a list of strings`);
    return;
  }
  if (Array.isArray(shape)) {
    if (!Array.isArray(value)) {
      errs.push(`${path}: expected a list, got ${goType(value)}`);
      return;
    }
    value.forEach((x, i) => checkShape(x, shape[0], `${path}[${i}]`, errs));
    return;
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    errs.push(`${path}: expected an object, got ${goType(value)}`);
    return;
  }
  for (const [k, v] of Object.entries(value)) {
    const sub = shape[k];
    const p = path ? `${path}.${k}` : k;
    if (!sub) errs.push(`unknown field ${JSON.stringify(p)}`);
    else checkShape(v, sub, p, errs);
  }
}

/** Decodes the file's text (YAML or JSON). Throws ConfigError. */
export function decodeAuthenticationConfiguration(text: string): AuthenticationConfiguration {
  if (text.trim() === '') throw new ConfigError('empty config data');
  let raw: unknown;
  try {
    raw = parseConfigYaml(text);
  } catch (err) {
    throw new ConfigError(`error converting YAML to JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError("Object 'Kind' is missing in config");
  const obj = raw as Record<string, unknown>;
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const kind = typeof obj.kind === 'string' ? obj.kind : '';
  if (!kind) throw new ConfigError(`Object 'Kind' is missing in '${JSON.stringify(obj)}'`);
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  if (group !== CONFIG_GROUP || !VERSIONS.includes(version ?? '') || kind !== 'AuthenticationConfiguration') {
    throw new ConfigError(`no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)} in scheme`);
  }
  const errs: string[] = [];
  checkShape(obj, SHAPE, '', errs);
  if (errs.length) throw new ConfigError(`strict decoding error: ${errs.join(', ')}`);
  const jwt = (Array.isArray(obj.jwt) ? obj.jwt : []) as JWTAuthenticatorConfig[];
  for (const a of jwt) {
    a.issuer ??= { url: '', audiences: [] };
    a.issuer.audiences ??= [];
    a.claimMappings ??= { username: {} };
    a.claimMappings.username ??= {};
    // YAML nulls are unset fields
    for (const m of [a.claimMappings.username, a.claimMappings.groups]) {
      if (m && m.prefix === null) delete m.prefix;
    }
  }
  const out: AuthenticationConfiguration = { jwt };
  if (obj.anonymous && typeof obj.anonymous === 'object') {
    const anon = obj.anonymous as { enabled?: boolean; conditions?: { path: string }[] };
    out.anonymous = { enabled: anon.enabled === true, conditions: anon.conditions ?? [] };
  }
  return out;
}

// ---- validation ------------------------------------------------------------------------

function validateURL(url: string, disallowed: readonly string[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (disallowed.includes(url)) {
    errs.push(fieldErrors.invalid(path, url, `URL must not overlap with disallowed issuers: [${[...disallowed].sort().join(' ')}]`));
  }
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    errs.push(fieldErrors.invalid(path, url, 'URL scheme must be https'));
    return errs;
  }
  if (u.protocol !== 'https:') errs.push(fieldErrors.invalid(path, url, 'URL scheme must be https'));
  if (u.username || u.password) errs.push(fieldErrors.invalid(path, url, 'URL must not contain a username or password'));
  if (u.search.length > 1) errs.push(fieldErrors.invalid(path, url, 'URL must not contain a query'));
  if (u.hash.length > 1) errs.push(fieldErrors.invalid(path, url, 'URL must not contain a fragment'));
  return errs;
}

function compile(variable: 'claims' | 'user', expression: string, path: string, errs: FieldError[]): void {
  try {
    compileExpression(variable, expression);
  } catch (err) {
    if (err instanceof CelCompileError) errs.push(fieldErrors.invalid(path, expression, err.message));
    else throw err;
  }
}

function validatePrefixed(m: PrefixedClaimOrExpression | undefined, path: string, required: boolean, errs: FieldError[]): void {
  const claim = m?.claim ?? '';
  const expression = m?.expression ?? '';
  if (claim && expression) errs.push(fieldErrors.invalid(path, '', "claim and expression can't both be set"));
  else if (!claim && !expression && required) errs.push(fieldErrors.required(path, 'claim or expression is required'));
  else if (expression) {
    if (m?.prefix !== undefined) errs.push(fieldErrors.invalid(`${path}.prefix`, m.prefix, "prefix can't be set when expression is set"));
    compile('claims', expression, `${path}.expression`, errs);
  } else if (claim && m?.prefix === undefined) {
    errs.push(
      fieldErrors.required(`${path}.prefix`, 'prefix is required when claim is set. It can be set to an empty string to disable prefixing'),
    );
  }
}

const DOMAIN_PREFIXED = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+\/.+$/i;

function validateJWT(a: JWTAuthenticatorConfig, path: string, disallowedIssuers: readonly string[]): FieldError[] {
  const errs: FieldError[] = [];
  const iss = a.issuer;
  if (!iss.url) errs.push(fieldErrors.required(`${path}.issuer.url`, 'URL is required'));
  else errs.push(...validateURL(iss.url, disallowedIssuers, `${path}.issuer.url`));
  if (iss.discoveryURL) {
    if (iss.url && iss.url.replace(/\/+$/, '') === iss.discoveryURL.replace(/\/+$/, '')) {
      errs.push(fieldErrors.invalid(`${path}.issuer.discoveryURL`, iss.discoveryURL, 'discoveryURL must be different from URL'));
    }
    errs.push(...validateURL(iss.discoveryURL, [], `${path}.issuer.discoveryURL`));
  }
  const audPath = `${path}.issuer.audiences`;
  if (iss.audiences.length === 0) {
    errs.push(fieldErrors.required(audPath, `at least one ${audPath} is required`));
  } else {
    const seen = new Set<string>();
    iss.audiences.forEach((aud, i) => {
      if (!aud) errs.push(fieldErrors.required(`${audPath}[${i}]`, "audience can't be empty"));
      if (seen.has(aud)) errs.push(fieldErrors.duplicate(`${audPath}[${i}]`, aud));
      seen.add(aud);
    });
    const policy = iss.audienceMatchPolicy ?? '';
    if (iss.audiences.length > 1 && policy !== 'MatchAny') {
      errs.push(
        fieldErrors.invalid(`${path}.issuer.audienceMatchPolicy`, policy, 'audienceMatchPolicy must be MatchAny for multiple audiences'),
      );
    }
    if (iss.audiences.length === 1 && policy !== '' && policy !== 'MatchAny') {
      errs.push(
        fieldErrors.invalid(
          `${path}.issuer.audienceMatchPolicy`,
          policy,
          'audienceMatchPolicy must be empty or MatchAny for single audience',
        ),
      );
    }
  }
  if (iss.certificateAuthority) {
    const blocks = iss.certificateAuthority.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
    let ok = blocks.length > 0;
    try {
      for (const b of blocks) new X509Certificate(b);
    } catch {
      ok = false;
    }
    if (!ok)
      errs.push(
        fieldErrors.invalid(
          `${path}.issuer.certificateAuthority`,
          '<omitted>',
          'data does not contain any valid RSA or ECDSA certificates',
        ),
      );
  }

  let usesEmailVerified = false;
  const seenClaims = new Set<string>();
  const seenExpressions = new Set<string>();
  (a.claimValidationRules ?? []).forEach((rule, i) => {
    const p = `${path}.claimValidationRules[${i}]`;
    const claim = rule.claim ?? '';
    const expression = rule.expression ?? '';
    if (claim && expression) errs.push(fieldErrors.invalid(p, claim, "claim and expression can't both be set"));
    else if (!claim && !expression) errs.push(fieldErrors.required(p, 'claim or expression is required'));
    else if (claim) {
      if (rule.message) errs.push(fieldErrors.invalid(`${p}.message`, rule.message, "message can't be set when claim is set"));
      if (seenClaims.has(claim)) errs.push(fieldErrors.duplicate(`${p}.claim`, claim));
      seenClaims.add(claim);
    } else {
      if (rule.requiredValue)
        errs.push(fieldErrors.invalid(`${p}.requiredValue`, rule.requiredValue, "requiredValue can't be set when expression is set"));
      if (seenExpressions.has(expression)) {
        errs.push(fieldErrors.duplicate(`${p}.expression`, expression));
        return;
      }
      seenExpressions.add(expression);
      compile('claims', expression, `${p}.expression`, errs);
      usesEmailVerified ||= usesClaim(expression, 'email_verified');
    }
  });

  const cm = a.claimMappings;
  const cmPath = `${path}.claimMappings`;
  validatePrefixed(cm.username, `${cmPath}.username`, true, errs);
  const usernameExpr = cm.username.expression ?? '';
  const usesEmail = !cm.username.claim && usernameExpr !== '' && usesClaim(usernameExpr, 'email');
  if (usernameExpr) usesEmailVerified ||= usesClaim(usernameExpr, 'email_verified');
  validatePrefixed(cm.groups, `${cmPath}.groups`, false, errs);
  const uid = cm.uid ?? {};
  if (uid.claim && uid.expression) errs.push(fieldErrors.invalid(`${cmPath}.uid`, '', "claim and expression can't both be set"));
  else if (uid.expression) compile('claims', uid.expression, `${cmPath}.uid.expression`, errs);
  const seenKeys = new Set<string>();
  (cm.extra ?? []).forEach((m, i) => {
    const p = `${cmPath}.extra[${i}]`;
    const key = m.key ?? '';
    if (!key) errs.push(fieldErrors.required(`${p}.key`, ''));
    else if (!DOMAIN_PREFIXED.test(key))
      errs.push(fieldErrors.invalid(`${p}.key`, key, 'must be a domain-prefixed path (such as "acme.io/foo")'));
    if (key !== key.toLowerCase()) errs.push(fieldErrors.invalid(`${p}.key`, key, 'key must be lowercase'));
    const domain = key.includes('/') ? key.split('/')[0]! : '';
    if (domain === 'kubernetes.io' || domain.endsWith('.kubernetes.io') || domain === 'k8s.io' || domain.endsWith('.k8s.io')) {
      errs.push(fieldErrors.invalid(`${p}.key`, key, 'k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use'));
    }
    if (seenKeys.has(key)) {
      errs.push(fieldErrors.duplicate(`${p}.key`, key));
      return;
    }
    seenKeys.add(key);
    if (!m.valueExpression) {
      errs.push(fieldErrors.required(`${p}.valueExpression`, 'valueExpression is required'));
      return;
    }
    compile('claims', m.valueExpression, `${p}.valueExpression`, errs);
    usesEmailVerified ||= usesClaim(m.valueExpression, 'email_verified');
  });
  if (usesEmail && !usesEmailVerified) {
    errs.push(
      fieldErrors.invalid(
        `${cmPath}.username.expression`,
        usernameExpr,
        'claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression',
      ),
    );
  }

  const seenUserExpressions = new Set<string>();
  (a.userValidationRules ?? []).forEach((rule, i) => {
    const p = `${path}.userValidationRules[${i}]`;
    if (!rule.expression) {
      errs.push(fieldErrors.required(`${p}.expression`, 'expression is required'));
      return;
    }
    if (seenUserExpressions.has(rule.expression)) {
      errs.push(fieldErrors.duplicate(`${p}.expression`, rule.expression));
      return;
    }
    seenUserExpressions.add(rule.expression);
    compile('user', rule.expression, `${p}.expression`, errs);
  });
  return errs;
}

/** kube-apiserver's ValidateAuthenticationConfiguration; [] when valid */
export function validateAuthenticationConfiguration(c: AuthenticationConfiguration, disallowedIssuers: readonly string[]): FieldError[] {
  if (c.jwt.length > 64) return [fieldErrors.tooMany('jwt', c.jwt.length, 64)];
  const errs: FieldError[] = [];
  const issuers = new Set<string>();
  const discovery = new Set<string>();
  c.jwt.forEach((a, i) => {
    const path = `jwt[${i}]`;
    errs.push(...validateJWT(a, path, disallowedIssuers));
    if (issuers.has(a.issuer.url)) errs.push(fieldErrors.duplicate(`${path}.issuer.url`, a.issuer.url));
    issuers.add(a.issuer.url);
    if (a.issuer.discoveryURL) {
      if (discovery.has(a.issuer.discoveryURL)) errs.push(fieldErrors.duplicate(`${path}.issuer.discoveryURL`, a.issuer.discoveryURL));
      discovery.add(a.issuer.discoveryURL);
    }
  });
  if (c.anonymous && !c.anonymous.enabled && (c.anonymous.conditions ?? []).length > 0) {
    errs.push(
      fieldErrors.invalid('anonymous.conditions', c.anonymous.conditions, 'enabled should be set to true when conditions are defined'),
    );
  }
  return errs;
}

// ---- the --oidc-* flags ---------------------------------------------------------------

export interface OidcFlags {
  issuerURL: string;
  clientID: string;
  caPem: string;
  usernameClaim: string;
  usernamePrefix: string;
  groupsClaim: string;
  groupsPrefix: string;
  requiredClaims: Record<string, string>;
}

/** the JWT authenticator kube-apiserver builds from the --oidc-* flags */
export function jwtFromOidcFlags(f: OidcFlags): JWTAuthenticatorConfig {
  let usernamePrefix = f.usernamePrefix;
  // claims other than email are prefixed with the issuer unless a prefix is given; '-' means none
  if (usernamePrefix === '' && f.usernameClaim !== 'email') usernamePrefix = f.issuerURL + '#';
  if (f.usernamePrefix === '-') usernamePrefix = '';
  const a: JWTAuthenticatorConfig = {
    issuer: { url: f.issuerURL, audiences: [f.clientID] },
    claimMappings: { username: { claim: f.usernameClaim, prefix: usernamePrefix } },
  };
  if (f.groupsClaim) a.claimMappings.groups = { claim: f.groupsClaim, prefix: f.groupsPrefix };
  if (f.caPem) a.issuer.certificateAuthority = f.caPem;
  const required = Object.entries(f.requiredClaims);
  if (required.length > 0) a.claimValidationRules = required.map(([claim, requiredValue]) => ({ claim, requiredValue }));
  return a;
}
