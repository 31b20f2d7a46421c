// Serves /openapi/v2, /openapi/v3 and /openapi/v3/<group-version> from server/apis'
// OpenAPIService, which decides status, headers and caching; this only adapts the answer.

import type { OpenAPIResponse, OpenAPIService } from '../apis/openapi.js';
import type { NonResourceHandler, NonResourceRequest, RawResponse } from '../request/non-resource.js';

function headerValue(req: NonResourceRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

function raw(res: OpenAPIResponse): RawResponse | undefined {
  // an unknown group version is the router's plain 404 Status
  if (res.status === 404) return undefined;
  const headers = { ...res.headers };
  const contentType = headers['Content-Type'] ?? 'text/plain; charset=utf-8';
  delete headers['Content-Type'];
  return { status: res.status, body: res.body ?? '', contentType, headers };
}

export function createOpenAPIHandler(service: OpenAPIService): NonResourceHandler {
  return (req) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
    const path = req.path.replace(/\/+$/, '');
    const common = { accept: headerValue(req, 'accept'), ifNoneMatch: headerValue(req, 'if-none-match') };
    if (path === '/openapi/v2') return raw(service.serveV2(common));
    if (path === '/openapi/v3') return raw(service.serveV3Index(common));
    if (path.startsWith('/openapi/v3/')) {
      return raw(service.serveV3(path.slice('/openapi/v3/'.length), { ...common, hash: req.query.get('hash') ?? undefined }));
    }
    return undefined;
  };
}
