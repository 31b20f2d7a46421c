// The instrumentation filter: the innermost wrapper of the chain (after authorization, so
// 401 and 403 answers are not counted, as in kube-apiserver, whose counting happens at the
// route). Records apiserver_request_total, _request_duration_seconds, _response_sizes,
// _longrunning_requests and the in-flight counts behind _current_inflight_requests.
//
// Counted, as kube-apiserver counts them: resource requests to served resources, the root
// health endpoints (/healthz, /livez, /readyz: subresource = the path, component "") and
// aggregated discovery (/api, /apis: subresource = the path). Other non-resource paths count
// only toward the in-flight gauges. Nothing here awaits or builds strings beyond label values.

import type { Filter, RequestState } from '../request/types.js';
import { header } from '../request/types.js';
import { defaultMetrics, type ApiserverMetrics } from './apiserver-metrics.js';
import { dryRunLabel, isLongRunning, isReadOnly, metricsScope, reportedVerb } from './request-labels.js';
import { CounterSeries, HistogramSeries } from './series.js';

const APISERVER = 'apiserver';
const HEALTH_PATHS = new Set(['/healthz', '/livez', '/readyz']);
const DISCOVERY_PATHS = new Set(['/api', '/apis']);

/** the component label of a counted request, or undefined when the request is not counted */
function componentOf(state: RequestState, metrics: ApiserverMetrics): string | undefined {
  const info = state.info;
  if (info.isResourceRequest) {
    const served = metrics.isServed;
    return !served || served(info.apiGroup, info.apiVersion, info.resource, info.subresource) ? APISERVER : undefined;
  }
  if (HEALTH_PATHS.has(state.path)) return '';
  if (DISCOVERY_PATHS.has(state.path) && (header(state.req, 'accept') ?? '').includes('as=APIGroupDiscoveryList')) return APISERVER;
  return undefined;
}

interface RequestSeries {
  total: CounterSeries<string>;
  duration: HistogramSeries<string>;
  sizes: HistogramSeries<string>;
}

const seriesByMetrics = new WeakMap<ApiserverMetrics, RequestSeries>();

function requestSeries(metrics: ApiserverMetrics): RequestSeries {
  let series = seriesByMetrics.get(metrics);
  if (!series) {
    series = {
      total: new CounterSeries(metrics.requestTotal),
      duration: new HistogramSeries(metrics.requestDuration),
      sizes: new HistogramSeries(metrics.responseSizes),
    };
    seriesByMetrics.set(metrics, series);
  }
  return series;
}

export function withRequestMetrics(metrics: ApiserverMetrics = defaultMetrics()): Filter {
  return (next) => async (state) => {
    const info = state.info;
    const longRunning = isLongRunning(info);
    const readOnly = isReadOnly(info);
    const component = componentOf(state, metrics);
    if (component === undefined) {
      if (longRunning) return next(state);
      metrics.inflight.start(readOnly);
      try {
        return await next(state);
      } finally {
        metrics.inflight.end(readOnly);
      }
    }

    const scope = metricsScope(info);
    const verb = reportedVerb(state.method, info, scope, header(state.req, 'content-type'));
    const resourceRequest = info.isResourceRequest;
    const group = resourceRequest ? info.apiGroup : '';
    const version = resourceRequest ? info.apiVersion : '';
    const resource = resourceRequest ? info.resource : '';
    const subresource = resourceRequest ? info.subresource : state.path;

    let longRunningLabels: Record<string, string> | undefined;
    if (longRunning) {
      longRunningLabels = { verb, group, version, resource, subresource, scope, component };
      metrics.longRunning.inc(longRunningLabels);
    } else {
      metrics.inflight.start(readOnly);
    }
    try {
      await next(state);
    } finally {
      if (longRunningLabels) metrics.longRunning.dec(longRunningLabels);
      else metrics.inflight.end(readOnly);
    }

    // reached only when the handler returned (a thrown handler is a 500 the panic filter
    // writes; kube-apiserver does not count those at the route either)
    const dryRun = dryRunLabel(state.query);
    const code = state.res.statusCode;
    // one key names the series of all three metrics (the label values never hold a NUL)
    const key = `${verb}\0${dryRun}\0${group}\0${version}\0${resource}\0${subresource}\0${scope}\0${component}`;
    const series = requestSeries(metrics);
    series.total.inc(`${key}\0${code}`, () => ({
      verb,
      dry_run: dryRun,
      group,
      version,
      resource,
      subresource,
      scope,
      component,
      code: String(code),
    }));
    series.duration.observe(
      key,
      () => ({ verb, dry_run: dryRun, group, version, resource, subresource, scope, component }),
      (Date.now() - state.receivedAt) / 1000,
    );
    // sizes of reads only; every complete body carries its (possibly compressed) length
    if ((verb === 'GET' || verb === 'LIST') && state.method !== 'HEAD') {
      const length = Number(state.res.getHeader('content-length'));
      if (Number.isFinite(length))
        series.sizes.observe(key, () => ({ verb, group, version, resource, subresource, scope, component }), length);
    }
  };
}

/**
 * Counts a request turned away with 429 before it reached its handler (max-in-flight or
 * priority and fairness): apiserver_request_total with code 429 and
 * apiserver_request_terminations_total, as kube-apiserver records dropped requests.
 */
export function recordDroppedRequest(state: RequestState, metrics: ApiserverMetrics = defaultMetrics()): void {
  const info = state.info;
  const resourceRequest = info.isResourceRequest;
  if (resourceRequest && metrics.isServed && !metrics.isServed(info.apiGroup, info.apiVersion, info.resource, info.subresource)) return;
  const scope = metricsScope(info);
  const verb = reportedVerb(state.method, info, scope, header(state.req, 'content-type'));
  const group = resourceRequest ? info.apiGroup : '';
  const version = resourceRequest ? info.apiVersion : '';
  const resource = resourceRequest ? info.resource : '';
  const subresource = resourceRequest ? info.subresource : '';
  const code = '429';
  metrics.requestTotal.inc({
    verb,
    dry_run: dryRunLabel(state.query),
    group,
    version,
    resource,
    subresource,
    scope,
    component: APISERVER,
    code,
  });
  // the terminations name a non-resource request by its path
  metrics.requestTerminations.inc({
    verb,
    group,
    version,
    resource,
    subresource: resourceRequest ? subresource : state.path,
    scope,
    component: APISERVER,
    code,
  });
}
