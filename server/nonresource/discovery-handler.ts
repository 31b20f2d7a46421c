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
import type { NonResourceHandler, RawResponse } from '../http/api-handler.js';

export interface DiscoveryHandlerOptions {
  catalog: DiscoveryCatalog;
  /** `host:port` that /api's serverAddressByClientCIDRs names (the advertise address) */
  serverAddress: string;
}

function raw(doc: DiscoveryResponse): RawResponse {
  return { status: 200, body: doc.body, contentType: doc.contentType, etag: doc.etag, headers: doc.headers };
}

export function createDiscoveryHandler(opts: DiscoveryHandlerOptions): NonResourceHandler {
  const { catalog } = opts;
  return (req) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
    const segments = req.path.split('/').filter((s) => s !== '');
    const root = segments[0];
    if (root !== 'api' && root !== 'apis') return undefined;
    if (segments.length === 1) {
      const accept = req.headers.accept;
      const form = negotiateDiscovery(Array.isArray(accept) ? accept.join(',') : accept);
      if (form !== 'legacy') return raw(aggregatedDiscovery(catalog, root, form));
      return raw(root === 'api' ? apiVersions(opts.serverAddress) : apiGroupList(catalog));
    }
    if (root === 'api' && segments.length === 2) {
      const doc = apiResourceList(catalog, '', segments[1]!);
      return doc && raw(doc);
    }
    if (root === 'apis' && segments.length === 2) {
      const doc = apiGroup(catalog, segments[1]!);
      return doc && raw(doc);
    }
    if (root === 'apis' && segments.length === 3) {
      const doc = apiResourceList(catalog, segments[1]!, segments[2]!);
      return doc && raw(doc);
    }
    return undefined;
  };
}
