// What every verb handler needs about the request it serves: the resource, the names from
// the path, the kind bodies must carry, and the request context handed to the registry.

import type { GroupVersionKind } from '../apis/types.js';
import type { Authorizer } from '../authz/authorizer.js';
import type { AdmissionHooks, RESTResource, RequestContext } from '../registry/rest.js';
import type { RequestInfo } from '../request/request-info.js';
import type { ResourceRef } from '../machinery/status.js';
import { header, type RequestState } from '../request/types.js';
import { negotiateOutput, resourceRestrictions, type OutputMediaType } from '../request/negotiation.js';
import { anonymousUser } from '../authn/authenticator.js';
import { servesProtobuf } from '../protobuf/http.js';
import type { TableConvertor } from './table.js';
import type { PatchApplier } from './patch/types.js';

export interface EndpointConfig {
  /** request bodies larger than this are refused with 413 (kube-apiserver: 3 MiB) */
  maxRequestBodyBytes: number;
  /** watches without timeoutSeconds last between 1x and 2x this (kube-apiserver: 1800) */
  minRequestTimeoutSeconds: number;
  /** the WatchList feature: `sendInitialEvents` on watch */
  watchListEnabled: boolean;
  /** the Table convertor for a resource, undefined when it cannot be shown as a Table */
  tableConvertorFor(resource: RESTResource): TableConvertor | undefined;
  /** PATCH content types served, each with its applier */
  patchTypes: ReadonlyMap<string, PatchApplier>;
  /** aborted when the server begins to shut down: open watches end so clients move on */
  shutdownSignal?: AbortSignal;
  /** asked about checks inside a request (the unsafe-delete verb); none means allowed */
  authorizer?: Authorizer;
  /** the AllowUnsafeMalformedObjectDeletion gate: DELETE may take
   *  ignoreStoreReadErrorWithClusterBreakingPotential */
  allowUnsafeMalformedObjectDeletion?: boolean;
  /** the admission chain's hooks for one request (none: no admission) */
  admissionFor?: (state: RequestState) => AdmissionHooks | undefined;
}

export interface Scope {
  readonly state: RequestState;
  readonly info: RequestInfo;
  readonly resource: RESTResource;
  readonly config: EndpointConfig;
  /** the namespace the registry sees: '' for cluster-scoped resources */
  readonly namespace: string;
  /** from the path (or a metadata.name field selector for list/watch) */
  readonly name: string;
  /** names the resource in errors (kube-apiserver uses the plural in `details.kind`) */
  readonly ref: ResourceRef;
  /** the kind request bodies carry and responses are in */
  readonly kind: GroupVersionKind;
}

export function apiVersionOf(gv: { group: string; version: string }): string {
  return gv.group ? `${gv.group}/${gv.version}` : gv.version;
}

export function isNamespaceResource(resource: RESTResource): boolean {
  return resource.info.group === '' && resource.info.resource === 'namespaces';
}

export function newScope(state: RequestState, resource: RESTResource, config: EndpointConfig): Scope {
  const info = state.info;
  const ri = resource.info;
  const sub = resource.subresource ? ri.subresources.find((s) => s.name === resource.subresource) : undefined;
  const kind = sub ? sub.kind : { group: ri.group, version: ri.version, kind: ri.kind };
  return {
    state,
    info,
    resource,
    config,
    namespace: ri.namespaced ? info.namespace : '',
    name: info.name,
    ref: { group: ri.group, resource: ri.resource, name: info.name || undefined },
    kind,
  };
}

export interface ContextOptions {
  dryRun?: boolean;
  fieldManager?: string;
  fieldValidation?: RequestContext['fieldValidation'];
  signal?: AbortSignal;
}

export function requestContext(scope: Scope, opts: ContextOptions = {}): RequestContext {
  const state = scope.state;
  const ctx: RequestContext = {
    user: state.user ?? anonymousUser(),
    namespace: scope.namespace,
    dryRun: opts.dryRun ?? false,
    fieldValidation: opts.fieldValidation ?? 'Warn',
    warnings: state.warnings,
    // the request's own signal is made only if the work reads it (request/cancellation.ts)
    cancellation: opts.signal ? { signal: opts.signal } : state,
  };
  if (opts.fieldManager !== undefined && opts.fieldManager !== '') ctx.fieldManager = opts.fieldManager;
  if (scope.name) ctx.name = scope.name;
  const admission = scope.config.admissionFor?.(scope.state);
  if (admission) ctx.admission = admission;
  return ctx;
}

/** the response media type for this resource (Table offered when the resource has columns) */
export function negotiateFor(scope: Scope, stream = false): OutputMediaType {
  const tableSupported = scope.config.tableConvertorFor(scope.resource) !== undefined;
  return negotiateOutput(
    header(scope.state.req, 'accept'),
    resourceRestrictions(tableSupported, servesProtobuf(scope.kind), scope.state.cbor === true),
    stream,
  );
}
