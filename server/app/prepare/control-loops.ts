// What runs in the background on every replica once the API exists: /metrics, the
// authorizers' caches with the default RBAC policy, API Priority and Fairness, the Service
// allocation repair and the controllers. Each start-up task that /readyz waits for is a
// named post-start hook.

import type { EtcdClient } from '../../../storage/etcd/types.js';
import type { Pki } from '../../pki/pki.js';
import type { Authorization } from '../../authz/index.js';
import { startMetrics } from '../../metrics/index.js';
import { startFlowControl, type RunningFlowControl } from '../../flowcontrol/index.js';
import type { MaxInFlightOptions } from '../../http/filters/max-in-flight.js';
import type { PostStartHooks } from '../../http/post-start-hooks.js';
import { startRepairLoop } from '../../allocators/repair.js';
import { startControllers } from '../../controllers/index.js';
import { createLogger } from '../../log.js';
import type { CompletedConfig } from '../config.js';
import type { StopStack } from '../lifecycle.js';
import type { ServedApi } from './api.js';
import type { StorageLayer } from './storage.js';

const log = createLogger('kapi');

export interface ControlLoops {
  /** undefined with --enable-priority-and-fairness=false */
  flowControl?: RunningFlowControl;
  maxInFlight: MaxInFlightOptions;
}

function startMaxInFlight(config: CompletedConfig, api: ServedApi, hooks: PostStartHooks, stack: StopStack): ControlLoops {
  const options = config.flowControl;
  if (options.kind === 'max-in-flight') {
    hooks.add('priority-and-fairness-config-producer', Promise.resolve());
    return { maxInFlight: options };
  }
  // the bootstrap FlowSchemas and priority levels (every replica), followed by watch
  const flowControl = startFlowControl({
    resolver: api.registry,
    log: createLogger('flowcontrol'),
    serverConcurrencyLimit: options.serverConcurrencyLimit,
    maxQueueWaitMs: options.maxQueueWaitMs,
  });
  stack.push('priority and fairness', () => flowControl.stop());
  hooks.add('priority-and-fairness-config-producer', flowControl.bootstrapped);
  return { flowControl, maxInFlight: { kind: 'priority-and-fairness', controller: flowControl.controller } };
}

export async function startControlLoops(
  config: CompletedConfig,
  deps: { api: ServedApi; storage: StorageLayer; etcd: EtcdClient; authz: Authorization; pki: Pki },
  hooks: PostStartHooks,
  stack: StopStack,
): Promise<ControlLoops> {
  const { api, storage, authz } = deps;
  hooks.add('crd-informer-synced', api.crdsListed);
  // /metrics: requests to served resources, in-flight watermarks, object counts
  const metricsRun = startMetrics({
    resources: config.api.catalog.resources(),
    resolver: api.registry,
    storageFor: storage.storageFor,
    countPollPeriodMs: config.metrics.countPollPeriodMs,
    featureGates: config.featureGates.states(),
    showHiddenMetrics: config.metrics.showHiddenMetrics,
    disabledMetrics: config.metrics.disabledMetrics,
  });
  stack.push('metrics', () => metricsRun.stop());
  // RBAC's and Node's caches, and the default RBAC policy (every start, every replica)
  const authzStop = new AbortController();
  const authzRun = authz.start(api.registry, authzStop.signal);
  stack.push('authorization caches', () => authzStop.abort());
  hooks.add('rbac/bootstrap-roles', authzRun.rbacBootstrapped);
  const loops = startMaxInFlight(config, api, hooks, stack);
  // Services written without allocation objects get them before anyone can be handed
  // their addresses; leftovers of crashed writes are freed later (every replica may run it)
  const allocationRepair = startRepairLoop({ allocator: api.serviceIPAllocator, storage: storage.store });
  stack.push('service allocation repair', () => allocationRepair.stop());
  await allocationRepair.firstPass;

  const controllers = startControllers(
    {
      resolver: api.resolver,
      etcd: deps.etcd,
      prefix: config.storage.etcd.prefix,
      serviceClusterIPRange: config.api.serviceClusterIPRange,
      advertiseAddress: config.serving.advertiseAddress,
      securePort: config.serving.securePort,
      identity: config.identity,
      workerIndex: config.worker?.index,
    },
    { rootCaPem: deps.pki.servingCaPem, ...config.controllers },
  );
  stack.push('controllers', () => controllers.stop());
  hooks.add('bootstrap-controller', controllers.bootstrapped);
  void controllers.bootstrapped.then(() => log.info('bootstrap done: system namespaces and the kubernetes Service exist'));
  return loops;
}
