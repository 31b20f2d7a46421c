// /openapi/v2 as protobuf from a kapi process: the body asked for with client-go's media type
// decodes (protobufjs, with a schema for the part of gnostic's OpenAPIv2 messages kube's
// document uses, written here from the message definitions) to the same document as the JSON
// form: every path's operations and every definition in full. kubectl 1.33 asks for this
// form for `explain --output=plaintext-openapiv2` and shows a field's description from it.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import protobuf from 'protobufjs';
import { parse as parseYaml } from 'yaml';
import { jsonOf, kubectl, startKapi, type KapiProcess } from './harness.js';

const PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

// field numbers as in gnostic's openapiv2/OpenAPIv2.proto; fields kube's documents never set are left out
const GNOSTIC_SUBSET = `
syntax = "proto3";
package openapi.v2;
message Document { string swagger = 1; Info info = 2; Paths paths = 8; Definitions definitions = 9; }
message Info { string title = 1; string version = 2; }
message Paths { repeated NamedPathItem path = 2; }
message NamedPathItem { string name = 1; PathItem value = 2; }
message PathItem {
  Operation get = 2; Operation put = 3; Operation post = 4; Operation delete = 5;
  Operation options = 6; Operation head = 7; Operation patch = 8; repeated ParametersItem parameters = 9;
}
message Operation {
  repeated string tags = 1; string description = 3; string operation_id = 5; repeated string produces = 6;
  repeated string consumes = 7; repeated ParametersItem parameters = 8; Responses responses = 9;
  repeated string schemes = 10; repeated NamedAny vendor_extension = 13;
}
message ParametersItem { oneof oneof { Parameter parameter = 1; JsonReference json_reference = 2; } }
message JsonReference { string _ref = 1; }
message Parameter { oneof oneof { BodyParameter body_parameter = 1; NonBodyParameter non_body_parameter = 2; } }
message BodyParameter { string description = 1; string name = 2; string in = 3; bool required = 4; Schema schema = 5; }
message NonBodyParameter { oneof oneof { QueryParameter query_parameter_sub_schema = 3; PathParameter path_parameter_sub_schema = 4; } }
message QueryParameter { bool required = 1; string in = 2; string description = 3; string name = 4; string type = 6; bool unique_items = 20; }
message PathParameter { bool required = 1; string in = 2; string description = 3; string name = 4; string type = 5; bool unique_items = 19; }
message Responses { repeated NamedResponseValue response_code = 1; }
message NamedResponseValue { string name = 1; ResponseValue value = 2; }
message ResponseValue { oneof oneof { Response response = 1; JsonReference json_reference = 2; } }
message Response { string description = 1; SchemaItem schema = 2; }
message SchemaItem { oneof oneof { Schema schema = 1; } }
message Definitions { repeated NamedSchema additional_properties = 1; }
message NamedSchema { string name = 1; Schema value = 2; }
message Schema {
  string _ref = 1; string format = 2; string title = 3; string description = 4; Any default = 5;
  repeated string required = 19; repeated Any enum = 20; AdditionalPropertiesItem additional_properties = 21;
  TypeItem type = 22; ItemsItem items = 23; repeated Schema all_of = 24; Properties properties = 25;
  repeated NamedAny vendor_extension = 31;
}
message AdditionalPropertiesItem { oneof oneof { Schema schema = 1; bool boolean = 2; } }
message TypeItem { repeated string value = 1; }
message ItemsItem { repeated Schema schema = 1; }
message Properties { repeated NamedSchema additional_properties = 1; }
message NamedAny { string name = 1; Any value = 2; }
message Any { string yaml = 2; }
`;

// decoded messages are walked by field name, as the schema above names them
type Msg = Record<string, any>;
type Json = Record<string, unknown>;

const anyValue = (a: Msg): unknown => parseYaml(a.yaml as string);

function vendorExtensions(into: Json, list: Msg[] | undefined): void {
  for (const x of list ?? []) into[x.name as string] = anyValue(x.value as Msg);
}

/** a gnostic Schema message as the Swagger JSON it stands for */
function schemaJson(s: Msg): Json {
  const out: Json = {};
  if (s._ref) out.$ref = s._ref;
  if (s.description) out.description = s.description;
  if (s.title) out.title = s.title;
  if (s.type?.value?.length) out.type = s.type.value.length === 1 ? s.type.value[0] : s.type.value;
  if (s.format) out.format = s.format;
  if (s.default) out.default = anyValue(s.default as Msg);
  if (s.enum?.length) out.enum = (s.enum as Msg[]).map(anyValue);
  if (s.required?.length) out.required = s.required;
  if (s.items?.schema?.length) out.items = schemaJson(s.items.schema[0] as Msg);
  if (s.all_of?.length) out.allOf = (s.all_of as Msg[]).map(schemaJson);
  if (s.properties)
    out.properties = Object.fromEntries(
      ((s.properties.additional_properties ?? []) as Msg[]).map((p) => [p.name, schemaJson(p.value as Msg)]),
    );
  if (s.additional_properties) {
    const ap = s.additional_properties as Msg;
    out.additionalProperties = ap.oneof === 'boolean' ? ap.boolean : schemaJson(ap.schema as Msg);
  }
  vendorExtensions(out, s.vendor_extension as Msg[]);
  return out;
}

/** what the comparison looks at in an operation: identity, media types, parameters, responses */
function operationSummary(op: Msg | Json, fromProto: boolean): Json {
  if (!fromProto) {
    const o = op as Json & { parameters?: Json[]; responses?: Record<string, Json> };
    const extensions = Object.fromEntries(Object.entries(o).filter(([k]) => k.startsWith('x-')));
    return {
      operationId: o.operationId,
      tags: o.tags,
      consumes: o.consumes,
      produces: o.produces,
      schemes: o.schemes,
      description: o.description,
      extensions,
      parameters: (o.parameters ?? []).map((p) => ({ name: p.name, in: p.in, required: p.required ?? false, schema: p.schema })),
      responses: Object.fromEntries(
        Object.entries(o.responses ?? {}).map(([code, r]) => [code, { description: r.description, schema: r.schema }]),
      ),
    };
  }
  const o = op as Msg;
  const extensions: Json = {};
  vendorExtensions(extensions, o.vendor_extension as Msg[]);
  const parameters = ((o.parameters ?? []) as Msg[]).map((item) => {
    const p = item.parameter as Msg;
    if (p.oneof === 'body_parameter') {
      const b = p.body_parameter as Msg;
      return { name: b.name, in: b.in, required: b.required ?? false, schema: schemaJson(b.schema as Msg) };
    }
    const nb = p.non_body_parameter as Msg;
    const q = (nb.query_parameter_sub_schema ?? nb.path_parameter_sub_schema) as Msg;
    return { name: q.name, in: q.in, required: q.required ?? false, schema: undefined };
  });
  const responses = Object.fromEntries(
    (((o.responses as Msg | undefined)?.response_code ?? []) as Msg[]).map((r) => {
      const resp = r.value.response as Msg;
      return [r.name, { description: resp.description, schema: resp.schema?.schema ? schemaJson(resp.schema.schema as Msg) : undefined }];
    }),
  );
  const list = (v: unknown) => ((v as string[] | undefined)?.length ? v : undefined);
  return {
    operationId: o.operation_id || undefined,
    tags: list(o.tags),
    consumes: list(o.consumes),
    produces: list(o.produces),
    schemes: list(o.schemes),
    description: o.description || undefined,
    extensions,
    parameters,
    responses,
  };
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

describe('OpenAPI v2 as protobuf', () => {
  let kapi: KapiProcess;
  let json: Json & { paths: Record<string, Json>; definitions: Record<string, Json>; info: Json; swagger: string };
  let decoded: Msg;

  before(async () => {
    kapi = await startKapi();
    const j = await kapi.http.get('/openapi/v2', { timeoutMs: 60_000 });
    assert.equal(j.status, 200);
    json = jsonOf(j);
    const p = await kapi.http.get('/openapi/v2', { accept: PROTOBUF, timeoutMs: 60_000 });
    assert.equal(p.status, 200, p.body.slice(0, 300));
    assert.match(String(p.headers['content-type']), /^application\/com\.github\.proto-openapi\.spec\.v2[@.]v1\.0\+protobuf$/);
    const root = protobuf.parse(GNOSTIC_SUBSET, { keepCase: true }).root;
    const Document = root.lookupType('openapi.v2.Document');
    decoded = Document.toObject(Document.decode(p.bytes!), { oneofs: true, defaults: false, arrays: false }) as Msg;
  });
  after(async () => {
    await kapi?.stop();
  });

  it('has the same version, info and paths as the JSON document', () => {
    assert.equal(decoded.swagger, json.swagger);
    assert.deepEqual({ title: decoded.info.title, version: decoded.info.version }, { title: json.info.title, version: json.info.version });
    const paths = (decoded.paths.path as Msg[]).map((p) => p.name as string);
    assert.deepEqual(paths, Object.keys(json.paths));
    assert.ok(paths.includes('/api/v1/namespaces/{namespace}/pods/{name}'));
  });

  it('has the same operations on every path', () => {
    for (const item of decoded.paths.path as Msg[]) {
      const fromJson = json.paths[item.name as string]!;
      for (const method of METHODS) {
        const op = (item.value as Msg)[method] as Msg | undefined;
        assert.equal(op !== undefined, fromJson[method] !== undefined, `${method} ${item.name}`);
        if (!op) continue;
        assert.deepEqual(operationSummary(op, true), operationSummary(fromJson[method] as Json, false), `${method} ${item.name}`);
      }
    }
  });

  it('has the same definitions, each schema in full', () => {
    const defs = (decoded.definitions.additional_properties as Msg[]).map((d) => [d.name as string, schemaJson(d.value as Msg)] as const);
    assert.deepEqual(
      defs.map(([name]) => name),
      Object.keys(json.definitions),
    );
    assert.ok(defs.length > 500, `${defs.length} definitions`);
    for (const [name, schema] of defs) assert.deepEqual(schema, json.definitions[name], name);
  });

  it('kubectl 1.33 reads it for explain --output=plaintext-openapiv2', async () => {
    const r = await kubectl(['explain', 'deployments.spec.replicas', '--output=plaintext-openapiv2', '-v=8'], {
      kubeconfig: kapi.kubeconfig,
    });
    assert.equal(r.code, 0, r.stderr.slice(-2000));
    // client-go's request log: the verb and URL, then the headers, one per line
    assert.match(
      r.stderr,
      /"Request" verb="GET" url="https:\/\/[^"]+\/openapi\/v2(\?[^"]*)?" headers=<\n\tAccept: application\/com\.github\.proto-openapi\.spec\.v2@v1\.0\+protobuf\n/,
    );
    // the fields kubectl lists are the definition's properties, as the document has them
    const spec = json.definitions['io.k8s.api.apps.v1.DeploymentSpec'] as { properties: Record<string, unknown> };
    assert.match(r.stdout, /^KIND:\s+Deployment$/m);
    assert.match(r.stdout, /^FIELD:\s+replicas <integer>$/m);
    const spec2 = await kubectl(['explain', 'deployments.spec', '--output=plaintext-openapiv2'], { kubeconfig: kapi.kubeconfig });
    assert.equal(spec2.code, 0, spec2.stderr);
    const listed = [...spec2.stdout.matchAll(/^ +(\w+)\t<[^>]+>/gm)].map((m) => m[1]);
    assert.deepEqual(listed.sort(), Object.keys(spec.properties).sort(), spec2.stdout);
  });
});
