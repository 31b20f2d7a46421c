// Turns discovery into requests: for every resource and subresource that /api/v1 and the
// group versions /apis lists, one request it serves by its verbs (GET for get/list, else POST,
// PUT or PATCH with an empty object), aimed at an object that exists when one can be found.
// A route that is not served answers 404 without naming the object; a missing object's 404
// names it, which `objectNotFound` tells apart.

import type { KubeHttpClient } from './harness.js';

interface DiscoveredResource {
  name: string;
  namespaced: boolean;
  verbs: string[];
}

export interface WalkRequest {
  /** `<group/version> <resource>[/<subresource>]` */
  endpoint: string;
  method: string;
  path: string;
  body?: string;
  contentType: string;
  /** the answer is the NotFound of the object the request named (the route itself is served) */
  objectNotFound(body: string): boolean;
}

export interface WalkTargets {
  /** a namespace that exists, for namespaced collections and objects nothing else is found for */
  namespace: string;
  pod: string;
  node: string;
}

const MISSING = 'discovery-walk-missing';

async function getJson<T>(http: KubeHttpClient, path: string): Promise<T> {
  const res = await http.get(path);
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.body.slice(0, 200)}`);
  return JSON.parse(res.body) as T;
}

async function groupVersions(http: KubeHttpClient): Promise<string[]> {
  const core = await getJson<{ versions: string[] }>(http, '/api');
  const groups = await getJson<{ groups: { versions: { groupVersion: string }[] }[] }>(http, '/apis');
  return [...core.versions, ...groups.groups.flatMap((g) => g.versions.map((v) => v.groupVersion))];
}

function basePath(groupVersion: string): string {
  return groupVersion.includes('/') ? `/apis/${groupVersion}` : `/api/${groupVersion}`;
}

interface ObjectRef {
  name: string;
  namespace?: string;
}

/** an existing object of the resource, or a name that exists nowhere */
async function someObject(
  http: KubeHttpClient,
  base: string,
  resource: DiscoveredResource | undefined,
  targets: WalkTargets,
): Promise<ObjectRef> {
  if (resource?.name === 'pods') return { name: targets.pod, namespace: targets.namespace };
  if (resource?.name === 'nodes') return { name: targets.node };
  if (resource?.name === 'namespaces') return { name: targets.namespace };
  if (resource?.verbs.includes('list')) {
    const res = await http.get(`${base}/${resource.name}?limit=1`);
    if (res.status === 200) {
      const item = (JSON.parse(res.body) as { items?: { metadata: { name: string; namespace?: string } }[] }).items?.[0];
      if (item) return { name: item.metadata.name, namespace: item.metadata.namespace };
    }
  }
  return { name: MISSING, namespace: resource?.namespaced ? targets.namespace : undefined };
}

function requestFor(verbs: string[], collection: boolean): { method: string; body?: string } | undefined {
  if (verbs.includes(collection ? 'list' : 'get')) return { method: 'GET' };
  if (verbs.includes('create')) return { method: 'POST', body: '{}' };
  if (!collection && verbs.includes('update')) return { method: 'PUT', body: '{}' };
  if (!collection && verbs.includes('patch')) return { method: 'PATCH', body: '{}' };
  return undefined;
}

export async function discoveryRequests(http: KubeHttpClient, targets: WalkTargets): Promise<WalkRequest[]> {
  const out: WalkRequest[] = [];
  for (const gv of await groupVersions(http)) {
    const base = basePath(gv);
    const list = await getJson<{ resources: DiscoveredResource[] }>(http, base);
    const byName = new Map(list.resources.map((r) => [r.name, r]));
    for (const r of list.resources) {
      const [resource, subresource] = r.name.split('/');
      const chosen = requestFor(r.verbs, subresource === undefined);
      if (!chosen) continue;
      const contentType = chosen.method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
      if (subresource === undefined) {
        const path = r.namespaced ? `${base}/namespaces/${targets.namespace}/${resource}` : `${base}/${resource}`;
        out.push({ endpoint: `${gv} ${r.name}`, ...chosen, path, contentType, objectNotFound: () => false });
        continue;
      }
      const object = await someObject(http, base, byName.get(resource), targets);
      const ns = r.namespaced ? `/namespaces/${object.namespace ?? targets.namespace}` : '';
      const path = `${base}${ns}/${resource}/${object.name}/${subresource}`;
      out.push({
        endpoint: `${gv} ${r.name}`,
        ...chosen,
        path,
        contentType,
        objectNotFound: (body) => {
          try {
            const status = JSON.parse(body) as { reason?: string; details?: { name?: string } };
            return object.name === MISSING && status.reason === 'NotFound' && status.details?.name === MISSING;
          } catch {
            return false;
          }
        },
      });
    }
  }
  return out;
}
