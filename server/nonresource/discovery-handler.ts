// Serves the discovery documents server/apis builds: /api and /apis (legacy or aggregated
// apidiscovery.k8s.io/v2, as the Accept header asks), /api/v1, /apis/<group>,
// /apis/<group>/<version>. Other paths are not ours (undefined).

import {
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  negotiateDiscovery,
  type DiscoveryCatalog,
  type DiscoveryResponse,
} from '../apis/discovery.js';
import type { NonResourceHandler, RawResponse } from '../request/non-resource.js';

export interface DiscoveryHandlerOptions {
  catalog: DiscoveryCatalog;
  /** `host:port` that /api's serverAddressByClientCIDRs names (the advertise address) */
  serverAddress: string;
  /** changes when the catalog does (CRDs): the built documents are then dropped */
  generation?: () => number;
}

function raw(doc: DiscoveryResponse): RawResponse {
  return { status: 200, body: doc.body, contentType: doc.contentType, etag: doc.etag, headers: doc.headers };
}

export function createDiscoveryHandler(opts: DiscoveryHandlerOptions): NonResourceHandler {
  // a changing catalog (CRDs) is seen through a new view per generation: aggregated
  // documents are cached per catalog object
  const view = (): DiscoveryCatalog =>
    opts.generation
      ? {
          groups: () => opts.catalog.groups(),
          resourcesFor: (g, v) => opts.catalog.resourcesFor(g, v),
          isServed: (g, v) => opts.catalog.isServed(g, v),
        }
      : opts.catalog;
  let catalog = view();
  // The catalog does not change while the server runs, so each document (and its ETag hash)
  // is built once per path and form instead of on every request: kubectl asks for /api and
  // /apis at every invocation.
  const built = new Map<string, RawResponse>();
  let builtFor = opts.generation?.();
  const once = (key: string, build: () => DiscoveryResponse | undefined): RawResponse | undefined => {
    const generation = opts.generation?.();
    if (generation !== builtFor) {
      built.clear();
      builtFor = generation;
      catalog = view();
    }
    const cached = built.get(key);
    if (cached) return cached;
    const doc = build();
    if (doc) built.set(key, raw(doc));
    return doc && raw(doc);
  };
  return (req) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
    const segments = req.path.split('/').filter((s) => s !== '');
    const root = segments[0];
    if (root !== 'api' && root !== 'apis') return undefined;
    if (segments.length === 1) {
      const accept = req.headers.accept;
      const form = negotiateDiscovery(Array.isArray(accept) ? accept.join(',') : accept);
      if (form !== 'legacy') return once(`${root} ${form}`, () => aggregatedDiscovery(catalog, root, form));
      return once(root, () => (root === 'api' ? apiVersions(opts.serverAddress) : apiGroupList(catalog)));
    }
    if (segments.length === 2 || (root === 'apis' && segments.length === 3)) {
      // only documents that exist are kept: paths of unknown groups are the clients' choice
      const key = segments.join('/');
      const build = () =>
        root === 'api'
          ? apiResourceList(catalog, '', segments[1]!)
          : segments.length === 2
            ? apiGroup(catalog, segments[1]!)
            : apiResourceList(catalog, segments[1]!, segments[2]!);
      return once(key, build);
    }
    return undefined;
  };
}
