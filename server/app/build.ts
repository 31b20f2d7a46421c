// Phase 1, build: what the server is made of that needs no etcd. Files are read (encryption,
// audit policy, keys, authentication and authorization configuration, SNI certificates) and
// the PKI is generated when missing; nothing connects anywhere. Bad files end start-up here.

import path from 'node:path';
import { auditorFromFlags, type Auditor } from '../audit/config.js';
import { relayedLogBackend } from '../audit/relay.js';
import { buildAuthentication, type Authentication } from '../authn/index.js';
import { lookupFromResolver } from '../authn/object-lookup.js';
import { buildAuthorization, type Authorization } from '../authz/index.js';
import { loadEncryption, storedResources, type Encryption } from '../encryption/index.js';
import { defaultMetrics } from '../metrics/index.js';
import { ensurePki, type Pki } from '../pki/pki.js';
import { OpenAPIService } from '../apis/openapi.js';
import { servingTlsOptions, type ServingTlsOptions } from '../http/serving-options.js';
import { loadSchemas } from '../apis/schema.js';
import { KUBERNETES_VERSION } from '../config/flags.js';
import type { Registry } from '../registry/registry.js';
import { createLogger } from '../log.js';
import type { CompletedConfig } from './config.js';
import type { StopStack } from './lifecycle.js';

const log = createLogger('kapi');

export interface Built {
  encryption?: Encryption;
  auditor?: Auditor;
  pki: Pki;
  authn: Authentication;
  authz: Authorization;
  openapi: OpenAPIService;
  /** TLS versions, cipher suites, SNI certificates (read from their files) and HTTP/2 streams */
  tls: ServingTlsOptions;
  /** service account and bootstrap token lookups read the registry, which prepare makes */
  useRegistry(registry: Registry): void;
}

function buildEncryption(config: CompletedConfig): Encryption | undefined {
  const { configFile, automaticReload } = config.storage.encryption;
  if (!configFile) return undefined;
  return loadEncryption({
    path: path.resolve(configFile),
    automaticReload,
    resources: storedResources(config.api.catalog.resources()),
    onReload: ({ hash }) => {
      log.info('loaded a new encryption provider configuration', { path: configFile, hash });
      defaultMetrics().recordConfigReload('encryption', 'success', config.identity);
    },
    onReloadError: (err) => {
      log.error('encryption provider configuration not reloaded', { error: err.message });
      defaultMetrics().recordConfigReload('encryption', 'failure', config.identity);
    },
  });
}

export async function build(config: CompletedConfig, stack: StopStack): Promise<Built> {
  const encryption = buildEncryption(config);
  if (encryption) stack.push('encryption config reload', () => encryption.stop());
  const auditor = auditorFromFlags(config.subsystemFlags.values, log.named('audit'), config.worker ? relayedLogBackend() : undefined);
  // the audit backends stop last, after the server's final events
  if (auditor) stack.push('audit backends', () => auditor.backend.shutdown());
  const pki = await ensurePki(config.pki);

  let registry: Registry | undefined;
  const authn = buildAuthentication({
    values: config.subsystemFlags.values,
    explicitlySet: config.subsystemFlags.explicitlySet,
    resolvePath: (p) => path.resolve(p),
    clientCaPem: pki.clientCaPem,
    generatedServiceAccountKeyPem: pki.serviceAccountKeyPem,
    generatedServiceAccountPublicKeyPem: pki.serviceAccountPublicKeyPem,
    tlsPrivateKeyFile: config.pki.tlsPrivateKeyFile,
    lookup: lookupFromResolver(() => registry),
    onConfigReload: (status) => defaultMetrics().recordConfigReload('authentication', status, config.identity),
  });
  stack.push('authentication', () => authn.close());
  const authz = buildAuthorization({
    values: config.subsystemFlags.values,
    explicitlySet: config.subsystemFlags.explicitlySet,
    resolvePath: (p) => path.resolve(p),
    onConfigReload: (status) => defaultMetrics().recordConfigReload('authorization', status, config.identity),
  });
  stack.push('authorization', () => authz.close());
  log.info('authorization', { authorizers: authz.describe.join(',') });

  return {
    encryption,
    auditor,
    pki,
    authn,
    authz,
    openapi: new OpenAPIService(config.api.catalog, loadSchemas(), { serverVersion: KUBERNETES_VERSION }),
    tls: servingTlsOptions(config.subsystemFlags.values, (p) => path.resolve(p)),
    useRegistry: (r) => {
      registry = r;
    },
  };
}
