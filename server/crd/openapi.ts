// OpenAPI v3 documents of the custom resources' group versions (`/openapi/v3/apis/<g>/<v>`),
// listed in `/openapi/v3` beside the built-in ones, so `kubectl explain <kind>` finds them by
// their x-kubernetes-group-version-kind. The built-in handler answers everything else.

import { createHash } from 'node:crypto';
import type { KubeObject } from '../../storage/interface.js';
import type { NonResourceHandler, RawResponse } from '../request/non-resource.js';
import { encodeSwaggerProto } from '../apis/openapi-proto.js';
import { reverseGroup, servedVersions, specOf, statusOf } from '../registry/apiextensions/definition.js';
import type { JSONSchemaProps } from '../registry/apiextensions/json-schema-props.js';

const objectMetaRef = '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

function schemaFor(schema: JSONSchemaProps | undefined, group: string, version: string, kind: string): Record<string, unknown> {
  const base: Record<string, unknown> = { ...(schema ?? { type: 'object' }) };
  const props: Record<string, unknown> = { ...((base.properties as Record<string, unknown> | undefined) ?? {}) };
  props.apiVersion = {
    description:
      'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
    type: 'string',
  };
  props.kind = {
    description:
      'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
    type: 'string',
  };
  props.metadata = {
    description:
      "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
    allOf: [{ $ref: objectMetaRef }],
  };
  base.properties = Object.fromEntries(Object.entries(props).sort(([a], [b]) => (a < b ? -1 : 1)));
  base['x-kubernetes-group-version-kind'] = [{ group, kind, version }];
  return base;
}

const objectMeta = {
  description: 'ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.',
  type: 'object',
  properties: {
    name: { type: 'string', description: 'Name must be unique within a namespace.' },
    namespace: { type: 'string', description: 'Namespace defines the space within which each name must be unique.' },
    labels: {
      type: 'object',
      additionalProperties: { type: 'string', default: '' },
      description: 'Map of string keys and values that can be used to organize and categorize (scope and select) objects.',
    },
    annotations: {
      type: 'object',
      additionalProperties: { type: 'string', default: '' },
      description: 'Annotations is an unstructured key value map stored with a resource.',
    },
  },
};

/** the v3 documents by path (`apis/<group>/<version>`) of the given CRDs */
export function customResourceDocuments(crds: KubeObject[], serverVersion: string): Map<string, Buffer> {
  const byPath = new Map<string, Record<string, unknown>>();
  for (const crd of crds) {
    const spec = specOf(crd);
    const names = statusOf(crd).acceptedNames ?? spec.names;
    if (!names?.kind) continue;
    for (const v of servedVersions(spec)) {
      const key = `apis/${spec.group}/${v.name}`;
      let doc = byPath.get(key);
      if (!doc) {
        doc = {
          openapi: '3.0.0',
          info: { title: 'Kubernetes CRD Swagger', version: 'v0.1.0' },
          paths: {},
          components: { schemas: { 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': objectMeta } },
        };
        byPath.set(key, doc);
      }
      const schemas = (doc.components as { schemas: Record<string, unknown> }).schemas;
      const def = `${reverseGroup(spec.group)}.${v.name}.${names.kind}`;
      schemas[def] = schemaFor(v.schema?.openAPIV3Schema, spec.group, v.name, names.kind);
      const listKind = names.listKind || `${names.kind}List`;
      schemas[`${reverseGroup(spec.group)}.${v.name}.${listKind}`] = {
        description: `${listKind} is a list of ${names.kind}`,
        type: 'object',
        required: ['items'],
        properties: {
          apiVersion: { type: 'string' },
          items: { type: 'array', items: { $ref: `#/components/schemas/${def}` } },
          kind: { type: 'string' },
          metadata: { type: 'object' },
        },
        'x-kubernetes-group-version-kind': [{ group: spec.group, kind: listKind, version: v.name }],
      };
      const base = `/apis/${spec.group}/${v.name}/${spec.scope === 'Namespaced' ? 'namespaces/{namespace}/' : ''}${names.plural}`;
      const ref = { $ref: `#/components/schemas/${def}` };
      const ok = { description: 'OK', content: { 'application/json': { schema: ref } } };
      const gvk = { group: spec.group, version: v.name, kind: names.kind };
      const tags = [`${spec.group}_${v.name}`];
      const query = (name: string) => ({ name, in: 'query', schema: { type: 'string', uniqueItems: true } });
      const pathParams = [
        { name: 'name', in: 'path', required: true, schema: { type: 'string', uniqueItems: true } },
        ...(spec.scope === 'Namespaced'
          ? [{ name: 'namespace', in: 'path', required: true, schema: { type: 'string', uniqueItems: true } }]
          : []),
      ];
      (doc.paths as Record<string, unknown>)[`${base}/{name}`] = {
        get: {
          tags,
          operationId: `read${names.kind}`,
          responses: { '200': ok },
          'x-kubernetes-action': 'get',
          'x-kubernetes-group-version-kind': gvk,
        },
        // the write parameters clients look for (kubectl checks fieldValidation support here)
        patch: {
          tags,
          operationId: `patch${names.kind}`,
          parameters: ['dryRun', 'fieldManager', 'fieldValidation', 'force'].map(query),
          requestBody: {
            content: {
              'application/json-patch+json': { schema: { type: 'object' } },
              'application/merge-patch+json': { schema: { type: 'object' } },
              'application/apply-patch+yaml': { schema: { type: 'object' } },
            },
            required: true,
          },
          responses: { '200': ok },
          'x-kubernetes-action': 'patch',
          'x-kubernetes-group-version-kind': gvk,
        },
        parameters: pathParams,
      };
    }
  }
  void serverVersion;
  const out = new Map<string, Buffer>();
  for (const [k, doc] of byPath) out.set(k, Buffer.from(JSON.stringify(doc)));
  return out;
}

const hashOf = (b: Buffer): string => createHash('sha512').update(b).digest('hex').toUpperCase();

const V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

/** a structural schema as Swagger 2.0 takes it: no nullable, anyOf/oneOf/not, CEL rules */
function toV2(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(toV2);
  if (typeof s !== 'object' || s === null) return s;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'nullable' || k === 'anyOf' || k === 'oneOf' || k === 'not' || k === 'x-kubernetes-validations') continue;
    if (k === 'properties' || k === 'definitions') {
      out[k] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([n, x]) => [n, toV2(x)]));
    } else if (k === '$ref' && typeof v === 'string') {
      out[k] = v.replace('#/components/schemas/', '#/definitions/');
    } else out[k] = toV2(v);
  }
  return out;
}

/** the v2 document with the custom resources' definitions and read paths added */
function mergeV2(v2: Record<string, unknown>, crds: KubeObject[]): Record<string, unknown> {
  const definitions = { ...((v2.definitions as Record<string, unknown>) ?? {}) };
  const paths = { ...((v2.paths as Record<string, unknown>) ?? {}) };
  for (const [, body] of customResourceDocuments(crds, '')) {
    const doc = JSON.parse(body.toString()) as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
      components: { schemas: Record<string, unknown> };
    };
    for (const [name, schema] of Object.entries(doc.components.schemas)) {
      if (name === 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' && definitions[name]) continue;
      definitions[name] = toV2(schema);
    }
    for (const [path, item] of Object.entries(doc.paths)) {
      const get = item.get!;
      const patch = item.patch!;
      const ref = toV2(
        (get.responses as Record<string, { content: Record<string, { schema: unknown }> }>)['200']!.content['application/json']!.schema,
      );
      const v2Param = (p: { name: string; in: string; required?: boolean }) => ({
        name: p.name,
        in: p.in,
        type: 'string',
        uniqueItems: true,
        ...(p.required ? { required: true } : {}),
      });
      const responses = { '200': { description: 'OK', schema: ref }, '401': { description: 'Unauthorized' } };
      paths[path] = {
        get: { ...get, produces: ['application/json', 'application/yaml'], schemes: ['https'], responses },
        patch: {
          ...patch,
          requestBody: undefined,
          consumes: ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'],
          produces: ['application/json', 'application/yaml'],
          schemes: ['https'],
          parameters: [
            { name: 'body', in: 'body', required: true, schema: { type: 'object' } },
            ...(patch.parameters as { name: string; in: string }[]).map(v2Param),
          ],
          responses,
        },
        parameters: ((item as unknown as { parameters: { name: string; in: string; required?: boolean }[] }).parameters ?? []).map(v2Param),
      };
      delete (paths[path] as { patch: Record<string, unknown> }).patch.requestBody;
    }
  }
  const sorted = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));
  return { ...v2, paths: sorted(paths), definitions: sorted(definitions) };
}

function protobufOf(doc: Record<string, unknown>, etag: string): RawResponse | undefined {
  try {
    return {
      status: 200,
      body: encodeSwaggerProto(doc as Parameters<typeof encodeSwaggerProto>[0]),
      contentType: V2_PROTOBUF,
      etag,
      headers: { Vary: 'Accept' },
    };
  } catch {
    return undefined;
  }
}

/** does the client ask for the v2 document as protobuf? */
export function wantsV2Protobuf(accept: string | undefined): boolean {
  if (!accept) return false;
  for (const clause of accept.split(',')) {
    const range = clause.split(';')[0]!.trim().toLowerCase();
    if (range === 'application/json' || range === '*/*' || range === 'application/*') return false;
    if (range === V2_PROTOBUF || range === 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf') return true;
  }
  return false;
}

/** the built-in OpenAPI handler with the custom resources' v3 documents added */
export function withCustomResourceOpenAPI(
  inner: NonResourceHandler,
  crds: () => KubeObject[],
  generation: () => number,
): NonResourceHandler {
  let cached: { gen: number; docs: Map<string, { body: Buffer; hash: string }> } | undefined;
  const docs = () => {
    const gen = generation();
    if (!cached || cached.gen !== gen) {
      const built = new Map<string, { body: Buffer; hash: string }>();
      for (const [k, body] of customResourceDocuments(crds(), '')) built.set(k, { body, hash: hashOf(body) });
      cached = { gen, docs: built };
    }
    return cached.docs;
  };
  let v2Cache: { gen: number; json: RawResponse; proto?: RawResponse } | undefined;
  return async (req) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return inner(req);
    const path = req.path.replace(/\/+$/, '');
    if (path === '/openapi/v2') {
      const gen = generation();
      const served = crds();
      if (served.length === 0) return inner(req);
      if (!v2Cache || v2Cache.gen !== gen) {
        const headers = { ...req.headers, accept: 'application/json' };
        delete headers['if-none-match'];
        const answer = await inner({ ...req, headers });
        if (!answer || answer.status !== 200) return answer;
        const merged = mergeV2(JSON.parse(answer.body.toString()) as Record<string, unknown>, served);
        const body = Buffer.from(JSON.stringify(merged));
        const etag = JSON.stringify(hashOf(body));
        v2Cache = {
          gen,
          json: { status: 200, body, contentType: 'application/json', etag, headers: { Vary: 'Accept' } },
          proto: protobufOf(merged, etag),
        };
      }
      const accept = Array.isArray(req.headers.accept) ? req.headers.accept.join(',') : req.headers.accept;
      if (!wantsV2Protobuf(accept)) return v2Cache.json;
      // a schema the protobuf form cannot carry: the built-in document rather than a 500
      return v2Cache.proto ?? inner(req);
    }
    if (path === '/openapi/v3') {
      const custom = docs();
      if (custom.size === 0) return inner(req);
      const headers = { ...req.headers };
      delete headers['if-none-match'];
      const answer = await inner({ ...req, headers });
      if (!answer || answer.status !== 200) return answer;
      const index = JSON.parse(answer.body.toString()) as { paths: Record<string, unknown> };
      for (const [k, d] of custom) index.paths[k] ??= { serverRelativeURL: `/openapi/v3/${k}?hash=${d.hash}` };
      index.paths = Object.fromEntries(Object.entries(index.paths).sort(([a], [b]) => (a < b ? -1 : 1)));
      const body = Buffer.from(JSON.stringify(index));
      const out: RawResponse = { status: 200, body, contentType: 'application/json', etag: JSON.stringify(hashOf(body)) };
      return out;
    }
    if (path.startsWith('/openapi/v3/')) {
      const key = path.slice('/openapi/v3/'.length);
      const d = docs().get(key);
      if (d) {
        const hash = req.query.get('hash');
        if (hash && hash !== d.hash) {
          return {
            status: 301,
            body: '',
            contentType: 'text/plain; charset=utf-8',
            headers: { Location: `/openapi/v3/${key}?hash=${d.hash}`, Vary: 'Accept' },
          };
        }
        return { status: 200, body: d.body, contentType: 'application/json', etag: JSON.stringify(d.hash), headers: { Vary: 'Accept' } };
      }
    }
    return inner(req);
  };
}
