// Where a webhook is called: a `url` as given (with its caBundle), a `service` at the first
// address of its Endpoints for the referenced port, checked against <name>.<namespace>.svc;
// postReview's errors read like kube's.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeObject } from '../../../storage/interface.js';
import type { RESTResource, ResourceResolver } from '../../registry/rest.js';
import { StatusError } from '../../machinery/status.js';
import { WebhookCallError } from '../errors.js';
import { postReview, resolveTarget } from './client.js';

function resolverWith(objects: Record<string, KubeObject>): ResourceResolver {
  const rest = (resource: string) =>
    ({
      get: async (_ctx: unknown, name: string) => {
        const o = objects[`${resource}/${name}`];
        if (!o) throw new StatusError(404, 'NotFound', `${resource} "${name}" not found`);
        return o;
      },
      list: async (_ctx: unknown, opts: { labelSelector?: string }) => ({
        items: Object.entries(objects)
          .filter(
            ([k, o]) =>
              k.startsWith(`${resource}/`) &&
              opts.labelSelector === `kubernetes.io/service-name=${o.metadata.labels?.['kubernetes.io/service-name']}`,
          )
          .map(([, o]) => o),
      }),
    }) as unknown as RESTResource;
  return { lookup: (_g, _v, resource) => rest(resource), all: () => [] };
}

test('url: as given, with the CA from caBundle', async () => {
  const t = await resolveTarget(
    'w',
    { url: 'https://hooks.example.com:8443/x', caBundle: Buffer.from('PEM').toString('base64') },
    resolverWith({}),
  );
  assert.equal(t.url.toString(), 'https://hooks.example.com:8443/x');
  assert.equal(t.ca, 'PEM');
  assert.equal(t.servername, undefined);
});

test('service: the first endpoint address of the referenced port, verified as <name>.<namespace>.svc', async () => {
  const objects = {
    'services/hook': {
      metadata: { name: 'hook', namespace: 'ns' },
      spec: {
        ports: [
          { name: 'https', port: 443, targetPort: 8443 },
          { name: 'other', port: 80 },
        ],
      },
    } as unknown as KubeObject,
    'endpoints/hook': {
      metadata: { name: 'hook', namespace: 'ns' },
      subsets: [
        {
          addresses: [{ ip: '10.1.2.3' }],
          ports: [
            { name: 'other', port: 8080 },
            { name: 'https', port: 8443 },
          ],
        },
      ],
    } as unknown as KubeObject,
  };
  const t = await resolveTarget('w', { service: { namespace: 'ns', name: 'hook', path: '/admit' } }, resolverWith(objects));
  assert.equal(t.url.toString(), 'https://10.1.2.3:8443/admit');
  assert.equal(t.servername, 'hook.ns.svc');
  await assert.rejects(
    resolveTarget('w', { service: { namespace: 'ns', name: 'hook', port: 9999 } }, resolverWith(objects)),
    WebhookCallError,
  );
  await assert.rejects(
    resolveTarget('w', { service: { namespace: 'ns', name: 'missing' } }, resolverWith(objects)),
    /failed calling webhook "w": failed to call webhook: service "missing" not found/,
  );
});

test('service without Endpoints: its EndpointSlices (a ready endpoint)', async () => {
  const objects = {
    'services/hook': {
      metadata: { name: 'hook', namespace: 'ns' },
      spec: { ports: [{ name: 'https', port: 443 }] },
    } as unknown as KubeObject,
    'endpointslices/hook-abc': {
      metadata: { name: 'hook-abc', namespace: 'ns', labels: { 'kubernetes.io/service-name': 'hook' } },
      ports: [{ name: 'https', port: 9443 }],
      endpoints: [
        { addresses: ['10.0.0.1'], conditions: { ready: false } },
        { addresses: ['10.0.0.2'], conditions: { ready: true } },
      ],
    } as unknown as KubeObject,
  };
  const t = await resolveTarget('w', { service: { namespace: 'ns', name: 'hook' } }, resolverWith(objects));
  assert.equal(t.url.toString(), 'https://10.0.0.2:9443/');
});

test('postReview: a non-2xx answer and a non-JSON body are call failures', async () => {
  let status = 500;
  let body = 'boom';
  const server = http.createServer((_req, res) => {
    res.statusCode = status;
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`);
    await assert.rejects(
      postReview('w', { url }, {}, 5000),
      /failed calling webhook "w": failed to call webhook: an error on the server \("boom"\) has prevented the request from succeeding/,
    );
    status = 200;
    body = 'not json';
    await assert.rejects(postReview('w', { url }, {}, 5000), WebhookCallError);
    body = '{"ok":true}';
    assert.deepEqual(await postReview('w', { url }, {}, 5000), { ok: true });
  } finally {
    server.close();
  }
});

test('postReview: a webhook that never answers is cut at the timeout; the client going away cancels the call', async () => {
  const held: http.ServerResponse[] = [];
  const server = http.createServer((_req, res) => {
    held.push(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`);
    await assert.rejects(
      postReview('w', { url }, {}, 50),
      (err: Error) =>
        err instanceof WebhookCallError &&
        err.message ===
          `failed calling webhook "w": failed to call webhook: Post "${url.origin}/slow?timeout=1s": context deadline exceeded`,
    );
    const client = new AbortController();
    const call = postReview('w', { url }, {}, 30_000, client.signal);
    client.abort();
    await assert.rejects(call, /context canceled/);
  } finally {
    for (const r of held) r.destroy();
    server.closeAllConnections();
    server.close();
  }
});
