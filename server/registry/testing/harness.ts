// A registry over real etcd for the registry's tests: the served catalog, the etcd3 store,
// a request context builder, and a helper that turns a rejected promise into its Status.

import assert from 'node:assert/strict';
import { setMaxListeners } from 'node:events';
import { after, before } from 'node:test';
import { createEtcdClient } from '../../../storage/etcd/client.js';
import type { EtcdClient } from '../../../storage/etcd/types.js';
import { createEtcd3Store } from '../../../storage/etcd3/store.js';
import { createCacheFeed } from '../../../storage/cacher/index.js';
import type { Storage } from '../../../storage/interface.js';
import { startEtcd, type EtcdProcess } from '../../../storage/testing/etcd-server.js';
import { loadCatalog } from '../../apis/catalog.js';
import { StatusError } from '../../machinery/status.js';
import { createRegistry, type Registry, type RegistryOptions } from '../registry.js';
import type { RequestContext, RESTResource } from '../rest.js';
import type { UserInfo } from '../../machinery/user.js';

export const admin: UserInfo = { username: 'admin', uid: 'admin-uid', groups: ['system:masters', 'system:authenticated'] };

export function ctx(namespace = '', extra: Partial<RequestContext> = {}): RequestContext {
  return { user: admin, namespace, dryRun: false, fieldValidation: 'Strict', warnings: [], ...extra };
}

/** the Status a promise rejected with; fails the test when it resolved */
export async function statusOf(p: Promise<unknown>): Promise<StatusError> {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof StatusError, `expected a StatusError, got ${err === undefined ? 'success' : String(err)}`);
  return err;
}

export interface RegistryHarness {
  registry: Registry;
  storage: Storage;
  /** the handler of a resource; fails when it is not served */
  rest(group: string, version: string, resource: string, subresource?: string): RESTResource;
  close(): Promise<void>;
}

/** starts etcd and builds a registry over the whole served catalog; with `watchCache`, every
 *  resource is served through the watch cache as the server does */
export async function startRegistry(extra: Partial<RegistryOptions> = {}, opts: { watchCache?: boolean } = {}): Promise<RegistryHarness> {
  const etcd: EtcdProcess = await startEtcd();
  const client: EtcdClient = createEtcdClient({ endpoints: [etcd.endpoint] });
  const storage = createEtcd3Store(client, { prefix: '/registry' });
  const feed = opts.watchCache ? createCacheFeed(client, storage, { prefix: '/registry' }) : undefined;
  const storageFor = feed ? (prefix: string) => feed.cacherFor(prefix) : () => storage;
  const registry = createRegistry({ resources: loadCatalog().resources(), storageFor, ...extra });
  await feed?.ready;
  return {
    registry,
    storage,
    rest(group, version, resource, subresource) {
      const r = registry.lookup(group, version, resource, subresource);
      assert.ok(r, `not served: ${group}/${version}/${resource}${subresource ? '/' + subresource : ''}`);
      return r;
    },
    async close() {
      feed?.close();
      await storage.close();
      client.close();
      await etcd.stop();
    },
  };
}

/** A registry over the watch cache for the tests of one `describe` block: started before
 *  them, closed after, with a signal (for controllers and informers) aborted before it closes */
export function registryOverWatchCache(extra: Partial<RegistryOptions> = {}): {
  readonly h: RegistryHarness;
  readonly signal: AbortSignal;
} {
  let harness: RegistryHarness | undefined;
  const stop = new AbortController();
  setMaxListeners(100, stop.signal);
  before(async () => {
    harness = await startRegistry(extra, { watchCache: true });
  });
  after(async () => {
    stop.abort();
    await harness?.close();
  });
  return {
    get h() {
      assert.ok(harness, 'the registry starts before the tests');
      return harness;
    },
    signal: stop.signal,
  };
}
