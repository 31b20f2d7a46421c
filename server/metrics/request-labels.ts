// The label values kube-apiserver 1.33 reports a request under (apiserver_request_total and
// friends): the verb as the metrics see it (LIST vs GET, WATCH, APPLY, CONNECT, "other"), the
// scope, and the dry_run value. Pure functions of the request, cheap enough for every request.

import type { RequestInfo } from '../request/request-info.js';

export const APPLY_PATCH_CONTENT_TYPE = 'application/apply-patch+yaml';

/** the verbs the metrics keep; anything else is reported as "other" */
const REPORTED_VERBS = new Set([
  'APPLY',
  'CONNECT',
  'CREATE',
  'DELETE',
  'DELETECOLLECTION',
  'GET',
  'LIST',
  'PATCH',
  'POST',
  'PROXY',
  'PUT',
  'UPDATE',
  'WATCH',
  'WATCHLIST',
]);

/** subresources served by streaming connections: reported as CONNECT */
const CONNECT_SUBRESOURCES = new Set(['log', 'exec', 'portforward', 'attach', 'proxy']);

const READ_ONLY_VERBS = new Set(['get', 'list', 'watch']);

/** "resource" for one object (or a create), "namespace" inside a namespace, "cluster" for
 *  other resource requests, "" for non-resource paths */
export function metricsScope(info: RequestInfo): string {
  if (info.name !== '' || info.verb === 'create') return 'resource';
  if (info.namespace !== '') return 'namespace';
  if (info.isResourceRequest) return 'cluster';
  return '';
}

/**
 * The verb label. `method` is the HTTP method (upper case), `contentType` the request's
 * Content-Type header. GET and HEAD of a collection are LIST, any watch is WATCH, a PATCH
 * with the apply content type is APPLY, streaming subresources are CONNECT; DELETE of a
 * collection stays DELETE and POST stays POST, as in kube-apiserver.
 */
export function reportedVerb(method: string, info: RequestInfo, scope: string, contentType: string | undefined): string {
  if (info.verb === 'watch') return 'WATCH';
  let verb = method;
  if (verb === 'GET' || verb === 'HEAD') verb = scope !== 'resource' && scope !== '' ? 'LIST' : 'GET';
  else if (verb === 'PATCH' && contentType === APPLY_PATCH_CONTENT_TYPE) verb = 'APPLY';
  if (info.isResourceRequest && info.subresource !== '' && CONNECT_SUBRESOURCES.has(info.subresource)) verb = 'CONNECT';
  return REPORTED_VERBS.has(verb) ? verb : 'other';
}

/** the dry_run label: "" without dryRun, "invalid" for values other than All, else the
 *  distinct values sorted and comma-joined */
export function dryRunLabel(query: URLSearchParams): string {
  if (!query.has('dryRun')) return '';
  const values = query.getAll('dryRun');
  if (values.some((v) => v !== 'All')) return 'invalid';
  return [...new Set(values)].sort().join(',');
}

/** requests that hold their connection open (watches, streaming subresources): they count
 *  in apiserver_longrunning_requests and not in the in-flight gauges */
export function isLongRunning(info: RequestInfo): boolean {
  return info.verb === 'watch' || info.verb === 'proxy' || (info.isResourceRequest && CONNECT_SUBRESOURCES.has(info.subresource));
}

/** the request_kind of apiserver_current_inflight_requests */
export function isReadOnly(info: RequestInfo): boolean {
  return READ_ONLY_VERBS.has(info.verb);
}

/** apiserver's username compression for authenticated_user_requests */
export function compressUsername(username: string): string {
  switch (username) {
    case 'admin':
    case 'client':
    case 'kube_proxy':
    case 'kubelet':
    case 'system:serviceaccount:kube-system:default':
      return username;
    default:
      return username.includes('@') ? 'email_id' : 'other';
  }
}
