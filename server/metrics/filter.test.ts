import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RequestCancellation } from '../request/cancellation.js';
import { parseRequestInfo, nonResourceInfo } from '../request/request-info.js';
import type { HttpRequest, HttpResponse, RequestState } from '../request/types.js';
import { ApiserverMetrics } from './apiserver-metrics.js';
import { recordDroppedRequest, withRequestMetrics } from './filter.js';

/** the parts of a request state the filter reads; the response keeps only status and headers */
function stateOf(method: string, url: string, headers: Record<string, string> = {}): RequestState {
  const u = new URL(url, 'https://kapi.invalid');
  const resource = /^\/apis?\/./.test(u.pathname);
  const responseHeaders = new Map<string, string>();
  const cancellation = new RequestCancellation();
  const res = {
    statusCode: 200,
    getHeader: (name: string) => responseHeaders.get(name.toLowerCase()),
    setHeader: (name: string, value: string) => responseHeaders.set(name.toLowerCase(), value),
  } as unknown as HttpResponse;
  return {
    req: { headers } as unknown as HttpRequest,
    res,
    method,
    path: u.pathname,
    query: u.searchParams,
    info: resource ? parseRequestInfo(method, u.pathname, u.searchParams) : nonResourceInfo(method, u.pathname),
    warnings: [],
    signal: cancellation.signal,
    cancellation,
    auditId: '',
    receivedAt: Date.now(),
  };
}

async function value(
  metrics: ApiserverMetrics,
  name: 'requestTotal' | 'requestTerminations',
  labels: Record<string, string>,
): Promise<number> {
  const m = await metrics[name].get();
  return m.values
    .filter((v) => Object.entries(labels).every(([k, l]) => (v.labels as Record<string, string | number | undefined>)[k] === l))
    .reduce((n, v) => n + v.value, 0);
}

test('the filter counts served resources, health endpoints and aggregated discovery only', async () => {
  const metrics = new ApiserverMetrics();
  metrics.isServed = (group, version, resource) => group === '' && version === 'v1' && resource === 'configmaps';
  const filter = withRequestMetrics(metrics);
  const handler = filter(async (state) => {
    state.res.statusCode = state.method === 'POST' ? 201 : 200;
    state.res.setHeader('Content-Length', '1500');
  });
  await handler(stateOf('GET', '/api/v1/namespaces/ns/configmaps'));
  await handler(stateOf('POST', '/api/v1/namespaces/ns/configmaps?dryRun=All'));
  await handler(stateOf('GET', '/api/v1/namespaces/ns/secrets'));
  await handler(stateOf('GET', '/readyz'));
  await handler(stateOf('GET', '/apis', { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' }));
  await handler(stateOf('GET', '/apis'));
  await handler(stateOf('GET', '/version'));

  assert.equal(
    await value(metrics, 'requestTotal', { verb: 'LIST', resource: 'configmaps', scope: 'namespace', code: '200', component: 'apiserver' }),
    1,
  );
  assert.equal(
    await value(metrics, 'requestTotal', { verb: 'POST', resource: 'configmaps', scope: 'resource', code: '201', dry_run: 'All' }),
    1,
  );
  assert.equal(await value(metrics, 'requestTotal', { resource: 'secrets' }), 0);
  assert.equal(await value(metrics, 'requestTotal', { verb: 'GET', subresource: '/readyz', component: '', scope: '' }), 1);
  assert.equal(await value(metrics, 'requestTotal', { verb: 'GET', subresource: '/apis', component: 'apiserver' }), 1);
  assert.equal(await value(metrics, 'requestTotal', { subresource: '/version' }), 0);
  const sizes = await metrics.responseSizes.get();
  const listSizes = sizes.values.find((v) => v.metricName === 'apiserver_response_sizes_count' && v.labels.verb === 'LIST');
  assert.equal(listSizes?.value, 1);
  assert.equal(sizes.values.filter((v) => v.labels.verb === 'POST').length, 0);
});

test('requests in flight and open watches are tracked while they run', async () => {
  const metrics = new ApiserverMetrics();
  let seen: { readOnly: number; mutating: number; watches: number } | undefined;
  const handler = withRequestMetrics(metrics)(async (state) => {
    if (state.info.verb === 'watch') {
      const g = await metrics.longRunning.get();
      seen = {
        readOnly: metrics.inflight.readOnly,
        mutating: metrics.inflight.mutating,
        watches: g.values.find((v) => v.labels.verb === 'WATCH')?.value ?? 0,
      };
    }
  });
  await handler(stateOf('GET', '/api/v1/namespaces/ns/configmaps?watch=true'));
  assert.deepEqual(seen, { readOnly: 0, mutating: 0, watches: 1 });
  const after = await metrics.longRunning.get();
  assert.equal(after.values.find((v) => v.labels.verb === 'WATCH')?.value, 0);
  assert.equal(await value(metrics, 'requestTotal', { verb: 'WATCH', code: '200' }), 1);

  const mutating = withRequestMetrics(metrics)(async () => {
    assert.equal(metrics.inflight.mutating, 1);
  });
  await mutating(stateOf('DELETE', '/api/v1/namespaces/ns/configmaps/a'));
  assert.equal(metrics.inflight.mutating, 0);
  assert.deepEqual(metrics.inflight.takeWatermarks(), { readOnly: 0, mutating: 1 });
});

test('a request turned away with 429 counts in request_total and request_terminations_total', async () => {
  const metrics = new ApiserverMetrics();
  recordDroppedRequest(stateOf('POST', '/api/v1/namespaces/ns/configmaps'), metrics);
  recordDroppedRequest(stateOf('GET', '/openapi/v2'), metrics);
  assert.equal(await value(metrics, 'requestTotal', { verb: 'POST', resource: 'configmaps', code: '429', component: 'apiserver' }), 1);
  assert.equal(await value(metrics, 'requestTerminations', { verb: 'POST', resource: 'configmaps', code: '429' }), 1);
  assert.equal(await value(metrics, 'requestTotal', { verb: 'GET', resource: '', subresource: '', code: '429' }), 1);
  assert.equal(await value(metrics, 'requestTerminations', { verb: 'GET', subresource: '/openapi/v2', code: '429' }), 1);
});
