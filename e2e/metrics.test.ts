// /metrics and /metrics/slis with kubectl 1.33 against a kapi under Node,RBAC: after create,
// get, list, server-side apply, delete and a watch, `kubectl get --raw /metrics` shows the
// request counters with kube-apiserver's labels (LIST vs GET, APPLY, WATCH, scope, code),
// the long-running gauge of an open watch, watch events by kind, the object count of ConfigMaps from the watch
// cache, etcd request latencies and process metrics; a user in system:monitoring may read
// the metrics (and kapi's /status), another user gets 403; /metrics/slis lists the health
// checks' results.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kubectl, kubectlOk, kubectlSpawn, startKapi, uniqueName, waitFor, writeKubeconfig, type KapiProcess } from './harness.js';

const TOKENS = ['tok-mon,mon,mon-uid,"system:monitoring"', 'tok-nobody,nobody,nobody-uid'].join('\n') + '\n';

/** one sample line of the text format: name, labels, value */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/** the samples of `name` whose labels include `want` */
function find(samples: Sample[], name: string, want: Record<string, string>): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(want).every(([k, v]) => s.labels[k] === v));
}

describe('metrics: /metrics and /metrics/slis with kubectl 1.33', () => {
  let kapi: KapiProcess;
  let dir: string;
  const ns = uniqueName('metrics');
  const admin = (): { kubeconfig: string } => ({ kubeconfig: kapi.kubeconfig });
  const scrape = async (kubeconfig = kapi.kubeconfig, p = '/metrics'): Promise<Sample[]> =>
    parseMetrics(await kubectlOk(['get', '--raw', p], { kubeconfig }));

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-metrics-'));
    writeFileSync(path.join(dir, 'tokens.csv'), TOKENS);
    kapi = await startKapi({
      extraArgs: [
        '--authorization-mode=Node,RBAC',
        '--token-auth-file',
        path.join(dir, 'tokens.csv'),
        '--etcd-count-metric-poll-period=1s',
      ],
    });
    writeKubeconfig(path.join(dir, 'mon.kubeconfig'), kapi.kubeconfig, { token: 'tok-mon' });
    writeKubeconfig(path.join(dir, 'nobody.kubeconfig'), kapi.kubeconfig, { token: 'tok-nobody' });
    await kubectlOk(['create', 'namespace', ns], admin());
  });

  after(async () => {
    await kapi?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("counts requests with kube-apiserver's verb, scope and code labels", async () => {
    await kubectlOk(['-n', ns, 'create', 'configmap', 'one', '--from-literal=a=1'], admin());
    await kubectlOk(['-n', ns, 'get', 'configmap', 'one'], admin());
    await kubectlOk(['-n', ns, 'get', 'configmaps'], admin());
    const manifest = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'two', namespace: ns }, data: { b: '2' } });
    await kubectlOk(['apply', '--server-side', '-f', '-'], { ...admin(), input: manifest });
    await kubectlOk(['-n', ns, 'delete', 'configmap', 'one'], admin());
    await kubectlOk(['-n', ns, 'create', 'configmap', 'three', '--dry-run=server'], admin());

    const samples = await scrape();
    const base = { group: '', version: 'v1', resource: 'configmaps', subresource: '', component: 'apiserver' };
    const count = (labels: Record<string, string>) =>
      find(samples, 'apiserver_request_total', { ...base, ...labels }).reduce((n, s) => n + s.value, 0);
    assert.ok(count({ verb: 'POST', scope: 'resource', code: '201', dry_run: '' }) >= 1, 'POST 201');
    assert.ok(count({ verb: 'POST', scope: 'resource', code: '201', dry_run: 'All' }) >= 1, 'POST 201 dry_run=All');
    assert.ok(count({ verb: 'GET', scope: 'resource', code: '200' }) >= 1, 'GET 200');
    assert.ok(count({ verb: 'LIST', scope: 'namespace', code: '200' }) >= 1, 'LIST 200');
    assert.ok(count({ verb: 'APPLY', scope: 'resource', code: '201' }) >= 1, 'APPLY 201');
    assert.ok(count({ verb: 'DELETE', scope: 'resource', code: '200' }) >= 1, 'DELETE 200');
    // the namespace was created through the namespaces resource, cluster-scoped
    assert.ok(
      find(samples, 'apiserver_request_total', { verb: 'POST', resource: 'namespaces', scope: 'resource', code: '201' }).length >= 1,
    );
    // latencies and read sizes with the same labels (no code)
    assert.ok(
      find(samples, 'apiserver_request_duration_seconds_bucket', { ...base, verb: 'LIST', scope: 'namespace', le: '60' }).length === 1,
    );
    assert.ok(find(samples, 'apiserver_request_duration_seconds_count', { ...base, verb: 'APPLY' }).length === 1);
    assert.ok(find(samples, 'apiserver_response_sizes_count', { ...base, verb: 'LIST', scope: 'namespace' }).length === 1);
    assert.equal(find(samples, 'apiserver_response_sizes_count', { ...base, verb: 'POST' }).length, 0, 'sizes of reads only');
    // the health endpoints the harness polled: subresource is the path, component empty
    assert.ok(
      find(samples, 'apiserver_request_total', { verb: 'GET', subresource: '/readyz', component: '', scope: '', code: '200' }).length === 1,
    );
    // the store's etcd calls by operation and group-resource
    assert.ok(find(samples, 'etcd_request_duration_seconds_count', { operation: 'create', type: 'configmaps' }).length === 1);
    assert.ok(find(samples, 'etcd_requests_total', { operation: 'delete', type: 'configmaps' }).length === 1);
    // in-flight: the scrape itself is a read in flight within the last second or so
    assert.equal(find(samples, 'apiserver_current_inflight_requests', { request_kind: 'readOnly' }).length, 1);
    assert.equal(find(samples, 'apiserver_current_inflight_requests', { request_kind: 'mutating' }).length, 1);
    assert.ok(find(samples, 'authentication_attempts', { result: 'success' })[0]!.value >= 1);
    assert.ok(find(samples, 'authorization_attempts_total', { result: 'allowed' })[0]!.value >= 1);
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'process_start_time_seconds', 'process_open_fds']) {
      assert.equal(find(samples, name, {}).length, 1, name);
    }
    // an unknown resource is not counted: its name comes from the client
    await kubectl(['get', '--raw', '/api/v1/nosuchthings'], admin());
    assert.equal(find(await scrape(), 'apiserver_request_total', { resource: 'nosuchthings' }).length, 0);
  });

  it('an open watch is a long-running request; it is counted as WATCH when it ends', async () => {
    const watch = kubectlSpawn(['-n', ns, 'get', 'configmaps', '--watch', '--output-watch-events'], admin());
    try {
      await watch.waitForOutput(/two/);
      const open = await waitFor('the watch in apiserver_longrunning_requests', async () => {
        const s = find(await scrape(), 'apiserver_longrunning_requests', {
          verb: 'WATCH',
          resource: 'configmaps',
          scope: 'namespace',
          component: 'apiserver',
        });
        return s.length === 1 && s[0]!.value >= 1 ? s : undefined;
      });
      assert.equal(open[0]!.labels.version, 'v1');
      // kubectl lists first and watches from there: an event needs a change
      await kubectlOk(['-n', ns, 'create', 'configmap', 'four'], admin());
      await watch.waitForOutput(/four/);
    } finally {
      await watch.stop();
    }
    await waitFor('the ended watch in apiserver_request_total', async () => {
      const samples = await scrape();
      const ended = find(samples, 'apiserver_request_total', { verb: 'WATCH', resource: 'configmaps', scope: 'namespace', code: '200' });
      const gauge = find(samples, 'apiserver_longrunning_requests', { verb: 'WATCH', resource: 'configmaps', scope: 'namespace' });
      return ended.length === 1 && gauge.every((g) => g.value === 0);
    });
    // the event it was sent, by the endpoint's kind
    const samples = await scrape();
    assert.ok(find(samples, 'apiserver_watch_events_total', { group: '', version: 'v1', kind: 'ConfigMap' })[0]!.value >= 1);
    assert.ok(find(samples, 'apiserver_watch_events_sizes_count', { group: '', version: 'v1', kind: 'ConfigMap' })[0]!.value >= 1);
  });

  it('apiserver_storage_objects counts ConfigMaps per --etcd-count-metric-poll-period', async () => {
    // controllers may still be adding kube-root-ca.crt ConfigMaps: compare with a fresh list
    await waitFor('apiserver_storage_objects{resource="configmaps"}', async () => {
      const expected = JSON.parse(await kubectlOk(['get', 'configmaps', '-A', '-o', 'json'], admin())).items.length as number;
      const s = find(await scrape(), 'apiserver_storage_objects', { resource: 'configmaps' });
      return expected >= 1 && s.length === 1 && s[0]!.value === expected;
    });
    const samples = await scrape();
    assert.equal(find(samples, 'apiserver_storage_objects', { resource: 'namespaces' }).length, 1);
    assert.equal(find(samples, 'apiserver_storage_objects', { resource: 'deployments.apps' }).length, 1);
    // resources that are not stored are not counted
    assert.equal(find(samples, 'apiserver_storage_objects', { resource: 'tokenreviews.authentication.k8s.io' }).length, 0);
  });

  it('system:monitoring may read /metrics; another user gets 403', async () => {
    const mon = path.join(dir, 'mon.kubeconfig');
    assert.ok(find(await scrape(mon), 'apiserver_request_total', {}).length > 0);
    const denied = await kubectl(['get', '--raw', '/metrics'], { kubeconfig: path.join(dir, 'nobody.kubeconfig') });
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /Forbidden|forbidden/);
    const raw = await kapi.http.get('/metrics');
    assert.equal(raw.status, 200);
    assert.match(String(raw.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  });

  it('/status is authorized like /metrics: system:monitoring reads it, another user gets 403 naming /status', async () => {
    const mon = path.join(dir, 'mon.kubeconfig');
    const status = JSON.parse(await kubectlOk(['get', '--raw', '/status?format=json'], { kubeconfig: mon })) as {
      kind: string;
      replicas: unknown[];
    };
    assert.equal(status.kind, 'KapiStatus');
    assert.equal(status.replicas.length, 1);
    assert.match(await kubectlOk(['get', '--raw', '/status'], { kubeconfig: mon }), /^<!DOCTYPE html>/);
    const denied = await kubectl(['get', '--raw', '/status'], { kubeconfig: path.join(dir, 'nobody.kubeconfig') });
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /cannot get path "\/status"/);
  });

  it('/metrics/slis lists each health check by endpoint', async () => {
    await kubectlOk(['get', '--raw', '/livez'], admin());
    await kubectlOk(['get', '--raw', '/healthz'], admin());
    const samples = await scrape(kapi.kubeconfig, '/metrics/slis');
    for (const type of ['livez', 'readyz', 'healthz']) {
      for (const name of ['ping', 'log', 'etcd']) {
        const s = find(samples, 'kubernetes_healthcheck', { name, type });
        assert.equal(s.length, 1, `${name} ${type}`);
        assert.equal(s[0]!.value, 1);
        assert.ok(find(samples, 'kubernetes_healthchecks_total', { name, type, status: 'success' })[0]!.value >= 1);
      }
    }
    assert.equal(find(samples, 'kubernetes_healthcheck', { name: 'etcd-readiness', type: 'readyz' }).length, 1);
    assert.equal(find(samples, 'process_start_time_seconds', {}).length, 1);
  });
});
