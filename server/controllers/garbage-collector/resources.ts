// Which resources the garbage collector watches and how it finds the resource of an owner
// reference's apiVersion/kind, from what the registry serves (kube-controller-manager reads
// the same from discovery and a REST mapper).

import type { RESTResource, ResourceResolver } from '../../registry/rest.js';
import { parseApiVersion } from './types.js';

/** kube-controller-manager's default ignored resources: events own nothing and are owned by nothing */
const ignoredGroupResources = new Set(['/events', 'events.k8s.io/events']);

/** the rank of a version among those of one resource: preferred first, then storage */
function versionRank(r: RESTResource): number {
  if (r.info.version === r.info.preferredVersion) return 0;
  if (r.info.version === r.info.storageVersion) return 1;
  return 2;
}

/**
 * One version (the preferred) of every resource that can be listed, watched and deleted,
 * no subresources, no virtual resources (reviews cannot be listed), no events.
 */
export function deletableResources(resolver: ResourceResolver): RESTResource[] {
  const byGroupResource = new Map<string, RESTResource>();
  for (const res of resolver.all()) {
    const { info } = res;
    if (res.subresource || !info.listKind) continue;
    if (!info.verbs.includes('list') || !info.verbs.includes('watch') || !info.verbs.includes('delete')) continue;
    const key = `${info.group}/${info.resource}`;
    if (ignoredGroupResources.has(key)) continue;
    const seen = byGroupResource.get(key);
    if (!seen || versionRank(res) < versionRank(seen)) byGroupResource.set(key, res);
  }
  return [...byGroupResource.values()];
}

export function groupResourceOf(res: RESTResource): string {
  return `${res.info.group}/${res.info.resource}`;
}

export function apiVersionOf(res: RESTResource): string {
  return res.info.group ? `${res.info.group}/${res.info.version}` : res.info.version;
}

/** thrown when no served resource has an owner reference's apiVersion and kind */
export class UnknownKindError extends Error {
  constructor(
    readonly apiVersion: string,
    readonly kind: string,
  ) {
    super(`no resource is served for kind ${kind} in ${apiVersion}`);
  }
}

/**
 * Finds the resource of an apiVersion/kind. The exact version first; failing that, the
 * preferred served version of the same group and kind. kube-controller-manager would keep
 * retrying a reference to an unserved version; a uid check makes the lookup in another
 * version just as safe, since every version of a resource reads the same objects.
 */
export class KindMapper {
  constructor(private readonly resolver: ResourceResolver) {}

  resourceFor(apiVersion: string, kind: string): RESTResource {
    const { group, version } = parseApiVersion(apiVersion);
    let fallback: RESTResource | undefined;
    for (const res of this.resolver.all()) {
      if (res.subresource || res.info.kind !== kind || res.info.group !== group) continue;
      if (!res.info.verbs.includes('get')) continue;
      if (res.info.version === version) return res;
      if (!fallback || versionRank(res) < versionRank(fallback)) fallback = res;
    }
    if (fallback) return fallback;
    throw new UnknownKindError(apiVersion, kind);
  }
}
