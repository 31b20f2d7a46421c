// /openapi/v2 and /openapi/v3: documents assembled from the schema registry and the catalog of
// served resources, shaped like kube-apiserver's (operations with x-kubernetes-action and
// x-kubernetes-group-version-kind, inline parameters, patch media types) so that kubectl explain,
// kubectl's field-validation probe and its OpenAPI-driven strategic merge patch work. No prose.
// Headers and caching follow k8s.io/kube-openapi's handlers: an ETag that is the upper-case hex
// SHA-512 of the bytes, v3 group versions addressed by `?hash=`, immutable once hashed.

import { JWKS_PATH, OPENID_CONFIGURATION_PATH } from '../machinery/oidc-paths.js';
import { createHash } from 'node:crypto';
import type { Catalog } from './catalog.js';
import { encodeSwaggerProto } from './openapi-proto.js';
import type { SchemaNode, SchemaRegistry } from './schema.js';
import type { GroupVersionKind, ResourceInfo, SubresourceInfo } from './types.js';

export interface OpenAPIDocument {
  body: Buffer;
  /** quoted, as sent in the ETag header */
  etag: string;
  /** the bare hash, as used in `?hash=` */
  hash: string;
  contentType: string;
  lastModified: Date;
}

export interface OpenAPIRequest {
  accept?: string;
  ifNoneMatch?: string;
  /** the `hash` query parameter of a v3 group-version request */
  hash?: string;
}

/** What to write: status, headers, and a body for 200. */
export interface OpenAPIResponse {
  status: 200 | 301 | 304 | 404 | 406;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface OpenAPIOptions {
  /** info.version of the documents, kube-apiserver's git version */
  serverVersion?: string;
  /** clock for Expires of hashed v3 documents (tests) */
  now?: () => Date;
}

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch' | 'head' | 'options';
type ParamType = 'string' | 'boolean' | 'integer';

interface Param {
  name: string;
  in: 'query' | 'path';
  type: ParamType;
  required?: boolean;
}

type BodySchema = { ref: string } | { type: 'string' };

interface Operation {
  method: Method;
  operationId: string;
  tag: string;
  consumes: string[];
  produces: string[];
  params: Param[];
  body?: { ref: string; required: boolean };
  responses: { code: string; description: string; schema?: BodySchema }[];
  action?: string;
  gvk?: GroupVersionKind;
}

interface PathItem {
  path: string;
  params: Param[];
  ops: Operation[];
}

// ---------------------------------------------------------------------------------------------
// Media types and parameters as kube-apiserver 1.33 publishes them (CBOR is off by default).

const OBJECT_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
const STREAM_TYPES = [...OBJECT_TYPES, 'application/json;stream=watch', 'application/vnd.kubernetes.protobuf;stream=watch'];
const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
];
const ANY = ['*/*'];

const q = (name: string, type: ParamType): Param => ({ name, in: 'query', type });
const LIST_PARAMS = [
  q('allowWatchBookmarks', 'boolean'),
  q('continue', 'string'),
  q('fieldSelector', 'string'),
  q('labelSelector', 'string'),
  q('limit', 'integer'),
  q('resourceVersion', 'string'),
  q('resourceVersionMatch', 'string'),
  q('sendInitialEvents', 'boolean'),
  q('timeoutSeconds', 'integer'),
  q('watch', 'boolean'),
];
const WRITE_PARAMS = [q('dryRun', 'string'), q('fieldManager', 'string'), q('fieldValidation', 'string')];
const PATCH_PARAMS = [...WRITE_PARAMS, q('force', 'boolean')];
const DELETE_PARAMS = [
  q('dryRun', 'string'),
  q('gracePeriodSeconds', 'integer'),
  q('ignoreStoreReadErrorWithClusterBreakingPotential', 'boolean'),
  q('orphanDependents', 'boolean'),
  q('propagationPolicy', 'string'),
];
const DELETE_COLLECTION_PARAMS = [...DELETE_PARAMS, ...LIST_PARAMS.filter((p) => !['allowWatchBookmarks', 'watch'].includes(p.name))].sort(
  (a, b) => (a.name < b.name ? -1 : 1),
);
const CONNECT_PARAMS: Record<string, Param[]> = {
  attach: [q('container', 'string'), q('stderr', 'boolean'), q('stdin', 'boolean'), q('stdout', 'boolean'), q('tty', 'boolean')],
  exec: [
    q('command', 'string'),
    q('container', 'string'),
    q('stderr', 'boolean'),
    q('stdin', 'boolean'),
    q('stdout', 'boolean'),
    q('tty', 'boolean'),
  ],
  portforward: [q('ports', 'integer')],
  proxy: [q('path', 'string')],
};
const LOG_PARAMS = [
  q('container', 'string'),
  q('follow', 'boolean'),
  q('insecureSkipTLSVerifyBackend', 'boolean'),
  q('limitBytes', 'integer'),
  q('previous', 'boolean'),
  q('sinceSeconds', 'integer'),
  q('stream', 'string'),
  q('tailLines', 'integer'),
  q('timestamps', 'boolean'),
];
const PRETTY = q('pretty', 'string');
const pathParam = (name: string): Param => ({ name, in: 'path', type: 'string', required: true });

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const STATUS = `${META}.Status`;
const DELETE_OPTIONS = `${META}.DeleteOptions`;
const PATCH = `${META}.Patch`;
const WATCH_EVENT = `${META}.WatchEvent`;
const UNAUTHORIZED = { code: '401', description: 'Unauthorized' };

const ok = (schema: BodySchema) => ({ code: '200', description: 'OK', schema });
const created = (schema: BodySchema) => ({ code: '201', description: 'Created', schema });
const accepted = (schema: BodySchema) => ({ code: '202', description: 'Accepted', schema });

// ---------------------------------------------------------------------------------------------
// Names

const capitalize = (s: string): string => (s ? s[0]!.toUpperCase() + s.slice(1) : s);

/** `rbac.authorization.k8s.io` -> `rbacAuthorization`, `''` -> `core`, as kube's OpenAPI tags. */
export function groupTagName(group: string): string {
  if (group === '') return 'core';
  const trimmed = group.endsWith('.k8s.io') ? group.slice(0, -'.k8s.io'.length) : group;
  const parts = trimmed.split(/[.-]/).filter(Boolean);
  return parts.map((p, i) => (i === 0 ? p : capitalize(p))).join('');
}

/** `core_v1`, `apps_v1`, `rbacAuthorization_v1` */
const gvTag = (group: string, version: string): string => `${groupTagName(group)}_${version}`;
/** `CoreV1`, `AppsV1`, `RbacAuthorizationV1` */
const gvPrefix = (group: string, version: string): string => capitalize(groupTagName(group)) + capitalize(version);

/** `api/v1`, `apis/apps/v1`: the v3 document key of a group version */
export const gvPath = (group: string, version: string): string => (group ? `apis/${group}/${version}` : `api/${version}`);

// ---------------------------------------------------------------------------------------------
// Paths of one resource, following kube's installer.

/** Finds the definition name of a kind. */
type DefinitionLookup = (group: string, version: string, kind: string) => string | undefined;

function resourcePaths(r: ResourceInfo, defs: DefinitionLookup): PathItem[] {
  const root = `/${gvPath(r.group, r.version)}`;
  const P = gvPrefix(r.group, r.version);
  const tag = gvTag(r.group, r.version);
  const gvk: GroupVersionKind = { group: r.group, version: r.version, kind: r.kind };
  const ns = r.namespaced ? 'Namespaced' : '';
  const scopePrefix = r.namespaced ? `${root}/namespaces/{namespace}` : root;
  const scopeParams = r.namespaced ? [pathParam('namespace')] : [];
  const self = { ref: r.definition };
  const listDefinition = r.listKind ? defs(r.group, r.version, r.listKind) : undefined;
  const listRef = listDefinition ? { ref: listDefinition } : self;
  const verbs = new Set(r.verbs);
  const items: PathItem[] = [];

  const op = (method: Method, operationId: string, rest: Partial<Operation> & Pick<Operation, 'responses'>): Operation => ({
    method,
    operationId,
    tag,
    consumes: ANY,
    produces: OBJECT_TYPES,
    params: [],
    gvk,
    ...rest,
  });
  // create-only, unstored resources (reviews, bindings) take just the body, as kube publishes them
  const persisted = r.storageVersionHash !== '';

  // collection
  const collection: Operation[] = [];
  if (verbs.has('list')) {
    collection.push(
      op('get', `list${P}${ns}${r.kind}`, {
        action: 'list',
        produces: STREAM_TYPES,
        params: LIST_PARAMS,
        responses: [ok(listRef), UNAUTHORIZED],
      }),
    );
  }
  if (verbs.has('create')) {
    collection.push(
      op('post', `create${P}${ns}${r.kind}`, {
        action: 'post',
        params: persisted ? WRITE_PARAMS : [],
        body: { ref: r.definition, required: true },
        responses: [ok(self), created(self), accepted(self), UNAUTHORIZED],
      }),
    );
  }
  if (verbs.has('deletecollection')) {
    collection.push(
      op('delete', `delete${P}Collection${ns}${r.kind}`, {
        action: 'deletecollection',
        params: DELETE_COLLECTION_PARAMS,
        body: { ref: DELETE_OPTIONS, required: false },
        responses: [ok({ ref: STATUS }), UNAUTHORIZED],
      }),
    );
  }
  if (collection.length > 0) items.push({ path: `${scopePrefix}/${r.resource}`, params: [...scopeParams, PRETTY], ops: collection });

  // item
  const item: Operation[] = [];
  if (verbs.has('get')) item.push(op('get', `read${P}${ns}${r.kind}`, { action: 'get', responses: [ok(self), UNAUTHORIZED] }));
  if (verbs.has('update')) {
    item.push(
      op('put', `replace${P}${ns}${r.kind}`, {
        action: 'put',
        params: WRITE_PARAMS,
        body: { ref: r.definition, required: true },
        responses: [ok(self), created(self), UNAUTHORIZED],
      }),
    );
  }
  if (verbs.has('patch')) {
    item.push(
      op('patch', `patch${P}${ns}${r.kind}`, {
        action: 'patch',
        consumes: PATCH_TYPES,
        params: PATCH_PARAMS,
        body: { ref: PATCH, required: true },
        responses: [ok(self), created(self), UNAUTHORIZED],
      }),
    );
  }
  if (verbs.has('delete')) {
    item.push(
      op('delete', `delete${P}${ns}${r.kind}`, {
        action: 'delete',
        params: DELETE_PARAMS,
        body: { ref: DELETE_OPTIONS, required: false },
        responses: [ok({ ref: STATUS }), accepted({ ref: STATUS }), UNAUTHORIZED],
      }),
    );
  }
  const itemPath = `${scopePrefix}/${r.resource}/{name}`;
  const itemParams = [pathParam('name'), ...scopeParams, PRETTY];
  if (item.length > 0) items.push({ path: itemPath, params: itemParams, ops: item });

  // all-namespaces list and the watch paths
  if (r.namespaced && verbs.has('list')) {
    items.push({
      path: `${root}/${r.resource}`,
      params: [...LIST_PARAMS, PRETTY],
      ops: [
        op('get', `list${P}${r.kind}ForAllNamespaces`, { action: 'list', produces: STREAM_TYPES, responses: [ok(listRef), UNAUTHORIZED] }),
      ],
    });
  }
  if (verbs.has('watch')) {
    const watchOk = ok({ ref: WATCH_EVENT });
    const watchPrefix = r.namespaced ? `${root}/watch/namespaces/{namespace}` : `${root}/watch`;
    items.push({
      path: `${watchPrefix}/${r.resource}`,
      params: [...LIST_PARAMS, ...scopeParams, PRETTY],
      ops: [op('get', `watch${P}${ns}${r.kind}List`, { action: 'watchlist', produces: STREAM_TYPES, responses: [watchOk, UNAUTHORIZED] })],
    });
    items.push({
      path: `${watchPrefix}/${r.resource}/{name}`,
      params: [...LIST_PARAMS, pathParam('name'), ...scopeParams, PRETTY],
      ops: [op('get', `watch${P}${ns}${r.kind}`, { action: 'watch', produces: STREAM_TYPES, responses: [watchOk, UNAUTHORIZED] })],
    });
    if (r.namespaced) {
      items.push({
        path: `${root}/watch/${r.resource}`,
        params: [...LIST_PARAMS, PRETTY],
        ops: [
          op('get', `watch${P}${r.kind}ListForAllNamespaces`, {
            action: 'watchlist',
            produces: STREAM_TYPES,
            responses: [watchOk, UNAUTHORIZED],
          }),
        ],
      });
    }
  }

  for (const s of r.subresources) items.push(...subresourcePaths(r, s, itemPath, itemParams, op, P, ns, defs));
  return items;
}

type OpFactory = (method: Method, operationId: string, rest: Partial<Operation> & Pick<Operation, 'responses'>) => Operation;

const CONNECT_SUBRESOURCES = new Set(['attach', 'exec', 'portforward', 'proxy']);
const CONNECT_METHOD: Record<string, Method> = { get: 'get', create: 'post', update: 'put', patch: 'patch', delete: 'delete' };

function subresourcePaths(
  r: ResourceInfo,
  s: SubresourceInfo,
  itemPath: string,
  itemParams: Param[],
  op: OpFactory,
  P: string,
  ns: string,
  defs: DefinitionLookup,
): PathItem[] {
  const path = `${itemPath}/${s.name}`;
  const Sub = capitalize(s.name);
  const kind = { group: s.kind.group, version: s.kind.version, kind: s.kind.kind };
  const stringBody: BodySchema = { type: 'string' };

  if (CONNECT_SUBRESOURCES.has(s.name)) {
    // connect verbs map to HTTP methods; proxy also answers HEAD and OPTIONS
    const methods = s.verbs.map((v) => CONNECT_METHOD[v]).filter((m): m is Method => m !== undefined);
    if (s.name === 'proxy') methods.push('head', 'options');
    const order: Method[] = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];
    methods.sort((a, b) => order.indexOf(a) - order.indexOf(b));
    const connect = (withPath: boolean): Operation[] =>
      methods.map((m) =>
        op(m, `connect${P}${capitalize(m)}${ns}${r.kind}${Sub}${withPath ? 'WithPath' : ''}`, {
          action: 'connect',
          gvk: kind,
          produces: ANY,
          params: withPath ? [] : (CONNECT_PARAMS[s.name] ?? []),
          responses: [ok(stringBody), UNAUTHORIZED],
        }),
      );
    const out: PathItem[] = [{ path, params: itemParams.filter((p) => p.name !== 'pretty'), ops: connect(false) }];
    if (s.name === 'proxy') {
      out.push({
        path: `${path}/{path}`,
        params: [...itemParams.filter((p) => p.name !== 'pretty'), pathParam('path'), q('path', 'string')],
        ops: connect(true),
      });
    }
    return out;
  }

  if (s.name === 'log') {
    return [
      {
        path,
        params: itemParams,
        ops: [
          op('get', `read${P}${ns}${r.kind}${Sub}`, {
            action: 'get',
            gvk: kind,
            produces: ['text/plain', ...OBJECT_TYPES],
            params: LOG_PARAMS,
            responses: [ok(stringBody), UNAUTHORIZED],
          }),
        ],
      },
    ];
  }

  const definition = defs(s.kind.group, s.kind.version, s.kind.kind);
  if (!definition) throw new Error(`no definition for ${s.kind.group}/${s.kind.version} ${s.kind.kind}`);
  const self = { ref: definition };
  const ops: Operation[] = [];
  const verbs = new Set(s.verbs);
  if (verbs.has('get'))
    ops.push(op('get', `read${P}${ns}${r.kind}${Sub}`, { action: 'get', gvk: kind, responses: [ok(self), UNAUTHORIZED] }));
  if (verbs.has('create')) {
    ops.push(
      op('post', `create${P}${ns}${r.kind}${Sub}`, {
        action: 'post',
        gvk: kind,
        params: WRITE_PARAMS,
        body: { ref: definition, required: true },
        responses: [ok(self), created(self), accepted(self), UNAUTHORIZED],
      }),
    );
  }
  if (verbs.has('update')) {
    ops.push(
      op('put', `replace${P}${ns}${r.kind}${Sub}`, {
        action: 'put',
        gvk: kind,
        params: WRITE_PARAMS,
        body: { ref: definition, required: true },
        responses: [ok(self), created(self), UNAUTHORIZED],
      }),
    );
  }
  if (verbs.has('patch')) {
    ops.push(
      op('patch', `patch${P}${ns}${r.kind}${Sub}`, {
        action: 'patch',
        gvk: kind,
        consumes: PATCH_TYPES,
        params: PATCH_PARAMS,
        body: { ref: PATCH, required: true },
        responses: [ok(self), created(self), UNAUTHORIZED],
      }),
    );
  }
  return ops.length > 0 ? [{ path, params: itemParams, ops }] : [];
}

// ---------------------------------------------------------------------------------------------
// Paths that are not resources.

function simpleGet(path: string, operationId: string, tag: string, schema: BodySchema, produces: string[], consumes?: string[]): PathItem {
  return {
    path,
    params: [],
    ops: [{ method: 'get', operationId, tag, consumes: consumes ?? [], produces, params: [], responses: [ok(schema), UNAUTHORIZED] }],
  };
}

const DISCOVERY_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];

function groupVersionRootPath(group: string, version: string): PathItem {
  return simpleGet(
    `/${gvPath(group, version)}/`,
    `get${gvPrefix(group, version)}APIResources`,
    gvTag(group, version),
    { ref: `${META}.APIResourceList` },
    DISCOVERY_TYPES,
    DISCOVERY_TYPES,
  );
}

function nonResourceDocuments(catalog: Catalog): Map<string, PathItem[]> {
  const docs = new Map<string, PathItem[]>();
  docs.set('api', [simpleGet('/api/', 'getCoreAPIVersions', 'core', { ref: `${META}.APIVersions` }, DISCOVERY_TYPES, DISCOVERY_TYPES)]);
  docs.set('apis', [simpleGet('/apis/', 'getAPIVersions', 'apis', { ref: `${META}.APIGroupList` }, DISCOVERY_TYPES, DISCOVERY_TYPES)]);
  for (const g of catalog.groups()) {
    const tag = groupTagName(g.name);
    docs.set(`apis/${g.name}`, [
      simpleGet(`/apis/${g.name}/`, `get${capitalize(tag)}APIGroup`, tag, { ref: `${META}.APIGroup` }, DISCOVERY_TYPES, DISCOVERY_TYPES),
    ]);
  }
  docs.set('version', [
    simpleGet(
      '/version/',
      'getCodeVersion',
      'version',
      { ref: 'io.k8s.apimachinery.pkg.version.Info' },
      ['application/json'],
      ['application/json'],
    ),
  ]);
  docs.set(OPENID_CONFIGURATION_PATH.slice(1), [
    simpleGet(`${OPENID_CONFIGURATION_PATH}/`, 'getServiceAccountIssuerOpenIDConfiguration', 'WellKnown', { type: 'string' }, [
      'application/json',
    ]),
  ]);
  docs.set(JWKS_PATH.slice(1), [
    simpleGet(`${JWKS_PATH}/`, 'getServiceAccountIssuerOpenIDKeyset', 'openid', { type: 'string' }, ['application/jwk-set+json']),
  ]);
  return docs;
}

// ---------------------------------------------------------------------------------------------
// Rendering. Extension objects get Go's sorted map-key order.

const gvkExtension = (g: GroupVersionKind) => ({ group: g.group, kind: g.kind, version: g.version });

function renderSchema(node: SchemaNode, refPrefix: string, v3: boolean): Record<string, unknown> {
  if (node.ref !== undefined) return renderRef(node, refPrefix + node.ref, v3);
  const out: Record<string, unknown> = {};
  if (v3 && node.intOrString) {
    out.oneOf = [{ type: 'integer' }, { type: 'string' }];
    out.format = node.format ?? 'int-or-string';
  } else {
    if (node.type !== undefined) out.type = node.type;
    if (node.format !== undefined) out.format = node.format;
  }
  if (node.required) out.required = [...node.required];
  if (node.items) out.items = renderSchema(node.items, refPrefix, v3);
  if (node.properties) {
    const props: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node.properties)) props[k] = renderSchema(v, refPrefix, v3);
    out.properties = props;
  }
  if (node.additionalProperties !== undefined) {
    out.additionalProperties =
      typeof node.additionalProperties === 'boolean' ? node.additionalProperties : renderSchema(node.additionalProperties, refPrefix, v3);
  }
  addExtensions(out, node);
  return out;
}

// A property that is a $ref keeps its own extensions (DeploymentSpec.strategy's
// `x-kubernetes-patch-strategy: retainKeys`): kubectl builds strategic patches from them. In
// v2 they sit beside the $ref; v3 has no siblings of $ref, so kube wraps it in allOf.
function renderRef(node: SchemaNode, ref: string, v3: boolean): Record<string, unknown> {
  const extensions: Record<string, unknown> = {};
  addExtensions(extensions, node);
  if (Object.keys(extensions).length === 0) return { $ref: ref };
  return v3 ? { allOf: [{ $ref: ref }], ...extensions } : { $ref: ref, ...extensions };
}

function addExtensions(out: Record<string, unknown>, node: SchemaNode): void {
  if (node.gvk) out['x-kubernetes-group-version-kind'] = node.gvk.map(gvkExtension);
  if (node.listMapKeys) out['x-kubernetes-list-map-keys'] = [...node.listMapKeys];
  if (node.listType) out['x-kubernetes-list-type'] = node.listType;
  if (node.mapType) out['x-kubernetes-map-type'] = node.mapType;
  if (node.patchMergeKey) out['x-kubernetes-patch-merge-key'] = node.patchMergeKey;
  if (node.patchStrategy) out['x-kubernetes-patch-strategy'] = node.patchStrategy;
  if (node.preserveUnknownFields) out['x-kubernetes-preserve-unknown-fields'] = true;
  if (node.embeddedResource) out['x-kubernetes-embedded-resource'] = true;
  if (node.unions) out['x-kubernetes-unions'] = node.unions.map((u) => ({ ...u }));
}

/** The v3 form of a few apimachinery types whose Go types declare several OpenAPI v3 types. */
function renderDefinitionV3(name: string, node: SchemaNode): Record<string, unknown> {
  if (name === 'io.k8s.apimachinery.pkg.api.resource.Quantity') return { oneOf: [{ type: 'string' }, { type: 'number' }] };
  return renderSchema(node, '#/components/schemas/', true);
}

function bodyRef(schema: BodySchema, refPrefix: string): Record<string, unknown> {
  return 'ref' in schema ? { $ref: refPrefix + schema.ref } : { type: schema.type };
}

function renderParamV2(p: Param): Record<string, unknown> {
  return p.required
    ? { in: p.in, name: p.name, required: true, type: p.type, uniqueItems: true }
    : { in: p.in, name: p.name, type: p.type, uniqueItems: true };
}

function renderParamV3(p: Param): Record<string, unknown> {
  const out: Record<string, unknown> = { name: p.name, in: p.in };
  if (p.required) out.required = true;
  out.schema = { type: p.type, uniqueItems: true };
  return out;
}

function renderOperationV2(o: Operation): Record<string, unknown> {
  const params: Record<string, unknown>[] = [];
  if (o.body)
    params.push({
      in: 'body',
      name: 'body',
      ...(o.body.required ? { required: true } : {}),
      schema: { $ref: `#/definitions/${o.body.ref}` },
    });
  params.push(...o.params.map(renderParamV2));
  const responses: Record<string, unknown> = {};
  for (const r of o.responses)
    responses[r.code] = r.schema
      ? { description: r.description, schema: bodyRef(r.schema, '#/definitions/') }
      : { description: r.description };
  const out: Record<string, unknown> = { consumes: o.consumes, operationId: o.operationId };
  if (o.consumes.length === 0) delete out.consumes;
  if (params.length > 0) out.parameters = params;
  out.produces = o.produces;
  out.responses = responses;
  out.schemes = ['https'];
  out.tags = [o.tag];
  if (o.action) out['x-kubernetes-action'] = o.action;
  if (o.gvk) out['x-kubernetes-group-version-kind'] = gvkExtension(o.gvk);
  return out;
}

function renderOperationV3(o: Operation): Record<string, unknown> {
  const out: Record<string, unknown> = { tags: [o.tag], operationId: o.operationId };
  if (o.params.length > 0) out.parameters = o.params.map(renderParamV3);
  if (o.body) {
    const schema = { $ref: `#/components/schemas/${o.body.ref}` };
    const content: Record<string, unknown> = {};
    for (const t of o.consumes) content[t] = { schema };
    out.requestBody = o.body.required ? { content, required: true } : { content };
  }
  const responses: Record<string, unknown> = {};
  for (const r of o.responses) {
    if (!r.schema) {
      responses[r.code] = { description: r.description };
      continue;
    }
    const content: Record<string, unknown> = {};
    for (const t of o.produces) content[t] = { schema: bodyRef(r.schema, '#/components/schemas/') };
    responses[r.code] = { description: r.description, content };
  }
  out.responses = responses;
  if (o.action) out['x-kubernetes-action'] = o.action;
  if (o.gvk) out['x-kubernetes-group-version-kind'] = gvkExtension(o.gvk);
  return out;
}

const METHOD_ORDER: Method[] = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

function renderPaths(items: PathItem[], v3: boolean): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const item of [...items].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    const rendered: Record<string, unknown> = {};
    const ops = [...item.ops].sort((a, b) => METHOD_ORDER.indexOf(a.method) - METHOD_ORDER.indexOf(b.method));
    for (const o of ops) rendered[o.method] = v3 ? renderOperationV3(o) : renderOperationV2(o);
    if (item.params.length > 0) rendered.parameters = item.params.map(v3 ? renderParamV3 : renderParamV2);
    paths[item.path] = rendered;
  }
  return paths;
}

function referencedDefinitions(items: PathItem[]): string[] {
  const names: string[] = [];
  for (const item of items) {
    for (const o of item.ops) {
      if (o.body) names.push(o.body.ref);
      for (const r of o.responses) if (r.schema && 'ref' in r.schema) names.push(r.schema.ref);
    }
  }
  return names;
}

/** Go's json.Marshal: no trailing newline, and <, >, & escaped. */
function goJSON(value: unknown): Buffer {
  const text = JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return Buffer.from(text);
}

const sha512Hex = (body: Buffer): string => createHash('sha512').update(body).digest('hex').toUpperCase();

function sortedObject<T>(entries: [string, T][]): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [k, v] of entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) out[k] = v;
  return out;
}

// ---------------------------------------------------------------------------------------------

/** If-None-Match as net/http's ServeContent reads it: a list of (possibly weak) tags, or `*`. */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const bare = (t: string) => t.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((t) => t.trim() === '*' || bare(t) === bare(etag));
}

export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
const OPENAPI_V2_PROTOBUF_SUBTYPES = ['com.github.proto-openapi.spec.v2.v1.0+protobuf', 'com.github.proto-openapi.spec.v2@v1.0+protobuf'];

/** kube-openapi's choice for /openapi/v2: the first Accept clause (by q) that names JSON, either
 *  protobuf spelling, or a wildcard (which means JSON). */
function negotiateV2(accept: string | undefined): 'json' | 'protobuf' | undefined {
  const clauses = (accept || '*/*')
    .split(',')
    .map((clause, index) => {
      const [range = '', ...params] = clause.split(';').map((s) => s.trim().toLowerCase());
      const qParam = params.find((p) => p.startsWith('q='));
      const qValue = qParam ? Number.parseFloat(qParam.slice(2)) : 1;
      return { range, q: Number.isNaN(qValue) ? 0 : qValue, index };
    })
    .filter((c) => c.range && c.q > 0)
    .sort((a, b) => (b.q !== a.q ? b.q - a.q : a.index - b.index));
  for (const { range } of clauses) {
    const [type = '', subtype = ''] = range.split('/');
    if (type !== 'application' && type !== '*') continue;
    if (subtype === 'json' || subtype === '*') return 'json';
    if (OPENAPI_V2_PROTOBUF_SUBTYPES.includes(subtype)) return 'protobuf';
  }
  return undefined;
}

/** Which representation an Accept header allows: JSON, or nothing we serve (protobuf only). */
function acceptsJSON(accept: string | undefined): boolean {
  if (!accept) return true;
  return accept.split(',').some((clause) => {
    const [range = '', ...params] = clause.split(';').map((s) => s.trim().toLowerCase());
    const qParam = params.find((p) => p.startsWith('q='));
    if (qParam && Number.parseFloat(qParam.slice(2)) === 0) return false;
    return range === 'application/json' || range === 'application/*' || range === '*/*' || range === '*';
  });
}

export class OpenAPIService {
  private readonly serverVersion: string;
  private readonly now: () => Date;
  private readonly created = new Date();
  private v2Object?: Record<string, unknown>;
  private v2Doc?: OpenAPIDocument;
  private v2ProtoDoc?: OpenAPIDocument;
  private v3Docs?: Map<string, OpenAPIDocument>;
  private v3IndexDoc?: OpenAPIDocument;

  constructor(
    private readonly catalog: Catalog,
    private readonly schemas: SchemaRegistry,
    opts: OpenAPIOptions = {},
  ) {
    this.serverVersion = opts.serverVersion ?? 'v1.33.0';
    this.now = opts.now ?? (() => new Date());
  }

  private document(body: Buffer): OpenAPIDocument {
    const hash = sha512Hex(body);
    // http.ServeContent sends Last-Modified with second precision
    const lastModified = new Date(Math.floor(this.created.getTime() / 1000) * 1000);
    return { body, etag: JSON.stringify(hash), hash, contentType: 'application/json', lastModified };
  }

  private groupVersionItems(group: string, version: string): PathItem[] {
    const defs: DefinitionLookup = (g, v, k) => this.schemas.definitionNameFor(g, v, k);
    return [groupVersionRootPath(group, version), ...this.catalog.resourcesFor(group, version).flatMap((r) => resourcePaths(r, defs))];
  }

  /** The Swagger 2.0 document of everything served. */
  v2(): OpenAPIDocument {
    if (!this.v2Doc) {
      const items: PathItem[] = [...nonResourceDocuments(this.catalog).values()].flat();
      for (const gv of this.catalog.groupVersions()) items.push(...this.groupVersionItems(gv.group, gv.version));
      const definitions = sortedObject(
        [...this.schemas.closure(referencedDefinitions(items))].map((name): [string, unknown] => [
          name,
          renderSchema(this.schemas.definition(name) as SchemaNode, '#/definitions/', false),
        ]),
      );
      const doc: Record<string, unknown> = {
        swagger: '2.0',
        info: { title: 'Kubernetes', version: this.serverVersion },
        paths: renderPaths(items, false),
        definitions,
        securityDefinitions: { BearerToken: { in: 'header', name: 'authorization', type: 'apiKey' } },
        security: [{ BearerToken: [] }],
      };
      this.v2Object = doc;
      this.v2Doc = this.document(goJSON(doc));
    }
    return this.v2Doc;
  }

  /** The same document as a gnostic openapi_v2.Document, which is all client-go asks for. Like
   *  kube-openapi, it carries the ETag of the JSON form. */
  v2Protobuf(): OpenAPIDocument {
    if (!this.v2ProtoDoc) {
      const json = this.v2();
      this.v2ProtoDoc = { ...json, body: encodeSwaggerProto(this.v2Object as Record<string, unknown>), contentType: OPENAPI_V2_PROTOBUF };
    }
    return this.v2ProtoDoc;
  }

  private buildV3(): Map<string, OpenAPIDocument> {
    const docs = new Map<string, OpenAPIDocument>();
    const sources = nonResourceDocuments(this.catalog);
    for (const gv of this.catalog.groupVersions()) sources.set(gvPath(gv.group, gv.version), this.groupVersionItems(gv.group, gv.version));
    for (const [key, items] of sources) {
      const schemas = sortedObject(
        [...this.schemas.closure(referencedDefinitions(items))].map((name): [string, unknown] => [
          name,
          renderDefinitionV3(name, this.schemas.definition(name) as SchemaNode),
        ]),
      );
      const doc = {
        openapi: '3.0.0',
        info: { title: 'Kubernetes', version: this.serverVersion },
        paths: renderPaths(items, true),
        components: {
          schemas,
          securitySchemes: { BearerToken: { type: 'apiKey', name: 'authorization', in: 'header' } },
        },
      };
      docs.set(key, this.document(goJSON(doc)));
    }
    return docs;
  }

  private v3All(): Map<string, OpenAPIDocument> {
    this.v3Docs ??= this.buildV3();
    return this.v3Docs;
  }

  /** The keys of `/openapi/v3`: `api/v1`, `apis/apps/v1`, `apis/apps`, `version`, ... */
  v3Paths(): string[] {
    return [...this.v3All().keys()].sort();
  }

  /** One `/openapi/v3/<path>` document; undefined for an unknown path. */
  v3(path: string): OpenAPIDocument | undefined {
    return this.v3All().get(path.replace(/^\/+|\/+$/g, ''));
  }

  /** `/openapi/v3`: `{"paths": {"<path>": {"serverRelativeURL": "/openapi/v3/<path>?hash=<HASH>"}}}` */
  v3Index(): OpenAPIDocument {
    if (!this.v3IndexDoc) {
      const paths = sortedObject(
        [...this.v3All()].map(([key, doc]): [string, unknown] => [key, { serverRelativeURL: `/openapi/v3/${key}?hash=${doc.hash}` }]),
      );
      this.v3IndexDoc = this.document(goJSON({ paths }));
    }
    return this.v3IndexDoc;
  }

  private conditional(doc: OpenAPIDocument, req: OpenAPIRequest, extra: Record<string, string>): OpenAPIResponse {
    const headers: Record<string, string> = {
      ...extra,
      'Content-Type': doc.contentType,
      ETag: doc.etag,
      'Last-Modified': doc.lastModified.toUTCString(),
    };
    if (etagMatches(req.ifNoneMatch, doc.etag)) {
      delete headers['Content-Type'];
      return { status: 304, headers };
    }
    return { status: 200, headers, body: doc.body };
  }

  /** GET /openapi/v2: JSON or protobuf as the Accept header asks, 406 for anything else. */
  serveV2(req: OpenAPIRequest = {}): OpenAPIResponse {
    const form = negotiateV2(req.accept);
    if (!form) return { status: 406, headers: { Vary: 'Accept' } };
    return this.conditional(form === 'json' ? this.v2() : this.v2Protobuf(), req, { Vary: 'Accept' });
  }

  /** GET /openapi/v3 */
  serveV3Index(req: OpenAPIRequest = {}): OpenAPIResponse {
    return this.conditional(this.v3Index(), req, {});
  }

  /** GET /openapi/v3/<path>[?hash=]: a stale hash is redirected (301) to the current one; a
   *  matching hash makes the response immutable for a year. */
  serveV3(path: string, req: OpenAPIRequest = {}): OpenAPIResponse {
    const doc = this.v3(path);
    if (!doc) return { status: 404, headers: {} };
    if (!acceptsJSON(req.accept)) return { status: 406, headers: { Vary: 'Accept' } };
    const key = path.replace(/^\/+|\/+$/g, '');
    const extra: Record<string, string> = { Vary: 'Accept' };
    if (req.hash !== undefined && req.hash !== '') {
      if (req.hash !== doc.hash) {
        return { status: 301, headers: { Vary: 'Accept', Location: `/openapi/v3/${key}?hash=${doc.hash}`, ETag: doc.etag } };
      }
      const expires = new Date(this.now().getTime());
      expires.setUTCFullYear(expires.getUTCFullYear() + 1);
      extra['Cache-Control'] = 'public, immutable';
      extra.Expires = expires.toUTCString();
    }
    return this.conditional(doc, req, extra);
  }
}
