// Done-when 5: stale update 409 Conflict, duplicate create 409 AlreadyExists, missing 404
// NotFound, invalid name 422 Invalid naming metadata.name; every error a Status body with
// kube-apiserver's field order.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { jsonOf, kubectl, startKapi, uniqueName, type HttpResponse, type KapiProcess } from './harness.js';
import { createNamespace } from './harness.js';

const STATUS_FIELDS = ['kind', 'apiVersion', 'metadata', 'status', 'message', 'reason', 'details', 'code'];

interface Status {
  kind: string;
  apiVersion: string;
  metadata: Record<string, unknown>;
  status: string;
  message: string;
  reason: string;
  details?: { name?: string; group?: string; kind?: string; causes?: { reason: string; message: string; field: string }[] };
  code: number;
}

/** checks the common shape of a failure Status and returns it */
function failure(res: HttpResponse, code: number, reason: string): Status {
  assert.equal(res.status, code, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const s = jsonOf<Status>(res);
  assert.deepEqual(
    Object.keys(s),
    STATUS_FIELDS.filter((f) => f in s),
    'Status field order',
  );
  assert.equal(s.kind, 'Status');
  assert.equal(s.apiVersion, 'v1');
  assert.deepEqual(s.metadata, {});
  assert.equal(s.status, 'Failure');
  assert.equal(s.reason, reason);
  assert.equal(s.code, code);
  return s;
}

const RFC1123_SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

describe('errors are Status objects', () => {
  let kapi: KapiProcess;
  const ns = uniqueName('errors');
  const cms = () => `/api/v1/namespaces/${ns}/configmaps`;

  before(async () => {
    kapi = await startKapi();
    await createNamespace(kapi.http, ns);
  });
  after(async () => {
    await kapi?.stop();
  });

  it('a stale update is 409 Conflict', async () => {
    const created = await kapi.http.post(cms(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'stale' }, data: { v: '1' } });
    assert.equal(created.status, 201, created.body);
    const original = jsonOf<{ metadata: { resourceVersion: string }; data: Record<string, string> }>(created);
    const fresh = await kapi.http.put(`${cms()}/stale`, { ...original, data: { v: '2' } });
    assert.equal(fresh.status, 200, fresh.body);
    const stale = await kapi.http.put(`${cms()}/stale`, { ...original, data: { v: '3' } });
    const s = failure(stale, 409, 'Conflict');
    assert.equal(
      s.message,
      'Operation cannot be fulfilled on configmaps "stale": the object has been modified; please apply your changes to the latest version and try again',
    );
    assert.deepEqual(s.details, { name: 'stale', kind: 'configmaps' });
    const now = jsonOf<{ data: Record<string, string> }>(await kapi.http.get(`${cms()}/stale`));
    assert.deepEqual(now.data, { v: '2' }, 'the stale write changed nothing');
  });

  it('a stale update of a named-group resource names the group', async () => {
    const deps = `/apis/apps/v1/namespaces/${ns}/deployments`;
    const body = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: {
        selector: { matchLabels: { app: 'd' } },
        template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    };
    const created = await kapi.http.post(deps, body);
    assert.equal(created.status, 201, created.body);
    const obj = jsonOf<{ metadata: { resourceVersion: string } }>(created);
    assert.equal((await kapi.http.patch(`${deps}/d`, { metadata: { labels: { x: 'y' } } })).status, 200);
    const s = failure(await kapi.http.put(`${deps}/d`, obj), 409, 'Conflict');
    assert.equal(
      s.message,
      'Operation cannot be fulfilled on deployments.apps "d": the object has been modified; please apply your changes to the latest version and try again',
    );
    assert.deepEqual(s.details, { name: 'd', group: 'apps', kind: 'deployments' });
  });

  it('a duplicate create is 409 AlreadyExists', async () => {
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'twice' } };
    assert.equal((await kapi.http.post(cms(), body)).status, 201);
    const s = failure(await kapi.http.post(cms(), body), 409, 'AlreadyExists');
    assert.equal(s.message, 'configmaps "twice" already exists');
    assert.deepEqual(s.details, { name: 'twice', kind: 'configmaps' });
  });

  it('a missing object is 404 NotFound', async () => {
    const s = failure(await kapi.http.get(`${cms()}/nope`), 404, 'NotFound');
    assert.equal(s.message, 'configmaps "nope" not found');
    assert.deepEqual(s.details, { name: 'nope', kind: 'configmaps' });
    const d = failure(await kapi.http.delete(`${cms()}/nope`), 404, 'NotFound');
    assert.equal(d.message, 'configmaps "nope" not found');
    const apps = failure(await kapi.http.get(`/apis/apps/v1/namespaces/${ns}/deployments/nope`), 404, 'NotFound');
    assert.equal(apps.message, 'deployments.apps "nope" not found');
    assert.deepEqual(apps.details, { name: 'nope', group: 'apps', kind: 'deployments' });
  });

  it('an invalid name is 422 Invalid naming metadata.name', async () => {
    const res = await kapi.http.post(cms(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Bad_Name' } });
    const s = failure(res, 422, 'Invalid');
    assert.equal(s.message, `ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": ${RFC1123_SUBDOMAIN}`);
    assert.deepEqual(s.details, {
      name: 'Bad_Name',
      kind: 'ConfigMap',
      causes: [{ reason: 'FieldValueInvalid', message: `Invalid value: "Bad_Name": ${RFC1123_SUBDOMAIN}`, field: 'metadata.name' }],
    });
    assert.deepEqual(Object.keys(s.details!.causes![0]!), ['reason', 'message', 'field']);
    assert.equal((await kapi.http.get(`${cms()}/Bad_Name`)).status, 404, 'nothing was written');
  });

  it('a create without a name is 422 Invalid naming metadata.name', async () => {
    const s = failure(await kapi.http.post(cms(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }), 422, 'Invalid');
    assert.equal(s.message, 'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required');
    assert.deepEqual(s.details?.causes, [
      { reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' },
    ]);
  });

  it('a create in a missing namespace is 404 NotFound for the namespace', async () => {
    const s = failure(
      await kapi.http.post('/api/v1/namespaces/no-such-ns/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }),
      404,
      'NotFound',
    );
    assert.equal(s.message, 'namespaces "no-such-ns" not found');
    assert.deepEqual(s.details, { name: 'no-such-ns', kind: 'namespaces' });
  });

  it('a body that is not JSON is 400 BadRequest, and the server keeps serving', async () => {
    const res = await kapi.http.request('POST', cms(), { body: '{"apiVersion": "v1", "kind": ', contentType: 'application/json' });
    failure(res, 400, 'BadRequest');
    assert.equal((await kapi.http.get(cms())).status, 200);
  });

  it('an unknown resource is 404 with a Status body', async () => {
    const res = await kapi.http.get(`/api/v1/namespaces/${ns}/widgets`);
    assert.equal(res.status, 404);
    const s = jsonOf<Status>(res);
    assert.equal(s.kind, 'Status');
    assert.equal(s.reason, 'NotFound');
    assert.equal(s.code, 404);
  });

  it('kubectl shows the same errors', async () => {
    const opts = { kubeconfig: kapi.kubeconfig };
    const missing = await kubectl(['get', 'cm', 'nope', '-n', ns], opts);
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, 'Error from server (NotFound): configmaps "nope" not found\n');
    const dup = await kubectl(['create', 'configmap', 'twice', '-n', ns], opts);
    assert.equal(dup.code, 1);
    assert.equal(dup.stderr, 'error: failed to create configmap: configmaps "twice" already exists\n');
    const invalid = await kubectl(['create', 'configmap', 'Bad_Name', '-n', ns], opts);
    assert.equal(invalid.code, 1);
    assert.match(
      invalid.stderr,
      /^error: failed to create configmap: ConfigMap "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
    );
  });
});
