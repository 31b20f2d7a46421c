// The real server on a loopback port over TLS (HTTP/1.1 and HTTP/2), with in-memory
// resources behind the endpoints: statuses, Status bodies byte for byte, negotiation, watch
// streaming, gzip, YAML, health and version.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { createUnzip } from 'node:zlib';
import type { ClientHttp2Session } from 'node:http2';
import type { KubeObject } from '../../storage/interface.js';
import type { RequestContext } from '../registry/rest.js';
import { MemoryBackend, MemoryResolver, MemoryResource, resourceInfo } from '../endpoints/testing/memory-resource.js';
import { decodeObject as decodeProtobuf } from '../protobuf/codec.js';
import { createApiHandler } from './api-handler.js';
import { createX509Authenticator } from '../authn/x509.js';
import { unionAuthenticator, withAuthenticatedGroup } from '../authn/authenticator.js';
import { namedCheck, pingCheck, shutdownCheck } from './health.js';
import { createSecureServer, type SecureServer } from './server.js';
import { LineReader, TestClient } from './testing/client.js';
import { createTestPKI, type KeyPair, type TestPKI } from '../pki/testing.js';

const KUBECTL_TABLE_ACCEPT =
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

class ThrowingResource extends MemoryResource {
  override async get(): Promise<KubeObject> {
    throw new TypeError('cannot read properties of undefined');
  }
}

class WarningResource extends MemoryResource {
  override async get(ctx: RequestContext, name: string): Promise<KubeObject> {
    ctx.warnings.push('this API is "deprecated"');
    return super.get(ctx, name);
  }
}

let pki: TestPKI;
let server: SecureServer;
let client: TestClient;
let admin: KeyPair;
let shuttingDown = false;
const shutdown = new AbortController();
let etcdHealthy = true;
const backend = new MemoryBackend();
const configmaps = new MemoryResource(resourceInfo({ resource: 'configmaps', kind: 'ConfigMap', shortNames: ['cm'] }), backend);
const pods = new MemoryResource(resourceInfo({ resource: 'pods', kind: 'Pod' }), backend);
const namespaces = new MemoryResource(resourceInfo({ resource: 'namespaces', kind: 'Namespace', namespaced: false }), backend);
const deployments = new MemoryResource(resourceInfo({ group: 'apps', resource: 'deployments', kind: 'Deployment' }), backend);
const broken = new ThrowingResource(resourceInfo({ resource: 'brokens', kind: 'Broken' }), backend);
const warned = new WarningResource(resourceInfo({ resource: 'warneds', kind: 'Warned' }), backend);
const reviews = new MemoryResource(
  resourceInfo({
    group: 'authentication.k8s.io',
    resource: 'selfsubjectreviews',
    kind: 'SelfSubjectReview',
    namespaced: false,
    verbs: ['create'],
  }),
  backend,
);

before(async () => {
  pki = createTestPKI();
  admin = pki.client('admin', ['system:masters']);
  const resolver = new MemoryResolver().add(configmaps).add(pods).add(namespaces).add(deployments).add(broken).add(warned).add(reviews);
  const listener = createApiHandler({
    resolver,
    authenticator: withAuthenticatedGroup(unionAuthenticator([createX509Authenticator(pki.ca.cert)])),
    anonymous: { enabled: true, paths: ['/livez*', '/readyz*', '/healthz*', '/version'] },
    health: {
      livez: [pingCheck],
      readyz: [
        pingCheck,
        namedCheck('etcd', async () => {
          if (!etcdHealthy) throw new Error('etcd down');
        }),
        shutdownCheck(() => shuttingDown),
      ],
    },
    discovery: (req) =>
      req.path === '/apis' && req.method === 'GET'
        ? { status: 200, body: '{"kind":"APIGroupList"}', contentType: 'application/json', etag: 'abc123' }
        : undefined,
    minRequestTimeoutSeconds: 1800,
    shutdownSignal: shutdown.signal,
  });
  server = createSecureServer({ cert: pki.server.cert, key: pki.server.key, clientCA: pki.ca.cert, handler: listener });
  const addr = await server.listen(0);
  client = new TestClient(addr.port, pki.ca.cert, admin);
});

after(async () => {
  for (const r of [configmaps, pods, namespaces, deployments]) r.stopWatches();
  await server.close();
  pki.cleanup();
});

function cm(name: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra }, data: { a: '1' } });
}

describe('errors', () => {
  test('unknown paths are the mux 404, fields in kube-apiserver order', async () => {
    const r = await client.http1({ path: '/no/such/thing' });
    assert.equal(r.status, 404);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(
      r.text,
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}\n',
    );
  });

  test('an unknown resource in a served group version is 404', async () => {
    const r = await client.http1({ path: '/api/v1/namespaces/default/widgets' });
    assert.equal(r.status, 404);
    assert.equal(r.json().reason, 'NotFound');
  });

  test('no credentials: 401 Unauthorized', async () => {
    const anonymous = new TestClient(client.port, pki.ca.cert);
    const r = await anonymous.http1({ path: '/api/v1/namespaces/default/configmaps' });
    assert.equal(r.status, 401);
    assert.equal(
      r.text,
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}\n',
    );
  });

  test('a certificate from an untrusted CA is 401 even where anonymous is allowed', async () => {
    const r = await client.http1({ path: '/livez', identity: pki.stranger('mallory') });
    assert.equal(r.status, 401);
  });

  test('a missing object names itself; core group has no details.group', async () => {
    const r = await client.http1({ path: '/api/v1/namespaces/default/configmaps/nope' });
    assert.equal(r.status, 404);
    assert.equal(
      r.text,
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \\"nope\\" not found","reason":"NotFound","details":{"name":"nope","kind":"configmaps"},"code":404}\n',
    );
    const d = await client.http1({ path: '/apis/apps/v1/namespaces/default/deployments/nope' });
    assert.deepEqual(d.json().details, { name: 'nope', group: 'apps', kind: 'deployments' });
    assert.equal(d.json().message, 'deployments.apps "nope" not found');
  });

  test('methods a path does not take are 405; items of namespaced resources need a namespace', async () => {
    const post = await client.http1({ method: 'POST', path: '/api/v1/namespaces/default/configmaps/x', body: cm('x') });
    assert.equal(post.status, 405);
    assert.equal(post.json().reason, 'MethodNotAllowed');
    assert.equal(post.json().message, 'the server does not allow this method on the requested resource');
    const put = await client.http1({ method: 'PUT', path: '/api/v1/namespaces/default/configmaps', body: cm('x') });
    assert.equal(put.status, 405);
    const clusterPost = await client.http1({ method: 'POST', path: '/api/v1/configmaps', body: cm('x') });
    assert.equal(clusterPost.status, 405);
    const noNamespace = await client.http1({ path: '/api/v1/configmaps/x' });
    assert.equal(noNamespace.status, 404);
    const clusterScopedInNamespace = await client.http1({ path: '/api/v1/namespaces/default/namespaces/x' });
    assert.equal(clusterScopedInNamespace.status, 404);
    const getOnCreateOnly = await client.http1({ path: '/apis/authentication.k8s.io/v1/selfsubjectreviews' });
    assert.equal(getOnCreateOnly.status, 405);
    const subresource = await client.http1({ path: '/api/v1/namespaces/default/configmaps/x/status' });
    assert.equal(subresource.status, 404);
  });

  test('an exception in a handler is a 500 Status and the server keeps serving', async () => {
    const r = await client.http1({ path: '/api/v1/namespaces/default/brokens/x' });
    assert.equal(r.status, 500);
    assert.equal(r.json().reason, 'InternalError');
    assert.equal(r.json().message, 'Internal error occurred: cannot read properties of undefined');
    const again = await client.http1({ path: '/livez' });
    assert.equal(again.status, 200);
  });

  test('protobuf for built-in kinds; for other kinds protobuf alone is not acceptable and listed with JSON gets JSON', async () => {
    const builtIn = await client.http1({
      path: '/api/v1/namespaces/default/configmaps',
      headers: { accept: 'application/vnd.kubernetes.protobuf, application/json' },
    });
    assert.equal(builtIn.status, 200);
    assert.equal(builtIn.headers['content-type'], 'application/vnd.kubernetes.protobuf');
    assert.equal(decodeProtobuf(builtIn.body).kind, 'ConfigMapList');
    const only = await client.http1({
      path: '/api/v1/namespaces/default/warneds',
      headers: { accept: 'application/vnd.kubernetes.protobuf' },
    });
    assert.equal(only.status, 406);
    assert.equal(only.json().reason, 'NotAcceptable');
    assert.equal(only.json().message, 'only the following media types are accepted: application/json, application/yaml');
    const both = await client.http1({
      path: '/api/v1/namespaces/default/warneds',
      headers: { accept: 'application/vnd.kubernetes.protobuf, application/json' },
    });
    assert.equal(both.status, 200);
    assert.equal(both.headers['content-type'], 'application/json');
  });

  test('registry warnings become Warning headers', async () => {
    await warned.create(
      { user: { username: 'x', groups: [] }, namespace: 'default', dryRun: false, fieldValidation: 'Warn', warnings: [] },
      { apiVersion: 'v1', kind: 'Warned', metadata: { name: 'w', namespace: 'default' } },
    );
    const r = await client.http1({ path: '/api/v1/namespaces/default/warneds/w' });
    assert.equal(r.status, 200);
    assert.equal(r.headers['warning'], '299 - "this API is \\"deprecated\\""');
  });
});

describe('create, read, update, patch, delete', () => {
  test('create answers 201 with the stored object; get, YAML and pretty forms', async () => {
    const r = await client.http1({ method: 'POST', path: '/api/v1/namespaces/default/configmaps', body: cm('first') });
    assert.equal(r.status, 201);
    const obj = r.json<KubeObject>();
    assert.deepEqual(Object.keys(obj).slice(0, 3), ['kind', 'apiVersion', 'metadata']);
    assert.equal(obj.metadata.namespace, 'default');
    assert.ok(obj.metadata.resourceVersion);
    assert.equal(configmaps.contexts.at(-1)?.user.username, 'admin');
    assert.deepEqual(configmaps.contexts.at(-1)?.user.groups, ['system:masters', 'system:authenticated']);

    const got = await client.http1({ path: '/api/v1/namespaces/default/configmaps/first' });
    assert.equal(got.status, 200);
    assert.equal(got.json<KubeObject>().metadata.uid, obj.metadata.uid);
    assert.ok(got.text.endsWith('}\n'));

    const yaml = await client.http1({ path: '/api/v1/namespaces/default/configmaps/first', headers: { accept: 'application/yaml' } });
    assert.equal(yaml.headers['content-type'], 'application/yaml');
    assert.match(yaml.text, /^apiVersion: v1\ndata:\n {2}a: "1"\nkind: ConfigMap\nmetadata:\n/);

    const pretty = await client.http1({ path: '/api/v1/namespaces/default/configmaps/first?pretty=true' });
    assert.match(pretty.text, /^\{\n {2}"kind": "ConfigMap",\n/);
  });

  test('create from a YAML body', async () => {
    const body = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: v\n';
    const r = await client.http1({
      method: 'POST',
      path: '/api/v1/namespaces/default/configmaps',
      headers: { 'content-type': 'application/yaml' },
      body,
    });
    assert.equal(r.status, 201);
    assert.deepEqual(r.json().data, { k: 'v' });
  });

  test('create refuses bodies of another kind, version or namespace', async () => {
    const mismatch = await client.http1({
      method: 'POST',
      path: '/api/v1/namespaces/default/configmaps',
      body: cm('x', { namespace: 'other' }),
    });
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.json().message, 'the namespace of the provided object does not match the namespace sent on the request');
    const kind = await client.http1({
      method: 'POST',
      path: '/api/v1/namespaces/default/configmaps',
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } }),
    });
    assert.equal(kind.status, 400);
    assert.match(kind.json<{ message: string }>().message, /cannot be handled as a ConfigMap/);
    const version = await client.http1({
      method: 'POST',
      path: '/apis/apps/v1/namespaces/default/deployments',
      body: JSON.stringify({ apiVersion: 'apps/v1beta1', kind: 'Deployment', metadata: { name: 'd' } }),
    });
    assert.equal(version.status, 400);
    assert.equal(version.json().message, 'the API version in the data (apps/v1beta1) does not match the expected API version (apps/v1)');
  });

  test('malformed, oversized and unknown-format bodies', async () => {
    const bad = await client.http1({ method: 'POST', path: '/api/v1/namespaces/default/configmaps', body: '{"kind":' });
    assert.equal(bad.status, 400);
    assert.equal(bad.json().reason, 'BadRequest');
    const huge = await client.http1({
      method: 'POST',
      path: '/api/v1/namespaces/default/configmaps',
      body: cm('huge', { annotations: { big: 'x'.repeat(3 * 1024 * 1024 + 1) } }),
    });
    assert.equal(huge.status, 413);
    assert.equal(huge.json().message, 'Request entity too large: limit is 3145728');
    const emptyProto = await client.http1({
      method: 'POST',
      path: '/api/v1/namespaces/default/configmaps',
      headers: { 'content-type': 'application/vnd.kubernetes.protobuf' },
      body: 'k8s\0',
    });
    assert.equal(emptyProto.status, 400);
    // a kind without a protobuf form (custom resources)
    const typeMeta = Buffer.concat([Buffer.from([0x0a, 2]), Buffer.from('v1'), Buffer.from([0x12, 6]), Buffer.from('Warned')]);
    const proto = await client.http1({
      method: 'POST',
      path: '/api/v1/namespaces/default/warneds',
      headers: { 'content-type': 'application/vnd.kubernetes.protobuf' },
      body: Buffer.concat([Buffer.from('k8s\0'), Buffer.from([0x0a, typeMeta.length]), typeMeta, Buffer.from([0x12, 0])]),
    });
    assert.equal(proto.status, 415);
  });

  test('dryRun takes only All', async () => {
    const bad = await client.http1({ method: 'POST', path: '/api/v1/namespaces/default/configmaps?dryRun=Maybe', body: cm('dry') });
    assert.equal(bad.status, 422);
    assert.equal(bad.json().reason, 'Invalid');
    assert.equal(
      bad.json().message,
      'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Maybe"}: supported values: "All"',
    );
    const ok = await client.http1({ method: 'POST', path: '/api/v1/namespaces/default/configmaps?dryRun=All', body: cm('dry') });
    assert.equal(ok.status, 201);
    assert.equal(configmaps.contexts.at(-1)?.dryRun, true);
    assert.equal(configmaps.objects.has('default/dry'), false);
  });

  test('fieldManager defaults to the User-Agent product', async () => {
    await client.http1({
      method: 'POST',
      path: '/api/v1/namespaces/default/configmaps?fieldValidation=Strict',
      headers: { 'user-agent': 'kubectl/v1.33.0 (linux/amd64) kubernetes/abcdef' },
      body: cm('managed'),
    });
    assert.equal(configmaps.contexts.at(-1)?.fieldManager, 'kubectl');
    assert.equal(configmaps.contexts.at(-1)?.fieldValidation, 'Strict');
    const bad = await client.http1({ method: 'POST', path: '/api/v1/namespaces/default/configmaps?fieldValidation=Loose', body: cm('x') });
    assert.equal(bad.status, 422);
  });

  test('duplicate fields warn by default and fail with fieldValidation=Strict', async () => {
    const body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},"data":{"a":"1","a":"2"}}';
    const warned = await client.http1({ method: 'POST', path: '/api/v1/namespaces/default/configmaps', body });
    assert.equal(warned.status, 201);
    assert.equal(warned.headers['warning'], '299 - "duplicate field \\"data.a\\""');
    const strict = await client.http1({ method: 'POST', path: '/api/v1/namespaces/default/configmaps?fieldValidation=Strict', body });
    assert.equal(strict.status, 400);
    assert.equal(
      strict.json().message,
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "data.a"',
    );
  });

  test('update: names must match; 200 when replaced', async () => {
    const created = await client.http1({ method: 'POST', path: '/api/v1/namespaces/default/configmaps', body: cm('upd') });
    const obj = created.json<KubeObject>();
    const wrong = await client.http1({ method: 'PUT', path: '/api/v1/namespaces/default/configmaps/other', body: JSON.stringify(obj) });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.json().message, 'the name of the object (upd) does not match the name on the URL (other)');
    (obj as unknown as { data: Record<string, string> }).data = { changed: 'yes' };
    const ok = await client.http1({ method: 'PUT', path: '/api/v1/namespaces/default/configmaps/upd', body: JSON.stringify(obj) });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.json().data, { changed: 'yes' });
    const stale = await client.http1({ method: 'PUT', path: '/api/v1/namespaces/default/configmaps/upd', body: JSON.stringify(obj) });
    assert.equal(stale.status, 409);
    assert.equal(stale.json().reason, 'Conflict');
  });

  test('merge and JSON patches; unknown patch types are 415; missing objects 404', async () => {
    await client.http1({ method: 'POST', path: '/api/v1/namespaces/default/configmaps', body: cm('pat', { labels: { a: 'b' } }) });
    const merge = await client.http1({
      method: 'PATCH',
      path: '/api/v1/namespaces/default/configmaps/pat',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { labels: { a: null, c: 'd' } } }),
    });
    assert.equal(merge.status, 200);
    assert.deepEqual(merge.json<KubeObject>().metadata.labels, { c: 'd' });

    const json = await client.http1({
      method: 'PATCH',
      path: '/api/v1/namespaces/default/configmaps/pat',
      headers: { 'content-type': 'application/json-patch+json' },
      body: JSON.stringify([
        { op: 'test', path: '/metadata/labels/c', value: 'd' },
        { op: 'add', path: '/data/b', value: '2' },
        { op: 'move', from: '/data/a', path: '/data/z' },
      ]),
    });
    assert.equal(json.status, 200);
    assert.deepEqual(json.json().data, { b: '2', z: '1' });

    const failedTest = await client.http1({
      method: 'PATCH',
      path: '/api/v1/namespaces/default/configmaps/pat',
      headers: { 'content-type': 'application/json-patch+json' },
      body: JSON.stringify([{ op: 'test', path: '/metadata/labels/c', value: 'nope' }]),
    });
    assert.equal(failedTest.status, 422);
    assert.equal(failedTest.json().reason, 'Invalid');

    const smp = await client.http1({
      method: 'PATCH',
      path: '/api/v1/namespaces/default/configmaps/pat',
      headers: { 'content-type': 'application/strategic-merge-patch+json' },
      body: '{}',
    });
    assert.equal(smp.status, 415);
    assert.equal(
      smp.json().message,
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json',
    );

    const missing = await client.http1({
      method: 'PATCH',
      path: '/api/v1/namespaces/default/configmaps/ghost',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: '{"data":{"a":"b"}}',
    });
    assert.equal(missing.status, 404);

    const invalid = await client.http1({
      method: 'PATCH',
      path: '/api/v1/namespaces/default/configmaps/pat',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: '{"data":',
    });
    assert.equal(invalid.status, 400);
    // kube-apiserver decodes a merge patch strictly first (fieldValidation defaults to Warn)
    assert.equal(invalid.json().message, 'error decoding patch: unexpected end of JSON input');
  });

  test('delete: finalizers keep the object, otherwise it is gone', async () => {
    await client.http1({
      method: 'POST',
      path: '/api/v1/namespaces/default/configmaps',
      body: cm('fin', { finalizers: ['example.com/x'] }),
    });
    const kept = await client.http1({ method: 'DELETE', path: '/api/v1/namespaces/default/configmaps/fin' });
    assert.equal(kept.status, 200, kept.text);
    assert.ok(kept.json<KubeObject>().metadata.deletionTimestamp);

    await client.http1({ method: 'POST', path: '/api/v1/namespaces/default/configmaps', body: cm('gone') });
    const gone = await client.http1({
      method: 'DELETE',
      path: '/api/v1/namespaces/default/configmaps/gone',
      body: JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' }),
    });
    assert.equal(gone.status, 200, gone.text);
    assert.equal(gone.json<KubeObject>().metadata.name, 'gone');
    const after = await client.http1({ path: '/api/v1/namespaces/default/configmaps/gone' });
    assert.equal(after.status, 404);

    const badPolicy = await client.http1({
      method: 'DELETE',
      path: '/api/v1/namespaces/default/configmaps/fin?propagationPolicy=Sometimes',
    });
    assert.equal(badPolicy.status, 422);
  });

  test('deletecollection removes what the selector matches', async () => {
    await client.http1({ method: 'POST', path: '/api/v1/namespaces/dc/configmaps', body: cm('one', { labels: { del: 'yes' } }) });
    await client.http1({ method: 'POST', path: '/api/v1/namespaces/dc/configmaps', body: cm('two') });
    const r = await client.http1({ method: 'DELETE', path: '/api/v1/namespaces/dc/configmaps?labelSelector=del%3Dyes' });
    assert.equal(r.status, 200);
    assert.equal(r.json().kind, 'ConfigMapList');
    const left = await client.http1({ path: '/api/v1/namespaces/dc/configmaps' });
    assert.deepEqual(
      left.json<{ items: KubeObject[] }>().items.map((i) => i.metadata.name),
      ['two'],
    );
  });

  test('namespaces are created outside any namespace', async () => {
    const r = await client.http1({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } }),
    });
    assert.equal(r.status, 201);
    const got = await client.http1({ path: '/api/v1/namespaces/team-a' });
    assert.equal(got.status, 200);
    assert.equal(got.json<KubeObject>().metadata.namespace, undefined);
  });
});

describe('list', () => {
  test('forbidden parameter combinations are 422 Invalid; parameters that do not parse are 400', async () => {
    const noRv = await client.http1({ path: '/api/v1/namespaces/default/configmaps?resourceVersionMatch=NotOlderThan' });
    assert.equal(noRv.status, 422);
    assert.equal(
      noRv.json().message,
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    );
    const exactZero = await client.http1({ path: '/api/v1/namespaces/default/configmaps?resourceVersion=0&resourceVersionMatch=Exact' });
    assert.equal(exactZero.status, 422);
    const withContinue = await client.http1({ path: '/api/v1/namespaces/default/configmaps?resourceVersion=5&continue=abc&limit=1' });
    assert.equal(withContinue.status, 400);
    assert.equal(withContinue.json().message, 'specifying resource version is not allowed when using continue');
    const initialEvents = await client.http1({ path: '/api/v1/namespaces/default/configmaps?sendInitialEvents=true' });
    assert.equal(initialEvents.status, 422);
    const badLimit = await client.http1({ path: '/api/v1/namespaces/default/configmaps?limit=ten' });
    assert.equal(badLimit.status, 400);
  });

  test('chunks carry continue and remainingItemCount', async () => {
    for (const n of ['c1', 'c2', 'c3']) {
      await client.http1({ method: 'POST', path: '/api/v1/namespaces/chunks/configmaps', body: cm(n) });
    }
    const first = await client.http1({ path: '/api/v1/namespaces/chunks/configmaps?limit=2' });
    const list = first.json<{ metadata: { continue: string; remainingItemCount: number }; items: KubeObject[] }>();
    assert.equal(list.items.length, 2);
    assert.equal(list.metadata.remainingItemCount, 1);
    const rest = await client.http1({ path: `/api/v1/namespaces/chunks/configmaps?limit=2&continue=${list.metadata.continue}` });
    assert.equal(rest.json<{ items: KubeObject[] }>().items.length, 1);
  });

  test('kubectl gets a Table with its columns', async () => {
    const r = await client.http1({ path: '/api/v1/namespaces/chunks/configmaps?limit=500', headers: { accept: KUBECTL_TABLE_ACCEPT } });
    assert.equal(r.status, 200);
    const table = r.json<{
      kind: string;
      apiVersion: string;
      metadata: { resourceVersion: string };
      columnDefinitions: { name: string; type: string; priority: number }[];
      rows: { cells: unknown[]; object: KubeObject }[];
    }>();
    assert.deepEqual(Object.keys(table), ['kind', 'apiVersion', 'metadata', 'columnDefinitions', 'rows']);
    assert.equal(table.kind, 'Table');
    assert.equal(table.apiVersion, 'meta.k8s.io/v1');
    assert.ok(table.metadata.resourceVersion);
    assert.deepEqual(
      table.columnDefinitions.map((c) => c.name),
      ['Name', 'Data', 'Age'],
    );
    assert.equal(table.rows.length, 3);
    assert.equal(table.rows[0].cells[0], 'c1');
    assert.equal(table.rows[0].cells[1], 1);
    assert.equal(table.rows[0].object.kind, 'PartialObjectMetadata');
    const withObject = await client.http1({
      path: '/api/v1/namespaces/chunks/configmaps?includeObject=Object',
      headers: { accept: KUBECTL_TABLE_ACCEPT },
    });
    assert.equal(withObject.json<{ rows: { object: KubeObject }[] }>().rows[0].object.kind, 'ConfigMap');
    const badInclude = await client.http1({
      path: '/api/v1/namespaces/chunks/configmaps?includeObject=All',
      headers: { accept: KUBECTL_TABLE_ACCEPT },
    });
    assert.equal(badInclude.status, 400);
  });

  test('metadata-only lists', async () => {
    const r = await client.http1({
      path: '/api/v1/namespaces/chunks/configmaps',
      headers: { accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json' },
    });
    const list = r.json<{ kind: string; items: Record<string, unknown>[] }>();
    assert.equal(list.kind, 'PartialObjectMetadataList');
    assert.deepEqual(Object.keys(list.items[0]), ['kind', 'apiVersion', 'metadata']);
  });

  test('large lists are gzipped for clients that accept it', async () => {
    const big = 'x'.repeat(40 * 1024);
    for (let i = 0; i < 5; i++) {
      await client.http1({
        method: 'POST',
        path: '/api/v1/namespaces/big/configmaps',
        body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${i}` }, data: { big } }),
      });
    }
    const gz = await client.http1({ path: '/api/v1/namespaces/big/configmaps', headers: { 'accept-encoding': 'gzip' } });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(gz.json<{ items: unknown[] }>().items.length, 5);
    const plain = await client.http1({ path: '/api/v1/namespaces/big/configmaps' });
    assert.equal(plain.headers['content-encoding'], undefined);
    const small = await client.http1({ path: '/api/v1/namespaces/chunks/configmaps', headers: { 'accept-encoding': 'gzip' } });
    assert.equal(small.headers['content-encoding'], undefined);
  });
});

/** opens a watch over HTTP/1.1 and returns its events as they arrive */
function watchHttp1(path: string, headers: Record<string, string> = {}) {
  const lines = new LineReader();
  let status = 0;
  let responseHeaders: Record<string, string | string[] | undefined> = {};
  let closeRequest = () => {};
  const ready = new Promise<void>((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port: client.port, path, headers, ca: pki.ca.cert, cert: admin.cert, key: admin.key, agent: false },
      (res) => {
        status = res.statusCode ?? 0;
        responseHeaders = res.headers;
        const stream = res.headers['content-encoding'] === 'gzip' ? res.pipe(createUnzip()) : res;
        stream.on('data', (c: Buffer) => lines.push(c));
        stream.on('end', () => lines.end());
        res.on('error', () => lines.end());
        res.on('aborted', () => lines.end());
        resolve();
      },
    );
    req.on('error', (e) => {
      lines.end();
      reject(e);
    });
    req.end();
    closeRequest = () => req.destroy();
  });
  return {
    lines,
    ready,
    status: () => status,
    headers: () => responseHeaders,
    close: () => closeRequest(),
  };
}

async function waitFor(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 10));
}

describe('watch', () => {
  test('HTTP/1.1: chunked stream, initial events, then changes; timeoutSeconds ends it cleanly', async () => {
    await client.http1({ method: 'POST', path: '/api/v1/namespaces/w1/configmaps', body: cm('existing') });
    const w = watchHttp1('/api/v1/namespaces/w1/configmaps?watch=true&timeoutSeconds=2');
    await w.ready;
    assert.equal(w.status(), 200);
    assert.equal(w.headers()['transfer-encoding'], 'chunked');
    assert.equal(w.headers()['content-type'], 'application/json');
    const first = await w.lines.nextJson<{ type: string; object: KubeObject }>();
    assert.equal(first?.type, 'ADDED');
    assert.equal(first?.object.metadata.name, 'existing');
    await client.http1({ method: 'POST', path: '/api/v1/namespaces/w1/configmaps', body: cm('later') });
    const second = await w.lines.nextJson<{ type: string; object: KubeObject }>();
    assert.deepEqual([second?.type, second?.object.metadata.name], ['ADDED', 'later']);
    await client.http1({ method: 'DELETE', path: '/api/v1/namespaces/w1/configmaps/later' });
    const third = await w.lines.nextJson<{ type: string }>();
    assert.equal(third?.type, 'DELETED');
    // the server ends the stream when timeoutSeconds passes
    assert.equal(await w.lines.next(), undefined);
  });

  test('HTTP/2: events arrive as DATA frames; a client that goes away stops the storage watch', async () => {
    const session: ClientHttp2Session = client.session();
    const before = configmaps.openWatches();
    const stream = session.request({ ':path': '/api/v1/namespaces/w2/configmaps?watch=1&resourceVersion=999' });
    const lines = new LineReader();
    const response = new Promise<Record<string, unknown>>((resolve) => stream.on('response', resolve));
    stream.on('data', (c: Buffer) => lines.push(c));
    stream.on('end', () => lines.end());
    const headers = await response;
    assert.equal(headers[':status'], 200);
    await waitFor(() => configmaps.openWatches() === before + 1);
    await client.http1({ method: 'POST', path: '/api/v1/namespaces/w2/configmaps', body: cm('h2') });
    const ev = await lines.nextJson<{ type: string; object: KubeObject }>();
    assert.deepEqual([ev?.type, ev?.object.metadata.name], ['ADDED', 'h2']);
    stream.close();
    session.close();
    await waitFor(() => configmaps.openWatches() === before);
  });

  test('one object by fieldSelector, and by the legacy /watch path', async () => {
    await client.http1({ method: 'POST', path: '/api/v1/namespaces/w3/configmaps', body: cm('a') });
    await client.http1({ method: 'POST', path: '/api/v1/namespaces/w3/configmaps', body: cm('b') });
    const bySelector = watchHttp1('/api/v1/namespaces/w3/configmaps?watch=1&fieldSelector=metadata.name%3Db&timeoutSeconds=1');
    const ev = await bySelector.lines.nextJson<{ object: KubeObject }>();
    assert.equal(ev?.object.metadata.name, 'b');
    assert.equal(await bySelector.lines.next(), undefined);
    const legacy = watchHttp1('/api/v1/watch/namespaces/w3/configmaps/a?timeoutSeconds=1');
    const ev2 = await legacy.lines.nextJson<{ object: KubeObject }>();
    assert.equal(ev2?.object.metadata.name, 'a');
    assert.equal(await legacy.lines.next(), undefined);
    const contradicting = await client.http1({ path: '/api/v1/watch/namespaces/w3/configmaps/a?fieldSelector=metadata.name%3Db' });
    assert.equal(contradicting.status, 400);
  });

  test('kubectl get -w: Table events, column definitions only in the first', async () => {
    await client.http1({ method: 'POST', path: '/api/v1/namespaces/w4/configmaps', body: cm('t1') });
    const w = watchHttp1('/api/v1/namespaces/w4/configmaps?watch=true&timeoutSeconds=2', { accept: KUBECTL_TABLE_ACCEPT });
    type TableEvent = {
      type: string;
      object: { kind: string; columnDefinitions: unknown[] | null; rows: { cells: unknown[]; object: KubeObject }[] };
    };
    const first = await w.lines.nextJson<TableEvent>();
    assert.equal(first?.object.kind, 'Table');
    assert.ok(Array.isArray(first?.object.columnDefinitions));
    assert.equal(first?.object.rows.length, 1);
    assert.equal(first?.object.rows[0].cells[0], 't1');
    assert.equal(first?.object.rows[0].object.kind, 'PartialObjectMetadata');
    await client.http1({ method: 'POST', path: '/api/v1/namespaces/w4/configmaps', body: cm('t2') });
    const second = await w.lines.nextJson<TableEvent>();
    assert.equal(second?.object.columnDefinitions, null);
    assert.equal(second?.object.rows[0].cells[0], 't2');
    w.close();
  });

  test('an expired resourceVersion is one ERROR event carrying a 410 Status', async () => {
    const w = watchHttp1('/api/v1/namespaces/w5/configmaps?watch=true&resourceVersion=1');
    await w.ready;
    assert.equal(w.status(), 200);
    const ev = await w.lines.nextJson<{ type: string; object: Record<string, unknown> }>();
    assert.equal(ev?.type, 'ERROR');
    assert.deepEqual(ev?.object, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'too old resource version: 1 (100)',
      reason: 'Expired',
      code: 410,
    });
    assert.equal(await w.lines.next(), undefined);
  });

  test('streaming lists: sendInitialEvents needs resourceVersionMatch=NotOlderThan; ends with a bookmark', async () => {
    const bad = await client.http1({ path: '/api/v1/namespaces/w6/configmaps?watch=true&sendInitialEvents=true' });
    assert.equal(bad.status, 422);
    assert.match(bad.json<{ message: string }>().message, /sendInitialEvents requires setting resourceVersionMatch to NotOlderThan/);
    await client.http1({ method: 'POST', path: '/api/v1/namespaces/w6/configmaps', body: cm('s1') });
    const w = watchHttp1(
      '/api/v1/namespaces/w6/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1',
    );
    assert.equal((await w.lines.nextJson<{ type: string }>())?.type, 'ADDED');
    const bookmark = await w.lines.nextJson<{ type: string; object: KubeObject }>();
    assert.equal(bookmark?.type, 'BOOKMARK');
    assert.equal(bookmark?.object.metadata.annotations?.['k8s.io/initial-events-end'], 'true');
    assert.equal(await w.lines.next(), undefined);
  });

  test('watch over YAML is not acceptable', async () => {
    const r = await client.http1({ path: '/api/v1/namespaces/w7/configmaps?watch=true', headers: { accept: 'application/yaml' } });
    assert.equal(r.status, 406);
  });
});

describe('health, version, non-resource paths', () => {
  test('livez, readyz and healthz in short and verbose forms', async () => {
    const anonymous = new TestClient(client.port, pki.ca.cert);
    const livez = await anonymous.http1({ path: '/livez' });
    assert.equal(livez.status, 200);
    assert.equal(livez.text, 'ok');
    assert.equal(livez.headers['content-type'], 'text/plain; charset=utf-8');
    const verbose = await anonymous.http1({ path: '/readyz?verbose' });
    assert.equal(verbose.text, '[+]ping ok\n[+]etcd ok\n[+]shutdown ok\nreadyz check passed\n');
    const healthz = await anonymous.http1({ path: '/healthz?verbose' });
    assert.equal(healthz.text, '[+]ping ok\nhealthz check passed\n');
    const one = await anonymous.http1({ path: '/readyz/etcd' });
    assert.equal(one.text, 'ok');
    const unknown = await anonymous.http1({ path: '/readyz/nothing' });
    assert.equal(unknown.status, 404);
  });

  test('a failing check is 500 with the reason withheld; exclude skips it', async () => {
    etcdHealthy = false;
    try {
      const r = await client.http1({ path: '/readyz' });
      assert.equal(r.status, 500);
      assert.equal(r.text, '[+]ping ok\n[-]etcd failed: reason withheld\n[+]shutdown ok\nreadyz check failed\n');
      const excluded = await client.http1({ path: '/readyz?verbose&exclude=etcd&exclude=bogus' });
      assert.equal(excluded.status, 200);
      assert.equal(
        excluded.text,
        '[+]ping ok\n[+]etcd excluded: ok\n[+]shutdown ok\nwarn: some health checks cannot be excluded: no matches for "bogus"\nreadyz check passed\n',
      );
      const single = await client.http1({ path: '/readyz/etcd' });
      assert.equal(single.status, 500);
      assert.equal(single.text, 'internal server error: etcd down\n');
    } finally {
      etcdHealthy = true;
    }
  });

  test('readyz fails once shutdown starts; livez does not', async () => {
    shuttingDown = true;
    try {
      assert.equal((await client.http1({ path: '/readyz' })).status, 500);
      assert.equal((await client.http1({ path: '/livez' })).status, 200);
    } finally {
      shuttingDown = false;
    }
  });

  test('/version in kube-apiserver field order', async () => {
    const r = await client.http1({ path: '/version' });
    assert.equal(r.status, 200);
    const v = r.json<Record<string, string>>();
    assert.deepEqual(Object.keys(v), [
      'major',
      'minor',
      'emulationMajor',
      'emulationMinor',
      'minCompatibilityMajor',
      'minCompatibilityMinor',
      'gitVersion',
      'gitCommit',
      'gitTreeState',
      'buildDate',
      'goVersion',
      'compiler',
      'platform',
    ]);
    assert.equal(v.major, '1');
    assert.equal(v.minor, '33');
    assert.match(v.gitVersion, /^v1\.33\.\d+/);
  });

  test('providers answer their paths, with ETag revalidation', async () => {
    const r = await client.http1({ path: '/apis' });
    assert.equal(r.status, 200);
    assert.equal(r.headers['etag'], '"abc123"');
    const again = await client.http1({ path: '/apis', headers: { 'if-none-match': '"abc123"' } });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
  });

  test('HTTP/2 serves the same answers', async () => {
    const session = client.session();
    try {
      const r = await TestClient.http2(session, { path: '/api/v1/namespaces/default/configmaps/first' });
      assert.equal(r.status, 200);
      assert.equal(r.json<KubeObject>().metadata.name, 'first');
      const missing = await TestClient.http2(session, { path: '/nowhere' });
      assert.equal(missing.status, 404);
      assert.equal(missing.json().reason, 'NotFound');
    } finally {
      session.close();
    }
  });

  test('every response carries Audit-Id and Cache-Control', async () => {
    const r = await client.http1({ path: '/api/v1/namespaces/default/configmaps' });
    assert.match(String(r.headers['audit-id']), /^[0-9a-f-]{36}$/);
    assert.equal(r.headers['cache-control'], 'no-cache, private');
    const unauthorized = await new TestClient(client.port, pki.ca.cert).http1({
      path: '/api/v1/pods',
      headers: { 'audit-id': 'given-id' },
    });
    assert.equal(unauthorized.status, 401);
    assert.equal(unauthorized.headers['audit-id'], 'given-id');
  });
});

describe('shutdown', () => {
  test('open watches end when shutdown begins', async () => {
    const w = watchHttp1('/api/v1/namespaces/w9/configmaps?watch=true');
    await w.ready;
    await waitFor(() => configmaps.openWatches() > 0);
    shutdown.abort();
    assert.equal(await w.lines.next(), undefined);
    await waitFor(() => configmaps.openWatches() === 0);
  });
});
