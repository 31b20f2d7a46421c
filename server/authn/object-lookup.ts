// Reads the API objects authentication depends on (ServiceAccounts, Secrets, Pods, Nodes)
// through the registry: from the watch cache first, then from etcd when the cache does not
// have the object yet (a token for an account created a moment ago must still work).

import type { KubeObject } from '../../storage/interface.js';
import { StatusError } from '../machinery/status.js';
import type { RequestContext, ResourceResolver } from '../registry/rest.js';

/** core/v1 objects by plural resource name; null when absent */
export type ObjectLookup = (resource: string, namespace: string, name: string) => Promise<KubeObject | null>;

function systemContext(namespace: string): RequestContext {
  return {
    user: { username: 'system:apiserver', groups: ['system:masters'] },
    namespace,
    dryRun: false,
    fieldValidation: 'Ignore',
    warnings: [],
  };
}

/** `resolver` is read on every call, so the lookup may be made before the registry exists */
export function lookupFromResolver(resolver: () => ResourceResolver | undefined): ObjectLookup {
  return async (resource, namespace, name) => {
    const store = resolver()?.lookup('', 'v1', resource);
    if (!store) return null;
    const ctx = systemContext(namespace);
    for (const resourceVersion of ['0', undefined]) {
      try {
        return await store.get(ctx, name, { resourceVersion });
      } catch (err) {
        if (!(err instanceof StatusError && err.code === 404)) throw err;
      }
    }
    return null;
  };
}

/** a lookup over fixed objects, keyed `resource/namespace/name` (tests) */
export function staticLookup(objects: Record<string, KubeObject>): ObjectLookup {
  return async (resource, namespace, name) => objects[`${resource}/${namespace}/${name}`] ?? null;
}
