// Phase 2, prepare: connect to etcd and bring up everything that needs it, in dependency
// order: storage and the watch cache, the API (registry, CRDs, aggregation), the control
// loops with their post-start hooks, admission, and finally the handler. When prepare
// returns, the server only has to listen.

import { PostStartHooks } from '../http/post-start-hooks.js';
import { createMetricsHandler, defaultMetrics } from '../metrics/index.js';
import { workerMetricsSource } from '../metrics/cluster.js';
import { createStatusHandler } from '../nonresource/status-handler.js';
import type { NonResourceHandler } from '../request/non-resource.js';
import { setEncodedItemCache } from '../protobuf/item-cache.js';
import { setUnreadResponseBudget } from '../request/unread-budget.js';
import { setBodyBudget } from '../request/body-budget.js';
import type { Built } from './build.js';
import type { CompletedConfig } from './config.js';
import type { StopStack } from './lifecycle.js';
import type { ServingState } from './serving-state.js';
import { connectEtcd } from './prepare/etcd.js';
import { writeAdminKubeconfig, type LocalAccess } from './prepare/admin-kubeconfig.js';
import { startStorage } from './prepare/storage.js';
import { startApi } from './prepare/api.js';
import { startControlLoops } from './prepare/control-loops.js';
import { healthChecks } from './prepare/health.js';
import { identityLeaseName, statusSources } from './prepare/status.js';
import { issuerDiscovery } from './prepare/issuer-discovery.js';
import { startAdmission } from './prepare/admission.js';
import { buildHandler, type Handler } from './prepare/handler.js';

export interface Prepared {
  /** the etcd endpoints in use (the embedded member's, or --etcd-servers) */
  etcdEndpoints: string[];
  access: LocalAccess;
  handler: Handler;
}

export async function prepare(config: CompletedConfig, built: Built, state: ServingState, stack: StopStack): Promise<Prepared> {
  const etcd = await connectEtcd(config.storage, stack, config.serving.securePort, config.worker?.embeddedEtcdEndpoints);
  // a worker's primary wrote admin.kubeconfig
  const access = writeAdminKubeconfig(
    built.pki,
    config.storage.dataDir,
    config.serving.bindAddress,
    config.serving.securePort,
    !config.worker,
  );
  const storage = startStorage(config.storage, config.api.catalog, etcd.client, built.encryption, stack);
  const api = startApi(config, storage, built.authn, built.authz, stack);
  built.useRegistry(api.registry);

  // start-up work /readyz waits for; each hook reports as poststarthook/<name>
  const hooks = new PostStartHooks();
  const loops = await startControlLoops(config, { api, storage, etcd: etcd.client, authz: built.authz, pki: built.pki }, hooks, stack);
  const health = healthChecks({
    etcd: etcd.client,
    etcdOptions: config.storage.etcd,
    feed: storage.feed,
    encryption: built.encryption,
    hooks,
    ready: () => state.ready,
  });
  const status = statusSources(config, { resolver: api.resolver, etcd: etcd.client, storage, flowControl: loops.flowControl });
  const nonResource: NonResourceHandler[] = [
    createMetricsHandler(defaultMetrics(), config.worker ? workerMetricsSource() : undefined),
    createStatusHandler(status),
  ];
  const discovery = await issuerDiscovery(built.authn, config.serving.externalAddress);
  if (discovery) nonResource.push(discovery);
  const admission = await startAdmission(config, api.resolver, built.authz, stack);

  setUnreadResponseBudget(config.serving.maxUnreadResponseBytes);
  setBodyBudget(config.serving.maxInflightBodyBytes);
  setEncodedItemCache(config.serving.encodedItemCacheBytes);
  const handler = buildHandler(
    config,
    { built, api, admission, health, nonResource, maxInFlight: loops.maxInFlight, leaseName: identityLeaseName(config) },
    state,
  );
  return { etcdEndpoints: etcd.endpoints, access, handler };
}
