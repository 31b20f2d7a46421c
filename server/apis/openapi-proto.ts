// The protobuf form of /openapi/v2 (application/com.github.proto-openapi.spec.v2.v1.0+protobuf),
// the gnostic OpenAPIv2 `Document` message. client-go fetches /openapi/v2 only in this form, and
// kubectl needs it for client-side validation of `kind: List` manifests and of kinds that have no
// PATCH operation (reviews). Converts the rendered Swagger JSON the way gnostic's compiler does:
// known fields to their message fields, `x-*` keys to NamedAny vendor extensions holding the
// value as YAML (JSON text, which YAML readers accept). Only what the Swagger documents of
// openapi.ts contain is handled.

type Json = Record<string, unknown>;

/** Field numbers of gnostic's openapiv2 messages (google/gnostic-models openapiv2/OpenAPIv2.proto). */
const F = {
  document: { swagger: 1, info: 2, paths: 8, definitions: 9, security: 12, securityDefinitions: 13 },
  info: { title: 1, version: 2 },
  paths: { path: 2 },
  definitions: { additionalProperties: 1 },
  named: { name: 1, value: 2 },
  pathItem: { get: 2, put: 3, post: 4, delete: 5, options: 6, head: 7, patch: 8, parameters: 9 },
  operation: { tags: 1, operationId: 5, produces: 6, consumes: 7, parameters: 8, responses: 9, schemes: 10, vendorExtension: 13 },
  parametersItem: { parameter: 1 },
  parameter: { body: 1, nonBody: 2 },
  bodyParameter: { name: 2, in: 3, required: 4, schema: 5 },
  nonBodyParameter: { query: 3, path: 4 },
  queryParameter: { required: 1, in: 2, name: 4, type: 6, uniqueItems: 20 },
  pathParameter: { required: 1, in: 2, name: 4, type: 5, uniqueItems: 19 },
  responses: { responseCode: 1 },
  responseValue: { response: 1 },
  response: { description: 1, schema: 2 },
  schemaItem: { schema: 1 },
  schema: { ref: 1, format: 2, required: 19, additionalProperties: 21, type: 22, items: 23, properties: 25, vendorExtension: 31 },
  additionalPropertiesItem: { schema: 1, boolean: 2 },
  typeItem: { value: 1 },
  itemsItem: { schema: 1 },
  properties: { additionalProperties: 1 },
  any: { yaml: 2 },
  stringArray: { value: 1 },
  securityRequirement: { additionalProperties: 1 },
  securityDefinitions: { additionalProperties: 1 },
  securityDefinitionsItem: { apiKey: 2 },
  apiKeySecurity: { type: 1, name: 2, in: 3, description: 4 },
} as const;

// ---------------------------------------------------------------------------------------------
// A minimal protobuf writer: varints, strings, bools and nested messages.

class Message {
  private readonly parts: Buffer[] = [];

  private tag(field: number, wireType: number): void {
    this.varint(field * 8 + wireType);
  }

  private varint(n: number): void {
    const bytes: number[] = [];
    let v = n;
    while (v > 127) {
      bytes.push((v % 128) | 128);
      v = Math.floor(v / 128);
    }
    bytes.push(v);
    this.parts.push(Buffer.from(bytes));
  }

  string(field: number, value: string | undefined): this {
    if (value === undefined || value === '') return this;
    const bytes = Buffer.from(value, 'utf8');
    this.tag(field, 2);
    this.varint(bytes.length);
    this.parts.push(bytes);
    return this;
  }

  strings(field: number, values: unknown): this {
    if (Array.isArray(values)) for (const v of values) this.string(field, String(v));
    return this;
  }

  bool(field: number, value: unknown): this {
    if (value !== true) return this;
    this.tag(field, 0);
    this.varint(1);
    return this;
  }

  /** a nested message; written even when empty, like a set oneof or message field */
  message(field: number, inner: Message | undefined): this {
    if (!inner) return this;
    const bytes = inner.bytes();
    this.tag(field, 2);
    this.varint(bytes.length);
    this.parts.push(bytes);
    return this;
  }

  bytes(): Buffer {
    return Buffer.concat(this.parts);
  }
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function vendorExtensions(msg: Message, field: number, obj: Json): void {
  for (const [key, value] of Object.entries(obj)) {
    if (!key.startsWith('x-')) continue;
    const any = new Message().string(F.any.yaml, `${JSON.stringify(value)}\n`);
    msg.message(field, new Message().string(F.named.name, key).message(F.named.value, any));
  }
}

function schema(s: Json): Message {
  const m = new Message();
  if (typeof s.$ref === 'string') m.string(F.schema.ref, s.$ref);
  if (typeof s.format === 'string') m.string(F.schema.format, s.format);
  m.strings(F.schema.required, s.required);
  if (s.additionalProperties !== undefined) {
    const item = new Message();
    if (typeof s.additionalProperties === 'boolean') {
      // proto3 drops a false bool; gnostic then reads the unset oneof as "no constraint"
      item.bool(F.additionalPropertiesItem.boolean, s.additionalProperties);
    } else if (isObject(s.additionalProperties)) {
      item.message(F.additionalPropertiesItem.schema, schema(s.additionalProperties));
    }
    m.message(F.schema.additionalProperties, item);
  }
  if (typeof s.type === 'string') m.message(F.schema.type, new Message().string(F.typeItem.value, s.type));
  if (isObject(s.items)) m.message(F.schema.items, new Message().message(F.itemsItem.schema, schema(s.items)));
  if (isObject(s.properties)) {
    const props = new Message();
    for (const [name, child] of Object.entries(s.properties)) {
      if (isObject(child))
        props.message(F.properties.additionalProperties, new Message().string(F.named.name, name).message(F.named.value, schema(child)));
    }
    m.message(F.schema.properties, props);
  }
  vendorExtensions(m, F.schema.vendorExtension, s);
  return m;
}

function parameter(p: Json): Message {
  const param = new Message();
  if (p.in === 'body') {
    const body = new Message()
      .string(F.bodyParameter.name, String(p.name))
      .string(F.bodyParameter.in, 'body')
      .bool(F.bodyParameter.required, p.required)
      .message(F.bodyParameter.schema, isObject(p.schema) ? schema(p.schema) : undefined);
    param.message(F.parameter.body, body);
  } else if (p.in === 'path') {
    const sub = new Message()
      .bool(F.pathParameter.required, p.required)
      .string(F.pathParameter.in, 'path')
      .string(F.pathParameter.name, String(p.name))
      .string(F.pathParameter.type, String(p.type))
      .bool(F.pathParameter.uniqueItems, p.uniqueItems);
    param.message(F.parameter.nonBody, new Message().message(F.nonBodyParameter.path, sub));
  } else {
    const sub = new Message()
      .bool(F.queryParameter.required, p.required)
      .string(F.queryParameter.in, 'query')
      .string(F.queryParameter.name, String(p.name))
      .string(F.queryParameter.type, String(p.type))
      .bool(F.queryParameter.uniqueItems, p.uniqueItems);
    param.message(F.parameter.nonBody, new Message().message(F.nonBodyParameter.query, sub));
  }
  return new Message().message(F.parametersItem.parameter, param);
}

function operation(op: Json): Message {
  const m = new Message().strings(F.operation.tags, op.tags).string(F.operation.operationId, op.operationId as string | undefined);
  m.strings(F.operation.produces, op.produces).strings(F.operation.consumes, op.consumes);
  if (Array.isArray(op.parameters)) for (const p of op.parameters) if (isObject(p)) m.message(F.operation.parameters, parameter(p));
  if (isObject(op.responses)) {
    const responses = new Message();
    for (const [code, r] of Object.entries(op.responses)) {
      if (!isObject(r)) continue;
      const response = new Message().string(F.response.description, r.description as string | undefined);
      if (isObject(r.schema)) response.message(F.response.schema, new Message().message(F.schemaItem.schema, schema(r.schema)));
      const value = new Message().message(F.responseValue.response, response);
      responses.message(F.responses.responseCode, new Message().string(F.named.name, code).message(F.named.value, value));
    }
    m.message(F.operation.responses, responses);
  }
  m.strings(F.operation.schemes, op.schemes);
  vendorExtensions(m, F.operation.vendorExtension, op);
  return m;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

/** Encodes a Swagger 2.0 document (as openapi.ts renders it) as a gnostic openapi_v2.Document. */
export function encodeSwaggerProto(doc: Json): Buffer {
  const d = new Message().string(F.document.swagger, String(doc.swagger));
  if (isObject(doc.info)) {
    d.message(
      F.document.info,
      new Message().string(F.info.title, doc.info.title as string).string(F.info.version, doc.info.version as string),
    );
  }
  if (isObject(doc.paths)) {
    const paths = new Message();
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!isObject(item)) continue;
      const pi = new Message();
      for (const method of METHODS) if (isObject(item[method])) pi.message(F.pathItem[method], operation(item[method] as Json));
      if (Array.isArray(item.parameters)) for (const p of item.parameters) if (isObject(p)) pi.message(F.pathItem.parameters, parameter(p));
      paths.message(F.paths.path, new Message().string(F.named.name, path).message(F.named.value, pi));
    }
    d.message(F.document.paths, paths);
  }
  if (isObject(doc.definitions)) {
    const defs = new Message();
    for (const [name, s] of Object.entries(doc.definitions)) {
      if (isObject(s))
        defs.message(F.definitions.additionalProperties, new Message().string(F.named.name, name).message(F.named.value, schema(s)));
    }
    d.message(F.document.definitions, defs);
  }
  if (Array.isArray(doc.security)) {
    for (const req of doc.security) {
      if (!isObject(req)) continue;
      const r = new Message();
      for (const [name, scopes] of Object.entries(req)) {
        r.message(
          F.securityRequirement.additionalProperties,
          new Message().string(F.named.name, name).message(F.named.value, new Message().strings(F.stringArray.value, scopes)),
        );
      }
      d.message(F.document.security, r);
    }
  }
  if (isObject(doc.securityDefinitions)) {
    const defs = new Message();
    for (const [name, def] of Object.entries(doc.securityDefinitions)) {
      if (!isObject(def) || def.type !== 'apiKey') continue;
      const apiKey = new Message()
        .string(F.apiKeySecurity.type, 'apiKey')
        .string(F.apiKeySecurity.name, def.name as string)
        .string(F.apiKeySecurity.in, def.in as string)
        .string(F.apiKeySecurity.description, def.description as string | undefined);
      defs.message(
        F.securityDefinitions.additionalProperties,
        new Message().string(F.named.name, name).message(F.named.value, new Message().message(F.securityDefinitionsItem.apiKey, apiKey)),
      );
    }
    d.message(F.document.securityDefinitions, defs);
  }
  return d.bytes();
}
