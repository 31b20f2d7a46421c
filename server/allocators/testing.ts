// For the allocators' tests: "replicas" over one real etcd, each with its own etcd client,
// etcd3 store, service allocator and registry, as separate kapi processes would have.

import { createEtcdClient } from '../../storage/etcd/client.js';
import type { EtcdClient } from '../../storage/etcd/types.js';
import { createEtcd3Store } from '../../storage/etcd3/store.js';
import type { KubeObject, Storage } from '../../storage/interface.js';
import type { EtcdProcess } from '../../storage/testing/etcd-server.js';
import { loadCatalog } from '../apis/catalog.js';
import { createRegistry, type Registry } from '../registry/registry.js';
import type { RequestContext, RESTResource } from '../registry/rest.js';
import { createServiceAllocator, type ServiceAllocator, type ServiceAllocatorOptions } from './service-allocator.js';

export interface Replica {
  client: EtcdClient;
  store: Storage;
  allocator: ServiceAllocator;
  registry: Registry;
  services: RESTResource;
  ipaddresses: RESTResource;
  close(): Promise<void>;
}

export type ReplicaOptions = Partial<Pick<ServiceAllocatorOptions, 'serviceClusterIPRange' | 'serviceNodePortRange'>>;

export function startReplica(etcd: EtcdProcess, opts: ReplicaOptions = {}): Replica {
  const client = createEtcdClient({ endpoints: [etcd.endpoint] });
  const store = createEtcd3Store(client, { prefix: '/registry' });
  const allocator = createServiceAllocator({
    serviceClusterIPRange: opts.serviceClusterIPRange ?? '10.96.0.0/12',
    serviceNodePortRange: opts.serviceNodePortRange ?? '30000-32767',
    ipAddresses: store,
    nodePorts: store,
  });
  const registry = createRegistry({ resources: loadCatalog().resources(), storageFor: () => store, serviceIPAllocator: allocator });
  const lookup = (group: string, resource: string): RESTResource => {
    const r = registry.lookup(group, 'v1', resource);
    if (!r) throw new Error(`not served: ${resource}`);
    return r;
  };
  return {
    client,
    store,
    allocator,
    registry,
    services: lookup('', 'services'),
    ipaddresses: lookup('networking.k8s.io', 'ipaddresses'),
    async close() {
      await store.close();
      client.close();
    },
  };
}

export function ctx(namespace = '', extra: Partial<RequestContext> = {}): RequestContext {
  return {
    user: { username: 'admin', groups: ['system:masters', 'system:authenticated'] },
    namespace,
    dryRun: false,
    fieldValidation: 'Strict',
    warnings: [],
    ...extra,
  };
}

export function service(name: string, spec: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { selector: { app: name }, ports: [{ port: 80 }], ...spec } };
}

export async function ensureNamespace(r: Replica, name: string): Promise<void> {
  const ns = r.registry.lookup('', 'v1', 'namespaces')!;
  try {
    await ns.create(ctx(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  } catch (e) {
    if ((e as { code?: number }).code !== 409) throw e;
  }
}
