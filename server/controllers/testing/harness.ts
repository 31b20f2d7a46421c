// Real etcd and the real registry for the controllers' tests. `replica()` builds another
// etcd client + store + registry over the same etcd, as a second kapi replica would have.

import assert from 'node:assert/strict';
import { createEtcdClient } from '../../../storage/etcd/client.js';
import type { EtcdClient } from '../../../storage/etcd/types.js';
import { createEtcd3Store } from '../../../storage/etcd3/store.js';
import type { Storage } from '../../../storage/interface.js';
import { startEtcd, type EtcdProcess } from '../../../storage/testing/etcd-server.js';
import { loadCatalog } from '../../apis/catalog.js';
import { createRegistry, type Registry } from '../../registry/registry.js';
import type { RequestContext, RESTResource } from '../../registry/rest.js';
import { silentLogger, type ControllerDeps } from '../types.js';
import { internalContext, sleep } from '../util.js';

export const prefix = '/registry';

export interface Replica {
  etcd: EtcdClient;
  storage: Storage;
  registry: Registry;
  rest(group: string, version: string, resource: string, subresource?: string): RESTResource;
  deps(overrides?: Partial<ControllerDeps>): ControllerDeps;
}

export interface Harness {
  etcd: EtcdProcess;
  /** the first replica */
  main: Replica;
  replica(): Replica;
  close(): Promise<void>;
}

export async function startHarness(): Promise<Harness> {
  const etcd = await startEtcd();
  const replicas: Array<{ client: EtcdClient; storage: Storage }> = [];
  let n = 0;
  const replica = (): Replica => {
    const id = ++n;
    const client = createEtcdClient({ endpoints: [etcd.endpoint] });
    const storage = createEtcd3Store(client, { prefix });
    replicas.push({ client, storage });
    const registry = createRegistry({ resources: loadCatalog().resources(), storageFor: () => storage });
    return {
      etcd: client,
      storage,
      registry,
      rest(group, version, resource, subresource) {
        const r = registry.lookup(group, version, resource, subresource);
        assert.ok(r, `not served: ${group}/${version}/${resource}${subresource ? '/' + subresource : ''}`);
        return r;
      },
      deps: (overrides = {}) => ({
        resolver: registry,
        etcd: client,
        prefix,
        serviceClusterIPRange: '10.0.0.0/24',
        advertiseAddress: `127.0.0.${id}`,
        securePort: 6443,
        identity: `replica-${id}`,
        log: silentLogger,
        ...overrides,
      }),
    };
  };
  const main = replica();
  return {
    etcd,
    main,
    replica,
    async close() {
      for (const r of replicas) {
        await r.storage.close();
        r.client.close();
      }
      await etcd.stop();
    },
  };
}

/** a test's own client context: an admin in `namespace` */
export function testContext(namespace = ''): RequestContext {
  return internalContext('test', namespace);
}

/** polls `check` until it returns a value other than undefined/false; fails after `timeoutMs` */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await sleep(50);
  }
}
