import { test } from 'node:test';
import assert from 'node:assert/strict';
import protobuf from 'protobufjs';
import { loadCatalog } from './catalog.js';
import { encodeSwaggerProto } from './openapi-proto.js';
import { OpenAPIService } from './openapi.js';
import { loadSchemas } from './schema.js';

/** Wire-level view of a message: field number -> raw values (numbers or byte strings). */
function fields(bytes: Uint8Array): Map<number, (number | Uint8Array)[]> {
  const reader = protobuf.Reader.create(bytes);
  const out = new Map<number, (number | Uint8Array)[]>();
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    const field = tag >>> 3;
    const wire = tag & 7;
    const value = wire === 0 ? reader.uint32() : wire === 2 ? reader.bytes() : (reader.skipType(wire), -1);
    out.set(field, [...(out.get(field) ?? []), value]);
  }
  return out;
}
const str = (v: number | Uint8Array | undefined): string => Buffer.from(v as Uint8Array).toString('utf8');
const sub = (m: Map<number, (number | Uint8Array)[]>, field: number, i = 0) =>
  fields((m.get(field)?.[i] ?? new Uint8Array()) as Uint8Array);

test('a schema: $ref, type, required, properties, items, additionalProperties, extensions', () => {
  const doc = encodeSwaggerProto({
    swagger: '2.0',
    info: { title: 'Kubernetes', version: 'v1.33.0' },
    definitions: {
      X: {
        type: 'object',
        required: ['a'],
        properties: { a: { type: 'array', items: { $ref: '#/definitions/Y' }, 'x-kubernetes-list-type': 'atomic' } },
        additionalProperties: { type: 'string' },
        'x-kubernetes-group-version-kind': [{ group: 'g', kind: 'X', version: 'v1' }],
      },
    },
  });
  const d = fields(doc);
  assert.equal(str(d.get(1)?.[0]), '2.0');
  assert.equal(str(sub(d, 2).get(1)?.[0]), 'Kubernetes');
  assert.equal(str(sub(d, 2).get(2)?.[0]), 'v1.33.0');
  const named = sub(sub(d, 9), 1);
  assert.equal(str(named.get(1)?.[0]), 'X');
  const x = sub(named, 2);
  assert.equal(str(sub(x, 22).get(1)?.[0]), 'object');
  assert.equal(str(x.get(19)?.[0]), 'a');
  const prop = sub(sub(x, 25), 1);
  assert.equal(str(prop.get(1)?.[0]), 'a');
  const a = sub(prop, 2);
  assert.equal(str(sub(sub(a, 23), 1).get(1)?.[0]), '#/definitions/Y');
  const listType = sub(a, 31);
  assert.equal(str(listType.get(1)?.[0]), 'x-kubernetes-list-type');
  assert.equal(str(sub(listType, 2).get(2)?.[0]), '"atomic"\n');
  assert.equal(str(sub(sub(sub(x, 21), 1), 22).get(1)?.[0]), 'string');
  const gvk = sub(x, 31);
  assert.deepEqual(JSON.parse(str(sub(gvk, 2).get(2)?.[0])), [{ group: 'g', kind: 'X', version: 'v1' }]);
});

test('the served document: every path and definition, PATCH operations with fieldValidation', () => {
  const service = new OpenAPIService(loadCatalog(), loadSchemas());
  const json = JSON.parse(service.v2().body.toString('utf8')) as { paths: Record<string, unknown>; definitions: Record<string, unknown> };
  const d = fields(service.v2Protobuf().body);
  const paths = sub(d, 8).get(2) ?? [];
  assert.equal(paths.length, Object.keys(json.paths).length);
  assert.equal((sub(d, 9).get(1) ?? []).length, Object.keys(json.definitions).length);
  const deploymentItem = paths
    .map((p) => fields(p as Uint8Array))
    .find((p) => str(p.get(1)?.[0]) === '/apis/apps/v1/namespaces/{namespace}/deployments/{name}');
  assert.ok(deploymentItem);
  const patch = sub(sub(deploymentItem, 2), 8);
  assert.equal(str(patch.get(5)?.[0]), 'patchAppsV1NamespacedDeployment');
  const queryNames = (patch.get(8) ?? [])
    .map((p) => sub(sub(fields(p as Uint8Array), 1), 2))
    .filter((nonBody) => nonBody.size > 0)
    .map((nonBody) => str(sub(nonBody, 3).get(4)?.[0]));
  assert.deepEqual(queryNames, ['dryRun', 'fieldManager', 'fieldValidation', 'force']);
  const ext = (patch.get(13) ?? [])
    .map((e) => fields(e as Uint8Array))
    .find((e) => str(e.get(1)?.[0]) === 'x-kubernetes-group-version-kind');
  assert.ok(ext);
  assert.deepEqual(JSON.parse(str(sub(ext, 2).get(2)?.[0])), { group: 'apps', kind: 'Deployment', version: 'v1' });
});
