// Starts kapi's in-process controllers. main calls startControllers once the registry is
// ready and stops them (awaiting `stop()`) before it closes storage and the etcd client.
//
// Per replica: bootstrap (system namespaces, the `kubernetes` Service), the system
// PriorityClasses, the master
// endpoints reconciler and the replica's apiserver identity Lease. Leader-elected on
// kube-system Leases (one replica at a time): the namespace controller, the garbage
// collector (ownerReferences, the `orphan` and `foregroundDeletion` finalizers) and the
// collector of expired identity Leases.
// Also leader-elected: ClusterRole aggregation, the `default` ServiceAccount of every
// namespace and, given the cluster CA, the `kube-root-ca.crt` ConfigMap of every namespace.
// Also leader-elected: ResourceQuota status (hard and used) and the PVC/PV protection
// finalizers' removal.
// Not here yet: service account token cleaner, bootstrap signer.

import { bootstrapController } from './bootstrap.js';
import { identityLeaseController, identityLeaseGarbageCollector } from './identity.js';
import { garbageCollectorController } from './garbage-collector/index.js';
import { masterEndpointsController } from './master-endpoints.js';
import { bootstrapSignerController, tokenCleanerController } from './bootstrap-tokens.js';
import { namespaceController } from './namespace.js';
import { rbacAggregationController } from './rbac-aggregation.js';
import { resourceQuotaController } from './resource-quota.js';
import { rootCAController } from './root-ca.js';
import { serviceAccountsController } from './serviceaccounts.js';
import { storageProtectionController } from './storage-protection.js';
import { systemPriorityClassesController } from './system-priority-classes.js';
import { defaultLogger, type Controller, type ControllerDeps } from './types.js';
import { errorMessage } from './util.js';

export type { Controller, ControllerDeps } from './types.js';

export interface RunningControllers {
  /** resolves after the first complete bootstrap pass (for a readiness check) */
  readonly bootstrapped: Promise<void>;
  /** stops every controller and resolves once all have returned */
  stop(): Promise<void>;
}

export interface ControllerOptions {
  /** the CA that verifies the API server, published as kube-root-ca.crt in every namespace */
  rootCaPem?: string;
  /** --enable-garbage-collector (default true) */
  garbageCollector?: boolean;
  /** --endpoint-reconciler-type: `none` leaves the `kubernetes` Endpoints alone; `lease`
   *  (default) and `master-count` both run the lease reconciler (kapi's replicas know each
   *  other through their keys, so no count is needed) */
  endpointReconciler?: 'lease' | 'master-count' | 'none';
  /** the APIServerIdentity gate (default on): the replica's identity Lease and its collector */
  apiServerIdentity?: boolean;
}

export function startControllers(deps: ControllerDeps, opts: ControllerOptions = {}): RunningControllers {
  const log = deps.log ?? defaultLogger;
  let markBootstrapped!: () => void;
  const bootstrapped = new Promise<void>((resolve) => {
    markBootstrapped = resolve;
  });
  const controllers: Controller[] = [
    bootstrapController(deps, { onBootstrapped: () => markBootstrapped() }),
    ...(opts.endpointReconciler === 'none' ? [] : [masterEndpointsController(deps)]),
    namespaceController(deps),
    ...(opts.garbageCollector === false ? [] : [garbageCollectorController(deps)]),
    ...(opts.apiServerIdentity === false ? [] : [identityLeaseController(deps), identityLeaseGarbageCollector(deps)]),
    rbacAggregationController(deps),
    serviceAccountsController(deps),
    resourceQuotaController(deps),
    storageProtectionController(deps),
    systemPriorityClassesController(deps),
    tokenCleanerController(deps),
    bootstrapSignerController(deps),
  ];
  if (opts.rootCaPem) controllers.push(rootCAController(deps, opts.rootCaPem));
  const abort = new AbortController();
  const running = controllers.map((c) =>
    c.start(abort.signal).catch((err: unknown) => {
      log.error('controller stopped with an error', { controller: c.name, err: errorMessage(err) });
    }),
  );
  return {
    bootstrapped,
    async stop() {
      abort.abort();
      await Promise.all(running);
    },
  };
}
