import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exactFieldMatch, parseRequestInfo, type RequestInfo } from './request-info.js';

type Expect = Partial<RequestInfo>;

const cases: [method: string, url: string, expect: Expect][] = [
  [
    'GET',
    '/api/v1/namespaces',
    { isResourceRequest: true, verb: 'list', apiPrefix: 'api', apiVersion: 'v1', resource: 'namespaces', namespace: '', name: '' },
  ],
  ['GET', '/api/v1/namespaces/other', { verb: 'get', resource: 'namespaces', namespace: 'other', name: 'other', namespaceInPath: false }],
  ['GET', '/api/v1/namespaces/other/pods', { verb: 'list', resource: 'pods', namespace: 'other', namespaceInPath: true }],
  ['GET', '/api/v1/namespaces/other/pods/foo', { verb: 'get', resource: 'pods', name: 'foo', namespace: 'other', parts: ['pods', 'foo'] }],
  ['HEAD', '/api/v1/namespaces/other/pods/foo', { verb: 'get', name: 'foo' }],
  ['GET', '/api/v1/pods', { verb: 'list', resource: 'pods', namespace: '' }],
  ['GET', '/api/v1/namespaces/other/pods/foo/log', { verb: 'get', resource: 'pods', name: 'foo', subresource: 'log' }],
  ['GET', '/api/v1/namespaces/other/pods?watch=true', { verb: 'watch', resource: 'pods' }],
  ['GET', '/api/v1/namespaces/other/pods?watch=1', { verb: 'watch' }],
  ['GET', '/api/v1/namespaces/other/pods?watch=false', { verb: 'list' }],
  ['GET', '/api/v1/namespaces/other/pods?watch=0', { verb: 'list' }],
  ['GET', '/api/v1/namespaces/other/pods?watch', { verb: 'watch' }],
  ['GET', '/api/v1/watch/pods', { verb: 'watch', resource: 'pods', verbViaPathPrefix: true }],
  ['GET', '/api/v1/watch/namespaces/other/pods', { verb: 'watch', resource: 'pods', namespace: 'other' }],
  ['GET', '/api/v1/watch/namespaces/other/pods/foo', { verb: 'watch', resource: 'pods', name: 'foo' }],
  ['GET', '/api/v1/watch/namespaces', { verb: 'watch', resource: 'namespaces' }],
  ['GET', '/api/v1/watch/namespaces/other', { verb: 'watch', resource: 'namespaces', name: 'other' }],
  ['POST', '/api/v1/namespaces/other/pods', { verb: 'create', resource: 'pods' }],
  ['POST', '/api/v1/namespaces/other/pods/foo/eviction', { verb: 'create', name: 'foo', subresource: 'eviction' }],
  ['PUT', '/api/v1/namespaces/other/pods/foo', { verb: 'update', name: 'foo' }],
  ['PUT', '/api/v1/namespaces/other/finalize', { verb: 'update', resource: 'namespaces', name: 'other', subresource: 'finalize' }],
  ['PUT', '/api/v1/namespaces/other/status', { verb: 'update', resource: 'namespaces', name: 'other', subresource: 'status' }],
  ['PATCH', '/api/v1/namespaces/other/pods/foo', { verb: 'patch', name: 'foo' }],
  ['DELETE', '/api/v1/namespaces/other/pods/foo', { verb: 'delete', name: 'foo' }],
  ['DELETE', '/api/v1/namespaces/other/pods', { verb: 'deletecollection', resource: 'pods' }],
  [
    'GET',
    '/apis/apps/v1/namespaces/other/deployments/web/scale',
    { apiPrefix: 'apis', apiGroup: 'apps', apiVersion: 'v1', resource: 'deployments', name: 'web', subresource: 'scale', verb: 'get' },
  ],
  [
    'GET',
    '/apis/rbac.authorization.k8s.io/v1/clusterroles',
    { apiGroup: 'rbac.authorization.k8s.io', resource: 'clusterroles', verb: 'list' },
  ],
  [
    'GET',
    '/api/v1/namespaces/other/pods?fieldSelector=metadata.name%3Dfoo',
    { verb: 'list', name: 'foo', fieldSelector: 'metadata.name=foo' },
  ],
  ['GET', '/api/v1/pods?fieldSelector=metadata.name%3D%3Dfoo&labelSelector=a%3Db', { verb: 'list', name: 'foo', labelSelector: 'a=b' }],
  ['GET', '/api/v1/pods?fieldSelector=metadata.name%21%3Dfoo', { verb: 'list', name: '' }],
  ['GET', '/api/v1/namespaces/other/pods?watch=1&fieldSelector=metadata.name%3Dfoo', { verb: 'watch', name: 'foo' }],
  ['OPTIONS', '/api/v1/pods', { isResourceRequest: true, verb: '' }],
];

const nonResource: [string, string][] = [
  ['GET', '/'],
  ['GET', '/api'],
  ['GET', '/api/v1'],
  ['GET', '/apis'],
  ['GET', '/apis/apps'],
  ['GET', '/apis/apps/v1'],
  ['GET', '/healthz'],
  ['GET', '/livez/etcd'],
  ['POST', '/openapi/v2'],
  ['GET', '/version'],
];

function parse(method: string, url: string): RequestInfo {
  const u = new URL(url, 'http://x');
  return parseRequestInfo(method, u.pathname, u.searchParams);
}

test('resource requests', () => {
  for (const [method, url, expect] of cases) {
    const info = parse(method, url);
    assert.equal(info.isResourceRequest, true, `${method} ${url}`);
    for (const [k, v] of Object.entries(expect)) {
      assert.deepEqual(info[k as keyof RequestInfo], v, `${method} ${url}: ${k}`);
    }
  }
});

test('non-resource requests use the lower-cased method as verb', () => {
  for (const [method, url] of nonResource) {
    const info = parse(method, url);
    assert.equal(info.isResourceRequest, false, url);
    assert.equal(info.verb, method.toLowerCase(), url);
    assert.equal(info.path, new URL(url, 'http://x').pathname);
  }
});

test('a /watch prefix without a resource cannot be parsed', () => {
  assert.throws(() => parse('GET', '/api/v1/watch'));
});

test('selectors are kept only for list, watch and deletecollection, and not on /watch paths', () => {
  assert.equal(parse('GET', '/api/v1/pods/x?labelSelector=a%3Db').labelSelector, undefined);
  assert.equal(parse('DELETE', '/api/v1/namespaces/n/pods?labelSelector=a%3Db').labelSelector, 'a=b');
  assert.equal(parse('GET', '/api/v1/watch/pods?labelSelector=a%3Db').labelSelector, undefined);
});

test('exact field matches honour escapes and operators', () => {
  assert.equal(exactFieldMatch('metadata.name=foo', 'metadata.name'), 'foo');
  assert.equal(exactFieldMatch('spec.nodeName=n1,metadata.name==bar', 'metadata.name'), 'bar');
  assert.equal(exactFieldMatch('metadata.name!=foo', 'metadata.name'), undefined);
  assert.equal(exactFieldMatch('metadata.namespace=foo', 'metadata.name'), undefined);
  assert.equal(exactFieldMatch('metadata.name=a\\,b', 'metadata.name'), 'a,b');
});
