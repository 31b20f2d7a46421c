// kapi's aggregation layer, as kube-aggregator is kube-apiserver's: APIServices followed on
// every replica, requests for their group versions proxied to their backends, discovery and
// OpenAPI with the backends' parts in them, and (one replica at a time) local APIService
// registration and the Available conditions.

import type { DiscoveryCatalog } from '../apis/discovery.js';
import type { NonResourceHandler } from '../request/non-resource.js';
import type { Handler } from '../request/types.js';
import type { Logger } from '../log.js';
import type { ResourceResolver } from '../registry/rest.js';
import { startAPIServiceIndex, type APIServiceIndex } from './api-services.js';
import type { LocalGroupVersion } from './autoregister.js';
import { BackendAgents, type ProxyClientCertificate } from './backend-client.js';
import { runAggregatorControllers } from './controllers.js';
import { RemoteDiscovery, withAggregatedDiscovery, withAggregatedGroups } from './discovery.js';
import { RemoteOpenAPI, withAggregatedOpenAPI } from './openapi.js';
import { proxyToAPIService } from './proxy.js';

export type { LocalGroupVersion } from './autoregister.js';
export type { ProxyClientCertificate } from './backend-client.js';

export interface AggregatorOptions {
  resolver: ResourceResolver;
  /** this replica's identity (the controllers' Lease holder) */
  identity: string;
  log: Logger;
  /** --proxy-client-cert-file/--proxy-client-key-file; without, backends see no client certificate */
  proxyClientCertificate?: ProxyClientCertificate;
  /** the group versions this server serves itself (built-in and CRDs) */
  localGroupVersions: () => LocalGroupVersion[];
  onLocalChange: (listener: () => void) => void;
  /** resolves once localGroupVersions() is complete */
  localSynced: Promise<void>;
}

export interface Aggregator {
  /** the handler of a request for a group version served elsewhere; undefined for the rest */
  handlerFor(path: string): Handler | undefined;
  /** the local discovery catalog with the aggregated groups added */
  discoveryCatalog(base: DiscoveryCatalog): DiscoveryCatalog;
  withDiscovery(inner: NonResourceHandler, catalog: () => DiscoveryCatalog, localGeneration: () => number): NonResourceHandler;
  withOpenAPI(inner: NonResourceHandler, localGeneration: () => number): NonResourceHandler;
  /** grows whenever what discovery shows of the aggregated APIs changes */
  readonly generation: number;
  stop(): Promise<void>;
}

const GROUP_VERSION_PATH = /^\/apis\/([^/]+)\/([^/]+)(?:\/|$)/;

/** an aggregator that proxies nothing, for a server without apiregistration.k8s.io */
function inert(): Aggregator {
  return {
    handlerFor: () => undefined,
    discoveryCatalog: (base) => base,
    withDiscovery: (inner) => inner,
    withOpenAPI: (inner) => inner,
    generation: 0,
    stop: async () => undefined,
  };
}

export function startAggregator(opts: AggregatorOptions): Aggregator {
  const stop = new AbortController();
  const index: APIServiceIndex | undefined = startAPIServiceIndex(opts.resolver, opts.log, stop.signal);
  if (!index) return inert();
  const agents = new BackendAgents(opts.proxyClientCertificate);
  const discovery = new RemoteDiscovery(index, opts.resolver, agents, opts.log);
  const openapi = new RemoteOpenAPI(index, opts.resolver, agents, opts.log);
  const running = [
    discovery.run(stop.signal),
    openapi.run(stop.signal),
    runAggregatorControllers(
      {
        resolver: opts.resolver,
        index,
        agents,
        identity: opts.identity,
        log: opts.log,
        localGroupVersions: opts.localGroupVersions,
        onLocalChange: opts.onLocalChange,
        localSynced: opts.localSynced,
      },
      stop.signal,
    ),
  ].map((p) => p.catch((err: unknown) => opts.log.error('aggregator loop stopped', { error: (err as Error).message })));
  const proxyDeps = { resolver: opts.resolver, agents, log: opts.log };
  return {
    handlerFor(path) {
      const m = GROUP_VERSION_PATH.exec(path);
      if (!m) return undefined;
      const api = index.remote(m[1]!, m[2]!);
      if (!api) return undefined;
      return (state) => proxyToAPIService(state, api, proxyDeps);
    },
    discoveryCatalog: (base) => withAggregatedGroups(base, index),
    withDiscovery: (inner, catalog, localGeneration) =>
      withAggregatedDiscovery(inner, catalog, index, discovery, () => `${localGeneration()} ${index.generation} ${discovery.generation}`),
    withOpenAPI: (inner, localGeneration) => withAggregatedOpenAPI(inner, openapi, () => `${localGeneration()} ${openapi.generation}`),
    get generation() {
      return index.generation + discovery.generation;
    },
    async stop() {
      stop.abort();
      await Promise.all(running);
      agents.close();
    },
  };
}
