// Issue 8, finding 3: the path is routed as sent. `.`, `..` (also percent-encoded) and `\` in a
// name or namespace never reach another object: kube-apiserver's answers over HTTP/1.1 and
// HTTP/2 alike, and the namespace, its ConfigMaps and every Secret are left as they were.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import {
  createConfigMap,
  createNamespace,
  jsonOf,
  loadKubeconfig,
  startKapi,
  uniqueName,
  type HttpResponse,
  type KapiProcess,
} from './harness.js';

interface Status {
  kind: string;
  status: string;
  message: string;
  reason: string;
  code: number;
}

type Send = (method: string, rawPath: string) => Promise<HttpResponse>;

/** an HTTP/2 request whose `:path` is exactly `rawPath` */
function http2Sender(kapi: KapiProcess): { send: Send; close: () => void } {
  const creds = loadKubeconfig(kapi.kubeconfig);
  const session = http2.connect(kapi.url, { ca: creds.ca, cert: creds.cert, key: creds.key });
  const send: Send = (method, rawPath) =>
    new Promise((resolve, reject) => {
      const stream = session.request({ ':method': method, ':path': rawPath, accept: 'application/json' });
      let status = 0;
      let headers: HttpResponse['headers'] = {};
      const chunks: Buffer[] = [];
      stream.on('response', (h) => {
        status = Number(h[':status']);
        headers = h as HttpResponse['headers'];
      });
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => resolve({ status, headers, body: Buffer.concat(chunks).toString('utf8') }));
      stream.on('error', reject);
      stream.end();
    });
  return { send, close: () => session.close() };
}

function statusOf(res: HttpResponse, code: number, reason: string): Status {
  assert.equal(res.status, code, res.body);
  const s = jsonOf<Status>(res);
  assert.deepEqual([s.kind, s.status, s.reason, s.code], ['Status', 'Failure', reason, code], res.body);
  return s;
}

describe('paths are routed as sent, never normalised', () => {
  let kapi: KapiProcess;
  let h2: ReturnType<typeof http2Sender>;
  const ns = uniqueName('probe');
  const elsewhere = uniqueName('secrets');
  let before_: { namespaceUid: string; configmaps: string[]; secrets: string[] };

  const snapshot = async () => {
    const namespace = jsonOf<{ metadata: { uid: string }; status: { phase: string } }>(await kapi.http.get(`/api/v1/namespaces/${ns}`));
    assert.equal(namespace.status.phase, 'Active');
    const names = async (p: string) =>
      jsonOf<{ items: { metadata: { namespace: string; name: string; resourceVersion: string } }[] }>(await kapi.http.get(p))
        .items.map((i) => `${i.metadata.namespace}/${i.metadata.name}@${i.metadata.resourceVersion}`)
        .sort();
    return {
      namespaceUid: namespace.metadata.uid,
      configmaps: await names(`/api/v1/namespaces/${ns}/configmaps`),
      secrets: await names('/api/v1/secrets'),
    };
  };

  before(async () => {
    kapi = await startKapi();
    h2 = http2Sender(kapi);
    await createNamespace(kapi.http, ns);
    await createNamespace(kapi.http, elsewhere);
    await createConfigMap(kapi.http, ns, 'base', { a: '1' });
    await createConfigMap(kapi.http, ns, 'other', { b: '2' });
    const secret = await kapi.http.post(`/api/v1/namespaces/${elsewhere}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'token' },
      stringData: { k: 'v' },
    });
    assert.equal(secret.status, 201, secret.body);
    before_ = await snapshot();
  });
  after(async () => {
    h2?.close();
    await kapi?.stop();
  });

  const protocols: [string, () => Send][] = [
    ['HTTP/1.1', () => (method, p) => kapi.http.request(method, p)],
    ['HTTP/2', () => h2.send],
  ];

  for (const [protocol, sender] of protocols) {
    describe(protocol, () => {
      for (const [segment, name] of [
        ['..', '..'],
        ['%2e%2e', '..'],
        ['%2E.', '..'],
        ['.', '.'],
        ['%2e', '.'],
      ]) {
        it(`DELETE and GET of configmaps/${segment} are 400 "Name parameter invalid", never the namespace or the list`, async () => {
          const send = sender();
          for (const [method, query] of [
            ['DELETE', '?dryRun=All'],
            ['DELETE', ''],
            ['GET', ''],
            ['PUT', ''],
          ]) {
            const res = await send(method, `/api/v1/namespaces/${ns}/configmaps/${segment}${query}`);
            if (method === 'PUT') {
              // no body: the decoder refuses it before any name is looked at, as in kube-apiserver
              assert.equal(res.status, 400, res.body);
              continue;
            }
            const s = statusOf(res, 400, 'BadRequest');
            assert.equal(s.message, `Name parameter invalid: "${name}": may not be '${name}'`);
          }
        });
      }

      it('configmaps/\\ is a ConfigMap named \\ (404), not the collection or the namespace', async () => {
        const send = sender();
        for (const method of ['GET', 'DELETE']) {
          const s = statusOf(await send(method, `/api/v1/namespaces/${ns}/configmaps/\\`), 404, 'NotFound');
          assert.equal(s.message, 'configmaps "\\\\" not found');
        }
      });

      it('a namespace named .. is a namespace of that name: no Secret of another namespace is listed', async () => {
        const send = sender();
        for (const p of ['/api/v1/namespaces/../secrets', '/api/v1/namespaces/%2e%2e/secrets']) {
          const res = await send('GET', p);
          if (res.status === 200) {
            assert.deepEqual(jsonOf<{ items: unknown[] }>(res).items, [], res.body);
          } else {
            assert.ok(res.status >= 400 && res.status < 500, res.body);
          }
        }
        const s = statusOf(await send('GET', '/api/v1/namespaces/..'), 400, 'BadRequest');
        assert.equal(s.message, `Name parameter invalid: "..": may not be '..'`);
      });

      it('%2F in a name separates segments: configmaps/base%2Fx is an unknown subresource (404)', async () => {
        const send = sender();
        statusOf(await send('GET', `/api/v1/namespaces/${ns}/configmaps/base%2Fx`), 404, 'NotFound');
      });

      it('watches: ?watch=1 on configmaps/.. is a get (400); the legacy /watch/ path by that name selects nothing', async () => {
        const send = sender();
        const get = statusOf(await send('GET', `/api/v1/namespaces/${ns}/configmaps/..?watch=1`), 400, 'BadRequest');
        assert.equal(get.message, `Name parameter invalid: "..": may not be '..'`);
        const res = await send('GET', `/api/v1/watch/namespaces/${ns}/configmaps/..?timeoutSeconds=1`);
        assert.equal(res.status, 200, res.body);
        assert.equal(res.body.trim(), '', 'no event for any object');
      });

      it('dot segments in non-resource paths are not resolved either', async () => {
        const send = sender();
        const res = await send('GET', '/healthz/../api/v1/namespaces');
        assert.equal(res.status, 404, res.body);
      });
    });
  }

  it('the namespace, its ConfigMaps and every Secret are untouched', async () => {
    assert.deepEqual(await snapshot(), before_);
  });
});
