import assert from 'node:assert/strict';
import { test } from 'node:test';
import { customResourceSchema, servedKindSchemas, type KindSchemas } from './kind-schemas.js';
import { generatedTypeName, kindsToCheck, typeCheckPolicy } from './typechecking.js';
import type { PolicySpec } from './types.js';

const served: Record<string, { group: string; version: string; kind: string }> = {
  'apps/v1/deployments': { group: 'apps', version: 'v1', kind: 'Deployment' },
  '/v1/configmaps': { group: '', version: 'v1', kind: 'ConfigMap' },
  '/v1/pods': { group: '', version: 'v1', kind: 'Pod' },
};
const builtin = servedKindSchemas({ lookup: () => undefined, all: () => [] });
const kinds: KindSchemas = { kindFor: (g, v, r) => served[`${g}/${v}/${r}`], schemaFor: (k) => builtin.schemaFor(k) };

const deployments = { apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'], operations: ['CREATE' as const] };
const configmaps = { apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], operations: ['CREATE' as const] };

const check = (spec: PolicySpec) => typeCheckPolicy(spec, kinds);

test('the kinds to check: named by the rules, wildcards and subresources skipped, sorted', () => {
  const spec: PolicySpec = {
    matchConstraints: {
      resourceRules: [
        { ...deployments, resources: ['deployments', 'deployments/scale', '*'] },
        { ...configmaps, resources: ['pods', 'configmaps', 'nosuch'] },
        { ...configmaps, apiGroups: ['*'] },
      ],
    },
  };
  assert.deepEqual(
    kindsToCheck(spec, kinds).map((k) => k.kind),
    ['ConfigMap', 'Pod', 'Deployment'],
  );
  assert.deepEqual(kindsToCheck({}, kinds), []);
});

test('a missing field is a warning per kind, with the kind as Go prints it and cel-go issue text', () => {
  const warnings = check({
    matchConstraints: { resourceRules: [deployments, configmaps] },
    validations: [
      { expression: 'object.spec.replicas > 1', messageExpression: "'n: ' + object.metadata.nosuch" },
      { expression: "object.metadata.name != ''" },
    ],
  });
  assert.deepEqual(warnings, [
    {
      fieldRef: 'spec.validations[0].expression',
      warning: "/v1, Kind=ConfigMap: ERROR: <input>:1:7: undefined field 'spec'\n | object.spec.replicas > 1\n | ......^\n",
    },
    {
      fieldRef: 'spec.validations[0].messageExpression',
      warning:
        "/v1, Kind=ConfigMap: ERROR: <input>:1:24: undefined field 'nosuch'\n | 'n: ' + object.metadata.nosuch\n | .......................^\n\n" +
        "apps/v1, Kind=Deployment: ERROR: <input>:1:24: undefined field 'nosuch'\n | 'n: ' + object.metadata.nosuch\n | .......................^\n",
    },
  ]);
});

test('params from paramKind, request, namespaceObject, authorizer and variables are typed', () => {
  const spec: PolicySpec = {
    matchConstraints: { resourceRules: [deployments] },
    paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    variables: [
      { name: 'replicas', expression: 'object.spec.replicas' },
      { name: 'names', expression: 'object.spec.template.spec.containers.map(c, c.name)' },
    ],
    validations: [
      { expression: "variables.replicas <= int(params.data['max']) && variables.names.all(n, n != '')" },
      {
        expression: "request.userInfo.groups.exists(g, g == 'x') && request.namespace != '' && namespaceObject.metadata.labels['a'] == 'b'",
      },
      { expression: "authorizer.group('apps').resource('deployments').check('get').allowed()" },
      { expression: "variables.replicas == 'x'" },
      { expression: 'params.spec' },
      { expression: 'request.nosuch' },
    ],
  };
  assert.deepEqual(
    check(spec).map((w) => [w.fieldRef, w.warning.split('\n')[0]]),
    [
      [
        'spec.validations[3].expression',
        "apps/v1, Kind=Deployment: ERROR: <input>:1:20: found no matching overload for '_==_' applied to '(int, string)'",
      ],
      ['spec.validations[4].expression', "apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'spec'"],
      ['spec.validations[5].expression', "apps/v1, Kind=Deployment: ERROR: <input>:1:8: undefined field 'nosuch'"],
    ],
  );
});

test('a variable of an object type is dyn, as kube declares it; a list keeps its element type', () => {
  const spec: PolicySpec = {
    matchConstraints: { resourceRules: [deployments] },
    variables: [
      { name: 'spec', expression: 'object.spec' },
      { name: 'names', expression: 'object.spec.template.spec.containers.map(c, c.name)' },
    ],
    validations: [{ expression: 'variables.spec.nosuch == 1' }, { expression: 'variables.names[0] == 1' }],
  };
  assert.deepEqual(
    check(spec).map((w) => [w.fieldRef, w.warning.split('\n')[0]]),
    [
      [
        'spec.validations[1].expression',
        "apps/v1, Kind=Deployment: ERROR: <input>:1:20: found no matching overload for '_==_' applied to '(string, int)'",
      ],
    ],
  );
});

test('without paramKind there is no params; a kind without a schema is not checked', () => {
  assert.deepEqual(
    check({ matchConstraints: { resourceRules: [deployments] }, validations: [{ expression: 'params.x' }] }).map(
      (w) => w.warning.split('\n')[0],
    ),
    ["apps/v1, Kind=Deployment: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')"],
  );
  const unknown: KindSchemas = { kindFor: () => ({ group: 'example.com', version: 'v1', kind: 'Widget' }), schemaFor: () => undefined };
  assert.deepEqual(
    typeCheckPolicy({ matchConstraints: { resourceRules: [deployments] }, validations: [{ expression: 'object.nosuch' }] }, unknown),
    [],
  );
});

test('custom resources are checked against their CRD version schema, with the full ObjectMeta', () => {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      names: { kind: 'Widget' },
      versions: [
        {
          name: 'v1',
          schema: {
            openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } },
          },
        },
      ],
    },
  };
  const widgets: KindSchemas = servedKindSchemas(
    { lookup: (g, v, r) => (r === 'widgets' ? ({ info: { group: g, version: v, kind: 'Widget' } } as never) : undefined), all: () => [] },
    (gvk) => customResourceSchema([crd], gvk),
  );
  const spec: PolicySpec = {
    matchConstraints: {
      resourceRules: [{ apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets'], operations: ['CREATE'] }],
    },
    validations: [{ expression: "object.spec.size < 10 && object.metadata.labels['a'] == 'b'" }, { expression: 'object.spec.colour' }],
  };
  assert.deepEqual(
    typeCheckPolicy(spec, widgets).map((w) => [w.fieldRef, w.warning.split('\n')[0]]),
    [['spec.validations[1].expression', "example.com/v1, Kind=Widget: ERROR: <input>:1:12: undefined field 'colour'"]],
  );
});

test("object types in warnings are named as kube generates them: kind and number, '.@idx', '.@elem'; library types by kube's names", () => {
  const spec: PolicySpec = {
    matchConstraints: { resourceRules: [deployments] },
    paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    validations: [
      { expression: 'object.spec + 1 > 0' },
      { expression: 'object.spec.template.spec.containers[0] + 1 > 0' },
      { expression: 'object.metadata.labels + params.metadata == 1' },
      { expression: "quantity('1') + authorizer == 1" },
    ],
  };
  const deployment = generatedTypeName({ group: 'apps', version: 'v1', kind: 'Deployment' });
  const configMap = generatedTypeName({ group: '', version: 'v1', kind: 'ConfigMap' });
  assert.match(deployment, /^Deployment\d{1,9}$/);
  // the same kind always gets the same name: every replica writes the same warnings
  assert.equal(generatedTypeName({ group: 'apps', version: 'v1', kind: 'Deployment' }), deployment);
  const first = (w: { warning: string }) => w.warning.split('\n')[0];
  assert.deepEqual(check(spec).map(first), [
    `apps/v1, Kind=Deployment: ERROR: <input>:1:13: found no matching overload for '_+_' applied to '(${deployment}.spec, int)'`,
    `apps/v1, Kind=Deployment: ERROR: <input>:1:41: found no matching overload for '_+_' applied to '(${deployment}.spec.template.spec.containers.@idx, int)'`,
    `apps/v1, Kind=Deployment: ERROR: <input>:1:24: found no matching overload for '_+_' applied to '(map(string, string), ${configMap}.metadata)'`,
    "apps/v1, Kind=Deployment: ERROR: <input>:1:15: found no matching overload for '_+_' applied to '(kubernetes.Quantity, kubernetes.authorization.Authorizer)'",
  ]);
});
