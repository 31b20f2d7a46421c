// The whole HTTP side of the server as one request listener: the handler chain around the
// router. Resource requests go to the endpoints; health, version, discovery and OpenAPI are
// served from what main supplies.

import type { RESTResource, ResourceResolver } from '../registry/rest.js';
import { createResourceHandler } from '../endpoints/dispatch.js';
import { builtinPatchTypes } from '../endpoints/patch/appliers.js';
import type { PatchApplier } from '../endpoints/patch/types.js';
import type { EndpointConfig } from '../endpoints/scope.js';
import type { TableConvertor } from '../endpoints/table.js';
import { tableConvertorFor } from '../registry/providers.js';
import type { Auditor } from '../audit/config.js';
import { MAX_REQUEST_BODY_BYTES } from '../limits/decode-limits.js';
import type { Authenticator } from '../authn/authenticator.js';
import type { Authorizer } from '../authz/authorizer.js';
import { buildHandlerChain, toRequestListener, type ChainOptions, type ServingFilterOptions } from './chain.js';
import type { MaxInFlightOptions } from './filters/max-in-flight.js';
import type { AnonymousOptions } from './filters/authentication.js';
import type { DeprecationLookup } from './filters/deprecation.js';
import type { PanicReporter } from './filters/panic-recovery.js';
import { createHealthHandler, type HealthOptions } from './health.js';
import { writeBody, writeStatusError } from '../request/response.js';
import { errors } from '../machinery/status.js';
import { header, type Handler, type HttpRequest, type HttpResponse, type RequestState, type UpgradeSocket } from '../request/types.js';
import { serveVersion } from './version.js';
import { defaultVersionInfo, type VersionInfo } from '../machinery/version.js';

export type { NonResourceHandler, NonResourceRequest, RawResponse } from '../request/non-resource.js';
import type { NonResourceHandler, NonResourceRequest, RawResponse } from '../request/non-resource.js';

export interface ApiHandlerOptions {
  resolver: ResourceResolver;
  /** requests another server answers (aggregated APIs): a handler for such a path, after
   *  authentication and authorization, before anything local */
  delegateFor?: (path: string) => Handler | undefined;
  /** /api, /apis, /api/<v>, /apis/<g>, /apis/<g>/<v> */
  discovery?: NonResourceHandler;
  /** /openapi/v2, /openapi/v3, /openapi/v3/... */
  openapi?: NonResourceHandler;
  /** more non-resource paths (metrics, .well-known, ...) */
  nonResource?: NonResourceHandler[];
  health?: HealthOptions;
  version?: Partial<VersionInfo>;
  authenticator: Authenticator;
  anonymous?: AnonymousOptions;
  authorizer?: Authorizer;
  /** columns of a resource (default: the built-in ones by group/resource, else Name/Created At) */
  tableConvertorFor?: (resource: RESTResource) => TableConvertor | undefined;
  /** PATCH content types beyond JSON patch and merge patch (strategic merge, apply) */
  patchTypes?: ReadonlyMap<string, PatchApplier>;
  /** default 3 MiB */
  maxRequestBodyBytes?: number;
  /** default 1800 */
  minRequestTimeoutSeconds?: number;
  /** the admission chain's hooks for one request */
  admissionFor?: EndpointConfig['admissionFor'];
  /** sendInitialEvents on watch (default true) */
  watchListEnabled?: boolean;
  /** the AllowUnsafeMalformedObjectDeletion gate (default off) */
  allowUnsafeMalformedObjectDeletion?: boolean;
  /** abort when shutdown begins: open watches end cleanly (kube-apiserver's ShuttingDown) */
  shutdownSignal?: AbortSignal;
  onPanic?: PanicReporter;
  onAuthenticationFailure?: (err: unknown) => void;
  /** the HTTP serving flags' filters */
  serving?: ServingFilterOptions;
  /** priority and fairness, or the classic max-in-flight limits; absent: no limit */
  maxInFlight?: MaxInFlightOptions;
  /** audit policy and backends (--audit-*); absent: nothing is audited */
  auditor?: Auditor;
  /** the connect subresources (pod log, exec, attach, port-forward, the proxies): true when
   *  it served the request */
  connect?: (state: RequestState) => Promise<boolean>;
  /** non-resource paths authorized as another one (kapi's /status as /metrics) */
  authorizationAliases?: ChainOptions['authorizationAliases'];
  /** --replica-response-header: the name every response carries */
  replicaName?: string;
}

export const DEFAULT_MAX_REQUEST_BODY_BYTES = MAX_REQUEST_BODY_BYTES;
export const DEFAULT_MIN_REQUEST_TIMEOUT_SECONDS = 1800;

export function defaultTableConvertorFor(resource: RESTResource): TableConvertor {
  return tableConvertorFor(resource.info, resource.subresource);
}

function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .some((t) => t === '*' || t === etag || t === `"${etag}"` || `"${t}"` === etag);
}

async function writeRaw(state: RequestState, r: RawResponse): Promise<void> {
  const headers: Record<string, string> = { ...(r.headers ?? {}) };
  if (r.etag) {
    headers['ETag'] = r.etag.startsWith('"') ? r.etag : `"${r.etag}"`;
    if (r.status === 200 && etagMatches(header(state.req, 'if-none-match'), r.etag)) {
      for (const [k, v] of Object.entries(headers)) state.res.setHeader(k, v);
      state.res.writeHead(304);
      state.res.end();
      return;
    }
  }
  await writeBody(state, r.status, r.body, r.contentType, { headers });
}

/** the innermost handler: routes by path after the chain has run */
export function createRouter(opts: ApiHandlerOptions): Handler {
  const config: EndpointConfig = {
    maxRequestBodyBytes: opts.maxRequestBodyBytes ?? DEFAULT_MAX_REQUEST_BODY_BYTES,
    minRequestTimeoutSeconds: opts.minRequestTimeoutSeconds ?? DEFAULT_MIN_REQUEST_TIMEOUT_SECONDS,
    watchListEnabled: opts.watchListEnabled ?? true,
    allowUnsafeMalformedObjectDeletion: opts.allowUnsafeMalformedObjectDeletion ?? false,
    tableConvertorFor: opts.tableConvertorFor ?? defaultTableConvertorFor,
    patchTypes: new Map([...builtinPatchTypes(), ...(opts.patchTypes ?? new Map())]),
    shutdownSignal: opts.shutdownSignal,
    authorizer: opts.authorizer,
    admissionFor: opts.admissionFor,
  };
  const resources = createResourceHandler(opts.resolver, config);
  const health = createHealthHandler(opts.health ?? {});
  const version = defaultVersionInfo(opts.version);
  const providers = [opts.discovery, opts.openapi, ...(opts.nonResource ?? [])].filter((p): p is NonResourceHandler => p !== undefined);

  return async (state) => {
    const delegate = opts.delegateFor?.(state.path);
    if (delegate) {
      await delegate(state);
      return;
    }
    if (state.info.isResourceRequest) {
      if (opts.connect && (await opts.connect(state))) return;
      await resources(state);
      return;
    }
    if (await health(state)) return;
    if (state.path === '/version' || state.path === '/version/') {
      if (state.method !== 'GET' && state.method !== 'HEAD') await writeStatusError(state, errors.methodNotRegistered());
      else await serveVersion(state, version);
      return;
    }
    const request: NonResourceRequest = {
      method: state.method,
      path: state.path,
      query: state.query,
      headers: state.req.headers,
      user: state.user,
    };
    for (const provider of providers) {
      const answer = await provider(request);
      if (answer) {
        await writeRaw(state, answer);
        return;
      }
    }
    await writeStatusError(state, errors.pathNotFound());
  };
}

/** deprecation as the served resource's info states it (catalog or CRD version) */
function deprecationsOf(resolver: ResourceResolver): DeprecationLookup {
  return (group, version, resource, subresource) => {
    const info = resolver.lookup(group, version, resource, subresource || undefined)?.info;
    if (!info?.deprecated) return undefined;
    return { warning: info.deprecationWarning ?? '', removedRelease: info.removedRelease ?? '' };
  };
}

/** The request listener for createSecureServer: the full chain around the router. */
export function createApiHandler(opts: ApiHandlerOptions): (req: HttpRequest, res: HttpResponse, upgrade?: UpgradeSocket) => void {
  const chain = buildHandlerChain(createRouter(opts), {
    authenticator: opts.authenticator,
    anonymous: opts.anonymous,
    authorizer: opts.authorizer,
    onPanic: opts.onPanic,
    onAuthenticationFailure: opts.onAuthenticationFailure,
    maxInFlight: opts.maxInFlight,
    serving: opts.serving,
    auditor: opts.auditor,
    authorizationAliases: opts.authorizationAliases,
    replicaName: opts.replicaName,
    deprecationOf: deprecationsOf(opts.resolver),
  });
  return toRequestListener(chain, opts.onPanic);
}
