// Storage keys: `/<resource>/<namespace>/<name>` for the core group,
// `/<group>/<resource>/<namespace>/<name>` for named groups, without the namespace segment
// for cluster-scoped resources. Versions of one resource share one prefix (one cacher), and
// so do the two Event APIs (events.k8s.io stores core Events, as kube-apiserver does).

import type { ResourceInfo } from '../apis/types.js';
import { errors } from '../machinery/status.js';
import { goQuote } from '../machinery/validation/field-error.js';
import { isValidPathSegmentName } from '../machinery/validation/names.js';

/** the group/resource whose storage a resource uses */
export function storageResourceOf(info: Pick<ResourceInfo, 'group' | 'resource'>): { group: string; resource: string } {
  if (info.group === 'events.k8s.io' && info.resource === 'events') return { group: '', resource: 'events' };
  return { group: info.group, resource: info.resource };
}

/** the storage key prefix of a resource, e.g. `/pods`, `/apps/deployments` (no trailing slash) */
export function keyPrefixFor(info: Pick<ResourceInfo, 'group' | 'resource'>): string {
  const s = storageResourceOf(info);
  return s.group ? `/${s.group}/${s.resource}` : `/${s.resource}`;
}

export class KeyScheme {
  constructor(
    readonly prefix: string,
    readonly namespaced: boolean,
  ) {}

  /** the key of one object; 400 for names that cannot be a path segment */
  objectKey(namespace: string, name: string): string {
    const msgs = isValidPathSegmentName(name);
    if (msgs.length) throw errors.badRequest(`Name parameter invalid: ${goQuote(name)}: ${msgs.join(';')}`);
    if (!this.namespaced) return `${this.prefix}/${name}`;
    if (!namespace) throw errors.badRequest('Namespace parameter required.');
    const nsMsgs = isValidPathSegmentName(namespace);
    if (nsMsgs.length) throw errors.badRequest(`Namespace parameter invalid: ${goQuote(namespace)}: ${nsMsgs.join(';')}`);
    return `${this.prefix}/${namespace}/${name}`;
  }

  /** the namespace ('' for a cluster-scoped resource) and name of the object at `key`;
   *  undefined for a key that is not one of this scheme's object keys */
  objectAt(key: string): { namespace: string; name: string } | undefined {
    if (!key.startsWith(this.prefix) || key[this.prefix.length] !== '/') return undefined;
    const rest = key.slice(this.prefix.length + 1);
    const slash = rest.indexOf('/');
    if (!this.namespaced) return slash < 0 && rest ? { namespace: '', name: rest } : undefined;
    if (slash <= 0 || slash === rest.length - 1 || rest.indexOf('/', slash + 1) >= 0) return undefined;
    return { namespace: rest.slice(0, slash), name: rest.slice(slash + 1) };
  }

  /** the key under which a collection lives, ending in '/' so `ns` never matches `ns2` */
  collectionKey(namespace: string): string {
    if (this.namespaced && namespace) return `${this.prefix}/${namespace}/`;
    return `${this.prefix}/`;
  }
}
