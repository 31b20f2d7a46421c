// Hostile bodies against one real replica: a JSON patch whose copies double the object, YAML
// and JSON nested thousands deep (as a create, as apply patches), deep merge and strategic
// merge patches. Each gets a 4xx Status, the object stays as it was, and the replica keeps
// answering /readyz and a plain GET.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createConfigMap, createNamespace, jsonOf, startKapi, uniqueName, type HttpResponse, type KapiProcess } from './harness.js';

interface Status {
  kind: string;
  status: string;
  message: string;
  reason: string;
  code: number;
}

function failure(res: HttpResponse, code: number, reason: string): Status {
  assert.equal(res.status, code, res.body.slice(0, 500));
  const s = jsonOf<Status>(res);
  assert.equal(s.kind, 'Status');
  assert.equal(s.status, 'Failure');
  assert.equal(s.reason, reason);
  assert.equal(s.code, code);
  return s;
}

const nested = (open: string, close: string, depth: number): string => open.repeat(depth) + close.repeat(depth);
const deepObject = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

describe('bounded decoders and patch appliers', () => {
  let kapi: KapiProcess;
  const ns = uniqueName('bounds');
  const cm = (name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;

  before(async () => {
    kapi = await startKapi();
    await createNamespace(kapi.http, ns);
    await createConfigMap(kapi.http, ns, 'base', { k: 'v' });
  });
  after(async () => {
    await kapi?.stop();
  });

  async function assertServing(): Promise<void> {
    const ready = await kapi.http.get('/readyz');
    assert.equal(ready.status, 200, ready.body);
    const got = await kapi.http.get(cm('base'));
    assert.equal(got.status, 200, got.body);
  }

  it('a JSON patch whose 30 copies double the object is refused with 422 and changes nothing', async () => {
    const before = jsonOf<{ metadata: { resourceVersion: string } }>(await kapi.http.get(cm('base')));
    const patch = [
      { op: 'add', path: '/metadata/annotations', value: { a: 'x'.repeat(1000) } },
      ...Array.from({ length: 30 }, (_, i) => ({ op: 'copy', from: '/metadata/annotations', path: `/metadata/annotations/a${i}` })),
    ];
    const res = await kapi.http.patch(cm('base'), JSON.stringify(patch), 'application/json-patch+json');
    const s = failure(res, 422, 'Invalid');
    assert.equal(s.message, 'the server rejected our request due to an error in our request');
    assert.ok(res.body.length < 4096, 'the error does not carry the exploded object');
    const after = jsonOf<{ metadata: { resourceVersion: string; annotations?: unknown } }>(await kapi.http.get(cm('base')));
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion);
    assert.equal(after.metadata.annotations, undefined);
    await assertServing();
  });

  it('copies within the budget still apply', async () => {
    await createConfigMap(kapi.http, ns, 'copies');
    const patch = [
      { op: 'add', path: '/metadata/annotations', value: { a: 'x'.repeat(1000) } },
      ...Array.from({ length: 4 }, (_, i) => ({ op: 'copy', from: '/metadata/annotations/a', path: `/metadata/annotations/a${i}` })),
    ];
    const res = await kapi.http.patch(cm('copies'), JSON.stringify(patch), 'application/json-patch+json');
    assert.equal(res.status, 200, res.body);
    assert.equal(Object.keys(jsonOf<{ metadata: { annotations: object } }>(res).metadata.annotations).length, 5);
  });

  it('YAML nested 3000 deep, sent twice to selfsubjectaccessreviews: 400 each time, and the replica serves', async () => {
    const body = nested('[', ']', 3000);
    for (let i = 0; i < 2; i++) {
      const res = await kapi.http.post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', body, { contentType: 'application/yaml' });
      const s = failure(res, 400, 'BadRequest');
      assert.match(s.message, /error converting YAML to JSON: yaml: exceeded max depth of 500/);
    }
    await assertServing();
  });

  it('block-style YAML nested deep is refused the same way', async () => {
    const body = Array.from({ length: 2000 }, (_, i) => `${' '.repeat(i)}a:`).join('\n') + ' 1\n';
    const res = await kapi.http.post(`/api/v1/namespaces/${ns}/configmaps`, body, { contentType: 'application/yaml' });
    failure(res, 400, 'BadRequest');
    const seq = await kapi.http.post(`/api/v1/namespaces/${ns}/configmaps`, `${'- '.repeat(5000)}x\n`, { contentType: 'application/yaml' });
    failure(seq, 400, 'BadRequest');
    await assertServing();
  });

  it("JSON nested 4000 deep as a create: 400 with Go's words", async () => {
    const res = await kapi.http.post(`/api/v1/namespaces/${ns}/configmaps`, nested('[', ']', 4000));
    const s = failure(res, 400, 'BadRequest');
    assert.equal(
      s.message,
      `the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character '[' exceeded max depth (${'5b'.repeat(30)} ...)`,
    );
    await assertServing();
  });

  it('apply patches nested 3000 (YAML) and 4000 (JSON) deep: 400, nothing created', async () => {
    const apply = (body: string) => kapi.http.patch(`${cm('applied')}?fieldManager=probe`, body, 'application/apply-patch+yaml');
    const yaml = failure(await apply(nested('[', ']', 3000)), 400, 'BadRequest');
    assert.equal(yaml.message, 'error decoding YAML: error converting YAML to JSON: yaml: exceeded max depth of 500');
    failure(
      await apply(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied","annotations":${deepObject(4000)}}}`),
      400,
      'BadRequest',
    );
    assert.equal((await kapi.http.get(cm('applied'))).status, 404);
    await assertServing();
  });

  it('merge and strategic merge patches nested 9000 deep: 400, the object unchanged', async () => {
    const before = jsonOf<{ metadata: { resourceVersion: string } }>(await kapi.http.get(cm('base')));
    const body = `{"metadata":{"annotations":${deepObject(9000)}}}`;
    const merge = failure(await kapi.http.patch(cm('base'), body, 'application/merge-patch+json'), 400, 'BadRequest');
    assert.equal(merge.message, "error decoding patch: invalid character '{' exceeded max depth");
    const strategic = failure(await kapi.http.patch(cm('base'), body, 'application/strategic-merge-patch+json'), 400, 'BadRequest');
    assert.equal(strategic.message, "invalid character '{' exceeded max depth");
    const jsonPatch = failure(
      await kapi.http.patch(
        cm('base'),
        `[{"op":"add","path":"/metadata/annotations","value":${deepObject(9000)}}]`,
        'application/json-patch+json',
      ),
      400,
      'BadRequest',
    );
    assert.equal(jsonPatch.message, "error decoding patch: invalid character '{' exceeded max depth");
    const after = jsonOf<{ metadata: { resourceVersion: string } }>(await kapi.http.get(cm('base')));
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion);
    await assertServing();
  });

  it('bodies nested to the limit are still decoded', async () => {
    // 496 levels of annotations value plus the 4 around it: the limit exactly; the ConfigMap
    // type refuses a map where a string belongs, as kube's decoder does
    const res = await kapi.http.post(
      `/api/v1/namespaces/${ns}/configmaps`,
      `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"limit","annotations":{"a":${deepObject(497)}}}}`,
    );
    const s = failure(res, 400, 'BadRequest');
    assert.doesNotMatch(s.message, /max depth/);
    const review = await kapi.http.post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', nested('[', ']', 499), {
      contentType: 'application/yaml',
    });
    assert.doesNotMatch(failure(review, 400, 'BadRequest').message, /max depth/);
    await assertServing();
  });
});
