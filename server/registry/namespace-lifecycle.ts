// New content may only be created in a namespace that exists and is not being terminated
// (kube-apiserver's NamespaceLifecycle admission, which runs before validation).

import type { KubeObject, Storage } from '../../storage/interface.js';
import { isStorageError } from '../../storage/errors.js';
import { errors, StatusError } from '../machinery/status.js';
import { SharedDecodes } from './shared-decodes.js';
import { stringAt } from './strategy.js';

export const namespaceTerminatingCause = 'NamespaceTerminating';

/** Reads namespaces; the registry gives every namespaced store one of these. */
export interface NamespaceLookup {
  /** the namespace, to read only (it may be shared with other callers) */
  get(name: string): Promise<KubeObject | null>;
}

/** Looks a namespace up in storage: a cheap read first, a consistent one if it is missing
 *  (it may just have been created through another replica). A namespace the cache holds is
 *  decoded once per stored version: every create in it asks. */
export function namespaceLookupFrom(storage: Storage, prefix = '/namespaces'): NamespaceLookup {
  const decoded = new SharedDecodes();
  const cachedRead = async (key: string): Promise<KubeObject | null> => {
    const stored = storage.getStored ? await storage.getStored(key, { resourceVersion: '0', ignoreNotFound: true }) : undefined;
    if (stored === undefined) return storage.get(key, { resourceVersion: '0', ignoreNotFound: true });
    if (!stored) return null;
    return decoded.get(stored.item, stored.decode);
  };
  return {
    async get(name) {
      const key = `${prefix}/${name}`;
      try {
        const cached = await cachedRead(key);
        if (cached) return cached;
        return await storage.get(key, { ignoreNotFound: true });
      } catch (e) {
        if (isStorageError(e, 'KeyNotFound')) return null;
        throw e;
      }
    },
  };
}

/** 404 when the namespace is missing, 403 (with a NamespaceTerminating cause) while it is
 *  being deleted. `group`/`resource`/`name` describe the object being created. */
export async function checkNamespaceAcceptsCreate(
  lookup: NamespaceLookup,
  namespace: string,
  group: string,
  resource: string,
  name: string,
): Promise<void> {
  const ns = await lookup.get(namespace);
  if (!ns) throw errors.notFound({ group: '', resource: 'namespaces', name: namespace });
  if (ns.metadata.deletionTimestamp || stringAt(ns, 'status', 'phase') === 'Terminating') {
    const err = errors.forbidden(
      { group, resource, name },
      `unable to create new content in namespace ${namespace} because it is being terminated`,
    );
    throw new StatusError(err.code, err.reason, err.message, {
      ...err.details,
      causes: [{ reason: namespaceTerminatingCause, message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' }],
    });
  }
}
