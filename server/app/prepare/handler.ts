// The handler: the router and the handler chain over the API, discovery, OpenAPI, the
// aggregation layer, the non-resource endpoints, admission and the connect subresources.

import { admissionRequestOf, type AdmissionChain } from '../../admission/chain.js';
import { withCustomResourceOpenAPI } from '../../crd/openapi.js';
import { applyPatchTypes } from '../../endpoints/patch/apply.js';
import { strategicPatchTypes } from '../../endpoints/patch/strategic-applier.js';
import { createApiHandler, defaultTableConvertorFor } from '../../http/api-handler.js';
import type { MaxInFlightOptions } from '../../http/filters/max-in-flight.js';
import { observeHealthChecks } from '../../metrics/index.js';
import { createDiscoveryHandler } from '../../nonresource/discovery-handler.js';
import { createOpenAPIHandler } from '../../nonresource/openapi-handler.js';
import { createKubeletConnect } from '../../proxy/index.js';
import type { NonResourceHandler } from '../../request/non-resource.js';
import { createLogger } from '../../log.js';
import type { Built } from '../build.js';
import type { CompletedConfig } from '../config.js';
import { hostPort } from '../options/serving.js';
import type { ServingState } from '../serving-state.js';
import type { ServedApi } from './api.js';
import type { HealthChecks } from './health.js';

const log = createLogger('kapi');

export type Handler = ReturnType<typeof createApiHandler>;

export interface HandlerParts {
  built: Built;
  api: ServedApi;
  admission: AdmissionChain;
  health: HealthChecks;
  nonResource: NonResourceHandler[];
  maxInFlight: MaxInFlightOptions;
  /** this replica's identity Lease, for --replica-response-header */
  leaseName: string;
}

export function buildHandler(config: CompletedConfig, parts: HandlerParts, state: ServingState): Handler {
  const { built, api, health } = parts;
  const { aggregator, customResources } = api;
  const serving = config.serving;
  const catalog = config.api.catalog;
  const discoveryCatalog = aggregator.discoveryCatalog(customResources.catalog(catalog));
  const serverAddress = hostPort(serving.advertiseAddress, serving.securePort);
  return createApiHandler({
    serving: {
      requestTimeoutMs: serving.requestTimeoutMs,
      corsAllowedOrigins: serving.corsAllowedOrigins,
      hstsDirectives: serving.hstsDirectives,
      goawayChance: serving.goawayChance,
      responseCompression: serving.features.responseCompression,
      cbor: serving.features.cbor,
      authorizeWithSelectors: serving.features.authorizeWithSelectors,
      rejectingNewRequests: serving.shutdown.sendRetryAfter ? () => state.rejectingNewRequests : undefined,
      tracker: state.tracker,
      onPostTimeoutError: (err) =>
        log.v(1).info('post-timeout activity failed', { error: err instanceof Error ? err.message : String(err) }),
    },
    resolver: api.resolver,
    watchListEnabled: serving.features.watchList,
    allowUnsafeMalformedObjectDeletion: serving.features.allowUnsafeMalformedObjectDeletion,
    discovery: aggregator.withDiscovery(
      createDiscoveryHandler({
        catalog: discoveryCatalog,
        serverAddress,
        generation: () => customResources.generation + aggregator.generation,
      }),
      () => discoveryCatalog,
      () => customResources.generation,
    ),
    delegateFor: (path) => aggregator.handlerFor(path),
    tableConvertorFor: (r) => customResources.tableConvertorFor(r) ?? defaultTableConvertorFor(r),
    openapi: aggregator.withOpenAPI(
      withCustomResourceOpenAPI(
        createOpenAPIHandler(built.openapi),
        () => customResources.servedCRDs(),
        () => customResources.generation,
      ),
      () => customResources.generation,
    ),
    patchTypes: new Map([...strategicPatchTypes(), ...applyPatchTypes()]),
    nonResource: parts.nonResource,
    authenticator: built.authn.authenticator,
    anonymous: built.authn.anonymous,
    authorizer: built.authz.authorizer,
    minRequestTimeoutSeconds: serving.minRequestTimeoutSeconds,
    shutdownSignal: state.endWatches.signal,
    health: {
      livez: observeHealthChecks('livez', health.livez),
      healthz: observeHealthChecks('healthz', health.healthz),
      readyz: observeHealthChecks('readyz', health.readyz),
      livezGracePeriodSeconds: serving.livezGracePeriodMs / 1000,
      onFailure: (endpoint, name, err) => log.v(1).info('health check failed', { endpoint, check: name, error: (err as Error)?.message }),
    },
    onPanic: (err) => log.error('request handler failed', { error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
    onAuthenticationFailure: (err) => log.v(2).info('authentication failed', { error: (err as Error)?.message }),
    maxInFlight: parts.maxInFlight,
    auditor: built.auditor,
    admissionFor: (req) => parts.admission.hooksFor(admissionRequestOf(req)),
    connect: createKubeletConnect(config.kubelet, api.resolver),
    // whoever may read /metrics may read /status (system:monitoring, admins)
    authorizationAliases: new Map([
      ['/status', '/metrics'],
      ['/status/', '/metrics'],
    ]),
    replicaName: serving.replicaResponseHeader ? parts.leaseName : undefined,
  });
}
