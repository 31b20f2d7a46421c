import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRequestInfo, nonResourceInfo } from '../request/request-info.js';
import { compressUsername, dryRunLabel, isLongRunning, isReadOnly, metricsScope, reportedVerb } from './request-labels.js';

/** verb and scope labels of a request, as the metrics filter computes them */
function labels(method: string, url: string, contentType?: string): { verb: string; scope: string } {
  const u = new URL(url, 'https://kapi.invalid');
  const info =
    u.pathname.startsWith('/api') && u.pathname !== '/api' && u.pathname !== '/apis'
      ? parseRequestInfo(method, u.pathname, u.searchParams)
      : nonResourceInfo(method, u.pathname);
  const scope = metricsScope(info);
  return { verb: reportedVerb(method, info, scope, contentType), scope };
}

test('reads: GET of a collection is LIST, of one object GET; watches are WATCH', () => {
  assert.deepEqual(labels('GET', '/api/v1/namespaces/ns/configmaps'), { verb: 'LIST', scope: 'namespace' });
  assert.deepEqual(labels('GET', '/api/v1/configmaps'), { verb: 'LIST', scope: 'cluster' });
  assert.deepEqual(labels('GET', '/apis/apps/v1/deployments'), { verb: 'LIST', scope: 'cluster' });
  assert.deepEqual(labels('GET', '/api/v1/namespaces/ns/configmaps/a'), { verb: 'GET', scope: 'resource' });
  assert.deepEqual(labels('HEAD', '/api/v1/namespaces/ns/configmaps/a'), { verb: 'GET', scope: 'resource' });
  assert.deepEqual(labels('GET', '/api/v1/namespaces/ns'), { verb: 'GET', scope: 'resource' });
  assert.deepEqual(labels('GET', '/api/v1/namespaces'), { verb: 'LIST', scope: 'cluster' });
  assert.deepEqual(labels('GET', '/api/v1/namespaces/ns/configmaps?watch=true'), { verb: 'WATCH', scope: 'namespace' });
  assert.deepEqual(labels('GET', '/api/v1/namespaces/ns/configmaps?watch=1'), { verb: 'WATCH', scope: 'namespace' });
  assert.deepEqual(labels('GET', '/api/v1/namespaces/ns/configmaps?watch=false'), { verb: 'LIST', scope: 'namespace' });
  assert.deepEqual(labels('GET', '/api/v1/watch/namespaces/ns/configmaps'), { verb: 'WATCH', scope: 'namespace' });
});

test('writes: POST, PUT, PATCH, APPLY, DELETE (collections too)', () => {
  assert.deepEqual(labels('POST', '/api/v1/namespaces/ns/configmaps'), { verb: 'POST', scope: 'resource' });
  assert.deepEqual(labels('POST', '/api/v1/namespaces'), { verb: 'POST', scope: 'resource' });
  assert.deepEqual(labels('PUT', '/api/v1/namespaces/ns/configmaps/a'), { verb: 'PUT', scope: 'resource' });
  assert.deepEqual(labels('PATCH', '/api/v1/namespaces/ns/configmaps/a', 'application/merge-patch+json'), {
    verb: 'PATCH',
    scope: 'resource',
  });
  assert.deepEqual(labels('PATCH', '/api/v1/namespaces/ns/configmaps/a', 'application/strategic-merge-patch+json'), {
    verb: 'PATCH',
    scope: 'resource',
  });
  assert.deepEqual(labels('PATCH', '/api/v1/namespaces/ns/configmaps/a', 'application/apply-patch+yaml'), {
    verb: 'APPLY',
    scope: 'resource',
  });
  assert.deepEqual(labels('DELETE', '/api/v1/namespaces/ns/configmaps/a'), { verb: 'DELETE', scope: 'resource' });
  assert.deepEqual(labels('DELETE', '/api/v1/namespaces/ns/configmaps'), { verb: 'DELETE', scope: 'namespace' });
  assert.deepEqual(labels('PUT', '/apis/apps/v1/namespaces/ns/deployments/d/status'), { verb: 'PUT', scope: 'resource' });
  assert.deepEqual(labels('POST', '/api/v1/namespaces/ns/pods/p/eviction'), { verb: 'POST', scope: 'resource' });
});

test('streaming subresources are CONNECT; unknown methods are "other"', () => {
  assert.equal(labels('GET', '/api/v1/namespaces/ns/pods/p/log').verb, 'CONNECT');
  assert.equal(labels('POST', '/api/v1/namespaces/ns/pods/p/exec').verb, 'CONNECT');
  assert.equal(labels('OPTIONS', '/api/v1/namespaces/ns/configmaps').verb, 'other');
});

test('non-resource paths: GET with the empty scope', () => {
  assert.deepEqual(labels('GET', '/healthz'), { verb: 'GET', scope: '' });
  assert.deepEqual(labels('GET', '/apis'), { verb: 'GET', scope: '' });
  assert.deepEqual(labels('POST', '/livez'), { verb: 'POST', scope: '' });
});

test('dry_run: empty without the parameter, the sorted distinct values, "invalid" otherwise', () => {
  assert.equal(dryRunLabel(new URLSearchParams('')), '');
  assert.equal(dryRunLabel(new URLSearchParams('dryRun=All')), 'All');
  assert.equal(dryRunLabel(new URLSearchParams('dryRun=All&dryRun=All')), 'All');
  assert.equal(dryRunLabel(new URLSearchParams('dryRun=true')), 'invalid');
  assert.equal(dryRunLabel(new URLSearchParams('dryRun=All&dryRun=x')), 'invalid');
});

test('long-running and read-only kinds', () => {
  const info = (method: string, url: string) => {
    const u = new URL(url, 'https://kapi.invalid');
    return parseRequestInfo(method, u.pathname, u.searchParams);
  };
  assert.equal(isLongRunning(info('GET', '/api/v1/namespaces/ns/configmaps?watch=true')), true);
  assert.equal(isLongRunning(info('GET', '/api/v1/namespaces/ns/pods/p/log')), true);
  assert.equal(isLongRunning(info('GET', '/api/v1/namespaces/ns/configmaps')), false);
  assert.equal(isReadOnly(info('GET', '/api/v1/namespaces/ns/configmaps')), true);
  assert.equal(isReadOnly(info('GET', '/api/v1/namespaces/ns/configmaps/a')), true);
  assert.equal(isReadOnly(info('POST', '/api/v1/namespaces/ns/configmaps')), false);
  assert.equal(isReadOnly(nonResourceInfo('GET', '/metrics')), true);
});

test('usernames are compressed as kube-apiserver does', () => {
  assert.equal(compressUsername('admin'), 'admin');
  assert.equal(compressUsername('kubelet'), 'kubelet');
  assert.equal(compressUsername('system:serviceaccount:kube-system:default'), 'system:serviceaccount:kube-system:default');
  assert.equal(compressUsername('jane@example.com'), 'email_id');
  assert.equal(compressUsername('kubernetes-admin'), 'other');
  assert.equal(compressUsername('system:anonymous'), 'other');
});
