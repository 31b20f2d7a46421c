// CBOR behind the CBORServingAndStorage gate: off, kube 1.33's 415 and 406; on, CBOR bodies
// both ways for built-in objects, apply-patch+cbor, cbor-seq watches, CBOR in etcd, and
// kubectl 1.33 with client-go's own CBOR client (KUBE_FEATURE_ClientsPreferCBOR).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { kubectl, kubectlOk, startKapi, uniqueName, type KapiProcess } from './harness.js';
import { decodeCbor, encodeCbor } from '../server/cbor/index.js';

const CBOR_ENV = { KUBE_FEATURE_ClientsAllowCBOR: 'true', KUBE_FEATURE_ClientsPreferCBOR: 'true' };

describe('CBOR with the gate off', () => {
  let kapi: KapiProcess;
  before(async () => {
    kapi = await startKapi();
  });
  after(async () => {
    await kapi?.stop();
  });

  test('a CBOR body is 415 and a CBOR-only Accept is 406, as kube 1.33 answers', async () => {
    const body = encodeCbor({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } });
    const create = await kapi.http.post('/api/v1/namespaces/default/configmaps', body, { contentType: 'application/cbor' });
    assert.equal(create.status, 415);
    assert.match(
      create.body,
      /the body of the request was in an unknown format - accepted media types include: application\/json, application\/yaml, application\/vnd.kubernetes.protobuf"/,
    );
    const get = await kapi.http.get('/api/v1/namespaces/default/configmaps', { accept: 'application/cbor' });
    assert.equal(get.status, 406);
    assert.match(
      get.body,
      /only the following media types are accepted: application\/json, application\/yaml, application\/vnd.kubernetes.protobuf/,
    );
    const apply = await kapi.http.patch('/api/v1/namespaces/default/configmaps/x?fieldManager=t', body, 'application/apply-patch+cbor');
    assert.equal(apply.status, 415);
    assert.doesNotMatch(apply.body, /cbor/);
  });

  test('kubectl with the CBOR client falls back to JSON', async () => {
    const name = uniqueName('cm');
    await kubectlOk(['create', 'configmap', name, '--from-literal=a=b'], { kubeconfig: kapi.kubeconfig, env: CBOR_ENV });
    const out = await kubectlOk(['get', 'configmap', name, '-o', 'jsonpath={.data.a}'], { kubeconfig: kapi.kubeconfig, env: CBOR_ENV });
    assert.equal(out, 'b');
  });
});

describe('CBOR with the gate on', () => {
  let kapi: KapiProcess;
  before(async () => {
    kapi = await startKapi({ extraArgs: ['--feature-gates=CBORServingAndStorage=true'] });
  });
  after(async () => {
    await kapi?.stop();
  });

  test('create, get and list in CBOR; errors in CBOR too', async () => {
    const name = uniqueName('cm');
    const body = encodeCbor({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } });
    const created = await kapi.http.post('/api/v1/namespaces/default/configmaps', body, {
      contentType: 'application/cbor',
      accept: 'application/cbor',
    });
    assert.equal(created.status, 201, created.body);
    assert.equal(created.headers['content-type'], 'application/cbor');
    assert.deepEqual([...created.bytes!.subarray(0, 3)], [0xd9, 0xd9, 0xf7]);
    const obj = decodeCbor(created.bytes!) as { metadata: { name: string; uid: string }; data: Record<string, string> };
    assert.equal(obj.metadata.name, name);
    assert.deepEqual(obj.data, { k: 'v' });
    const list = await kapi.http.get('/api/v1/namespaces/default/configmaps', { accept: 'application/cbor' });
    assert.equal(list.status, 200);
    const items = (decodeCbor(list.bytes!) as { items: { metadata: { name: string } }[] }).items;
    assert.ok(items.some((i) => i.metadata.name === name));
    // JSON readers see the object written in CBOR
    const json = await kapi.http.get(`/api/v1/namespaces/default/configmaps/${name}`);
    assert.equal(JSON.parse(json.body).data.k, 'v');
    const missing = await kapi.http.get('/api/v1/namespaces/default/configmaps/none-such', { accept: 'application/cbor' });
    assert.equal(missing.status, 404);
    assert.equal((decodeCbor(missing.bytes!) as { reason: string }).reason, 'NotFound');
  });

  test('malformed CBOR, duplicate keys and unknown fields', async () => {
    const dup = Buffer.from(
      'd9d9f7a3' + '4a61706956657273696f6e' + '427631' + '446b696e64' + '49436f6e6669674d6170' + '446b696e64' + '49436f6e6669674d6170',
      'hex',
    );
    const r1 = await kapi.http.post('/api/v1/namespaces/default/configmaps', dup, { contentType: 'application/cbor' });
    assert.equal(r1.status, 400);
    assert.match(r1.body, /cbor: found duplicate map key \\"kind\\" at map element index 2/);
    const r2 = await kapi.http.post('/api/v1/namespaces/default/configmaps', Buffer.from('d9d9f7a1', 'hex'), {
      contentType: 'application/cbor',
    });
    assert.equal(r2.status, 400);
    assert.match(r2.body, /unexpected EOF/);
    const unknown = encodeCbor({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: uniqueName('cm') }, bogus: 1 });
    const strict = await kapi.http.post('/api/v1/namespaces/default/configmaps?fieldValidation=Strict', unknown, {
      contentType: 'application/cbor',
    });
    assert.equal(strict.status, 400);
    assert.match(strict.body, /unknown field \\"bogus\\"/);
    const warn = await kapi.http.post('/api/v1/namespaces/default/configmaps', unknown, { contentType: 'application/cbor' });
    assert.equal(warn.status, 201);
    assert.match(String(warn.headers.warning), /unknown field \\"bogus\\"/);
  });

  test('server-side apply with application/apply-patch+cbor', async () => {
    const name = uniqueName('cm');
    const config = encodeCbor({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });
    const r = await kapi.http.patch(
      `/api/v1/namespaces/default/configmaps/${name}?fieldManager=cbor-test`,
      config,
      'application/apply-patch+cbor',
    );
    assert.equal(r.status, 201, r.body);
    const o = JSON.parse(r.body);
    assert.equal(o.data.a, '1');
    assert.equal(o.metadata.managedFields[0].manager, 'cbor-test');
    assert.equal(o.metadata.managedFields[0].operation, 'Apply');
  });

  test('a watch in application/cbor-seq', async () => {
    const name = uniqueName('cm');
    await kapi.http.post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });
    const w = await kapi.http.get(`/api/v1/namespaces/default/configmaps?watch=1&fieldSelector=metadata.name%3D${name}&timeoutSeconds=1`, {
      accept: 'application/cbor',
    });
    assert.equal(w.status, 200);
    assert.equal(w.headers['content-type'], 'application/cbor-seq');
    const event = decodeCbor(w.bytes!) as { type: string; object: { metadata: { name: string } } };
    assert.equal(event.type, 'ADDED');
    assert.equal(event.object.metadata.name, name);
  });

  test("kubectl 1.33 with client-go's CBOR client: create, get, apply --server-side, watch, delete", async () => {
    const opts = { kubeconfig: kapi.kubeconfig, env: CBOR_ENV };
    const name = uniqueName('cm');
    const manifest = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "1"\n`;
    await kubectlOk(['create', '-f', '-'], { ...opts, input: manifest });
    // kubectl's REST client asks for CBOR first and decodes it
    const raw = await kubectl(['get', '--raw', `/api/v1/namespaces/default/configmaps/${name}`, '-v=8'], opts);
    assert.equal(raw.code, 0, raw.stderr);
    assert.match(raw.stderr, /Accept: application\/cbor/);
    assert.match(raw.stderr, /Content-Type: application\/cbor/);
    await kubectlOk(['apply', '--server-side', '--force-conflicts', '-f', '-'], { ...opts, input: manifest.replace('a: "1"', 'a: "2"') });
    assert.equal(await kubectlOk(['get', 'configmap', name, '-o', 'jsonpath={.data.a}'], opts), '2');
    const watch = await kubectl(['get', 'configmap', name, '--watch', '--request-timeout=2s', '-o', 'name'], opts);
    assert.match(watch.stdout, new RegExp(`configmap/${name}`));
    // delete waits for the object to go with a CBOR-preferring client
    const del = await kubectl(['delete', 'configmap', name, '-v=8'], opts);
    assert.equal(del.code, 0, del.stderr);
    assert.match(del.stderr, /Accept: application\/json;q=0.9,application\/cbor;q=1/);
    assert.match(del.stderr, /Content-Type: application\/cbor/);
  });
});
