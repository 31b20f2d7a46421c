// The protobuf media type through a real kapi process (bin/kapi, its embedded etcd): kubectl
// 1.33's protobuf creates (which used to get 415), protobuf GET / list / Status errors / watch
// frames / DeleteOptions bodies as client-go exchanges them, and the JSON view of the same
// objects.

import assert from 'node:assert/strict';
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { kubectl, kubectlOk, kubectlPath, loadKubeconfig, startKapi, type KapiProcess } from '../../e2e/harness.js';
import type { ClientCredentials } from '../../e2e/http-client.js';
import { decodeObject, decodeWatchEvents, encodeObject, PROTOBUF_MEDIA_TYPE, type JsonObject } from './codec.js';

const CLIENT_GO_ACCEPT = `${PROTOBUF_MEDIA_TYPE}, application/json`;

function kubectlAvailable(): boolean {
  try {
    kubectlPath('1.33');
    return true;
  } catch {
    return false;
  }
}

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function request(creds: ClientCredentials, method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<Raw> {
  const url = new URL(creds.server);
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        hostname: url.hostname,
        port: url.port,
        method,
        path,
        headers: body ? { ...headers, 'content-length': String(body.length) } : headers,
        ca: creds.ca,
        cert: creds.cert,
        key: creds.key,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('protobuf through a real kapi', { skip: kubectlAvailable() ? false : 'kubectl.1.33 not installed' }, () => {
  let kapi: KapiProcess;
  let creds: ClientCredentials;
  const opts = () => ({ kubeconfig: kapi.kubeconfig });

  before(async () => {
    kapi = await startKapi();
    creds = loadKubeconfig(kapi.kubeconfig);
  });

  after(async () => {
    await kapi?.stop();
  });

  it('kubectl create namespace / configmap / secret / deployment send protobuf and succeed', async () => {
    await kubectlOk(['create', 'namespace', 'pb'], opts());
    await kubectlOk(['create', 'configmap', 'c', '--from-literal=a=b', '-n', 'pb'], opts());
    await kubectlOk(['create', 'secret', 'generic', 's', '--from-literal=k=v', '-n', 'pb'], opts());
    const deploy = JSON.parse(
      await kubectlOk(['create', 'deployment', 'd', '--image=nginx', '--replicas=0', '-n', 'pb', '-o', 'json'], opts()),
    ) as JsonObject;
    assert.equal((deploy.spec as JsonObject).replicas, 0);
    const ns = JSON.parse(await kubectlOk(['get', 'namespace', 'pb', '-o', 'json'], opts())) as JsonObject;
    assert.equal((ns.status as JsonObject).phase, 'Active');
    const cm = JSON.parse(await kubectlOk(['get', 'configmap', 'c', '-n', 'pb', '-o', 'json'], opts())) as JsonObject;
    assert.deepEqual(cm.data, { a: 'b' });
    // Go's protobuf encoder writes every non-pointer field; none of those zero values reach storage
    assert.equal(typeof (cm.metadata as JsonObject).uid, 'string');
    assert.equal((cm.metadata as JsonObject).generateName, undefined);
    assert.equal((cm.metadata as JsonObject).selfLink, undefined);
    const secret = JSON.parse(await kubectlOk(['get', 'secret', 's', '-n', 'pb', '-o', 'json'], opts())) as JsonObject;
    assert.deepEqual(secret.data, { k: Buffer.from('v').toString('base64') });
  });

  it('kubectl describe reads protobuf lists (quotas, limit ranges, events)', async () => {
    const out = await kubectlOk(['describe', 'namespace', 'pb'], opts());
    assert.match(out, /Name:\s+pb/);
    assert.match(out, /Status:\s+Active/);
  });

  it('GET, list and errors in protobuf match the JSON view', async () => {
    const json = await request(creds, 'GET', '/api/v1/namespaces/pb/configmaps/c', { accept: 'application/json' });
    const proto = await request(creds, 'GET', '/api/v1/namespaces/pb/configmaps/c', { accept: CLIENT_GO_ACCEPT });
    assert.equal(proto.status, 200);
    assert.equal(proto.headers['content-type'], PROTOBUF_MEDIA_TYPE);
    assert.deepEqual(decodeObject(proto.body).object, JSON.parse(json.body.toString('utf8')));

    const list = await request(creds, 'GET', '/api/v1/namespaces/pb/configmaps', { accept: CLIENT_GO_ACCEPT });
    const decoded = decodeObject(list.body);
    assert.equal(decoded.kind, 'ConfigMapList');
    const names = ((decoded.object.items as JsonObject[]) ?? []).map((i) => (i.metadata as JsonObject).name);
    assert.ok(names.includes('c'), `items: ${names.join(', ')}`);
    assert.ok(typeof (decoded.object.metadata as JsonObject).resourceVersion === 'string');

    const missing = await request(creds, 'GET', '/api/v1/namespaces/pb/configmaps/nope', { accept: CLIENT_GO_ACCEPT });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers['content-type'], PROTOBUF_MEDIA_TYPE);
    const status = decodeObject(missing.body);
    assert.equal(status.kind, 'Status');
    assert.equal(status.object.reason, 'NotFound');
    assert.equal(status.object.code, 404);
  });

  it('protobuf lists and pages match the JSON lists, also after an object changes between them', async () => {
    const ns = 'pblist';
    await kubectlOk(['create', 'namespace', ns], opts());
    for (let i = 0; i < 5; i++) {
      await kubectlOk(['create', 'configmap', `m${i}`, `--from-literal=big=${'v'.repeat(300 * (i + 1))}`, '-n', ns], opts());
    }
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const protoList = async (query = '') => {
      const res = await request(creds, 'GET', path + query, { accept: CLIENT_GO_ACCEPT });
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], PROTOBUF_MEDIA_TYPE);
      return res.body;
    };
    const jsonList = async (query = '') =>
      JSON.parse((await request(creds, 'GET', path + query, { accept: 'application/json' })).body.toString('utf8')) as JsonObject;
    const itemsOf = (list: JsonObject) => (list.items as JsonObject[]).map((item) => item.metadata as JsonObject);

    // at one resource version the protobuf list, whether its items were made now or kept from
    // the list before, is the JSON list
    const first = await jsonList();
    const rv = (first.metadata as JsonObject).resourceVersion as string;
    const at = `?resourceVersion=${rv}&resourceVersionMatch=Exact`;
    const cold = await protoList(at);
    const warm = await protoList(at);
    assert.deepEqual(warm, cold);
    assert.deepEqual(decodeObject(warm).object, await jsonList(at));

    // a GET by name shares an item's bytes with the lists
    const getM2 = async () => {
      const res = await request(creds, 'GET', `${path}/m2`, { accept: CLIENT_GO_ACCEPT });
      assert.equal(res.status, 200);
      return decodeObject(res.body);
    };
    const m2Json = JSON.parse(
      (await request(creds, 'GET', `${path}/m2`, { accept: 'application/json' })).body.toString('utf8'),
    ) as JsonObject;
    assert.deepEqual((await getM2()).object, m2Json);

    // a changed object comes with its new content and resourceVersion
    await kubectlOk(['label', 'configmap', 'm2', 'changed=yes', '-n', ns], opts());
    const m2Changed = await getM2();
    assert.equal(m2Changed.kind, 'ConfigMap');
    assert.deepEqual((m2Changed.object.metadata as JsonObject).labels, { changed: 'yes' });
    const after = decodeObject(await protoList()).object;
    assert.deepEqual(
      after,
      await jsonList(`?resourceVersion=${(after.metadata as JsonObject).resourceVersion as string}&resourceVersionMatch=Exact`),
    );
    const m2 = itemsOf(after).find((m) => m.name === 'm2');
    assert.deepEqual(m2?.labels, { changed: 'yes' });
    assert.notEqual(m2?.resourceVersion, itemsOf(first).find((m) => m.name === 'm2')?.resourceVersion);

    // pages: each page's items and continue token as in JSON
    const page = decodeObject(await protoList('?limit=2')).object;
    const jsonPage = await jsonList('?limit=2');
    assert.deepEqual(itemsOf(page), itemsOf(jsonPage));
    const token = (page.metadata as JsonObject).continue as string;
    assert.ok(token);
    const nextQuery = `?limit=2&continue=${encodeURIComponent(token)}`;
    const next = decodeObject(await protoList(nextQuery)).object;
    // the namespace's own kube-root-ca.crt comes first
    assert.deepEqual(
      itemsOf(next).map((m) => m.name),
      ['m1', 'm2'],
    );
    assert.deepEqual(next, await jsonList(nextQuery));
    assert.equal((next.metadata as JsonObject).remainingItemCount, 2);
  });

  it('protobuf create and update bodies, DeleteOptions body', async () => {
    const body = encodeObject(
      {
        metadata: { name: 'viaproto', labels: { x: 'y' } },
        data: { k: 'v' },
        binaryData: { b: Buffer.from([0, 1, 254]).toString('base64') },
      },
      { group: '', version: 'v1', kind: 'ConfigMap' },
    );
    const created = await request(
      creds,
      'POST',
      '/api/v1/namespaces/pb/configmaps',
      { accept: CLIENT_GO_ACCEPT, 'content-type': PROTOBUF_MEDIA_TYPE },
      body,
    );
    assert.equal(created.status, 201, created.body.toString('latin1'));
    const obj = decodeObject(created.body).object;
    assert.deepEqual(obj.binaryData, { b: Buffer.from([0, 1, 254]).toString('base64') });

    (obj.data as JsonObject).k = 'v2';
    const updated = await request(
      creds,
      'PUT',
      '/api/v1/namespaces/pb/configmaps/viaproto',
      { accept: CLIENT_GO_ACCEPT, 'content-type': PROTOBUF_MEDIA_TYPE },
      encodeObject(obj, { group: '', version: 'v1', kind: 'ConfigMap' }),
    );
    assert.equal(updated.status, 200, updated.body.toString('latin1'));
    assert.deepEqual(decodeObject(updated.body).object.data, { k: 'v2' });

    const options = encodeObject(
      { gracePeriodSeconds: 0, propagationPolicy: 'Background' },
      { group: 'meta.k8s.io', version: 'v1', kind: 'DeleteOptions' },
    );
    const deleted = await request(
      creds,
      'DELETE',
      '/api/v1/namespaces/pb/configmaps/viaproto',
      { accept: CLIENT_GO_ACCEPT, 'content-type': PROTOBUF_MEDIA_TYPE },
      options,
    );
    assert.equal(deleted.status, 200, deleted.body.toString('latin1'));
    const gone = await kubectl(['get', 'configmap', 'viaproto', '-n', 'pb'], opts());
    assert.notEqual(gone.code, 0);
  });

  it('a watch streams length-prefixed protobuf WatchEvents', async () => {
    const list = decodeObject((await request(creds, 'GET', '/api/v1/namespaces/pb/configmaps', { accept: CLIENT_GO_ACCEPT })).body);
    const rv = (list.object.metadata as JsonObject).resourceVersion as string;
    const watching = request(creds, 'GET', `/api/v1/namespaces/pb/configmaps?watch=1&resourceVersion=${rv}&timeoutSeconds=3`, {
      accept: CLIENT_GO_ACCEPT,
    });
    await kubectlOk(['create', 'configmap', 'watched', '--from-literal=w=1', '-n', 'pb'], opts());
    const res = await watching;
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], `${PROTOBUF_MEDIA_TYPE};stream=watch`);
    const { events, rest } = decodeWatchEvents(res.body);
    assert.equal(rest.length, 0);
    const added = events.find((e) => e.type === 'ADDED' && (e.object.metadata as JsonObject).name === 'watched');
    assert.ok(added, `events: ${events.map((e) => `${e.type} ${e.kind}`).join(', ')}`);
    assert.equal(added.kind, 'ConfigMap');
    assert.deepEqual(added.object.data, { w: '1' });
  });

  it('kinds without a protobuf descriptor (apiextensions) answer JSON to protobuf-first clients', async () => {
    const r = await request(creds, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { accept: CLIENT_GO_ACCEPT });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal((JSON.parse(r.body.toString('utf8')) as JsonObject).kind, 'CustomResourceDefinitionList');
  });
});
