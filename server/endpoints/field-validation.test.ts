import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../storage/interface.js';
import type { SchemaNode, SchemaRegistry } from '../apis/schema.js';
import { StatusError } from '../machinery/status.js';
import { decodeAs } from './field-validation-decode.js';
import { PlanCompiler } from './field-validation-plan.js';
import { quantityError } from './field-validation-quantity.js';
import { goTimeParseError, RFC3339, RFC3339_MICRO } from './field-validation-time.js';
import { decodeYamlBody, yamlDuplicateKeysError } from './field-validation-yaml.js';
import {
  checkPatchDepth,
  validateBodyFields,
  validatePatchedFields,
  type FieldValidation,
  type FieldValidationRequest,
} from './field-validation.js';

const CONFIGMAP = { group: '', version: 'v1', kind: 'ConfigMap' };
const DEPLOYMENT = { group: 'apps', version: 'v1', kind: 'Deployment' };
const POD = { group: '', version: 'v1', kind: 'Pod' };

function request(kind: FieldValidationRequest['kind'], fieldValidation: FieldValidation): FieldValidationRequest {
  return { kind, fieldValidation, warnings: [] };
}

/** what decodeObject hands over: the parsed body (last of repeated members) */
function decoded(text: string): KubeObject {
  return JSON.parse(text) as KubeObject;
}

/** runs validateBodyFields on a JSON or YAML body; returns the object, the warnings, or the error */
function body(kind: FieldValidationRequest['kind'], fieldValidation: FieldValidation, text: string, format: 'json' | 'yaml' = 'json') {
  const req = request(kind, fieldValidation);
  const bytes = Buffer.from(text);
  const obj = format === 'json' ? decoded(text) : (decodeYamlBody(bytes) as KubeObject);
  try {
    validateBodyFields(req, obj, bytes, format);
  } catch (err) {
    assert.ok(err instanceof StatusError, String(err));
    return { error: err, warnings: req.warnings, obj };
  }
  return { warnings: req.warnings, obj };
}

function statusOf(err: StatusError | undefined): { code: number; reason: string; message: string } {
  assert.ok(err, 'expected an error');
  return { code: err.code, reason: err.reason, message: err.message };
}

// ---- create / update bodies ------------------------------------------------------------

const typo = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","nam":"y"},"dat":{"a":"b"},"data":{"a":"1","a":"2"}}';

test('Strict: 400 listing every unknown and duplicate field, in document order', () => {
  const r = body(CONFIGMAP, 'Strict', typo);
  assert.deepEqual(statusOf(r.error), {
    code: 400,
    reason: 'BadRequest',
    message:
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "metadata.nam", unknown field "dat", duplicate field "data.a"',
  });
});

test('Warn: one warning per field, unknown fields dropped; Ignore: silent, dropped too', () => {
  const warned = body(CONFIGMAP, 'Warn', typo);
  assert.equal(warned.error, undefined);
  assert.deepEqual(warned.warnings, ['unknown field "metadata.nam"', 'unknown field "dat"', 'duplicate field "data.a"']);
  assert.deepEqual(warned.obj, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: '2' } });
  const ignored = body(CONFIGMAP, 'Ignore', typo);
  assert.deepEqual(ignored.warnings, []);
  assert.deepEqual(ignored.obj, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: '2' } });
});

test('unknown fields inside lists and maps carry indices and map keys in their paths', () => {
  const deployment = JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: { app: 'web' } },
    spec: {
      selector: { matchLabels: { app: 'web' }, matchExpression: [] },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            { name: 'a', image: 'nginx' },
            {
              name: 'b',
              imagee: 'nginx',
              ports: [{ containerPort: 80 }, { containerPort: 81, hostname: 'x' }],
              resources: { limits: { cpu: '1' } },
            },
          ],
        },
      },
    },
  });
  const r = body(DEPLOYMENT, 'Strict', deployment);
  assert.equal(
    r.error?.message,
    'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.selector.matchExpression", unknown field "spec.template.spec.containers[1].imagee", unknown field "spec.template.spec.containers[1].ports[1].hostname"',
  );
  const warned = body(DEPLOYMENT, 'Warn', deployment);
  const spec = (warned.obj as unknown as { spec: { template: { spec: { containers: Record<string, unknown>[] } }; selector: object } })
    .spec;
  assert.deepEqual(spec.selector, { matchLabels: { app: 'web' } });
  assert.deepEqual(spec.template.spec.containers[1], {
    name: 'b',
    ports: [{ containerPort: 80 }, { containerPort: 81 }],
    resources: { limits: { cpu: '1' } },
  });
});

test('unknown fields below map values (a CRD schema) and under x-kubernetes-preserve-unknown-fields', () => {
  const crd = JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'crontabs.stable.example.com' },
    spec: {
      group: 'stable.example.com',
      names: { plural: 'crontabs', kind: 'CronTab' },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', requird: ['a'] } } } },
        },
      ],
    },
  });
  const r = body({ group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition' }, 'Strict', crd);
  assert.equal(
    r.error?.message,
    'CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: strict decoding error: unknown field "spec.versions[0].schema.openAPIV3Schema.properties.spec.requird"',
  );
});

test('duplicates: struct members and map entries merge as Go decodes them, lists decode over the old elements', () => {
  const text =
    '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","labels":{"a":"1"},"labels":{"b":"2"}},' +
    '"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}},' +
    '"spec":{"paused":true,"template":{"spec":{"containers":[{"name":"d"}]}}},' +
    '"bogus":{"x":1,"x":2}}';
  const r = body(DEPLOYMENT, 'Warn', text);
  // repeats inside an unknown field are never looked at
  assert.deepEqual(r.warnings, ['duplicate field "metadata.labels"', 'duplicate field "spec"', 'unknown field "bogus"']);
  assert.deepEqual(r.obj, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd', labels: { a: '1', b: '2' } },
    spec: { replicas: 2, template: { spec: { containers: [{ name: 'd', image: 'i' }] } }, paused: true },
  });
});

test('YAML bodies: repeated keys as go-yaml reports them (line of the value), unknown fields in key order', () => {
  const yaml = [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    '  name: cm',
    'zeta: 1',
    'data:',
    '  a: "1"',
    '  a: "2"',
    'alpha: 2',
    '',
  ].join('\n');
  const strict = body(CONFIGMAP, 'Strict', yaml, 'yaml');
  assert.equal(
    strict.error?.message,
    'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: yaml: unmarshal errors:\n  line 8: key "a" already set in map, unknown field "alpha", unknown field "zeta"',
  );
  const warned = body(CONFIGMAP, 'Warn', yaml, 'yaml');
  assert.deepEqual(warned.warnings, ['line 8: key "a" already set in map', 'unknown field "alpha"', 'unknown field "zeta"']);
  assert.deepEqual(warned.obj, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: '2' } });
});

test('go-yaml lines: a nested map repeated reports the line where its value starts; several repeats, nested first', () => {
  const yaml = ['a:', '  x: 1', 'a:', '  z: 1', '  z: 2', 'b: [1]', 'b: {}', ''].join('\n');
  assert.equal(
    yamlDuplicateKeysError(yaml),
    'yaml: unmarshal errors:\n  line 5: key "z" already set in map\n  line 4: key "a" already set in map\n  line 7: key "b" already set in map',
  );
  assert.equal(yamlDuplicateKeysError('a: 1\nb: 2\n'), undefined);
});

test('types are always checked; the first wrong type is the only error reported, whatever the level', () => {
  const cases: [FieldValidationRequest['kind'], object, string][] = [
    [
      DEPLOYMENT,
      { spec: { replicas: '3' } },
      'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32',
    ],
    [CONFIGMAP, { data: { version: 1.5 } }, 'json: cannot unmarshal number into Go struct field ConfigMap.data of type string'],
    [
      DEPLOYMENT,
      { metadata: { labels: { v: 1 } } },
      'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string',
    ],
    [
      POD,
      { spec: { containers: [{ name: 'c', env: [{ name: 'A', value: 1 }] }] } },
      'json: cannot unmarshal number into Go struct field EnvVar.spec.containers.env.value of type string',
    ],
    [
      POD,
      { spec: { containers: [{ name: 'c', ports: [{ containerPort: 80, protocol: 6 }] }] } },
      'json: cannot unmarshal number into Go struct field ContainerPort.spec.containers.ports.protocol of type v1.Protocol',
    ],
    [
      POD,
      { spec: { containers: [{ name: 'c', ports: [{ containerPort: 80.5 }] }] } },
      'json: cannot unmarshal number 80.5 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32',
    ],
    [
      POD,
      { spec: { containers: { name: 'c' } } },
      'json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container',
    ],
    [POD, { spec: 'x' }, 'json: cannot unmarshal string into Go struct field Pod.spec of type v1.PodSpec'],
    [CONFIGMAP, { immutable: 'yes' }, 'json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool'],
    [
      DEPLOYMENT,
      { spec: { strategy: { rollingUpdate: { maxSurge: true } } } },
      'json: cannot unmarshal bool into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32',
    ],
    [POD, { spec: { containers: [{ name: 'c', resources: { limits: { memory: '1mm' } } }] } }, "unable to parse quantity's suffix"],
    [
      POD,
      { spec: { containers: [{ name: 'c', resources: { limits: { memory: true } } }] } },
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ],
    [
      POD,
      { metadata: { creationTimestamp: 'yesterday' } },
      'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"',
    ],
    [
      POD,
      { metadata: { creationTimestamp: 5 } },
      'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string',
    ],
    [{ group: '', version: 'v1', kind: 'Secret' }, { data: { k: 'not base64!' } }, 'illegal base64 data at input byte 3'],
  ];
  for (const [kind, content, message] of cases) {
    const text = JSON.stringify({
      apiVersion: kind.group ? `${kind.group}/${kind.version}` : kind.version,
      kind: kind.kind,
      metadata: { name: 'n' },
      unknownToo: 1,
      ...content,
    });
    for (const level of ['Strict', 'Warn', 'Ignore'] as const) {
      const r = body(kind, level, text);
      assert.deepEqual(
        statusOf(r.error),
        { code: 400, reason: 'BadRequest', message: `${kind.kind} in version "v1" cannot be handled as a ${kind.kind}: ${message}` },
        `${JSON.stringify(content)} ${level}`,
      );
      assert.deepEqual(r.warnings, []);
    }
  }
});

test('a wrong type kept for later loses to an error of a type that decodes itself', () => {
  const text = JSON.stringify({
    kind: 'Pod',
    spec: { priority: 'high', containers: [{ name: 'c', resources: { requests: { cpu: 'lots' } } }] },
  });
  assert.equal(
    body(POD, 'Warn', text).error?.message,
    'Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'',
  );
  const first = JSON.stringify({ kind: 'Pod', spec: { priority: 'high', hostname: 7 } });
  assert.equal(
    body(POD, 'Warn', first).error?.message,
    'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field PodSpec.spec.priority of type int32',
  );
});

test('int-or-string, quantities and timestamps take what their Go types take', () => {
  const ok = JSON.stringify({
    kind: 'Deployment',
    spec: {
      strategy: { rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
      template: {
        spec: {
          containers: [
            { name: 'c', resources: { limits: { cpu: 0.5, memory: '128Mi' }, requests: { cpu: '100m', 'example.com/gpu': 1 } } },
          ],
        },
      },
    },
    metadata: { creationTimestamp: '2024-02-29T23:59:59+01:00' },
  });
  const r = body(DEPLOYMENT, 'Strict', ok);
  assert.equal(r.error, undefined);
});

test('nesting deeper than Go decodes is refused before anything else', () => {
  const n = 10001;
  const text = `{"apiVersion":"v1","kind":"ConfigMap","x":${'['.repeat(n)}${']'.repeat(n)}}`;
  const r = body(CONFIGMAP, 'Ignore', text);
  assert.equal(
    r.error?.message,
    'the object provided is unrecognized (must be of type ConfigMap): couldn\'t get version/kind; json parse error: invalid character \'[\' exceeded max depth ({"apiVersion":"v1","kind":"Con ...)',
  );
  const fine = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{}},"binaryData":{}}`;
  assert.equal(body(CONFIGMAP, 'Strict', fine).error, undefined);
  assert.throws(
    () => checkPatchDepth('application/merge-patch+json', Buffer.from(`{"a":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}`)),
    /error decoding patch: invalid character '\{' exceeded max depth/,
  );
});

test('protobuf bodies are not looked at', () => {
  const req = request(CONFIGMAP, 'Strict');
  const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: {}, bogus: 1 } as unknown as KubeObject;
  validateBodyFields(req, obj, Buffer.from([0x6b, 0x38, 0x73, 0x00]), 'protobuf' as 'json');
  assert.equal((obj as unknown as Record<string, unknown>).bogus, 1);
});

// ---- schema markers (custom resource schemas) ----------------------------------------------

function registryOf(defs: Record<string, SchemaNode>): SchemaRegistry {
  const base = {} as SchemaRegistry;
  return {
    ...base,
    definition: (name: string) => defs[name],
    definitionNameFor: (_g: string, _v: string, kind: string) => (defs[kind] ? kind : undefined),
  };
}

test('x-kubernetes-preserve-unknown-fields keeps what the schema does not name; int-or-string takes both', () => {
  const compiler = new PlanCompiler(
    registryOf({
      Widget: {
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            preserveUnknownFields: true,
            properties: {
              size: { type: 'integer', format: 'int64' },
              port: { intOrString: true, type: 'string', format: 'int-or-string' },
            },
          },
          status: { type: 'object', properties: { ready: { type: 'boolean' } } },
        },
      },
    }),
    { fields: {}, named: {} },
  );
  const plan = compiler.forKind('x', 'v1', 'Widget');
  assert.ok(plan);
  const r = decodeAs(
    plan,
    { spec: { size: 3, port: 'http', extra: { any: ['thing'] } }, status: { ready: true, other: 1 } },
    { dialect: 'json', order: 'document' },
  );
  assert.deepEqual(r.strict, ['unknown field "status.other"']);
  assert.deepEqual(r.value, { spec: { size: 3, port: 'http', extra: { any: ['thing'] } }, status: { ready: true } });
  assert.equal(decodeAs(plan, { spec: { port: 8080 } }, { dialect: 'json', order: 'document' }).error, undefined);
  assert.equal(
    decodeAs(plan, { spec: { port: true } }, { dialect: 'json', order: 'document' }).error,
    'json: cannot unmarshal bool into Go struct field .spec.port of type int32',
  );
  assert.equal(
    decodeAs(plan, { spec: { size: 'big' } }, { dialect: 'json', order: 'document' }).error,
    'json: cannot unmarshal string into Go struct field .spec.size of type int64',
  );
});

test('x-kubernetes-embedded-resource: type meta and ObjectMeta are known, the rest as the schema says', () => {
  const compiler = new PlanCompiler(
    registryOf({
      'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': {
        type: 'object',
        properties: { name: { type: 'string' }, labels: { type: 'object', additionalProperties: { type: 'string' } } },
      },
      Holder: { type: 'object', properties: { template: { type: 'object', embeddedResource: true, preserveUnknownFields: true } } },
    }),
    { fields: {}, named: {} },
  );
  const plan = compiler.forKind('x', 'v1', 'Holder');
  assert.ok(plan);
  const r = decodeAs(
    plan,
    { template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', nme: 'q' }, spec: { anything: true } } },
    { dialect: 'json', order: 'document' },
  );
  assert.deepEqual(r.strict, ['unknown field "template.metadata.nme"']);
  assert.deepEqual(r.value, { template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { anything: true } } });
  assert.match(
    decodeAs(plan, { template: { metadata: { labels: { a: 1 } } } }, { dialect: 'json', order: 'document' }).error ?? '',
    /cannot unmarshal number into Go struct field ObjectMeta\.template\.metadata\.labels of type string/,
  );
});

// ---- PATCH results ------------------------------------------------------------------------

const current = (): KubeObject =>
  ({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c', namespace: 'default' }, data: { a: '1' } }) as KubeObject;

function patched(patchType: string, fieldValidation: FieldValidation, patch: unknown, result: object) {
  const req = { ...request(CONFIGMAP, fieldValidation), patchType, body: Buffer.from(JSON.stringify(patch)) };
  try {
    return { obj: validatePatchedFields(req, { ...current(), ...result } as KubeObject), warnings: req.warnings };
  } catch (err) {
    assert.ok(err instanceof StatusError);
    return { error: err, warnings: req.warnings };
  }
}

test('merge patch: unknown fields in the result are a 422 naming the patched object (Strict), warnings (Warn), dropped always', () => {
  const patch = { dat: { x: 'y' } };
  const strict = patched('application/merge-patch+json', 'Strict', patch, patch);
  const value = '{"apiVersion":"v1","dat":{"x":"y"},"data":{"a":"1"},"kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}}';
  assert.equal(strict.error?.code, 422);
  assert.equal(strict.error?.reason, 'Invalid');
  assert.equal(
    strict.error?.message,
    ` "" is invalid: patch: Invalid value: ${JSON.stringify(value)}: strict decoding error: unknown field "dat"`,
  );
  assert.deepEqual(strict.error?.details?.causes, [
    {
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${JSON.stringify(value)}: strict decoding error: unknown field "dat"`,
      field: 'patch',
    },
  ]);
  const warned = patched('application/merge-patch+json', 'Warn', patch, patch);
  assert.deepEqual(warned.warnings, ['unknown field "dat"']);
  assert.deepEqual(warned.obj, current());
  const ignored = patched('application/merge-patch+json', 'Ignore', patch, patch);
  assert.deepEqual(ignored.warnings, []);
  assert.deepEqual(ignored.obj, current());
});

test('merge patch: repeated members of the patch come first; wrong types are a 422 whatever the level', () => {
  const req = {
    ...request(CONFIGMAP, 'Warn'),
    patchType: 'application/merge-patch+json',
    body: Buffer.from('{"data":{"b":"1","b":"2"},"dat":1}'),
  };
  validatePatchedFields(req, { ...current(), data: { a: '1', b: '2' }, dat: 1 } as KubeObject);
  assert.deepEqual(req.warnings, ['duplicate field "data.b"', 'unknown field "dat"']);
  const wrong = patched('application/merge-patch+json', 'Ignore', { data: { a: 2 } }, { data: { a: 2 } });
  assert.equal(wrong.error?.code, 422);
  assert.match(wrong.error?.message ?? '', /: json: cannot unmarshal number into Go struct field ConfigMap\.data of type string$/);
});

test("JSON patch: unknown operation members are the patch's own strict errors", () => {
  const ops = [{ op: 'add', path: '/data/b', value: 'x', valeu: 'y' }];
  const r = patched('application/json-patch+json', 'Warn', ops, { data: { a: '1', b: 'x' } });
  assert.deepEqual(r.warnings, ['json patch unknown field "[0].valeu"']);
});

test("strategic merge patch: the converter's errors and sorted unknown fields, the patch shown as Go prints it", () => {
  const wrong = patched('application/strategic-merge-patch+json', 'Strict', { data: { a: 2 } }, { data: { a: 2 } });
  assert.equal(wrong.error?.message, ' "" is invalid: patch: Invalid value: "map[data:map[a:2]]": cannot convert int64 to string');
  const unknown = patched('application/strategic-merge-patch+json', 'Strict', { zz: 1, aa: 1 }, { zz: 1, aa: 1 });
  assert.equal(
    unknown.error?.message,
    ' "" is invalid: patch: Invalid value: "map[aa:1 zz:1]": strict decoding error: unknown field "aa", unknown field "zz"',
  );
  const req = {
    ...request(DEPLOYMENT, 'Strict'),
    patchType: 'application/strategic-merge-patch+json',
    body: Buffer.from('{"spec":{"replicas":"3"}}'),
  };
  assert.throws(
    () => validatePatchedFields(req, { kind: 'Deployment', apiVersion: 'apps/v1', metadata: {}, spec: { replicas: '3' } } as KubeObject),
    (err: StatusError) => err.message === ' "" is invalid: patch: Invalid value: "map[spec:map[replicas:3]]": unrecognized type: int32',
  );
});

// ---- the Go behaviours underneath --------------------------------------------------------

test('Go time.Parse errors for RFC3339 and RFC3339 with microseconds', () => {
  assert.equal(goTimeParseError(RFC3339, '2024-01-02T03:04:05Z'), undefined);
  assert.equal(goTimeParseError(RFC3339, '2024-01-02T03:04:05.123+05:30'), undefined);
  assert.equal(goTimeParseError(RFC3339, '2024-01-02'), 'parsing time "2024-01-02" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "T"');
  assert.equal(goTimeParseError(RFC3339, '2024-02-30T00:00:00Z'), 'parsing time "2024-02-30T00:00:00Z": day out of range');
  assert.equal(goTimeParseError(RFC3339, '2024-01-01T25:00:00Z'), 'parsing time "2024-01-01T25:00:00Z": hour out of range');
  assert.equal(goTimeParseError(RFC3339, '2024-01-01T00:00:00Zjunk'), 'parsing time "2024-01-01T00:00:00Zjunk": extra text: "junk"');
  assert.equal(
    goTimeParseError(RFC3339, '2024-01-01T00:00:00'),
    'parsing time "2024-01-01T00:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00"',
  );
  assert.equal(goTimeParseError(RFC3339_MICRO, '2024-01-01T00:00:00.123456Z'), undefined);
  assert.equal(
    goTimeParseError(RFC3339_MICRO, '2024-01-01T00:00:00Z'),
    'parsing time "2024-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"',
  );
});

test('quantities as ParseQuantity reads them', () => {
  for (const ok of ['1', '0', '100m', '1.5Gi', '1e3', '-2', '+3k', '0.000001', '.5', '5.']) assert.equal(quantityError(ok), undefined, ok);
  assert.equal(quantityError('1mm'), "unable to parse quantity's suffix");
  assert.equal(quantityError('1Gb'), "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  assert.equal(quantityError('1 Gi'), "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  assert.equal(quantityError(''), "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  assert.equal(quantityError('1e'), "unable to parse quantity's suffix");
});
