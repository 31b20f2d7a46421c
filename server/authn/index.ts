// Builds kapi's authentication from kube-apiserver's flags: the request authenticator (the
// authenticating proxy, client certificates, then bearer tokens: static file, service
// accounts, bootstrap tokens, JWT issuers, the TokenReview webhook), anonymous access, the
// token authenticator for TokenReview, and the service account token issuer with its
// discovery document.
//
// kapi's defaults where kube-apiserver insists on flags: the service account issuer is
// https://kubernetes.default.svc.cluster.local, tokens are signed with the generated
// <cert-dir>/sa.key and verified with sa.pub (plus --tls-private-key-file when given without
// --service-account-key-file, as kube-apiserver defaults). With --authorization-mode
// AlwaysAllow kube-apiserver turns anonymous access off; kapi keeps it for the health
// endpoints only (/livez, /readyz, /healthz), so load balancer probes keep working.

import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import { AUTHENTICATED_GROUP, unionAuthenticator, withAuthenticatedGroup, type Authenticator } from './authenticator.js';
import { createX509Authenticator, parseCertificates } from './x509.js';
import type { AnonymousOptions } from './authenticator.js';
import type { FlagValue } from '../machinery/flagset.js';
import type { UserInfo } from '../machinery/user.js';
import type { ServiceAccountTokenOptions } from '../registry/core/serviceaccount-token.js';
import { createLogger } from '../log.js';
import { createBearerAuthenticator } from './bearer.js';
import { cachedTokenAuthenticator, TOKEN_SUCCESS_CACHE_TTL_MS } from './token-cache.js';
import { createBootstrapTokenAuthenticator } from './bootstrap-token.js';
import type { ObjectLookup } from './object-lookup.js';
import { createRequestHeaderAuthenticator } from './request-header.js';
import { createServiceAccountAuthenticator } from './serviceaccount/authenticator.js';
import { createTokenIssuer, type TokenIssuer } from './serviceaccount/issuer.js';
import {
  loadPublicKeys,
  loadSigningKey,
  parsePublicKeys,
  parseSigningKey,
  uniqueKeys,
  type VerificationKey,
} from './serviceaccount/keys.js';
import { audienceAgnostic, unionTokenAuthenticator, type TokenAuthenticator } from './token.js';
import { createTokenFileAuthenticator, loadTokenFile } from './token-file.js';
import { createWebhookTokenAuthenticator } from './webhook-token.js';
import { createJWTAuthenticator, type JWTAuthenticator } from './jwt/authenticator.js';
import {
  aggregate,
  ALL_SIGNING_ALGORITHMS,
  decodeAuthenticationConfiguration,
  jwtFromOidcFlags,
  validateAuthenticationConfiguration,
  type AuthenticationConfiguration,
} from './jwt/config.js';

const log = createLogger('authentication');

export const DEFAULT_SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';
export const HEALTH_PATHS = ['/livez', '/livez/*', '/readyz', '/readyz/*', '/healthz', '/healthz/*'];

export class AuthenticationSetupError extends Error {}

/** what authentication reads of kapi's configuration */
export interface AuthenticationInputs {
  /** every flag's value by name, defaults included */
  values: ReadonlyMap<string, FlagValue>;
  explicitlySet: ReadonlySet<string>;
  /** resolves relative file names */
  resolvePath: (p: string) => string;
  /** --client-ca-file's (or kapi's CA) PEM */
  clientCaPem: string;
  /** PEM of the generated sa.key / sa.pub */
  generatedServiceAccountKeyPem: string;
  generatedServiceAccountPublicKeyPem: string;
  /** --tls-private-key-file ('' when kapi generated its serving certificate) */
  tlsPrivateKeyFile: string;
  lookup: ObjectLookup;
  /** how often the authentication configuration file is checked for changes (default 2 s) */
  configCheckIntervalMs?: number;
  /** told about every automatic reload of a changed configuration file (for its metrics) */
  onConfigReload?: (status: 'success' | 'failure') => void;
}

export interface ServiceAccountSetup {
  issuers: string[];
  keys: VerificationKey[];
  issuer: TokenIssuer;
  /** --service-account-jwks-uri */
  jwksUri: string;
}

export interface Authentication {
  /** the request authenticator (adds system:authenticated) */
  authenticator: Authenticator;
  anonymous: AnonymousOptions;
  /** TokenReview: bearer tokens only, as a request with that token would be authenticated */
  tokenReview: { authenticate(token: string, audiences: string[]): Promise<{ user: UserInfo; audiences: string[] } | null> };
  apiAudiences: string[];
  serviceAccounts: ServiceAccountSetup;
  /** options of the TokenRequest subresource */
  serviceAccountTokens: ServiceAccountTokenOptions;
  /** CAs whose client certificates the TLS layer must ask for (client CA, front proxy CA) */
  clientCAs: string[];
  /** reloads the authentication configuration file now (also done on change) */
  reloadConfig(): boolean;
  close(): void;
}

const OIDC_FLAGS = [
  'oidc-issuer-url',
  'oidc-client-id',
  'oidc-ca-file',
  'oidc-username-claim',
  'oidc-username-prefix',
  'oidc-groups-claim',
  'oidc-groups-prefix',
  'oidc-signing-algs',
  'oidc-required-claim',
];

function validateIssuers(issuers: readonly string[]): void {
  const seen = new Set<string>();
  for (const issuer of issuers) {
    if (issuer.includes(':')) {
      try {
        new URL(issuer);
      } catch (err) {
        throw new AuthenticationSetupError(
          `service-account-issuer ${JSON.stringify(issuer)} contained a ':' but was not a valid URL: ${(err as Error).message}`,
        );
      }
    }
    if (issuer === '') throw new AuthenticationSetupError('service-account-issuer should not be an empty string');
    if (seen.has(issuer)) throw new AuthenticationSetupError(`service-account-issuer ${JSON.stringify(issuer)} is already specified`);
    seen.add(issuer);
  }
}

function readConfigFile(file: string): { text: string; config: AuthenticationConfiguration } {
  const text = readFileSync(file, 'utf8');
  return { text, config: decodeAuthenticationConfiguration(text) };
}

export function buildAuthentication(input: AuthenticationInputs): Authentication {
  const v = input.values;
  const str = (n: string) => (v.get(n) as string | undefined) ?? '';
  const list = (n: string) => ((v.get(n) as string[] | undefined) ?? []).filter((s) => s !== '');
  const set = (n: string) => input.explicitlySet.has(n);
  const closers: (() => void)[] = [];

  // ---- service accounts ---------------------------------------------------------------
  const issuers = list('service-account-issuer');
  if (issuers.length === 0 && !set('service-account-issuer')) issuers.push(DEFAULT_SERVICE_ACCOUNT_ISSUER);
  validateIssuers(issuers);
  if (issuers.length === 0) throw new AuthenticationSetupError('service-account-issuer is a required flag');
  const jwksUri = str('service-account-jwks-uri');
  if (jwksUri) {
    let u: URL | undefined;
    try {
      u = new URL(jwksUri);
    } catch (err) {
      throw new AuthenticationSetupError(`service-account-jwks-uri must be a valid URL: ${(err as Error).message}`);
    }
    if (u.protocol !== 'https:')
      throw new AuthenticationSetupError(`service-account-jwks-uri requires https scheme, parsed as: ${jwksUri}`);
  }
  const signingKeyFile = str('service-account-signing-key-file');
  const signingKey = signingKeyFile
    ? loadSigningKey(input.resolvePath(signingKeyFile))
    : parseSigningKey(input.generatedServiceAccountKeyPem);
  const keyFiles = list('service-account-key-file');
  let keys: VerificationKey[];
  if (keyFiles.length > 0) keys = keyFiles.flatMap((f) => loadPublicKeys(input.resolvePath(f)));
  else if (input.tlsPrivateKeyFile)
    keys = [...loadPublicKeys(input.tlsPrivateKeyFile), ...parsePublicKeys(input.generatedServiceAccountPublicKeyPem)];
  else keys = parsePublicKeys(input.generatedServiceAccountPublicKeyPem);
  // tokens this server signs must verify here, whatever the key files say
  keys = uniqueKeys([...keys, signingKey]);
  const tokenIssuer = createTokenIssuer(issuers[0]!, signingKey);
  const apiAudiences = list('api-audiences').length > 0 ? list('api-audiences') : [...issuers];

  // ---- JWT authenticators: --authentication-config or --oidc-* ---------------------------
  const configFile = str('authentication-config');
  const oidcSet = OIDC_FLAGS.some(set);
  let fileConfig: { text: string; config: AuthenticationConfiguration } | undefined;
  let signingAlgorithms: string[];
  if (configFile) {
    if (oidcSet) throw new AuthenticationSetupError('authentication-config file and oidc-* flags are mutually exclusive');
    try {
      fileConfig = readConfigFile(input.resolvePath(configFile));
    } catch (err) {
      throw new AuthenticationSetupError(
        `failed to load authentication configuration from file ${JSON.stringify(configFile)}: ${(err as Error).message}`,
      );
    }
    signingAlgorithms = ALL_SIGNING_ALGORITHMS;
  } else {
    if (oidcSet && (!str('oidc-issuer-url') || !str('oidc-client-id'))) {
      throw new AuthenticationSetupError('oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set');
    }
    signingAlgorithms = list('oidc-signing-algs');
    for (const alg of signingAlgorithms) {
      if (!ALL_SIGNING_ALGORITHMS.includes(alg))
        throw new AuthenticationSetupError(`oidc: unsupported signing alg: ${JSON.stringify(alg)}`);
    }
  }
  const authConfig: AuthenticationConfiguration = fileConfig?.config ?? { jwt: [] };
  if (!configFile && str('oidc-issuer-url') && str('oidc-client-id')) {
    const caFile = str('oidc-ca-file');
    authConfig.jwt = [
      jwtFromOidcFlags({
        issuerURL: str('oidc-issuer-url'),
        clientID: str('oidc-client-id'),
        caPem: caFile ? readFileSync(input.resolvePath(caFile), 'utf8') : '',
        usernameClaim: str('oidc-username-claim'),
        usernamePrefix: str('oidc-username-prefix'),
        groupsClaim: str('oidc-groups-claim'),
        groupsPrefix: str('oidc-groups-prefix'),
        requiredClaims: (v.get('oidc-required-claim') as Record<string, string> | undefined) ?? {},
      }),
    ];
  }

  // ---- anonymous ------------------------------------------------------------------------
  let anonymous: AnonymousOptions;
  if (authConfig.anonymous) {
    if (set('anonymous-auth')) {
      throw new AuthenticationSetupError(
        'anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file',
      );
    }
    const conditions = authConfig.anonymous.conditions ?? [];
    anonymous = { enabled: authConfig.anonymous.enabled, paths: conditions.length > 0 ? conditions.map((c) => c.path) : undefined };
  } else {
    anonymous = { enabled: v.get('anonymous-auth') !== false };
    const modes = list('authorization-mode');
    if (anonymous.enabled && !str('authorization-config') && modes.includes('AlwaysAllow')) {
      log.warn(
        'AnonymousAuth is not allowed with the AlwaysAllow authorizer: anonymous requests are limited to the health endpoints. You should use a different authorizer',
      );
      anonymous = { enabled: true, paths: HEALTH_PATHS };
    }
  }

  const validationErrors = validateAuthenticationConfiguration(authConfig, issuers);
  if (validationErrors.length > 0)
    throw new AuthenticationSetupError(`invalid authentication configuration: ${aggregate(validationErrors)}`);

  let jwtAuthenticators: JWTAuthenticator[] = authConfig.jwt.map((a) => createJWTAuthenticator(a, { signingAlgorithms }));
  closers.push(() => jwtAuthenticators.forEach((a) => a.close()));
  const jwtTokens: TokenAuthenticator = audienceAgnostic(apiAudiences, async (token) => {
    const current = jwtAuthenticators;
    const failures: Error[] = [];
    for (const a of current) {
      try {
        const u = await a.authenticate(token);
        if (u) return u;
      } catch (err) {
        failures.push(err as Error);
      }
    }
    if (failures.length) throw new Error(failures.map((e) => e.message).join(', '));
    return null;
  });

  // the configuration file is watched: a valid change replaces the JWT authenticators
  let trackedText = fileConfig?.text;
  const originalAnonymous = JSON.stringify(authConfig.anonymous ?? null);
  const reloadConfig = (): boolean => {
    if (!configFile) return false;
    let loaded: { text: string; config: AuthenticationConfiguration };
    try {
      const text = readFileSync(input.resolvePath(configFile), 'utf8');
      if (text === trackedText) return false;
      loaded = { text, config: decodeAuthenticationConfiguration(text) };
    } catch (err) {
      log.error('failed to load authentication config', { error: (err as Error).message });
      input.onConfigReload?.('failure');
      return false;
    }
    trackedText = loaded.text;
    const errs = validateAuthenticationConfiguration(loaded.config, issuers);
    let problem = errs.length ? aggregate(errs) : '';
    if (JSON.stringify(loaded.config.anonymous ?? null) !== originalAnonymous) {
      problem = problem
        ? `${problem}, anonymous: Forbidden: changed from initial configuration file`
        : 'anonymous: Forbidden: changed from initial configuration file';
    }
    if (problem) {
      log.error('failed to validate authentication config', { error: problem });
      input.onConfigReload?.('failure');
      return false;
    }
    const next = loaded.config.jwt.map((a) => createJWTAuthenticator(a, { signingAlgorithms }));
    const old = jwtAuthenticators;
    jwtAuthenticators = next;
    old.forEach((a) => a.close());
    // who a token is follows the new configuration from now on, not after the cache's TTL
    tokens.forget();
    log.info('reloaded authentication config', { jwtAuthenticators: next.length });
    input.onConfigReload?.('success');
    return true;
  };
  if (configFile) {
    const file = input.resolvePath(configFile);
    watchFile(file, { interval: input.configCheckIntervalMs ?? 2000, persistent: false }, () => reloadConfig());
    closers.push(() => unwatchFile(file));
  }

  // ---- tokens -----------------------------------------------------------------------------
  const tokenMethods: TokenAuthenticator[] = [];
  const tokenFile = str('token-auth-file');
  if (tokenFile) {
    let tokens;
    try {
      tokens = loadTokenFile(input.resolvePath(tokenFile), (w) => log.warn(w.message));
    } catch (err) {
      throw new AuthenticationSetupError((err as Error).message);
    }
    tokenMethods.push(audienceAgnostic(apiAudiences, createTokenFileAuthenticator(tokens)));
  }
  tokenMethods.push(
    createServiceAccountAuthenticator({
      issuers,
      keys,
      lookup: input.lookup,
      legacyLookup: v.get('service-account-lookup') !== false,
      apiAudiences,
    }),
  );
  if (v.get('enable-bootstrap-token-auth') === true) {
    tokenMethods.push(audienceAgnostic(apiAudiences, createBootstrapTokenAuthenticator(input.lookup)));
  }
  tokenMethods.push(jwtTokens);
  // the remote TokenReview webhook comes last, as in kube-apiserver: local methods first
  const webhookFile = str('authentication-token-webhook-config-file');
  if (webhookFile) {
    let webhook;
    try {
      webhook = createWebhookTokenAuthenticator({
        kubeConfigFile: input.resolvePath(webhookFile),
        version: str('authentication-token-webhook-version'),
        cacheTTLMs: (v.get('authentication-token-webhook-cache-ttl') as number | undefined) ?? 120_000,
        implicitAudiences: apiAudiences,
        budgetMs: (v.get('request-timeout') as number | undefined) ?? 60_000,
        onError: (err) => log.error(err.message),
      });
    } catch (err) {
      throw new AuthenticationSetupError(`invalid authentication token webhook configuration: ${(err as Error).message}`);
    }
    tokenMethods.push(webhook.authenticate);
    closers.push(() => webhook.close());
  }
  const tokens = cachedTokenAuthenticator(unionTokenAuthenticator(tokenMethods), { successTtlMs: TOKEN_SUCCESS_CACHE_TTL_MS });

  // ---- the request authenticator ---------------------------------------------------------
  const methods: Authenticator[] = [];
  const clientCAs = [input.clientCaPem];
  const proxyCaFile = str('requestheader-client-ca-file');
  if (proxyCaFile) {
    const proxyCa = readFileSync(input.resolvePath(proxyCaFile), 'utf8');
    const allowedNames = list('requestheader-allowed-names');
    if (set('client-ca-file') && allowedNames.length === 0) {
      const a = parseCertificates(input.clientCaPem).map((c) => c.fingerprint256);
      if (parseCertificates(proxyCa).some((c) => a.includes(c.fingerprint256))) {
        throw new AuthenticationSetupError(
          '--requestheader-client-ca-file and --client-ca-file contain overlapping certificates; --requestheader-allowed-names must be specified to ensure regular client certificates cannot set authenticating proxy headers for arbitrary users',
        );
      }
    }
    try {
      methods.push(
        createRequestHeaderAuthenticator({
          clientCA: proxyCa,
          allowedNames,
          usernameHeaders: list('requestheader-username-headers'),
          uidHeaders: list('requestheader-uid-headers'),
          groupHeaders: list('requestheader-group-headers'),
          extraHeaderPrefixes: list('requestheader-extra-headers-prefix'),
        }),
      );
    } catch (err) {
      throw new AuthenticationSetupError((err as Error).message);
    }
    clientCAs.push(proxyCa);
  }
  methods.push(createX509Authenticator(input.clientCaPem));
  methods.push(createBearerAuthenticator(tokens, () => apiAudiences));

  const withGroup = (u: UserInfo): UserInfo =>
    u.groups.includes(AUTHENTICATED_GROUP) ? u : { ...u, groups: [...u.groups, AUTHENTICATED_GROUP] };

  return {
    authenticator: withAuthenticatedGroup(unionAuthenticator(methods)),
    anonymous,
    tokenReview: {
      async authenticate(token, audiences) {
        try {
          const res = await tokens(token, audiences.length > 0 ? audiences : apiAudiences);
          return res ? { user: withGroup(res.user), audiences: res.audiences } : null;
        } catch (err) {
          log.v(2).info('token review: token rejected', { error: (err as Error).message });
          return null;
        }
      },
    },
    apiAudiences,
    serviceAccounts: { issuers, keys, issuer: tokenIssuer, jwksUri },
    serviceAccountTokens: {
      issuer: tokenIssuer,
      apiAudiences: () => apiAudiences,
      maxExpirationSeconds: Math.floor(((v.get('service-account-max-token-expiration') as number | undefined) ?? 0) / 1000),
      extendExpiration: v.get('service-account-extend-token-expiration') !== false,
    },
    clientCAs,
    reloadConfig,
    close() {
      for (const c of closers) c();
    },
  };
}
