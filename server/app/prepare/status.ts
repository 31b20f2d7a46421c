// What /status shows, gathered only when someone looks.

import os from 'node:os';
import type { EtcdClient } from '../../../storage/etcd/types.js';
import { lastCompactedRevision } from '../../../storage/etcd3/compactor.js';
import { KUBERNETES_VERSION } from '../../config/flags.js';
import { apiserverIdentityLeaseName, identityLeaseSelector, servingEndpoint } from '../../controllers/identity.js';
import { LeaseClient } from '../../controllers/leases.js';
import type { RunningFlowControl } from '../../flowcontrol/index.js';
import { defaultMetrics } from '../../metrics/index.js';
import type { StatusSources } from '../../nonresource/status-snapshot.js';
import type { ResourceResolver } from '../../registry/rest.js';
import type { CompletedConfig } from '../config.js';
import type { StorageLayer } from './storage.js';

/** this replica's identity Lease (also what --replica-response-header names) */
export function identityLeaseName(config: CompletedConfig): string {
  return apiserverIdentityLeaseName(
    os.hostname(),
    servingEndpoint(config.serving.advertiseAddress, config.serving.securePort, config.worker?.index),
  );
}

const sumOf = async (m: { get(): Promise<{ values: { value: number }[] }> }): Promise<number> =>
  (await m.get()).values.reduce((n, v) => n + v.value, 0);

export function statusSources(
  config: CompletedConfig,
  deps: { resolver: ResourceResolver; etcd: EtcdClient; storage: StorageLayer; flowControl?: RunningFlowControl },
): StatusSources {
  const { etcd, flowControl } = deps;
  const { feed, apiNamesByPrefix } = deps.storage;
  const statusLeases = new LeaseClient(deps.resolver, 'kube-apiserver');
  const metrics = defaultMetrics();
  return {
    identity: config.identity,
    leaseName: identityLeaseName(config),
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
          resourceNameOf: (prefix) =>
            [...(apiNamesByPrefix.get(prefix) ?? apiNamesByPrefix.get(prefix.replace(/\/$/, '')) ?? [prefix])].join(', '),
        }
      : undefined,
    priorityLevels: flowControl ? () => flowControl.controller.levelsStatus() : undefined,
    etcd: {
      memberList: () => etcd.memberList(),
      endpointStatuses: (timeoutMs) => etcd.endpointStatuses?.(timeoutMs) ?? Promise.resolve([]),
      compactedRevision: () => lastCompactedRevision(etcd, config.storage.etcd.prefix),
    },
  };
}
