import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCatalog } from './catalog.js';
import { etagMatches, groupTagName, OpenAPIService } from './openapi.js';
import { loadSchemas } from './schema.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const fixedNow = new Date('2025-05-01T12:00:00Z');
const service = new OpenAPIService(loadCatalog(), loadSchemas(), { serverVersion: 'v1.33.0', now: () => fixedNow });

type Json = Record<string, unknown>;
const parse = (b: Buffer | undefined): Json => {
  assert.ok(b);
  return JSON.parse(b.toString('utf8')) as Json;
};

/** every "$ref" in a document, wherever it is */
function refs(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refs(v, out);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

test('the v3 index names every served group version with the hash of its document', () => {
  const index = parse(service.v3Index().body) as { paths: Record<string, { serverRelativeURL: string }> };
  assert.deepEqual(Object.keys(index), ['paths']);
  const keys = Object.keys(index.paths);
  assert.deepEqual(keys, [...keys].sort(), 'Go marshals map keys sorted');
  for (const key of ['api', 'api/v1', 'apis', 'apis/apps', 'apis/apps/v1', 'apis/autoscaling/v1', 'apis/autoscaling/v2', 'version']) {
    assert.ok(keys.includes(key), key);
  }
  assert.ok(!keys.includes('apis/resource.k8s.io/v1beta1'));
  const gvKeys = keys.filter((k) => /^(api\/v1|apis\/[^/]+\/[^/]+)$/.test(k));
  assert.equal(gvKeys.length, 21);
  for (const [key, { serverRelativeURL }] of Object.entries(index.paths)) {
    const m = /^\/openapi\/v3\/(.+)\?hash=([0-9A-F]{128})$/.exec(serverRelativeURL);
    assert.ok(m, serverRelativeURL);
    assert.equal(m[1], key);
    const doc = service.v3(key);
    assert.ok(doc);
    assert.equal(m[2], createHash('sha512').update(doc.body).digest('hex').toUpperCase());
    assert.equal(doc.etag, `"${m[2]}"`);
  }
});

test('a v3 group version document is self-contained OpenAPI 3.0', () => {
  for (const key of service.v3Paths()) {
    const doc = parse(service.v3(key)?.body) as { openapi: string; info: Json; paths: Json; components: { schemas: Json } };
    assert.equal(doc.openapi, '3.0.0');
    assert.deepEqual(doc.info, { title: 'Kubernetes', version: 'v1.33.0' });
    const schemas = doc.components.schemas;
    for (const ref of refs(doc)) {
      assert.ok(ref.startsWith('#/components/schemas/'), `${key}: ${ref}`);
      assert.ok(ref.slice('#/components/schemas/'.length) in schemas, `${key}: dangling ${ref}`);
    }
  }
});

test("kubectl's field-validation probe finds fieldValidation on the PATCH of every patchable kind", () => {
  const catalog = loadCatalog();
  for (const gv of catalog.groupVersions()) {
    const key = gv.group ? `apis/${gv.group}/${gv.version}` : `api/${gv.version}`;
    const doc = parse(service.v3(key)?.body) as { paths: Record<string, Record<string, Json>> };
    for (const r of gv.resources.filter((x) => x.verbs.includes('patch'))) {
      // what cli-runtime's supportsQueryParamV3 and kubectl apply's patcher look for
      const patch = Object.values(doc.paths)
        .map((p) => p.patch)
        .find((op) => {
          const gvk = op?.['x-kubernetes-group-version-kind'] as Json | undefined;
          return gvk?.group === r.group && gvk.version === r.version && gvk.kind === r.kind;
        });
      assert.ok(patch, `${key} ${r.kind}: no PATCH operation`);
      const params = patch.parameters as { name: string; in: string }[];
      assert.ok(
        params.some((p) => p.name === 'fieldValidation' && p.in === 'query'),
        `${r.kind}: fieldValidation`,
      );
      const content = (patch.requestBody as { content: Json }).content;
      assert.ok('application/strategic-merge-patch+json' in content, `${r.kind}: strategic merge patch`);
    }
  }
});

test('kubectl explain finds the kind by x-kubernetes-group-version-kind and walks $refs', () => {
  const doc = parse(service.v3('apis/apps/v1')?.body) as {
    paths: Record<string, Record<string, Json>>;
    components: { schemas: Record<string, Json> };
  };
  // the template reads the GVK off the resource's paths first
  const list = doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments']?.get;
  assert.deepEqual(list?.['x-kubernetes-group-version-kind'], { group: 'apps', kind: 'Deployment', version: 'v1' });
  assert.equal(list?.['x-kubernetes-action'], 'list');
  const found = Object.entries(doc.components.schemas).filter(([, s]) =>
    (s['x-kubernetes-group-version-kind'] as Json[] | undefined)?.some(
      (g) => g.kind === 'Deployment' && g.group === 'apps' && g.version === 'v1',
    ),
  );
  assert.deepEqual(
    found.map(([name]) => name),
    ['io.k8s.api.apps.v1.Deployment'],
  );
  const deployment = found[0]?.[1] as { properties: Record<string, Json>; type: string };
  assert.equal(deployment.type, 'object');
  assert.deepEqual(deployment.properties.spec, { $ref: '#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec' });
  const spec = doc.components.schemas['io.k8s.api.apps.v1.DeploymentSpec'] as { properties: Record<string, Json>; required: string[] };
  assert.deepEqual(spec.properties.replicas, { type: 'integer', format: 'int32' });
  assert.deepEqual(spec.required, ['selector', 'template']);
  const podSpec = doc.components.schemas['io.k8s.api.core.v1.PodSpec'] as { properties: Record<string, Json> };
  assert.deepEqual(podSpec.properties.containers, {
    type: 'array',
    items: { $ref: '#/components/schemas/io.k8s.api.core.v1.Container' },
    'x-kubernetes-list-map-keys': ['name'],
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-patch-merge-key': 'name',
    'x-kubernetes-patch-strategy': 'merge',
  });
  // v3 types of the apimachinery scalars
  assert.deepEqual(doc.components.schemas['io.k8s.apimachinery.pkg.util.intstr.IntOrString'], {
    oneOf: [{ type: 'integer' }, { type: 'string' }],
    format: 'int-or-string',
  });
  assert.deepEqual(doc.components.schemas['io.k8s.apimachinery.pkg.api.resource.Quantity'], {
    oneOf: [{ type: 'string' }, { type: 'number' }],
  });
});

test("operations look like kube-apiserver's: ids, tags, actions, connect and subresources", () => {
  const core = parse(service.v3('api/v1')?.body) as { paths: Record<string, Record<string, Json>> };
  const pods = core.paths['/api/v1/namespaces/{namespace}/pods'];
  assert.deepEqual(Object.keys(pods ?? {}), ['get', 'post', 'delete', 'parameters']);
  assert.equal(pods?.get?.operationId, 'listCoreV1NamespacedPod');
  assert.deepEqual(pods?.get?.tags, ['core_v1']);
  assert.equal(pods?.post?.operationId, 'createCoreV1NamespacedPod');
  assert.equal(pods?.delete?.operationId, 'deleteCoreV1CollectionNamespacedPod');
  assert.equal(core.paths['/api/v1/pods']?.get?.operationId, 'listCoreV1PodForAllNamespaces');
  assert.equal(core.paths['/api/v1/watch/namespaces/{namespace}/pods/{name}']?.get?.['x-kubernetes-action'], 'watch');
  const exec = core.paths['/api/v1/namespaces/{namespace}/pods/{name}/exec'];
  assert.deepEqual(Object.keys(exec ?? {}), ['get', 'post', 'parameters']);
  assert.equal(exec?.post?.operationId, 'connectCoreV1PostNamespacedPodExec');
  assert.deepEqual(exec?.post?.['x-kubernetes-group-version-kind'], { group: '', kind: 'PodExecOptions', version: 'v1' });
  const eviction = core.paths['/api/v1/namespaces/{namespace}/pods/{name}/eviction']?.post;
  assert.deepEqual(eviction?.['x-kubernetes-group-version-kind'], { group: 'policy', kind: 'Eviction', version: 'v1' });
  assert.deepEqual((eviction?.requestBody as { content: Record<string, Json> }).content['*/*'], {
    schema: { $ref: '#/components/schemas/io.k8s.api.policy.v1.Eviction' },
  });
  assert.ok(core.paths['/api/v1/nodes/{name}/proxy/{path}']?.head);
  assert.equal(core.paths['/api/v1/namespaces/{name}/finalize']?.put?.operationId, 'replaceCoreV1NamespaceFinalize');
  assert.equal(core.paths['/api/v1/namespaces/{namespace}/pods/{name}/log']?.get?.operationId, 'readCoreV1NamespacedPodLog');
  const apps = parse(service.v3('apis/apps/v1')?.body) as { paths: Record<string, Record<string, Json>> };
  const scale = apps.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale'];
  assert.equal(scale?.get?.operationId, 'readAppsV1NamespacedDeploymentScale');
  assert.deepEqual(scale?.get?.['x-kubernetes-group-version-kind'], { group: 'autoscaling', kind: 'Scale', version: 'v1' });
  assert.equal(groupTagName('rbac.authorization.k8s.io'), 'rbacAuthorization');
  assert.equal(groupTagName('flowcontrol.apiserver.k8s.io'), 'flowcontrolApiserver');
  const rbac = parse(service.v3('apis/rbac.authorization.k8s.io/v1')?.body) as { paths: Record<string, Record<string, Json>> };
  assert.equal(rbac.paths['/apis/rbac.authorization.k8s.io/v1/clusterroles']?.get?.operationId, 'listRbacAuthorizationV1ClusterRole');
});

test('serving v3: hashed URLs are immutable, stale hashes redirect, ETags give 304', () => {
  const doc = service.v3('apis/apps/v1');
  assert.ok(doc);
  const fresh = service.serveV3('apis/apps/v1', { hash: doc.hash });
  assert.equal(fresh.status, 200);
  assert.equal(fresh.headers['Cache-Control'], 'public, immutable');
  assert.equal(fresh.headers.Expires, 'Fri, 01 May 2026 12:00:00 GMT');
  assert.equal(fresh.headers.ETag, doc.etag);
  assert.equal(fresh.headers['Content-Type'], 'application/json');
  assert.equal(fresh.body, doc.body);

  const stale = service.serveV3('apis/apps/v1', { hash: 'ABC' });
  assert.equal(stale.status, 301);
  assert.equal(stale.headers.Location, `/openapi/v3/apis/apps/v1?hash=${doc.hash}`);

  const unhashed = service.serveV3('/apis/apps/v1', {});
  assert.equal(unhashed.status, 200);
  assert.equal(unhashed.headers['Cache-Control'], undefined);
  assert.equal(service.serveV3('apis/apps/v1', { ifNoneMatch: doc.etag }).status, 304);
  assert.equal(service.serveV3('apis/batch/v1beta1', {}).status, 404);
  assert.equal(service.serveV3('apis/apps/v1', { accept: 'application/com.github.proto-openapi.spec.v3.v1.0+protobuf' }).status, 406);
  assert.equal(service.serveV3Index({ ifNoneMatch: service.v3Index().etag }).status, 304);
});

test('v2: a Swagger 2.0 document of the served API, in JSON or protobuf', () => {
  const v2 = service.v2();
  const doc = parse(v2.body) as { swagger: string; paths: Record<string, Record<string, Json>>; definitions: Record<string, Json> };
  assert.equal(doc.swagger, '2.0');
  for (const ref of refs(doc)) {
    assert.ok(ref.startsWith('#/definitions/'), ref);
    assert.ok(ref.slice('#/definitions/'.length) in doc.definitions, `dangling ${ref}`);
  }
  const patch = doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}']?.patch;
  assert.deepEqual(patch?.consumes, [
    'application/json-patch+json',
    'application/merge-patch+json',
    'application/strategic-merge-patch+json',
    'application/apply-patch+yaml',
  ]);
  assert.ok((patch?.parameters as { name: string }[]).some((p) => p.name === 'fieldValidation'));
  assert.deepEqual(doc.definitions['io.k8s.api.apps.v1.Deployment']?.['x-kubernetes-group-version-kind'], [
    { group: 'apps', kind: 'Deployment', version: 'v1' },
  ]);
  assert.ok(!('io.k8s.api.resource.v1beta1.ResourceClaim' in doc.definitions), 'unserved kinds stay out');
  assert.ok(!doc.paths['/apis/batch/v1beta1/cronjobs']);

  // what client-go sends
  const proto = service.serveV2({ accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' });
  assert.equal(proto.status, 200);
  assert.equal(proto.headers['Content-Type'], 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
  assert.equal(proto.headers.ETag, v2.etag, 'kube-openapi gives both forms the ETag of the JSON');
  assert.equal(proto.body, service.v2Protobuf().body);
  assert.equal(service.serveV2({ accept: 'application/json' }).headers['Content-Type'], 'application/json');
  assert.equal(service.serveV2({ accept: '*/*' }).headers['Content-Type'], 'application/json');
  assert.equal(
    service.serveV2({ accept: 'application/json;q=0.5, application/com.github.proto-openapi.spec.v2.v1.0+protobuf' }).headers[
      'Content-Type'
    ],
    'application/com.github.proto-openapi.spec.v2.v1.0+protobuf',
  );
  assert.equal(service.serveV2({ accept: 'application/xml' }).status, 406);
  assert.equal(service.serveV2({}).headers.ETag, v2.etag);
  assert.equal(service.serveV2({ ifNoneMatch: `W/${v2.etag}` }).status, 304);
});

test('no prose: the only descriptions are the HTTP status texts of responses', () => {
  const texts = new Set<string>();
  const collect = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(collect);
    else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (k === 'description' && typeof v === 'string') texts.add(v);
        else collect(v);
      }
    }
  };
  collect(parse(service.v2().body));
  for (const key of service.v3Paths()) collect(parse(service.v3(key)?.body));
  assert.deepEqual([...texts].sort(), ['Accepted', 'Created', 'OK', 'Unauthorized']);
});

test('etagMatches reads If-None-Match lists and *', () => {
  assert.ok(etagMatches('"a", "b"', '"b"'));
  assert.ok(etagMatches('*', '"b"'));
  assert.ok(!etagMatches('"a"', '"b"'));
  assert.ok(!etagMatches(undefined, '"b"'));
});

// Digests of kube 1.33's v2 definitions without descriptions (scripts/generate-schemas.mjs
// writes them from the reference document; `make check` keeps them current).
const digestsFile = path.join(repoRoot, 'server', 'apis', 'generated', 'definition-digests.json');

/** a schema without its `description` keywords (a property named description stays), keys sorted */
function canonical(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(canonical);
  if (!schema || typeof schema !== 'object') return schema;
  const obj = schema as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(obj).sort()) {
    if (k === 'description') continue;
    const v = obj[k];
    out[k] =
      k === 'properties' && v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((name) => [name, canonical((v as Record<string, unknown>)[name])]),
          )
        : canonical(v);
  }
  return out;
}

const digestOf = (def: unknown): string =>
  createHash('sha256')
    .update(JSON.stringify(canonical(def)))
    .digest('hex')
    .slice(0, 16);

test("every v2 definition equals kube 1.33's but for descriptions (extensions beside $refs included)", () => {
  const reference = JSON.parse(readFileSync(digestsFile, 'utf8')) as Record<string, string>;
  const ours = (parse(service.v2().body) as { definitions: Record<string, unknown> }).definitions;
  assert.ok(Object.keys(ours).length > 500);
  const differing: string[] = [];
  for (const [name, def] of Object.entries(ours)) {
    assert.ok(name in reference, `${name} is not in kube's document`);
    if (digestOf(def) !== reference[name]) differing.push(name);
  }
  assert.deepEqual(differing, []);
  const strategy = (ours['io.k8s.api.apps.v1.DeploymentSpec'] as { properties: Record<string, unknown> }).properties.strategy;
  assert.deepEqual(strategy, { $ref: '#/definitions/io.k8s.api.apps.v1.DeploymentStrategy', 'x-kubernetes-patch-strategy': 'retainKeys' });
});

test("v3 keeps a $ref property's extensions beside an allOf", () => {
  const doc = parse(service.v3('apis/apps/v1')?.body) as {
    components: { schemas: Record<string, { properties: Record<string, unknown> }> };
  };
  assert.deepEqual(doc.components.schemas['io.k8s.api.apps.v1.DeploymentSpec']!.properties.strategy, {
    allOf: [{ $ref: '#/components/schemas/io.k8s.api.apps.v1.DeploymentStrategy' }],
    'x-kubernetes-patch-strategy': 'retainKeys',
  });
});
