// Wires kapi together, in start-up order, and takes it apart in reverse:
//
//   catalog (--runtime-config) -> PKI -> etcd (embedded member or --etcd-servers)
//   -> etcd client -> admin.kubeconfig -> etcd3 store + compactor -> watch-cache feed
//   -> registry, discovery, OpenAPI -> controllers -> HTTPS server
//
// Shutdown (SIGTERM): /readyz starts failing, --shutdown-delay-duration passes (load
// balancers notice; the API keeps serving), the listener closes and watches end cleanly,
// requests in flight are answered, controllers stop, storage and the etcd client close, the
// embedded etcd stops.

import os from 'node:os';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { KapiConfig } from './config/flags.js';
import { resolveAdvertiseAddress } from './config/advertise.js';
import { ensurePki, type Pki, type PkiOptions } from './pki/pki.js';
import { startEmbeddedEtcd, type EmbeddedEtcd } from './etcd-embedded/embedded.js';
import { localServerURL, writeKubeconfig } from './kubeconfig/kubeconfig.js';
import { createEtcdClient } from '../storage/etcd/client.js';
import type { EtcdClient } from '../storage/etcd/types.js';
import type { Storage } from '../storage/interface.js';
import { createEtcd3Store } from '../storage/etcd3/store.js';
import { lastCompactedRevision, startCompactor } from '../storage/etcd3/compactor.js';
import { createCacheFeed } from '../storage/cacher/index.js';
import { knownGroupVersions, loadCatalog, RuntimeConfigError, type Catalog } from './apis/catalog.js';
import { startAggregator, type LocalGroupVersion, type ProxyClientCertificate } from './aggregator/index.js';
import { parseWatchCacheSizes, watchCacheEnabled } from './config/watch-cache-sizes.js';
import { loadSchemas } from './apis/schema.js';
import { OpenAPIService } from './apis/openapi.js';
import { createRegistry, keyPrefixFor } from './registry/registry.js';
import { createServiceAllocator } from './allocators/service-allocator.js';
import { startRepairLoop } from './allocators/repair.js';
import { startControllers } from './controllers/index.js';
import { createApiHandler, defaultTableConvertorFor } from './http/api-handler.js';
import { CustomResources } from './crd/controller.js';
import { withCustomResourceOpenAPI } from './crd/openapi.js';
import { namespaceLookupFrom } from './registry/namespace-lifecycle.js';
import { applyPatchTypes } from './endpoints/patch/apply.js';
import { strategicPatchTypes } from './endpoints/patch/strategic-applier.js';
import { createSecureServer } from './http/server.js';
import { PostStartHooks } from './http/post-start-hooks.js';
import { setUnreadResponseBudget } from './request/unread-budget.js';
import { createKubeletConnect } from './proxy/index.js';
import { servingTlsOptions } from './http/serving-options.js';
import { createRequestTracker } from './http/filters/in-flight.js';
import { logCheck, namedCheck, pingCheck, shutdownCheck, type HealthCheck } from './http/health.js';
import { buildAuthentication } from './authn/index.js';
import { buildAuthorization } from './authz/index.js';
import { lookupFromResolver } from './authn/object-lookup.js';
import type { Registry } from './registry/registry.js';
import { createIssuerDiscoveryHandler, issuerDiscoveryProblem } from './nonresource/oidc.js';
import type { NonResourceHandler } from './request/non-resource.js';
import { KUBERNETES_VERSION } from './config/flags.js';
import { createDiscoveryHandler } from './nonresource/discovery-handler.js';
import { createOpenAPIHandler } from './nonresource/openapi-handler.js';
import { createStatusHandler } from './nonresource/status-handler.js';
import type { StatusSources } from './nonresource/status-snapshot.js';
import { apiserverIdentityLeaseName, identityLeaseSelector, servingEndpoint } from './controllers/identity.js';
import { LeaseClient } from './controllers/leases.js';
import { createLogger } from './log.js';
import { auditorFromFlags } from './audit/config.js';
import { checkEncryptionFlags, loadEncryption, storedResources } from './encryption/index.js';
import { createMetricsHandler, defaultMetrics, instrumentStoreClient, observeHealthChecks, startMetrics } from './metrics/index.js';
import { startFlowControl } from './flowcontrol/index.js';
import type { MaxInFlightOptions } from './http/filters/max-in-flight.js';
import { buildAdmissionChain, admissionRequestOf, admissionFlagsOf, checkAdmissionFlags } from './admission/chain.js';
import { PLUGIN_FACTORIES } from './admission/plugins.js';
import { relayedLogBackend } from './audit/relay.js';
import { workerMetricsSource } from './metrics/cluster.js';
import type { WorkerRole } from './workers/role.js';

const log = createLogger('kapi');

export interface App {
  readonly config: KapiConfig;
  readonly pki: Pki;
  /** the etcd endpoints in use (the embedded member's, or --etcd-servers) */
  readonly etcdEndpoints: string[];
  /** the URL a client on this machine reaches the server at */
  readonly url: string;
  /** where admin.kubeconfig was written; undefined when the client CA is not kapi's */
  readonly kubeconfigPath?: string;
  /** this replica's identity (leader election, lease holder) */
  readonly identity: string;
  /** false once shutdown has begun: /readyz reports it */
  readonly ready: boolean;
  shutdown(reason: string): Promise<void>;
}

/** Something started that must be stopped, in reverse start order. */
interface Stoppable {
  name: string;
  stop(): Promise<void> | void;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function stopAll(started: Stoppable[]): Promise<void> {
  for (const s of [...started].reverse()) {
    try {
      await s.stop();
      log.v(1).info('stopped', { component: s.name });
    } catch (err) {
      log.error('stopping failed', { component: s.name, error: (err as Error).message });
    }
  }
}

/** Waits until etcd answers (an external cluster may still be electing a leader). */
async function waitForEtcd(client: EtcdClient, endpoints: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  for (;;) {
    try {
      const status = await client.status();
      log.info('connected to etcd', { endpoints: endpoints.join(','), version: status.version, revision: status.header.revision });
      return;
    } catch (err) {
      lastError = (err as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`etcd at ${endpoints.join(',')} did not answer within ${timeoutMs / 1000}s: ${lastError}`);
    await sleep(250);
  }
}

/** --proxy-client-cert-file and --proxy-client-key-file, both or neither */
function proxyClientCertificateFrom(values: KapiConfig['values']): ProxyClientCertificate | undefined {
  const certFile = values.get('proxy-client-cert-file');
  const keyFile = values.get('proxy-client-key-file');
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) throw new Error('--proxy-client-cert-file and --proxy-client-key-file must be given together');
  return { cert: readFileSync(path.resolve(certFile)), key: readFileSync(path.resolve(keyFile)) };
}

/** the local APIServices kube registers: built-in group versions with kube's priorities,
 *  CRD group versions with the CRD registration controller's 1000/100 */
function localGroupVersions(catalog: Catalog, customResources: { group: string; version: string }[]): LocalGroupVersion[] {
  const priorities = new Map(knownGroupVersions().map((g) => [`${g.group}/${g.version}`, g]));
  const out: LocalGroupVersion[] = [];
  const seen = new Set<string>();
  for (const gv of catalog.groupVersions()) {
    const meta = priorities.get(`${gv.group}/${gv.version}`);
    seen.add(`${gv.group}/${gv.version}`);
    out.push({ group: gv.group, version: gv.version, groupPriorityMinimum: meta?.groupPriority ?? 1000, versionPriority: meta?.versionPriority ?? 100, managed: 'onstart' });
  }
  for (const r of customResources) {
    const key = `${r.group}/${r.version}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ group: r.group, version: r.version, groupPriorityMinimum: 1000, versionPriority: 100, managed: 'true' });
  }
  return out;
}

/** what the serving flags ask of the PKI (generated pieces or the given files) */
export function pkiOptionsOf(config: KapiConfig): PkiOptions {
  return {
    certDir: config.serving.certDir,
    tlsCertFile: config.serving.tlsCertFile,
    tlsPrivateKeyFile: config.serving.tlsPrivateKeyFile,
    clientCaFile: config.serving.clientCaFile,
    advertiseAddress: config.serving.advertiseAddress,
    bindAddress: config.serving.bindAddress,
    kubernetesServiceIP: config.kubernetesServiceIP,
    extraSans: config.serving.extraSans,
  };
}

/** `worker`: this process is one worker of a --workers replica, whose primary wrote the PKI
 *  and admin.kubeconfig, runs the embedded etcd, writes the audit log and merges /metrics */
export async function startApp(config: KapiConfig, worker?: WorkerRole): Promise<App> {
  const started: Stoppable[] = [];
  // start-up work after listening; each hook reports as /readyz's poststarthook/<name>
  const postStartHooks = new PostStartHooks();
  const identity = `kapi-${os.hostname()}-${randomUUID()}`;
  const advertiseAddress = resolveAdvertiseAddress(config.serving.advertiseAddress, config.serving.bindAddress);
  let ready = false;
  // bad admission plugin names fail before anything starts, as kube's option validation does
  checkAdmissionFlags(admissionFlagsOf(config.values));
  // the catalog first: a bad --runtime-config should fail before anything starts
  let catalog;
  try {
    catalog = loadCatalog({ runtimeConfig: config.runtimeConfig, featureEnabled: (gate) => config.featureGates.enabled(gate) });
  } catch (err) {
    if (err instanceof RuntimeConfigError) throw new Error(`--runtime-config: ${err.message}`);
    throw err;
  }
  let watchCacheSizes;
  try {
    watchCacheSizes = parseWatchCacheSizes(config.values.get('watch-cache-sizes'));
  } catch (err) {
    throw new Error(`--watch-cache-sizes: ${(err as Error).message}`);
  }
  const defaultWatchCacheSize = config.values.get('default-watch-cache-size');
  // encryption at rest: a bad --encryption-provider-config ends start-up before anything starts
  const encryptionConfigPath = config.values.get('encryption-provider-config');
  const encryptionReload = config.values.get('encryption-provider-config-automatic-reload') === true;
  checkEncryptionFlags(encryptionConfigPath, encryptionReload);
  const encryption = encryptionConfigPath
    ? loadEncryption({
        path: path.resolve(encryptionConfigPath),
        automaticReload: encryptionReload,
        resources: storedResources(catalog.resources()),
        onReload: ({ hash }) => {
          log.info('loaded a new encryption provider configuration', { path: encryptionConfigPath, hash });
          defaultMetrics().recordConfigReload('encryption', 'success', identity);
        },
        onReloadError: (err) => {
          log.error('encryption provider configuration not reloaded', { error: err.message });
          defaultMetrics().recordConfigReload('encryption', 'failure', identity);
        },
      })
    : undefined;
  if (encryption) started.push({ name: 'encryption config reload', stop: () => encryption.stop() });
  // --audit-*: a bad policy file or backend flag fails start-up before anything starts
  const auditor = auditorFromFlags(config.rawValues, log.named('audit'), worker ? relayedLogBackend() : undefined);
  try {
    // the audit backends stop last, after the server's final events
    if (auditor) started.push({ name: 'audit backends', stop: () => auditor.backend.shutdown() });
    // --- PKI -------------------------------------------------------------------------
    const pki = await ensurePki(pkiOptionsOf(config));

    // --- authentication (before anything starts: bad flags or files end start-up here) ---
    // the registry comes later; service account and bootstrap token lookups read it then
    let registryRef: Registry | undefined;
    const authn = buildAuthentication({
      values: config.rawValues,
      explicitlySet: config.explicitlySet,
      resolvePath: (p) => path.resolve(p),
      clientCaPem: pki.clientCaPem,
      generatedServiceAccountKeyPem: pki.serviceAccountKeyPem,
      generatedServiceAccountPublicKeyPem: pki.serviceAccountPublicKeyPem,
      tlsPrivateKeyFile: config.serving.tlsPrivateKeyFile,
      lookup: lookupFromResolver(() => registryRef),
      onConfigReload: (status) => defaultMetrics().recordConfigReload('authentication', status, identity),
    });
    started.push({ name: 'authentication', stop: () => authn.close() });
    // --authorization-mode / --authorization-config: bad flags or files end start-up here too
    const authz = buildAuthorization({
      values: config.rawValues,
      explicitlySet: config.explicitlySet,
      resolvePath: (p) => path.resolve(p),
      onConfigReload: (status) => defaultMetrics().recordConfigReload('authorization', status, identity),
    });
    started.push({ name: 'authorization', stop: () => authz.close() });
    log.info('authorization', { authorizers: authz.describe.join(',') });

    // --- etcd ------------------------------------------------------------------------
    let etcdEndpoints = config.etcd.servers;
    if (etcdEndpoints.length === 0 && worker?.embeddedEtcdEndpoints) {
      etcdEndpoints = worker.embeddedEtcdEndpoints;
    } else if (etcdEndpoints.length === 0) {
      const embedded: EmbeddedEtcd = await startEmbeddedEtcd({ dataDir: config.dataDir });
      started.push({ name: 'embedded etcd', stop: () => embedded.stop() });
      etcdEndpoints = [embedded.endpoint];
    }
    const etcd = createEtcdClient({
      endpoints: etcdEndpoints,
      caFile: config.etcd.caFile || undefined,
      certFile: config.etcd.certFile || undefined,
      keyFile: config.etcd.keyFile || undefined,
    });
    started.push({ name: 'etcd client', stop: () => etcd.close() });
    await waitForEtcd(etcd, etcdEndpoints, 60_000);

    // --- admin.kubeconfig ---------------------------------------------------------------
    const url = localServerURL(config.serving.bindAddress, config.serving.securePort);
    let kubeconfigPath: string | undefined;
    if (pki.admin) {
      kubeconfigPath = path.join(config.dataDir, 'admin.kubeconfig');
      if (!worker) writeKubeconfig(kubeconfigPath, {
        server: url,
        caPem: pki.servingCaPem,
        clientCertPem: pki.admin.certPem,
        clientKeyPem: pki.admin.keyPem,
      });
    }

    // --- storage and the watch cache -------------------------------------------------
    // the store's etcd calls are timed for etcd_request_duration_seconds
    const store = createEtcd3Store(instrumentStoreClient(etcd, config.etcd.prefix, catalog.resources()), {
      prefix: config.etcd.prefix,
      leaseReuseDurationSeconds: config.values.get('lease-reuse-duration-seconds'),
      transformers: encryption?.transformers,
      storageFormat: config.featureGates.enabled('CBORServingAndStorage') ? 'cbor' : 'json',
    });
    started.push({ name: 'etcd3 store', stop: () => store.close() });
    const compactor = startCompactor(etcd, {
      prefix: config.etcd.prefix,
      intervalMs: config.etcd.compactionIntervalMs,
      onRound: (round) => {
        if (round.won && round.compacted > 0) log.v(1).info('compacted etcd', { revision: round.compacted });
      },
      onError: (err) => log.warn('etcd compaction round failed', { error: (err as Error).message }),
    });
    started.push({ name: 'compactor', stop: () => compactor.stop() });
    const useWatchCache = config.values.get('watch-cache') !== false;
    const feed = useWatchCache ? createCacheFeed(etcd, store, { prefix: config.etcd.prefix, transformers: encryption?.transformers }) : undefined;
    if (feed) started.push({ name: 'watch cache', stop: () => feed.close() });
    // the API names (`resource[.group]`) of each storage prefix, for --watch-cache-sizes
    const apiNamesByPrefix = new Map<string, Set<string>>();
    for (const info of catalog.resources()) {
      const prefix = keyPrefixFor(info);
      if (!apiNamesByPrefix.has(prefix)) apiNamesByPrefix.set(prefix, new Set());
      apiNamesByPrefix.get(prefix)!.add(info.group ? `${info.resource}.${info.group}` : info.resource);
    }
    const storageFor = (keyPrefix: string): Storage =>
      feed && watchCacheEnabled(apiNamesByPrefix.get(keyPrefix) ?? [], watchCacheSizes, defaultWatchCacheSize) ? feed.cacherFor(keyPrefix) : store;

    // --- the API: catalog, registry, discovery, OpenAPI -----------------------------------
    // ClusterIPs and node ports: IPAddress objects (through the same cache as the API's) and
    // node port keys, all in etcd, so every replica allocates from one shared state
    const serviceIPAllocator = createServiceAllocator({
      serviceClusterIPRange: config.values.get('service-cluster-ip-range'),
      serviceNodePortRange: config.serviceNodePortRange,
      ipAddresses: storageFor(keyPrefixFor({ group: 'networking.k8s.io', resource: 'ipaddresses' })),
      nodePorts: store,
    });
    const registry = createRegistry({
      resources: catalog.resources(),
      storageFor,
      serviceIPAllocator,
      tokenAuthenticator: authn.tokenReview,
      serviceAccountTokens: authn.serviceAccountTokens,
      authorizer: authz.reviews,
      rulesResolver: authz.rules,
      rbacEscalation: authz.escalation,
      // whole seconds, as kube-apiserver hands the events store uint64(EventTTL.Seconds())
      eventTTLSeconds: Math.max(0, Math.floor((config.values.get('event-ttl')) / 1000)),
      garbageCollection: config.values.get('enable-garbage-collector') !== false,
      deleteCollectionWorkers: config.values.get('delete-collection-workers'),
    });
    registryRef = registry;
    // custom resources served from CRDs, followed on every replica; looked up after the built-ins
    const customResources = new CustomResources({ builtins: registry, storageFor, namespaces: namespaceLookupFrom(storageFor('/namespaces')), log: log.named('crd') });
    const crdStop = new AbortController();
    started.push({ name: 'custom resources', stop: () => crdStop.abort() });
    const crdsListed = customResources.start(crdStop.signal);
    postStartHooks.add('crd-informer-synced', crdsListed);
    const apiResolver = customResources.resolver();
    // the aggregation layer: APIServices followed here, their group versions proxied
    const aggregator = startAggregator({
      resolver: apiResolver,
      identity,
      log: log.named('aggregator'),
      proxyClientCertificate: proxyClientCertificateFrom(config.values),
      localGroupVersions: () => localGroupVersions(catalog, customResources.resources()),
      onLocalChange: (listener) => customResources.onChange(listener),
      localSynced: crdsListed,
    });
    started.push({ name: 'aggregator', stop: () => aggregator.stop() });
    // /metrics: requests to served resources, in-flight watermarks, object counts
    const metricsRun = startMetrics({
      resources: catalog.resources(),
      resolver: registry,
      storageFor,
      countPollPeriodMs: config.values.get('etcd-count-metric-poll-period'),
      featureGates: config.featureGates.states(),
      showHiddenMetrics: config.values.get('show-hidden-metrics-for-version') !== '',
      disabledMetrics: config.values.get('disabled-metrics') as string[],
    });
    started.push({ name: 'metrics', stop: () => metricsRun.stop() });
    // RBAC's and Node's caches, and the default RBAC policy (every start, every replica)
    const authzStop = new AbortController();
    const authzRun = authz.start(registry, authzStop.signal);
    started.push({ name: 'authorization caches', stop: () => authzStop.abort() });
    postStartHooks.add('rbac/bootstrap-roles', authzRun.rbacBootstrapped);
    // API Priority and Fairness: the bootstrap FlowSchemas and priority levels (every replica),
    // followed by watch; off: the classic max-in-flight limits
    const maxReadOnly = config.values.get('max-requests-inflight');
    const maxMutating = config.values.get('max-mutating-requests-inflight');
    const flowControl =
      config.values.get('enable-priority-and-fairness') !== false
        ? startFlowControl({
            resolver: registry,
            log: createLogger('flowcontrol'),
            serverConcurrencyLimit: maxReadOnly + maxMutating,
            // kube: a request may wait in a queue for a quarter of its timeout
            maxQueueWaitMs: (config.values.get('request-timeout')) / 4,
          })
        : undefined;
    if (flowControl) started.push({ name: 'priority and fairness', stop: () => flowControl.stop() });
    postStartHooks.add('priority-and-fairness-config-producer', flowControl?.bootstrapped ?? Promise.resolve());
    const maxInFlight: MaxInFlightOptions = flowControl
      ? { kind: 'priority-and-fairness', controller: flowControl.controller }
      : { kind: 'max-in-flight', readOnlyLimit: maxReadOnly, mutatingLimit: maxMutating };
    // Services written without allocation objects get them before anyone can be handed
    // their addresses; leftovers of crashed writes are freed later (every replica may run it)
    const allocationRepair = startRepairLoop({ allocator: serviceIPAllocator, storage: store });
    started.push({ name: 'service allocation repair', stop: () => allocationRepair.stop() });
    await allocationRepair.firstPass;
    const openapi = new OpenAPIService(catalog, loadSchemas(), { serverVersion: KUBERNETES_VERSION });
    const hostPort = (host: string): string => (host.includes(':') ? `[${host}]` : host) + `:${config.serving.securePort}`;

    // --- controllers ------------------------------------------------------------------
    const controllers = startControllers({
      resolver: apiResolver,
      etcd,
      prefix: config.etcd.prefix,
      serviceClusterIPRange: config.values.get('service-cluster-ip-range'),
      advertiseAddress,
      securePort: config.serving.securePort,
      identity,
      workerIndex: worker?.index,
    }, { rootCaPem: pki.servingCaPem, garbageCollector: config.values.get('enable-garbage-collector') !== false,
      endpointReconciler: config.values.get('endpoint-reconciler-type') as 'lease' | 'master-count' | 'none',
      apiServerIdentity: config.featureGates.enabled('APIServerIdentity'),
    });
    started.push({ name: 'controllers', stop: () => controllers.stop() });
    postStartHooks.add('bootstrap-controller', controllers.bootstrapped);
    void controllers.bootstrapped.then(() => log.info('bootstrap done: system namespaces and the kubernetes Service exist'));

    // --- health checks ----------------------------------------------------------------
    const etcdCheck = (name: string, timeoutMs: number): HealthCheck =>
      namedCheck(name, async () => {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            etcd.status(),
            new Promise((_, reject) => {
              timer = setTimeout(() => reject(new Error(`etcd did not answer within ${timeoutMs}ms`)), timeoutMs);
            }),
          ]);
        } finally {
          clearTimeout(timer);
        }
      });
    const bootstrapCheck = postStartHooks.check('bootstrap-controller');
    const cacheCheck = namedCheck('watch-cache', async () => {
      if (feed && !feed.synced) throw new Error('watch cache not synced yet');
    });
    const liveChecks = [pingCheck, logCheck, etcdCheck('etcd', config.etcd.healthcheckTimeoutMs), bootstrapCheck];
    // with --encryption-provider-config-automatic-reload kube-apiserver adds its reload hook
    // everywhere and a `kms-providers` check (no KMS here: it passes) to healthz and readyz
    const passing = (names: string[] = []): HealthCheck[] => names.map((n) => namedCheck(n, async () => {}));
    liveChecks.push(...passing(encryption?.checkNames.all));
    const kmsChecks = passing(encryption?.checkNames.healthzAndReadyz);

    // --- /status: gathered only when someone looks -----------------------------------------
    const leaseName = apiserverIdentityLeaseName(os.hostname(), servingEndpoint(advertiseAddress, config.serving.securePort, worker?.index));
    const statusLeases = new LeaseClient(apiResolver, 'kube-apiserver');
    const metrics = defaultMetrics();
    const sumOf = async (m: { get(): Promise<{ values: { value: number }[] }> }): Promise<number> => (await m.get()).values.reduce((n, v) => n + v.value, 0);
    const statusSources: StatusSources = {
      identity,
      leaseName,
      version: KUBERNETES_VERSION,
      startedAt: new Date(Date.now() - process.uptime() * 1000),
      identityLeases: () => statusLeases.list(identityLeaseSelector),
      requests: async () => ({
        inFlight: { readOnly: metrics.inflight.readOnly, mutating: metrics.inflight.mutating },
        longRunning: await sumOf(metrics.longRunning),
        total: await sumOf(metrics.requestTotal),
      }),
      watchCache: feed
        ? {
            revision: () => feed.revision(),
            stats: () => feed.feed.cacheStats(),
            resourceNameOf: (prefix) => [...(apiNamesByPrefix.get(prefix) ?? apiNamesByPrefix.get(prefix.replace(/\/$/, '')) ?? [prefix])].join(', '),
          }
        : undefined,
      priorityLevels: flowControl ? () => flowControl.controller.levelsStatus() : undefined,
      etcd: {
        memberList: () => etcd.memberList(),
        endpointStatuses: (timeoutMs) => etcd.endpointStatuses?.(timeoutMs) ?? Promise.resolve([]),
        compactedRevision: () => lastCompactedRevision(etcd, config.etcd.prefix),
      },
    };

    // --- service account issuer discovery ----------------------------------------------
    const nonResource: NonResourceHandler[] = [createMetricsHandler(defaultMetrics(), worker ? workerMetricsSource() : undefined), createStatusHandler(statusSources)];
    const externalAddress = (config.values.get('external-hostname')) || hostPort(advertiseAddress);
    const discoveryOptions = {
      issuer: authn.serviceAccounts.issuers[0]!,
      jwksUri: authn.serviceAccounts.jwksUri,
      externalAddress,
      keys: authn.serviceAccounts.keys,
    };
    const discoveryProblem = issuerDiscoveryProblem(discoveryOptions);
    if (discoveryProblem) {
      log.warn('service account issuer discovery endpoints are not served', { reason: discoveryProblem });
    } else {
      nonResource.push(await createIssuerDiscoveryHandler(discoveryOptions));
    }

    // --- admission: the plugins in kube's order, each request gets the chain's hooks -----
    const admissionStop = new AbortController();
    started.push({ name: 'admission', stop: () => admissionStop.abort() });
    const admissionLog = log.named('admission');
    const admission = await buildAdmissionChain({
      flags: admissionFlagsOf(config.values),
      configFile: config.values.get('admission-control-config-file'),
      factories: PLUGIN_FACTORIES,
      deps: {
        // custom resources too: webhooks and policies match them, params may be custom objects
        resolver: apiResolver,
        signal: admissionStop.signal,
        featureGates: config.featureGates.toRecord(),
        log: (level, message, fields) => admissionLog[level](message, fields as Parameters<typeof admissionLog.info>[1]),
        authorizer: authz.reviews,
        flag: (name) => config.rawValues.get(name),
      },
    });

    // --- HTTPS ------------------------------------------------------------------------
    const endWatches = new AbortController();
    const requestTimeoutMs = config.values.get('request-timeout');
    setUnreadResponseBudget((config.values.get('max-unread-response-mib')) * 1024 * 1024);
    // graceful shutdown waits for these; --shutdown-send-retry-after answers 429 meanwhile
    const tracker = createRequestTracker();
    const sendRetryAfter = config.values.get('shutdown-send-retry-after') === true;
    const watchGraceMs = config.values.get('shutdown-watch-termination-grace-period');
    let rejectingNewRequests = false;
    const discoveryCatalog = aggregator.discoveryCatalog(customResources.catalog(catalog));
    const handler = createApiHandler({
      serving: {
        requestTimeoutMs,
        corsAllowedOrigins: config.values.get('cors-allowed-origins'),
        hstsDirectives: config.values.get('strict-transport-security-directives'),
        goawayChance: config.values.get('goaway-chance'),
        responseCompression: config.featureGates.enabled('APIResponseCompression'),
        cbor: config.featureGates.enabled('CBORServingAndStorage'),
        authorizeWithSelectors: config.featureGates.enabled('AuthorizeWithSelectors'),
        rejectingNewRequests: sendRetryAfter ? () => rejectingNewRequests : undefined,
        tracker,
        onPostTimeoutError: (err) => log.v(1).info('post-timeout activity failed', { error: err instanceof Error ? err.message : String(err) }),
      },
      resolver: apiResolver,
      watchListEnabled: config.featureGates.enabled('WatchList'),
      allowUnsafeMalformedObjectDeletion: config.featureGates.enabled('AllowUnsafeMalformedObjectDeletion'),
      discovery: aggregator.withDiscovery(
        createDiscoveryHandler({ catalog: discoveryCatalog, serverAddress: hostPort(advertiseAddress), generation: () => customResources.generation + aggregator.generation }),
        () => discoveryCatalog,
        () => customResources.generation,
      ),
      delegateFor: (path) => aggregator.handlerFor(path),
      tableConvertorFor: (r) => customResources.tableConvertorFor(r) ?? defaultTableConvertorFor(r),
      openapi: aggregator.withOpenAPI(
        withCustomResourceOpenAPI(createOpenAPIHandler(openapi), () => customResources.servedCRDs(), () => customResources.generation),
        () => customResources.generation,
      ),
      patchTypes: new Map([...strategicPatchTypes(), ...applyPatchTypes()]),
      nonResource,
      authenticator: authn.authenticator,
      anonymous: authn.anonymous,
      authorizer: authz.authorizer,
      minRequestTimeoutSeconds: config.values.get('min-request-timeout'),
      shutdownSignal: endWatches.signal,
      health: {
        livez: observeHealthChecks('livez', liveChecks),
        healthz: observeHealthChecks('healthz', [...liveChecks, ...kmsChecks]),
        readyz: observeHealthChecks('readyz', [
          pingCheck,
          logCheck,
          etcdCheck('etcd', config.etcd.healthcheckTimeoutMs),
          etcdCheck('etcd-readiness', config.etcd.readycheckTimeoutMs),
          cacheCheck,
          ...kmsChecks,
          ...passing(encryption?.checkNames.all),
          ...postStartHooks.checks(),
          shutdownCheck(() => !ready),
        ]),
        livezGracePeriodSeconds: config.livezGracePeriodMs / 1000,
        onFailure: (endpoint, name, err) => log.v(1).info('health check failed', { endpoint, check: name, error: (err as Error)?.message }),
      },
      onPanic: (err) => log.error('request handler failed', { error: err instanceof Error ? err.stack ?? err.message : String(err) }),
      onAuthenticationFailure: (err) => log.v(2).info('authentication failed', { error: (err as Error)?.message }),
      maxInFlight,
      auditor,
      admissionFor: (state) => admission.hooksFor(admissionRequestOf(state)),
      connect: createKubeletConnect(
        {
          clientCertificate: config.values.get('kubelet-client-certificate'),
          clientKey: config.values.get('kubelet-client-key'),
          certificateAuthority: config.values.get('kubelet-certificate-authority'),
          preferredAddressTypes: config.values.get('kubelet-preferred-address-types'),
          timeoutMs: config.values.get('kubelet-timeout'),
          allowLoopbackTargets: config.values.get('allow-loopback-proxy-targets'),
        },
        apiResolver,
      ),
      // whoever may read /metrics may read /status (system:monitoring, admins)
      authorizationAliases: new Map([['/status', '/metrics'], ['/status/', '/metrics']]),
      replicaName: config.values.get('replica-response-header') === true ? leaseName : undefined,
    });
    const server = createSecureServer({
      cert: pki.servingCertPem,
      key: pki.servingKeyPem,
      clientCA: authn.clientCAs,
      handler,
      ...servingTlsOptions(config.rawValues, (p) => path.resolve(p)),
    });
    const address = await server.listen(config.serving.securePort, config.serving.bindAddress);
    // first to stop (after --shutdown-delay-duration): the listener closes, every watch ends
    // cleanly (its client resumes on another replica from its last resourceVersion), the
    // requests in flight are answered within --request-timeout, then the connections close
    started.push({
      name: 'https server',
      stop: async () => {
        // with a grace period the watches are ended one after another within it (kube's
        // rate), and cut when it is over; without, all end at once
        const endOpenWatches = async (): Promise<void> => {
          if (watchGraceMs > 0) await tracker.endWatches(watchGraceMs);
          endWatches.abort();
        };
        if (sendRetryAfter) {
          // kube-apiserver's order: keep listening, answer new requests 429, let the requests
          // in flight finish and the watches end, then close quickly
          rejectingNewRequests = true;
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            Promise.all([tracker.nonLongRunningDrained(), endOpenWatches()]),
            new Promise<void>((r) => (timer = setTimeout(r, requestTimeoutMs))),
          ]);
          clearTimeout(timer);
          await server.close(2000);
          return;
        }
        const closing = server.close(requestTimeoutMs);
        await endOpenWatches();
        await closing;
      },
    });
    log.info('serving securely', { address: `${hostPort(address.address)}` });

    ready = true;
    log.info('kapi is ready', { url, advertiseAddress, kubeconfig: kubeconfigPath });
    if (kubeconfigPath) {
      const rel = path.relative(process.cwd(), kubeconfigPath);
      log.info(`try: kubectl --kubeconfig ${rel.startsWith('..') ? kubeconfigPath : rel} get ns`);
    }

    let stopping: Promise<void> | undefined;
    const app: App = {
      config,
      pki,
      etcdEndpoints,
      url,
      kubeconfigPath,
      identity,
      get ready() {
        return ready;
      },
      shutdown(reason: string) {
        stopping ??= (async () => {
          log.info('shutting down', { reason, shutdownDelay: `${config.shutdownDelayMs}ms` });
          ready = false;
          if (config.shutdownDelayMs > 0) await sleep(config.shutdownDelayMs);
          await stopAll(started);
          log.info('kapi stopped');
        })();
        return stopping;
      },
    };
    return app;
  } catch (err) {
    await stopAll(started);
    throw err;
  }
}
