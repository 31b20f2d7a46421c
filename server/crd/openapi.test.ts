import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../storage/interface.js';
import type { NonResourceRequest, RawResponse } from '../request/non-resource.js';
import { withCustomResourceOpenAPI } from './openapi.js';

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: { spec: { type: 'object', properties: { size: { type: 'integer', nullable: true } } } },
          },
        },
      },
      { name: 'v2', served: false, storage: false, schema: { openAPIV3Schema: { type: 'object' } } },
    ],
  },
  status: { acceptedNames: { plural: 'widgets', kind: 'Widget', listKind: 'WidgetList' } },
} as unknown as KubeObject;

const builtin = (req: NonResourceRequest): RawResponse | undefined => {
  if (req.path === '/openapi/v3')
    return {
      status: 200,
      body: JSON.stringify({ paths: { 'api/v1': { serverRelativeURL: '/openapi/v3/api/v1?hash=X' } } }),
      contentType: 'application/json',
    };
  if (req.path === '/openapi/v2')
    return { status: 200, body: JSON.stringify({ swagger: '2.0', info: {}, paths: {}, definitions: {} }), contentType: 'application/json' };
  return undefined;
};
const get = (path: string, query = '', accept?: string): NonResourceRequest => ({
  method: 'GET',
  path,
  query: new URLSearchParams(query),
  headers: accept ? { accept } : {},
});

test('v3: the index lists served CR group versions, whose documents carry the kind by GVK', async () => {
  const h = withCustomResourceOpenAPI(
    builtin,
    () => [crd],
    () => 1,
  );
  const index = JSON.parse(String((await h(get('/openapi/v3')))!.body)) as { paths: Record<string, { serverRelativeURL: string }> };
  assert.deepEqual(Object.keys(index.paths), ['api/v1', 'apis/example.com/v1']);
  const url = new URL(index.paths['apis/example.com/v1']!.serverRelativeURL, 'https://x');
  const doc = await h(get(url.pathname, url.search.slice(1)));
  assert.equal(doc!.status, 200);
  const schemas = (
    JSON.parse(String(doc!.body)) as { components: { schemas: Record<string, { 'x-kubernetes-group-version-kind': unknown[] }> } }
  ).components.schemas;
  assert.deepEqual(schemas['com.example.v1.Widget']!['x-kubernetes-group-version-kind'], [
    { group: 'example.com', kind: 'Widget', version: 'v1' },
  ]);
  assert.equal((await h(get('/openapi/v3/apis/example.com/v1', 'hash=stale')))!.status, 301);
  assert.equal(await h(get('/openapi/v3/apis/example.com/v2')), undefined);
});

test('v2: definitions added without v3-only keywords, in JSON and protobuf', async () => {
  const h = withCustomResourceOpenAPI(
    builtin,
    () => [crd],
    () => 1,
  );
  const v2 = JSON.parse(String((await h(get('/openapi/v2')))!.body)) as {
    definitions: Record<string, { properties: { spec: { properties: { size: Record<string, unknown> } } } }>;
  };
  assert.deepEqual(v2.definitions['com.example.v1.Widget']!.properties.spec.properties.size, { type: 'integer' });
  const proto = await h(get('/openapi/v2', '', 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf'));
  assert.equal(proto!.contentType, 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
  assert.ok(Buffer.isBuffer(proto!.body) && proto!.body.length > 0);
});
