import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadCatalog } from '../apis/catalog.js';
import { loadSchemas } from '../apis/schema.js';
import { OpenAPIService } from '../apis/openapi.js';
import type { NonResourceRequest, RawResponse } from '../request/non-resource.js';
import { createDiscoveryHandler } from './discovery-handler.js';
import { createOpenAPIHandler } from './openapi-handler.js';

const catalog = loadCatalog();
const discovery = createDiscoveryHandler({ catalog, serverAddress: '192.0.2.1:6443' });

function req(path: string, headers: Record<string, string> = {}, query = ''): NonResourceRequest {
  return { method: 'GET', path, query: new URLSearchParams(query), headers };
}

async function json(r: RawResponse | undefined | Promise<RawResponse | undefined>): Promise<Record<string, unknown>> {
  const res = await r;
  assert.ok(res, 'no answer');
  assert.equal(res.status, 200);
  return JSON.parse(res.body.toString()) as Record<string, unknown>;
}

test('legacy discovery: /api, /apis, /api/v1, /apis/apps, /apis/apps/v1', async () => {
  const api = await json(discovery(req('/api')));
  assert.equal(api.kind, 'APIVersions');
  assert.deepEqual(api.versions, ['v1']);
  assert.match(JSON.stringify(api.serverAddressByClientCIDRs), /192\.0\.2\.1:6443/);
  assert.equal((await json(discovery(req('/apis')))).kind, 'APIGroupList');
  const v1 = await json(discovery(req('/api/v1')));
  assert.equal(v1.groupVersion, 'v1');
  assert.ok((v1.resources as { name: string }[]).some((r) => r.name === 'pods'));
  assert.equal((await json(discovery(req('/apis/apps')))).name, 'apps');
  assert.equal((await json(discovery(req('/apis/apps/v1')))).groupVersion, 'apps/v1');
});

test('aggregated discovery when the Accept header asks for it, with an ETag', async () => {
  const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
  const res = await discovery(req('/apis', { accept }));
  assert.ok(res);
  assert.match(res.contentType, /as=APIGroupDiscoveryList/);
  assert.ok(res.etag);
  assert.equal(JSON.parse(res.body.toString()).kind, 'APIGroupDiscoveryList');
});

test('paths discovery does not own, or does not know, are left to the router', async () => {
  assert.equal(await discovery(req('/api/v2')), undefined);
  assert.equal(await discovery(req('/apis/no.such.group')), undefined);
  assert.equal(await discovery(req('/apis/apps/v1/deployments')), undefined);
  assert.equal(await discovery(req('/version')), undefined);
  assert.equal(await discovery({ ...req('/api'), method: 'POST' }), undefined);
});

test('OpenAPI: v2, the v3 index and a v3 group version, with caching headers', async () => {
  const openapi = createOpenAPIHandler(new OpenAPIService(catalog, loadSchemas()));
  const v2 = await openapi(req('/openapi/v2', { accept: 'application/json' }));
  assert.ok(v2);
  assert.equal(v2.status, 200);
  assert.equal(v2.contentType, 'application/json');
  assert.ok(v2.headers?.ETag);
  const index = await json(openapi(req('/openapi/v3')));
  const paths = index.paths as Record<string, { serverRelativeURL: string }>;
  const url = new URL(paths['apis/apps/v1']!.serverRelativeURL, 'https://x');
  const doc = await openapi(req(url.pathname, {}, url.search.slice(1)));
  assert.ok(doc);
  assert.equal(doc.status, 200);
  assert.match(doc.headers?.['Cache-Control'] ?? '', /immutable/);
  const notModified = await openapi(req('/openapi/v2', { accept: 'application/json', 'if-none-match': v2.headers!.ETag! }));
  assert.equal(notModified?.status, 304);
  assert.equal(await openapi(req('/openapi/v3/apis/no.such/v1')), undefined);
});
