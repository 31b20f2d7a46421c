// CRD webhook conversion with kubectl 1.33 against a real kapi and a loopback HTTPS conversion
// webhook (its own CA as caBundle): versions v1 (storage, spec.size) and v2 (spec.count, the
// same field renamed). Created in v1 and read in v2 and the other way round, a list in v2 is
// one ConversionReview, a watch in v2 sees converted objects, a webhook that is down gives
// kube's 500, and spec.conversion is validated as kube does.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { freePort, kubectl, kubectlOk, startKapi, waitFor, type KapiProcess } from './harness.js';
import { startLoopbackHttps, type LoopbackHttps } from './loopback-https.js';

const GROUP = 'conv.example.com';

interface Review {
  apiVersion: string;
  request: { uid: string; desiredAPIVersion: string; objects: Record<string, any>[] };
}

/** the webhook: renames spec.size (v1) to spec.count (v2) and back */
function convert(review: Review): unknown {
  const { uid, desiredAPIVersion, objects } = review.request;
  const convertedObjects = objects.map((o) => {
    const spec = { ...(o.spec ?? {}) } as Record<string, unknown>;
    if (desiredAPIVersion === `${GROUP}/v2` && 'size' in spec) {
      spec.count = spec.size;
      delete spec.size;
    } else if (desiredAPIVersion === `${GROUP}/v1` && 'count' in spec) {
      spec.size = spec.count;
      delete spec.count;
    }
    return { ...o, apiVersion: desiredAPIVersion, spec };
  });
  return { apiVersion: review.apiVersion, kind: 'ConversionReview', response: { uid, result: { status: 'Success' }, convertedObjects } };
}

function crd(plural: string, kind: string, url: string, caBundle: string): string {
  const schema = (field: string) => ({
    openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { [field]: { type: 'integer' } } } } },
  });
  return JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [
        { name: 'v1', served: true, storage: true, schema: schema('size') },
        { name: 'v2', served: true, storage: false, schema: schema('count') },
      ],
      conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url, caBundle } } },
    },
  });
}

const widget = (version: 'v1' | 'v2', name: string, value: number, kind = 'Widget') =>
  JSON.stringify({
    apiVersion: `${GROUP}/${version}`,
    kind,
    metadata: { name, namespace: 'default' },
    spec: version === 'v1' ? { size: value } : { count: value },
  });

describe('CRD webhook conversion', { timeout: 600_000 }, () => {
  let kapi: KapiProcess;
  let hook: LoopbackHttps;
  let deadPort: number;
  const reviews: Review[] = [];
  const k = (args: string[], input?: string) => kubectl(args, { kubeconfig: kapi.kubeconfig, input });
  const kOk = (args: string[], input?: string) => kubectlOk(args, { kubeconfig: kapi.kubeconfig, input });
  const getJson = async (resource: string, name: string) =>
    JSON.parse(await kOk(['get', resource, name, '-o', 'json'])) as Record<string, any>;

  before(async () => {
    hook = await startLoopbackHttps((path, body) => {
      const review = body as Review;
      reviews.push(review);
      if (path !== '/convert') throw new Error('unknown path');
      return convert(review);
    });
    deadPort = await freePort();
    kapi = await startKapi();
    await kOk(['apply', '-f', '-'], crd('widgets', 'Widget', `${hook.url}/convert`, hook.caBundle));
    await kOk(['apply', '-f', '-'], crd('gadgets', 'Gadget', `https://127.0.0.1:${deadPort}/convert`, hook.caBundle));
    await waitFor(
      'both versions served',
      async () => {
        const r = await k(['get', `widgets.v2.${GROUP}`, '-o', 'name']);
        const g = await k(['get', `gadgets.v1.${GROUP}`, '-o', 'name']);
        return r.code === 0 && g.code === 0;
      },
      60_000,
      200,
    );
  });

  after(async () => {
    await kapi?.stop();
    await hook?.close();
  });

  it('created in v1, read in v2', async () => {
    await kOk(['create', '-f', '-'], widget('v1', 'one', 3));
    const v2 = await getJson(`widgets.v2.${GROUP}`, 'one');
    assert.equal(v2.apiVersion, `${GROUP}/v2`);
    assert.deepEqual(v2.spec, { count: 3 });
    const v1 = await getJson(`widgets.v1.${GROUP}`, 'one');
    assert.deepEqual(v1.spec, { size: 3 });
    assert.equal(v1.metadata.uid, v2.metadata.uid);
    assert.equal(v1.metadata.resourceVersion, v2.metadata.resourceVersion);
    const sent = reviews.find(
      (r) => r.request.desiredAPIVersion === `${GROUP}/v2` && r.request.objects.some((o) => o.metadata?.name === 'one'),
    );
    assert.ok(sent, 'the webhook was asked for v2');
    assert.equal(sent.apiVersion, 'apiextensions.k8s.io/v1');
    assert.equal(sent.request.objects[0]!.apiVersion, `${GROUP}/v1`);
    assert.deepEqual(sent.request.objects[0]!.spec, { size: 3 });
  });

  it('created in v2, stored and read in v1; updated in v2', async () => {
    const out = JSON.parse(await kOk(['create', '-f', '-', '-o', 'json'], widget('v2', 'two', 5))) as Record<string, any>;
    assert.equal(out.apiVersion, `${GROUP}/v2`);
    assert.deepEqual(out.spec, { count: 5 });
    assert.deepEqual((await getJson(`widgets.v1.${GROUP}`, 'two')).spec, { size: 5 });
    assert.ok(
      reviews.some(
        (r) =>
          r.request.desiredAPIVersion === `${GROUP}/v1` && r.request.objects.some((o) => o.metadata?.name === 'two' && o.spec?.count === 5),
      ),
    );
    await kOk(['patch', `widgets.v2.${GROUP}`, 'two', '--type=merge', '-p', '{"spec":{"count":6}}']);
    assert.deepEqual((await getJson(`widgets.v1.${GROUP}`, 'two')).spec, { size: 6 });
    await kOk(['label', `widgets.v2.${GROUP}`, 'two', 'tier=gold']);
    const v1 = await getJson(`widgets.v1.${GROUP}`, 'two');
    assert.equal(v1.metadata.labels.tier, 'gold');
    assert.deepEqual(v1.spec, { size: 6 });
  });

  it('server-side apply in v2 stores the v1 shape', async () => {
    await kOk(['apply', '--server-side', '--field-manager=conv-test', '-f', '-'], widget('v2', 'applied', 4));
    assert.deepEqual((await getJson(`widgets.v1.${GROUP}`, 'applied')).spec, { size: 4 });
    await kOk(['apply', '--server-side', '--field-manager=conv-test', '-f', '-'], widget('v2', 'applied', 8));
    assert.deepEqual((await getJson(`widgets.v2.${GROUP}`, 'applied')).spec, { count: 8 });
    assert.deepEqual((await getJson(`widgets.v1.${GROUP}`, 'applied')).spec, { size: 8 });
    await kOk(['delete', `widgets.v2.${GROUP}`, 'applied']);
  });

  it('a list in v2 is converted in one review', async () => {
    const before = reviews.length;
    const list = JSON.parse(await kOk(['get', `widgets.v2.${GROUP}`, '-o', 'json'])) as { items: Record<string, any>[] };
    assert.deepEqual(list.items.map((i) => [i.metadata.name, i.apiVersion, i.spec]).sort(), [
      ['one', `${GROUP}/v2`, { count: 3 }],
      ['two', `${GROUP}/v2`, { count: 6 }],
    ]);
    const batched = reviews.slice(before).filter((r) => r.request.desiredAPIVersion === `${GROUP}/v2`);
    assert.ok(
      batched.some((r) => r.request.objects.length === 2),
      `one review with both objects: ${JSON.stringify(batched.map((r) => r.request.objects.length))}`,
    );
  });

  it('a watch in v2 sees converted objects', async () => {
    const w = kapi.http.watch(`/apis/${GROUP}/v2/namespaces/default/widgets?watch=1`);
    try {
      assert.equal(await w.status, 200);
      const initial = await w.waitFor((e) => e.type === 'ADDED' && e.object.metadata?.name === 'one', 30_000);
      assert.equal(initial.object.apiVersion, `${GROUP}/v2`);
      assert.deepEqual(initial.object.spec, { count: 3 });
      await kOk(['patch', `widgets.v1.${GROUP}`, 'one', '--type=merge', '-p', '{"spec":{"size":9}}']);
      const changed = await w.waitFor((e) => e.type === 'MODIFIED' && e.object.metadata?.name === 'one', 30_000);
      assert.deepEqual(changed.object.spec, { count: 9 });
      await kOk(['delete', `widgets.v1.${GROUP}`, 'one']);
      const gone = await w.waitFor((e) => e.type === 'DELETED' && e.object.metadata?.name === 'one', 30_000);
      assert.deepEqual(gone.object.spec, { count: 9 });
    } finally {
      w.close();
    }
  });

  it('kubectl get -w in v2 prints converted objects', async () => {
    const { kubectlSpawn } = await import('./harness.js');
    const child = kubectlSpawn(['get', `widgets.v2.${GROUP}`, '-w', '-o', 'jsonpath={.metadata.name}={.spec.count}{"\\n"}'], {
      kubeconfig: kapi.kubeconfig,
    });
    try {
      await child.waitForOutput(/two=6/);
      await kOk(['patch', `widgets.v1.${GROUP}`, 'two', '--type=merge', '-p', '{"spec":{"size":7}}']);
      await child.waitForOutput(/two=7/);
    } finally {
      await child.stop();
    }
  });

  it('a webhook that is down: kube error (500) on reads in another version; the storage version still works', async () => {
    await kOk(['create', '-f', '-'], widget('v1', 'g1', 1, 'Gadget'));
    assert.deepEqual((await getJson(`gadgets.v1.${GROUP}`, 'g1')).spec, { size: 1 });
    const want = `conversion webhook for ${GROUP}/v1, Kind=Gadget failed: Post "https://127.0.0.1:${deadPort}/convert?timeout=30s": dial tcp 127.0.0.1:${deadPort}: connect: connection refused`;
    const r = await k(['get', `gadgets.v2.${GROUP}`, 'g1']);
    assert.notEqual(r.code, 0);
    assert.equal(r.stderr.trim(), `Error from server: ${want}`);
    const list = await k(['get', `gadgets.v2.${GROUP}`]);
    assert.equal(list.stderr.trim(), `Error from server: ${want}`);
    const raw = await kapi.http.get(`/apis/${GROUP}/v2/namespaces/default/gadgets/g1`);
    assert.equal(raw.status, 500);
    const status = JSON.parse(raw.body) as Record<string, unknown>;
    assert.equal(status.message, want);
    assert.equal(status.code, 500);
    // a write in v2 fails the same way and stores nothing
    const create = await k(['create', '-f', '-'], widget('v2', 'g2', 2, 'Gadget'));
    assert.notEqual(create.code, 0);
    assert.match(create.stderr, /conversion webhook for conv\.example\.com\/v2, Kind=Gadget failed: Post .*connection refused/);
    const missing = await k(['get', `gadgets.v1.${GROUP}`, 'g2']);
    assert.match(missing.stderr, /NotFound/);
    // a watch whose object cannot be converted ends, as kube ends a watch it cannot encode
    const w = kapi.http.watch(`/apis/${GROUP}/v2/namespaces/default/gadgets?watch=1`);
    try {
      assert.equal(await w.status, 200);
      await w.ended;
      assert.deepEqual(w.events, []);
    } finally {
      w.close();
    }
  });

  it('spec.conversion is validated as kube does', async () => {
    const bad = JSON.parse(crd('things', 'Thing', `${hook.url}/convert`, hook.caBundle)) as Record<string, any>;
    delete bad.spec.conversion.webhook.conversionReviewVersions;
    bad.spec.conversion.webhook.clientConfig.service = { namespace: 'default', name: 'conv' };
    const r = await k(['create', '-f', '-'], JSON.stringify(bad));
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /The CustomResourceDefinition "things\.conv\.example\.com" is invalid/);
    assert.match(r.stderr, /spec\.conversion\.webhook\.clientConfig: Required value: exactly one of url or service is required/);
    assert.match(r.stderr, /spec\.conversion\.webhook\.conversionReviewVersions: Required value: must include at least one of v1, v1beta1/);
  });
});
