// Requests to a deprecated resource, as kube-apiserver's route instrumentation treats them:
// the resource's `Warning: 299` goes out with the answer; once answered, the request sets
// apiserver_requested_deprecated_apis and carries the `k8s.io/deprecated` (and, when a
// removal is planned, `k8s.io/removed-release`) audit annotations. Whether a resource is
// deprecated is a property of its served version (the catalog, a CRD version's
// `deprecated`), found with the same lookup that routes the request.
//
// Inside authorization, as kube's route handlers are: a 401 or 403 carries no warning.

import { defaultMetrics, type ApiserverMetrics } from '../../metrics/apiserver-metrics.js';
import type { Filter, Handler, RequestState } from '../../request/types.js';
import { addAuditAnnotations } from '../../request/audit-annotations.js';
import { addWarning } from '../../machinery/warnings.js';

export interface ApiDeprecation {
  readonly warning: string;
  /** '' when no removal is planned */
  readonly removedRelease: string;
}

/** the deprecation of a served resource, undefined when it is not deprecated (or not served) */
export type DeprecationLookup = (group: string, version: string, resource: string, subresource: string) => ApiDeprecation | undefined;

const DEPRECATED_ANNOTATION = 'k8s.io/deprecated';
const REMOVED_RELEASE_ANNOTATION = 'k8s.io/removed-release';

export function withDeprecationWarnings(deprecationOf: DeprecationLookup, metrics: ApiserverMetrics = defaultMetrics()): Filter {
  // a request for what is not deprecated goes on in the same promise
  return (next) => (state) => {
    const info = state.info;
    if (!info.isResourceRequest) return next(state);
    const deprecation = deprecationOf(info.apiGroup, info.apiVersion, info.resource, info.subresource);
    if (!deprecation) return next(state);
    return serveDeprecated(state, deprecation, next, metrics);
  };
}

async function serveDeprecated(state: RequestState, deprecation: ApiDeprecation, next: Handler, metrics: ApiserverMetrics): Promise<void> {
  const info = state.info;
  addWarning(state.warnings, deprecation.warning);
  await next(state);
  // reached when the handler answered (a thrown handler is the panic filter's 500, which
  // kube records at no route either)
  metrics.requestedDeprecatedApis.set(
    {
      group: info.apiGroup,
      version: info.apiVersion,
      resource: info.resource,
      subresource: info.subresource,
      removed_release: deprecation.removedRelease,
    },
    1,
  );
  const annotations: Record<string, string> = { [DEPRECATED_ANNOTATION]: 'true' };
  if (deprecation.removedRelease !== '') annotations[REMOVED_RELEASE_ANNOTATION] = deprecation.removedRelease;
  addAuditAnnotations(state, annotations);
}
