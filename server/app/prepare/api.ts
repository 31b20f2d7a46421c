// The API: Service address allocation, the registry of built-in resources, custom resources
// from CRDs (looked up after the built-ins) and the aggregation layer's APIServices.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { knownGroupVersions, type Catalog } from '../../apis/catalog.js';
import { startAggregator, type Aggregator, type LocalGroupVersion, type ProxyClientCertificate } from '../../aggregator/index.js';
import { createServiceAllocator, type ServiceAllocator } from '../../allocators/service-allocator.js';
import type { Authentication } from '../../authn/index.js';
import type { Authorization } from '../../authz/index.js';
import { CustomResources } from '../../crd/controller.js';
import { namespaceLookupFrom } from '../../registry/namespace-lifecycle.js';
import { createRegistry, keyPrefixFor, type Registry } from '../../registry/registry.js';
import type { ResourceResolver } from '../../registry/rest.js';
import { createLogger } from '../../log.js';
import type { CompletedConfig } from '../config.js';
import type { StopStack } from '../lifecycle.js';
import type { StorageLayer } from './storage.js';

const log = createLogger('kapi');

export interface ServedApi {
  registry: Registry;
  serviceIPAllocator: ServiceAllocator;
  customResources: CustomResources;
  /** built-in resources, then custom ones */
  resolver: ResourceResolver;
  aggregator: Aggregator;
  /** resolves once the CRDs have been listed */
  crdsListed: Promise<void>;
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
    out.push({
      group: gv.group,
      version: gv.version,
      groupPriorityMinimum: meta?.groupPriority ?? 1000,
      versionPriority: meta?.versionPriority ?? 100,
      managed: 'onstart',
    });
  }
  for (const r of customResources) {
    const key = `${r.group}/${r.version}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ group: r.group, version: r.version, groupPriorityMinimum: 1000, versionPriority: 100, managed: 'true' });
  }
  return out;
}

function readProxyClientCertificate(config: CompletedConfig): ProxyClientCertificate | undefined {
  const files = config.aggregator.proxyClientCertificate;
  if (!files) return undefined;
  return { cert: readFileSync(path.resolve(files.certFile)), key: readFileSync(path.resolve(files.keyFile)) };
}

export function startApi(
  config: CompletedConfig,
  storage: StorageLayer,
  authn: Authentication,
  authz: Authorization,
  stack: StopStack,
): ServedApi {
  const { catalog } = config.api;
  const { storageFor } = storage;
  // ClusterIPs and node ports: IPAddress objects (through the same cache as the API's) and
  // node port keys, all in etcd, so every replica allocates from one shared state
  const serviceIPAllocator = createServiceAllocator({
    serviceClusterIPRange: config.api.serviceClusterIPRange,
    serviceNodePortRange: config.api.serviceNodePortRange,
    ipAddresses: storageFor(keyPrefixFor({ group: 'networking.k8s.io', resource: 'ipaddresses' })),
    nodePorts: storage.store,
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
    eventTTLSeconds: config.api.eventTTLSeconds,
    garbageCollection: config.api.garbageCollection,
    deleteCollectionWorkers: config.api.deleteCollectionWorkers,
  });
  // custom resources served from CRDs, followed on every replica; looked up after the built-ins
  const customResources = new CustomResources({
    builtins: registry,
    storageFor,
    namespaces: namespaceLookupFrom(storageFor('/namespaces')),
    log: log.named('crd'),
  });
  const crdStop = new AbortController();
  stack.push('custom resources', () => crdStop.abort());
  const crdsListed = customResources.start(crdStop.signal);
  const resolver = customResources.resolver();
  // the aggregation layer: APIServices followed here, their group versions proxied
  const aggregator = startAggregator({
    resolver,
    identity: config.identity,
    log: log.named('aggregator'),
    proxyClientCertificate: readProxyClientCertificate(config),
    localGroupVersions: () => localGroupVersions(catalog, customResources.resources()),
    onLocalChange: (listener) => customResources.onChange(listener),
    localSynced: crdsListed,
  });
  stack.push('aggregator', () => aggregator.stop());
  return { registry, serviceIPAllocator, customResources, resolver, aggregator, crdsListed };
}
