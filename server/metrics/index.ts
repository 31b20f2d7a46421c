// Wiring of the metrics into the server: what app.ts calls. The chain's filter and the
// authentication/authorization wrappers are applied in server/http/chain.ts.

import type { ResourceInfo } from '../apis/types.js';
import type { ResourceResolver } from '../registry/rest.js';
import { keyPrefixFor, storageResourceOf } from '../registry/keys.js';
import type { Storage } from '../../storage/interface.js';
import type { EtcdClient } from '../../storage/etcd/types.js';
import { defaultMetrics, type ApiserverMetrics } from './apiserver-metrics.js';
import { instrumentEtcdClient, KeyTypes } from './etcd.js';
import { startObjectCountPoller, type CountedResource } from './storage-objects.js';

export { defaultMetrics, ApiserverMetrics } from './apiserver-metrics.js';
export { createMetricsHandler } from './handler.js';
export { workerMetricsSource, startMetricsHub, type ReplicaMetricsSource } from './cluster.js';
export { observeHealthChecks } from './health.js';
export { withRequestMetrics } from './filter.js';
export { instrumentAuthenticator, instrumentAuthorizer } from './auth.js';

/** `configmaps`, `deployments.apps`: kube-apiserver's group-resource string */
export function groupResourceLabel(group: string, resource: string): string {
  return group ? `${resource}.${group}` : resource;
}

/** resources kept in etcd (reviews, bindings and componentstatuses are not) */
function stored(resources: readonly ResourceInfo[]): ResourceInfo[] {
  return resources.filter((r) => r.storageVersionHash !== '');
}

/** The etcd client for the etcd3 store, timing each call per operation and resource. */
export function instrumentStoreClient(client: EtcdClient, etcdPrefix: string, resources: readonly ResourceInfo[]): EtcdClient {
  const types = new KeyTypes(
    etcdPrefix,
    stored(resources).map((r) => {
      const s = storageResourceOf(r);
      return { keyPrefix: keyPrefixFor(r), label: groupResourceLabel(s.group, s.resource) };
    }),
  );
  return instrumentEtcdClient(client, types);
}

export interface MetricsOptions {
  resources: readonly ResourceInfo[];
  resolver: ResourceResolver;
  storageFor: (keyPrefix: string) => Storage;
  /** --etcd-count-metric-poll-period in ms; <= 0 disables apiserver_storage_objects */
  countPollPeriodMs: number;
  /** every feature gate with its stage and value (kubernetes_feature_enabled) */
  featureGates: readonly { name: string; stage: string; enabled: boolean }[];
  /** --show-hidden-metrics-for-version was given (validated), and --disabled-metrics */
  showHiddenMetrics?: boolean;
  disabledMetrics?: readonly string[];
  metrics?: ApiserverMetrics;
}

export interface MetricsRun {
  stop(): void;
}

/** Counts only requests to served resources, publishes the in-flight watermarks every
 *  second and polls the object counts. */
export function startMetrics(opts: MetricsOptions): MetricsRun {
  const metrics = opts.metrics ?? defaultMetrics();
  metrics.isServed = (group, version, resource, subresource) =>
    opts.resolver.lookup(group, version, resource, subresource || undefined) !== undefined;
  metrics.applyLifecycle({
    showHidden: opts.showHiddenMetrics ?? false,
    disabled: opts.disabledMetrics ?? [],
  });
  metrics.startWatermarks();
  metrics.recordFeatureGates(opts.featureGates);
  const counted = new Map<string, CountedResource>();
  for (const r of stored(opts.resources)) {
    const label = groupResourceLabel(r.group, r.resource);
    if (counted.has(label)) continue;
    const keyPrefix = keyPrefixFor(r);
    counted.set(label, { label, keyPrefix, storage: opts.storageFor(keyPrefix) });
  }
  const poller = startObjectCountPoller([...counted.values()], opts.countPollPeriodMs, metrics);
  return {
    stop() {
      poller.stop();
      metrics.stopWatermarks();
    },
  };
}
