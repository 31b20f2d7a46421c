import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../storage/interface.js';
import type { ResourceResolver } from '../../registry/rest.js';
import { StatusError } from '../../machinery/status.js';
import { acceptConverted, conversionReview, convertedObjectsOf, reviewVersionFor, WebhookConverter } from './webhook.js';
import { validateConversion } from '../../registry/apiextensions/conversion-validation.js';

const noResolver: ResourceResolver = { lookup: () => undefined, all: () => [] };

const cr = (name: string, apiVersion = 'example.com/v1', extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion,
  kind: 'Widget',
  metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion: '5', labels: { a: 'b' } },
  spec: { size: 1 },
  ...extra,
});

/** a webhook that renames spec.size to spec.count (v1 -> v2) and answers with `tweak` applied */
function converter(reviewVersions: string[], tweak: (resp: Record<string, any>) => void = () => {}) {
  const bodies: Record<string, any>[] = [];
  const c = new WebhookConverter({
    crdName: 'widgets.example.com',
    webhook: { clientConfig: { url: 'https://127.0.0.1:1/convert' }, conversionReviewVersions: reviewVersions },
    resolver: noResolver,
    newUid: () => 'the-uid',
    post: async (body) => {
      bodies.push(body);
      const req = body.request as Record<string, any>;
      const convertedObjects = (req.objects as Record<string, any>[]).map((o) => ({
        ...o,
        apiVersion: req.desiredAPIVersion,
        spec: { count: o.spec.size },
        metadata: { ...o.metadata, resourceVersion: 'changed', labels: { ...o.metadata.labels, converted: 'yes' } },
      }));
      const answer: Record<string, any> = {
        apiVersion: body.apiVersion,
        kind: 'ConversionReview',
        response: { uid: req.uid, result: { status: 'Success' }, convertedObjects },
      };
      tweak(answer);
      return answer;
    },
  });
  return { c, bodies };
}

async function failure(p: Promise<unknown>): Promise<StatusError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof StatusError);
    return err;
  }
  assert.fail('expected a failure');
}

describe('conversion webhook requests', () => {
  it('speaks v1 when listed, v1beta1 when it is the only one known', () => {
    assert.equal(reviewVersionFor(['v1beta1', 'v1']), 'v1beta1');
    assert.equal(reviewVersionFor(['v2', 'v1']), 'v1');
    assert.equal(reviewVersionFor(['v2']), undefined);
    assert.deepEqual(conversionReview('v1', 'u', 'example.com/v2', [cr('a')]), {
      kind: 'ConversionReview',
      apiVersion: 'apiextensions.k8s.io/v1',
      request: { uid: 'u', desiredAPIVersion: 'example.com/v2', objects: [cr('a')] },
    });
  });

  it('sends one review for a list, only the items not yet in the desired version', async () => {
    const { c, bodies } = converter(['v1']);
    const out = await c.convert([cr('a'), cr('b', 'example.com/v2', { spec: { count: 7 } }), cr('c')], 'example.com/v2', true);
    assert.equal(bodies.length, 1);
    assert.deepEqual(
      bodies[0]!.request.objects.map((o: KubeObject) => o.metadata.name),
      ['a', 'c'],
    );
    assert.deepEqual(
      out.map((o) => [o.metadata.name, o.apiVersion, o.spec]),
      [
        ['a', 'example.com/v2', { count: 1 }],
        ['b', 'example.com/v2', { count: 7 }],
        ['c', 'example.com/v2', { count: 1 }],
      ],
    );
    // metadata from the original except labels (and annotations)
    assert.equal(out[0]!.metadata.resourceVersion, '5');
    assert.deepEqual(out[0]!.metadata.labels, { a: 'b', converted: 'yes' });
  });

  it('calls nothing when everything is in the desired version', async () => {
    const { c, bodies } = converter(['v1']);
    const out = await c.convert([cr('a', 'example.com/v2')], 'example.com/v2', false);
    assert.equal(bodies.length, 0);
    assert.equal(out[0]!.metadata.name, 'a');
  });
});

describe('conversion webhook answers', () => {
  const gvk = 'example.com/v1, Kind=Widget';

  it('refuses a v1 answer for another uid, of another kind, or without a response', () => {
    assert.throws(
      () =>
        convertedObjectsOf('v1', 'u', {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'ConversionReview',
          response: { uid: 'x', result: { status: 'Success' } },
        }),
      /expected response.uid="u", got "x"/,
    );
    assert.throws(
      () => convertedObjectsOf('v1', 'u', { apiVersion: 'v1', kind: 'Status' }),
      /expected webhook response of apiextensions.k8s.io\/v1, Kind=ConversionReview, got v1, Kind=Status/,
    );
    assert.throws(
      () => convertedObjectsOf('v1', 'u', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' }),
      /no response provided/,
    );
    // v1beta1 never checked the uid
    assert.deepEqual(
      convertedObjectsOf('v1beta1', 'u', { response: { uid: 'x', result: { status: 'Success' }, convertedObjects: [] } }),
      [],
    );
  });

  it('maps a failed result to its message or kube generic one', async () => {
    const withMessage = converter(['v1'], (a) => (a.response.result = { status: 'Failure', message: 'cannot convert' }));
    const e1 = await failure(withMessage.c.convert([cr('a')], 'example.com/v2', false));
    assert.equal(e1.code, 500);
    assert.equal(e1.message, `conversion webhook for ${gvk} failed: cannot convert`);
    const bare = converter(['v1'], (a) => (a.response.result = { status: 'Failure' }));
    const e2 = await failure(bare.c.convert([cr('a')], 'example.com/v2', false));
    assert.equal(e2.message, `conversion webhook for ${gvk} failed: response.result.status was 'Failure', not 'Success'`);
  });

  it('refuses a wrong count, apiVersion, name, uid and bad labels', async () => {
    const fewer = converter(['v1'], (a) => (a.response.convertedObjects = []));
    assert.equal(
      (await failure(fewer.c.convert([cr('a')], 'example.com/v2', false))).message,
      `conversion webhook for ${gvk} returned 0 objects, expected 1`,
    );
    const wrongVersion = converter(['v1'], (a) => (a.response.convertedObjects[0].apiVersion = 'example.com/v3'));
    assert.equal(
      (await failure(wrongVersion.c.convert([cr('a')], 'example.com/v2', false))).message,
      `conversion webhook for ${gvk} returned invalid object at index 0: invalid groupVersion (expected example.com/v2, received example.com/v3)`,
    );
    const renamed = converter(['v1'], (a) => (a.response.convertedObjects[1].metadata.name = 'other'));
    assert.equal(
      (await failure(renamed.c.convert([cr('a'), cr('b')], 'example.com/v2', true))).message,
      `conversion webhook for ${gvk} returned invalid converted object at index 2: must have the same name: b != other`,
    );
    const newUid = converter(['v1'], (a) => (a.response.convertedObjects[0].metadata.uid = 'x'));
    assert.equal(
      (await failure(newUid.c.convert([cr('a')], 'example.com/v2', false))).message,
      `conversion webhook for ${gvk} returned invalid object: must have the same UID: uid-a != x`,
    );
    const badLabel = converter(['v1'], (a) => (a.response.convertedObjects[0].metadata.labels = { 'bad key!': 'x' }));
    assert.match(
      (await failure(badLabel.c.convert([cr('a')], 'example.com/v2', false))).message,
      /^conversion webhook for example.com\/v1, Kind=Widget returned invalid metadata: metadata.labels: Invalid value: "bad key!"/,
    );
  });

  it('drops labels the webhook drops, keeps annotations it returns', () => {
    const original = cr('a');
    const r = acceptConverted(
      original,
      {
        ...original,
        apiVersion: 'example.com/v2',
        metadata: { ...original.metadata, labels: null, annotations: { n: 'v' }, finalizers: ['x'] },
      },
      'example.com/v2',
    ) as KubeObject;
    assert.equal(r.metadata.labels, undefined);
    assert.deepEqual(r.metadata.annotations, { n: 'v' });
    assert.equal(r.metadata.finalizers, undefined);
  });

  it('reports a webhook that cannot be reached with kube message', async () => {
    const c = new WebhookConverter({
      crdName: 'widgets.example.com',
      webhook: { clientConfig: { url: 'https://127.0.0.1:1/convert' }, conversionReviewVersions: ['v1'] },
      resolver: noResolver,
    });
    const e = await failure(c.convert([cr('a')], 'example.com/v2', false));
    assert.equal(e.code, 500);
    assert.equal(
      e.message,
      `conversion webhook for ${gvk} failed: Post "https://127.0.0.1:1/convert?timeout=30s": dial tcp 127.0.0.1:1: connect: connection refused`,
    );
  });
});

describe('spec.conversion validation', () => {
  const fields = (c: unknown) => validateConversion(c).map((e) => `${e.field} ${e.type}`);
  it('accepts None and a complete Webhook', () => {
    assert.deepEqual(fields({ strategy: 'None' }), []);
    assert.deepEqual(
      fields({ strategy: 'Webhook', webhook: { clientConfig: { url: 'https://h/c' }, conversionReviewVersions: ['v1'] } }),
      [],
    );
    assert.deepEqual(
      fields({
        strategy: 'Webhook',
        webhook: { clientConfig: { service: { namespace: 'n', name: 's', port: 443 } }, conversionReviewVersions: ['v1beta1'] },
      }),
      [],
    );
  });
  it('refuses what kube refuses', () => {
    assert.deepEqual(fields({ strategy: 'Other' }), ['spec.conversion.strategy FieldValueNotSupported']);
    assert.deepEqual(fields({ strategy: 'Webhook' }), ['spec.conversion.webhook FieldValueRequired']);
    assert.deepEqual(fields({ strategy: 'None', webhook: {} }), ['spec.conversion.webhook FieldValueForbidden']);
    assert.deepEqual(fields({ strategy: 'Webhook', webhook: { clientConfig: {}, conversionReviewVersions: ['v1'] } }), [
      'spec.conversion.webhook.clientConfig FieldValueRequired',
    ]);
    assert.deepEqual(
      fields({
        strategy: 'Webhook',
        webhook: { clientConfig: { url: 'https://h/c', service: { namespace: 'n', name: 's' } }, conversionReviewVersions: ['v1'] },
      }),
      ['spec.conversion.webhook.clientConfig FieldValueRequired'],
    );
    assert.deepEqual(fields({ strategy: 'Webhook', webhook: { clientConfig: { url: 'https://h/c' } } }), [
      'spec.conversion.webhook.conversionReviewVersions FieldValueRequired',
    ]);
    assert.deepEqual(
      fields({ strategy: 'Webhook', webhook: { clientConfig: { url: 'https://h/c' }, conversionReviewVersions: ['v3', 'v3'] } }),
      [
        'spec.conversion.webhook.conversionReviewVersions[1] FieldValueInvalid',
        'spec.conversion.webhook.conversionReviewVersions FieldValueInvalid',
      ],
    );
  });
});
