// The webhook plugins over a plain HTTP webhook and a fake registry holding the
// configurations: selectors and matchConditions, serial mutation with reinvocation
// (IfNeeded), parallel validation with the first failure in order, failure policies,
// warnings and audit annotations, deletes.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeObject, Watch, WatchEvent } from '../../../storage/interface.js';
import type { ResourceInfo } from '../../apis/types.js';
import type { AdmissionAttributes, ListObject, RESTResource, ResourceResolver } from '../../registry/rest.js';
import { StatusError } from '../../machinery/status.js';
import type { AdmissionDeps, AdmissionPlugin, AdmissionRequestContext } from '../plugin.js';
import { mutatingWebhookFactory, validatingWebhookFactory } from './plugins.js';
import type { WebhookSpec } from './types.js';

type Handler = (path: string, request: Record<string, any>) => Record<string, unknown>;
let handler: Handler = () => ({});
const calls: string[] = [];
let server: http.Server;
let base = '';

before(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const review = JSON.parse(body) as { request: Record<string, any> };
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      calls.push(path);
      const response = { uid: review.request.uid, allowed: true, ...handler(path, review.request) };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

function fakeResource(resource: string, items: () => KubeObject[]): RESTResource {
  const info = {
    group: resource === 'namespaces' ? '' : 'admissionregistration.k8s.io',
    version: 'v1',
    resource,
    subresources: [],
  } as unknown as ResourceInfo;
  return {
    info,
    get: async (_ctx: unknown, name: string) => {
      const o = items().find((i) => i.metadata.name === name);
      if (!o) throw new StatusError(404, 'NotFound', `${resource} "${name}" not found`);
      return o;
    },
    list: async (): Promise<ListObject> => ({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '1' }, items: items() }),
    watch: async (ctx: { signal?: AbortSignal }): Promise<Watch> => {
      let stop!: () => void;
      const stopped = new Promise<void>((r) => (stop = r));
      ctx.signal?.addEventListener('abort', () => stop(), { once: true });
      return {
        stop,
        // biome-ignore lint/correctness/useYield: a watch that ends without an event
        async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
          await stopped;
        },
      };
    },
  } as unknown as RESTResource;
}

const namespaces: KubeObject[] = [
  { metadata: { name: 'on', labels: { webhooks: 'on' } } } as KubeObject,
  { metadata: { name: 'off' } } as KubeObject,
];
let mutating: WebhookSpec[] = [];
let validating: WebhookSpec[] = [];

const resolver: ResourceResolver = {
  lookup(group, _version, resource) {
    if (group === '' && resource === 'namespaces') return fakeResource('namespaces', () => namespaces);
    if (resource === 'mutatingwebhookconfigurations')
      return fakeResource(resource, () => [{ metadata: { name: 'm', resourceVersion: '1' }, webhooks: mutating } as unknown as KubeObject]);
    if (resource === 'validatingwebhookconfigurations')
      return fakeResource(resource, () => [
        { metadata: { name: 'v', resourceVersion: '1' }, webhooks: validating } as unknown as KubeObject,
      ]);
    return undefined;
  },
  all: () => [],
};

const configmaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', subresources: [] } as unknown as ResourceInfo;

function attrs(
  ns: string,
  obj: KubeObject | null,
  operation: AdmissionAttributes['operation'] = 'CREATE',
  old: KubeObject | null = null,
): AdmissionAttributes {
  return {
    operation,
    resource: configmaps,
    namespace: ns,
    name: (obj ?? old)?.metadata.name ?? '',
    object: obj,
    oldObject: old,
    dryRun: false,
    user: { username: 'alice', groups: ['dev'] },
  };
}

function spec(name: string, path: string, extra: Partial<WebhookSpec> = {}): WebhookSpec {
  return {
    name,
    clientConfig: { url: `${base}${path}` },
    rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    ...extra,
  };
}

function ctx(): AdmissionRequestContext {
  return { warnings: [], auditAnnotations: {} };
}

const stop = new AbortController();
after(() => stop.abort());
const deps: AdmissionDeps = { resolver, signal: stop.signal, featureGates: {}, log: () => {} };
interface AsyncPlugin {
  mutate(a: AdmissionAttributes, c: AdmissionRequestContext): Promise<KubeObject>;
  validate(a: AdmissionAttributes, c: AdmissionRequestContext): Promise<void>;
}
function wrap(p: AdmissionPlugin): AsyncPlugin {
  return {
    mutate: async (a, c) => p.mutate!(a, c),
    validate: async (a, c) => p.validate!(a, c),
  };
}

const cm = (name: string, labels?: Record<string, string>) =>
  ({ metadata: { name, namespace: 'on', labels }, data: { a: '1' } }) as unknown as KubeObject;
const addLabel = (key: string, obj: Record<string, any>) => ({
  patchType: 'JSONPatch',
  patch: Buffer.from(
    JSON.stringify(
      obj.metadata.labels
        ? [{ op: 'add', path: `/metadata/labels/${key}`, value: 'x' }]
        : [{ op: 'add', path: '/metadata/labels', value: { [key]: 'x' } }],
    ),
  ).toString('base64'),
});

test('namespaceSelector, objectSelector and matchConditions choose the webhooks called', async () => {
  calls.length = 0;
  handler = () => ({});
  validating = [
    spec('ns.example.com', '/ns', { namespaceSelector: { matchLabels: { webhooks: 'on' } } }),
    spec('obj.example.com', '/obj', { objectSelector: { matchLabels: { pick: 'me' } } }),
    spec('cel.example.com', '/cel', {
      matchConditions: [{ name: 'alice-only', expression: "request.userInfo.username == 'alice' && object.data.a == '1'" }],
    }),
  ];
  // a fresh plugin sees the new configurations (the fake registry has no watch events)
  const v = wrap(await validatingWebhookFactory.create(deps, undefined));
  await v.validate(attrs('off', cm('a')), ctx());
  assert.deepEqual(calls.sort(), ['/cel']);
  calls.length = 0;
  await v.validate(attrs('on', cm('b', { pick: 'me' })), ctx());
  assert.deepEqual(calls.sort(), ['/cel', '/ns', '/obj']);
  calls.length = 0;
  // the old object's labels count too (an update removing the label)
  await v.validate(attrs('off', cm('c'), 'UPDATE', cm('c', { pick: 'me' })), ctx());
  assert.deepEqual(calls.sort(), ['/cel', '/obj']);
  calls.length = 0;
  await v.validate({ ...attrs('off', cm('d')), user: { username: 'bob', groups: [] } }, ctx());
  assert.deepEqual(calls, []);
});

test('matchConditions that fail to evaluate: Ignore skips, Fail refuses with 403', async () => {
  validating = [spec('bad-cel.example.com', '/x', { matchConditions: [{ name: 'boom', expression: 'object.nope.deeper == 1' }] })];
  // an expression that would run for ages is cut by the budget: an error like any other
  const endless = spec('endless.example.com', '/x', {
    matchConditions: [
      {
        name: 'loop',
        expression:
          '[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, [1,2,3,4,5,6,7,8,9,10].all(g, true)))))))',
      },
    ],
  });
  validating = [endless];
  const budgeted = wrap(await validatingWebhookFactory.create(deps, undefined));
  await assert.rejects(
    budgeted.validate(attrs('on', cm('a')), ctx()),
    (err: StatusError) => err.code === 403 && /cost limit exceeded/.test(err.message),
  );
  validating = [spec('bad-cel.example.com', '/x', { matchConditions: [{ name: 'boom', expression: 'object.nope.deeper == 1' }] })];
  const v = wrap(await validatingWebhookFactory.create(deps, undefined));
  await assert.rejects(
    v.validate(attrs('on', cm('a')), ctx()),
    (err: StatusError) => err.code === 403 && /^configmaps "a" is forbidden: /.test(err.message),
  );
  validating = [{ ...validating[0]!, failurePolicy: 'Ignore' }];
  const v2 = wrap(await validatingWebhookFactory.create(deps, undefined));
  calls.length = 0;
  await v2.validate(attrs('on', cm('a')), ctx());
  assert.deepEqual(calls, []);
});

test('mutating webhooks run in order on the patched object; IfNeeded ones run again after a later change', async () => {
  calls.length = 0;
  handler = (path, req) => {
    if (path === '/first') return { warnings: ['first looked'], auditAnnotations: { seen: 'yes' } };
    if (path === '/second') return addLabel('second', req.object);
    return {};
  };
  mutating = [spec('first.example.com', '/first', { reinvocationPolicy: 'IfNeeded' }), spec('second.example.com', '/second')];
  const m = wrap(await mutatingWebhookFactory.create(deps, undefined));
  const c = ctx();
  const out = await m.mutate(attrs('on', cm('a')), c);
  assert.deepEqual(out.metadata.labels, { second: 'x' });
  assert.deepEqual(calls, ['/first', '/second', '/first']);
  // run twice, warned once: the request's warnings keep each text once, as kube's recorder does
  assert.deepEqual(c.warnings, ['first looked']);
  assert.equal(c.auditAnnotations['first.example.com/seen'], 'yes');
  assert.equal(
    c.auditAnnotations['mutation.webhook.admission.k8s.io/round_0_index_1'],
    JSON.stringify({ configuration: 'm', webhook: 'second.example.com', mutated: true }),
  );
  // without IfNeeded: once each
  calls.length = 0;
  mutating = [spec('first.example.com', '/first'), spec('second.example.com', '/second')];
  const m2 = wrap(await mutatingWebhookFactory.create(deps, undefined));
  await m2.mutate(attrs('on', cm('b')), ctx());
  assert.deepEqual(calls, ['/first', '/second']);
});

test("validating webhooks: a denial wins with kube's message and code; failure policies for a dead webhook", async () => {
  handler = (path) => (path === '/deny' ? { allowed: false, status: { code: 422, message: 'no way' }, warnings: ['denied here'] } : {});
  validating = [spec('ok.example.com', '/ok'), spec('deny.example.com', '/deny')];
  const v = wrap(await validatingWebhookFactory.create(deps, undefined));
  const c = ctx();
  await assert.rejects(
    v.validate(attrs('on', cm('a')), c),
    (err: StatusError) => err.code === 422 && err.message === 'admission webhook "deny.example.com" denied the request: no way',
  );
  assert.deepEqual(c.warnings, ['denied here']);
  handler = (path) => (path === '/deny' ? { allowed: false } : {});
  await assert.rejects(
    v.validate(attrs('on', cm('a')), ctx()),
    (err: StatusError) => err.code === 400 && err.message === 'admission webhook "deny.example.com" denied the request without explanation',
  );

  validating = [spec('dead.example.com', '/x', { clientConfig: { url: 'http://127.0.0.1:1/x' }, failurePolicy: 'Ignore' })];
  const ignore = wrap(await validatingWebhookFactory.create(deps, undefined));
  const c2 = ctx();
  await ignore.validate(attrs('on', cm('a')), c2);
  assert.equal(c2.auditAnnotations['failed-open.validating.webhook.admission.k8s.io/round_0_index_0'], 'dead.example.com');
  validating = [{ ...validating[0]!, failurePolicy: 'Fail' }];
  const fail = wrap(await validatingWebhookFactory.create(deps, undefined));
  await assert.rejects(
    fail.validate(attrs('on', cm('a')), ctx()),
    (err: StatusError) =>
      err.code === 500 &&
      err.message ===
        'Internal error occurred: failed calling webhook "dead.example.com": failed to call webhook: Post "http://127.0.0.1:1/x?timeout=10s": dial tcp 127.0.0.1:1: connect: connection refused',
  );
});

test('a bad answer is a call failure; a wrong uid is caught', async () => {
  handler = () => ({ uid: 'someone-else' });
  validating = [spec('liar.example.com', '/liar')];
  const v = wrap(await validatingWebhookFactory.create(deps, undefined));
  await assert.rejects(
    v.validate(attrs('on', cm('a')), ctx()),
    (err: StatusError) =>
      err.code === 500 &&
      /failed calling webhook "liar.example.com": received invalid webhook response: expected response.uid=".+", got "someone-else"/.test(
        err.message,
      ),
  );
});

test('deletes reach mutating webhooks registered for DELETE, which may deny but not patch', async () => {
  calls.length = 0;
  handler = (path, req) => (path === '/patcher' ? addLabel('x', req.oldObject) : {});
  mutating = [spec('patcher.example.com', '/patcher')];
  const m = wrap(await mutatingWebhookFactory.create(deps, undefined));
  await assert.rejects(
    m.validate(attrs('on', null, 'DELETE', cm('a')), ctx()),
    /admission webhook "patcher.example.com" attempted to modify the object, which is not supported for this operation/,
  );
  assert.deepEqual(calls, ['/patcher']);
});

test('matchConditions may ask the authorizer, as the requesting user', async () => {
  calls.length = 0;
  handler = () => ({});
  const asked: string[] = [];
  const withAuthz: AdmissionDeps = {
    ...deps,
    authorizer: {
      authorize: async (req) => {
        const ra = req.resourceAttributes as Record<string, string> | undefined;
        asked.push(`${req.user.username} ${ra?.verb} ${ra?.resource} ${ra?.namespace ?? ''}`);
        return { allowed: req.user.username === 'alice' && ra?.verb === 'approve' };
      },
    },
  };
  validating = [
    spec('authz.example.com', '/authz', {
      matchConditions: [{ name: 'may-approve', expression: "authorizer.group('').resource('configmaps').check('approve').allowed()" }],
    }),
    spec('own.example.com', '/own', {
      matchConditions: [{ name: 'request', expression: "authorizer.requestResource.check('approve').allowed()" }],
    }),
  ];
  const v = wrap(await validatingWebhookFactory.create(withAuthz, undefined));
  await v.validate(attrs('on', cm('a')), ctx());
  assert.deepEqual(calls.sort(), ['/authz', '/own']);
  assert.ok(asked.includes('alice approve configmaps on'), asked.join('; '));
  calls.length = 0;
  await v.validate({ ...attrs('on', cm('b')), user: { username: 'bob', groups: [] } }, ctx());
  assert.deepEqual(calls, []);
});
