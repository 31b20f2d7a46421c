import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRequestInfo } from '../request/request-info.js';
import { parseRequestTarget, percentDecode } from './request-target.js';

function infoOf(method: string, raw: string) {
  const target = parseRequestTarget(raw);
  assert.ok(target, raw);
  return parseRequestInfo(method, target.path, target.query);
}

test('dot segments, backslashes and doubled slashes are kept as sent', () => {
  for (const [raw, path] of [
    ['/api/v1/namespaces/probe/configmaps/..', '/api/v1/namespaces/probe/configmaps/..'],
    ['/api/v1/namespaces/probe/configmaps/%2e%2E', '/api/v1/namespaces/probe/configmaps/..'],
    ['/api/v1/namespaces/probe/configmaps/.', '/api/v1/namespaces/probe/configmaps/.'],
    ['/api/v1/namespaces/probe/configmaps/\\', '/api/v1/namespaces/probe/configmaps/\\'],
    ['/api/v1/namespaces/../secrets', '/api/v1/namespaces/../secrets'],
    ['/healthz/../api//v1', '/healthz/../api//v1'],
  ]) {
    assert.equal(parseRequestTarget(raw)?.path, path, raw);
  }
});

test('a dot segment is a name, never a step up: the request stays on the object it names', () => {
  const del = infoOf('DELETE', '/api/v1/namespaces/probe/configmaps/..?dryRun=All');
  assert.deepEqual([del.verb, del.resource, del.namespace, del.name], ['delete', 'configmaps', 'probe', '..']);
  const encoded = infoOf('DELETE', '/api/v1/namespaces/probe/configmaps/%2e%2e');
  assert.deepEqual([encoded.verb, encoded.resource, encoded.name], ['delete', 'configmaps', '..']);
  const dot = infoOf('GET', '/api/v1/namespaces/probe/configmaps/.');
  assert.deepEqual([dot.verb, dot.resource, dot.name], ['get', 'configmaps', '.']);
  const backslash = infoOf('DELETE', '/api/v1/namespaces/probe/configmaps/\\');
  assert.deepEqual([backslash.verb, backslash.resource, backslash.name], ['delete', 'configmaps', '\\']);
  const secrets = infoOf('GET', '/api/v1/namespaces/../secrets');
  assert.deepEqual([secrets.verb, secrets.resource, secrets.namespace, secrets.namespaceInPath], ['list', 'secrets', '..', true]);
});

test('%2F separates segments like / (Go decodes the whole path before kube-apiserver splits it)', () => {
  const info = infoOf('GET', '/api/v1/namespaces/probe/configmaps/a%2Fb');
  assert.deepEqual([info.resource, info.name, info.subresource], ['configmaps', 'a', 'b']);
});

test('query and fragment: the query starts at the first ?, a # is part of what was sent', () => {
  const t = parseRequestTarget('/api/v1/pods?labelSelector=a%3Db&x=%2e#frag');
  assert.equal(t?.path, '/api/v1/pods');
  assert.equal(t?.query.get('labelSelector'), 'a=b');
  assert.equal(t?.query.get('x'), '.#frag');
  assert.equal(parseRequestTarget('/api/v1/namespaces/p/configmaps/a#b')?.path, '/api/v1/namespaces/p/configmaps/a#b');
});

test('targets Go refuses: no leading slash, broken escapes', () => {
  assert.equal(parseRequestTarget('api/v1/pods'), undefined);
  assert.equal(parseRequestTarget('/api/v1/pods/%zz'), undefined);
  assert.equal(parseRequestTarget('/api/v1/pods/%4'), undefined);
});

test('absolute-form targets name the path after the authority; * stays *', () => {
  assert.equal(parseRequestTarget('https://127.0.0.1:6443/api/v1/namespaces/../secrets?limit=1')?.path, '/api/v1/namespaces/../secrets');
  assert.equal(parseRequestTarget('*')?.path, '*');
});

test('escapes decode to UTF-8 bytes; bytes that are not UTF-8 become U+FFFD', () => {
  assert.equal(percentDecode('/a/%C3%A9'), '/a/é');
  assert.equal(percentDecode('/a/%ff'), '/a/\ufffd');
  // the request line arrives as latin1, one char per byte
  assert.equal(percentDecode('/a/\u00c3\u00a9'), '/a/é');
});
