import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiserverMetrics } from './apiserver-metrics.js';
import { aggregateMetricsText } from './cluster.js';

const latencyLabels = {
  verb: 'LIST',
  dry_run: '',
  group: '',
  version: 'v1',
  resource: 'configmaps',
  subresource: '',
  scope: 'namespace',
  component: 'apiserver',
};
const listLabels = { ...latencyLabels, code: '200' };

/** the value of the series whose line starts with `prefix` */
function valueOf(text: string, prefix: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

test("a replica's /metrics merges its workers: requests and histograms summed, one build, object counts not multiplied", async () => {
  const workers = [new ApiserverMetrics(), new ApiserverMetrics()];
  workers[0]!.requestTotal.inc(listLabels, 3);
  workers[1]!.requestTotal.inc(listLabels, 4);
  workers[0]!.requestDuration.observe(latencyLabels, 0.01);
  workers[1]!.requestDuration.observe(latencyLabels, 0.3);
  // both workers count the same objects from their own caches
  for (const w of workers) w.storageObjects.set({ resource: 'configmaps' }, 12);
  workers[0]!.observeHealthcheck('etcd', 'readyz', true);
  workers[1]!.observeHealthcheck('etcd', 'readyz', false);

  const text = await aggregateMetricsText(await Promise.all(workers.map((w) => w.registry.getMetricsAsJSON())));
  assert.equal(valueOf(text, 'apiserver_request_total{verb="LIST"'), 7);
  assert.equal(valueOf(text, 'apiserver_request_duration_seconds_count{verb="LIST"'), 2);
  assert.equal(valueOf(text, 'apiserver_request_duration_seconds_bucket{le="0.025",verb="LIST"'), 1);
  assert.equal(valueOf(text, 'apiserver_storage_objects{resource="configmaps"}'), 12);
  assert.equal(valueOf(text, 'kubernetes_build_info{'), 1);
  assert.match(text, /^# TYPE apiserver_request_duration_seconds histogram$/m);
  assert.ok((valueOf(text, 'process_start_time_seconds ') ?? 0) > 0, 'the start time is kept');

  // a replica is healthy only when every worker is
  const slis = await aggregateMetricsText(await Promise.all(workers.map((w) => w.sliRegistry.getMetricsAsJSON())));
  assert.equal(valueOf(slis, 'kubernetes_healthcheck{name="etcd",type="readyz"}'), 0);
  assert.equal(valueOf(slis, 'kubernetes_healthchecks_total{name="etcd",type="readyz",status="success"}'), 1);
});
