import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiserverMetrics, InflightWatermark } from './apiserver-metrics.js';
import { createMetricsHandler } from './handler.js';
import { observeHealthChecks } from './health.js';
import { instrumentAuthenticator, instrumentAuthorizer } from './auth.js';
import { AuthenticationFailure } from '../authn/authenticator.js';
import type { AuthenticationRequest } from '../authn/authenticator.js';
import type { AuthorizationAttributes } from '../authz/authorizer.js';

const authnRequest = (path: string): AuthenticationRequest => ({ headers: {}, path, peerCertificates: [], peerVerified: false });

test('in-flight watermarks: the highest count of each period, then the current one', () => {
  const w = new InflightWatermark();
  w.start(true);
  w.start(true);
  w.start(false);
  w.end(true);
  assert.deepEqual(w.takeWatermarks(), { readOnly: 2, mutating: 1 });
  // the next period starts from what is still in flight
  assert.deepEqual(w.takeWatermarks(), { readOnly: 1, mutating: 1 });
  w.end(true);
  w.end(false);
  assert.deepEqual(w.takeWatermarks(), { readOnly: 1, mutating: 1 });
  assert.deepEqual(w.takeWatermarks(), { readOnly: 0, mutating: 0 });
});

test("/metrics: Prometheus text 0.0.4 with kube-apiserver's names, types and stability", async () => {
  const metrics = new ApiserverMetrics();
  metrics.requestTotal.inc({
    verb: 'LIST',
    dry_run: '',
    group: '',
    version: 'v1',
    resource: 'configmaps',
    subresource: '',
    scope: 'namespace',
    component: 'apiserver',
    code: '200',
  });
  metrics.publishWatermarks();
  const handler = createMetricsHandler(metrics);
  const answer = await handler({ method: 'GET', path: '/metrics', query: new URLSearchParams(), headers: {} });
  assert.ok(answer);
  assert.equal(answer.status, 200);
  assert.equal(answer.contentType, 'text/plain; version=0.0.4; charset=utf-8');
  const text = String(answer.body);
  assert.match(text, /^# HELP apiserver_request_total \[STABLE\] Counter of apiserver requests/m);
  assert.match(text, /^# TYPE apiserver_request_total counter$/m);
  assert.match(
    text,
    /^apiserver_request_total\{verb="LIST",dry_run="",group="",version="v1",resource="configmaps",subresource="",scope="namespace",component="apiserver",code="200"\} 1$/m,
  );
  assert.match(text, /^# TYPE apiserver_request_duration_seconds histogram$/m);
  assert.match(text, /^apiserver_current_inflight_requests\{request_kind="readOnly"\} 0$/m);
  assert.match(text, /^apiserver_current_inflight_requests\{request_kind="mutating"\} 0$/m);
  for (const name of [
    'process_cpu_seconds_total',
    'process_resident_memory_bytes',
    'process_start_time_seconds',
    'process_open_fds',
    'kubernetes_build_info',
  ]) {
    assert.match(text, new RegExp(`^${name}(\\{.*\\})? `, 'm'), name);
  }
  assert.equal(await handler({ method: 'GET', path: '/metricsx', query: new URLSearchParams(), headers: {} }), undefined);
});

test("/metrics/slis: each health check's last result and the count of results", async () => {
  const metrics = new ApiserverMetrics();
  let etcdUp = true;
  const checks = observeHealthChecks(
    'readyz',
    [
      { name: 'ping', check: async () => {} },
      {
        name: 'etcd',
        check: async () => {
          if (!etcdUp) throw new Error('down');
        },
      },
    ],
    metrics,
  );
  for (const c of checks) await c.check();
  etcdUp = false;
  await assert.rejects(checks[1]!.check(), /down/);
  const answer = await createMetricsHandler(metrics)({ method: 'GET', path: '/metrics/slis', query: new URLSearchParams(), headers: {} });
  const text = String(answer?.body);
  assert.match(text, /^# HELP kubernetes_healthcheck \[STABLE\] This metric records the result of a single healthcheck\.$/m);
  assert.match(text, /^kubernetes_healthcheck\{name="ping",type="readyz"\} 1$/m);
  assert.match(text, /^kubernetes_healthcheck\{name="etcd",type="readyz"\} 0$/m);
  assert.match(text, /^kubernetes_healthchecks_total\{name="etcd",type="readyz",status="success"\} 1$/m);
  assert.match(text, /^kubernetes_healthchecks_total\{name="etcd",type="readyz",status="error"\} 1$/m);
  assert.match(text, /^process_start_time_seconds \d+/m);
});

test('authentication and authorization attempts by result', async () => {
  const metrics = new ApiserverMetrics();
  const authn = instrumentAuthenticator(
    async (req) => {
      if (req.path === '/bad') throw new AuthenticationFailure([new Error('invalid bearer token')]);
      if (req.path === '/none' || req.path === '/livez') return null;
      return { username: 'jane@example.com', groups: [] };
    },
    { enabled: true, paths: ['/livez'] },
    metrics,
  );
  await authn(authnRequest('/ok'));
  await assert.rejects(authn(authnRequest('/bad')));
  assert.equal(await authn(authnRequest('/none')), null);
  assert.equal(await authn(authnRequest('/livez')), null);
  const attempts = await metrics.authenticationAttempts.get();
  const byResult = Object.fromEntries(attempts.values.map((v) => [v.labels.result, v.value]));
  assert.deepEqual(byResult, { success: 2, error: 1, failure: 1 });
  const users = await metrics.authenticatedUserRequests.get();
  assert.deepEqual(Object.fromEntries(users.values.map((v) => [v.labels.username, v.value])), { email_id: 1, other: 1 });

  const decisions = ['allow', 'deny', 'noOpinion'] as const;
  let i = 0;
  const authz = instrumentAuthorizer({ authorize: async () => ({ decision: decisions[i++ % 3]! }) }, metrics);
  const attrs = {
    user: { username: 'u', groups: [] },
    verb: 'get',
    isResourceRequest: false,
    path: '/x',
  } as unknown as AuthorizationAttributes;
  for (let n = 0; n < 3; n++) await authz.authorize(attrs);
  const authzAttempts = await metrics.authorizationAttempts.get();
  assert.deepEqual(Object.fromEntries(authzAttempts.values.map((v) => [v.labels.result, v.value])), {
    allowed: 1,
    denied: 1,
    'no-opinion': 1,
  });
});

test("watch events: one count and one size per event, by the endpoint's kind", async () => {
  const metrics = new ApiserverMetrics();
  const record = metrics.watchEventRecorder({ group: 'apps', version: 'v1', kind: 'Deployment' });
  record(100);
  record(3000);
  const text = await metrics.registry.metrics();
  assert.match(text, /^apiserver_watch_events_total\{group="apps",version="v1",kind="Deployment"\} 2$/m);
  assert.match(text, /^apiserver_watch_events_sizes_bucket\{le="1024",group="apps",version="v1",kind="Deployment"\} 1$/m);
  assert.match(text, /^apiserver_watch_events_sizes_bucket\{le="4096",group="apps",version="v1",kind="Deployment"\} 2$/m);
});
