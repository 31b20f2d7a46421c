import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../storage/interface.js';
import { errorString } from '../../machinery/validation/field-error.js';
import { crdStrategy } from './crd-strategy.js';
import { validateCRD, validateCRDUpdate } from './crd-validation.js';

function crd(over: Record<string, unknown> = {}, versions?: unknown[]): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: versions ?? [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object' } } } },
        },
      ],
      ...over,
    },
  } as unknown as KubeObject;
}

test('a valid CRD passes', () => {
  assert.deepEqual(validateCRD(crd()).map(errorString), []);
});

test('group, name, scope and names are checked', () => {
  const bad = crd({ group: 'example', scope: 'Everywhere', names: { plural: 'Widgets', kind: 'Widget', listKind: 'Widget' } });
  assert.deepEqual(validateCRD(bad).map(errorString), [
    'metadata.name: Invalid value: "widgets.example.com": must be spec.names.plural+"."+spec.group',
    'spec.group: Invalid value: "example": should be a domain with at least one dot',
    'spec.scope: Unsupported value: "Everywhere": supported values: "Cluster", "Namespaced"',
    "spec.names.plural: Invalid value: \"Widgets\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    'spec.names.listKind: Invalid value: "Widget": kind and listKind may not be the same',
  ]);
});

test('versions: exactly one storage version, schemas required and structural', () => {
  const two = crd({}, [
    { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
    { name: 'v2', served: true, storage: true },
  ]);
  assert.deepEqual(validateCRD(two).map(errorString), [
    'spec.versions: Invalid value: []string{"v1", "v2"}: must have exactly one version marked as storage version',
    'spec.versions[1].schema.openAPIV3Schema: Required value: schemas are required',
  ]);
  const untyped = crd({}, [
    {
      name: 'v1',
      served: true,
      storage: true,
      schema: { openAPIV3Schema: { type: 'object', properties: { spec: { properties: {} }, s: { type: 'string', pattern: '(' } } } },
    },
  ]);
  assert.deepEqual(validateCRD(untyped).map(errorString), [
    'spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields',
    'spec.versions[0].schema.openAPIV3Schema.properties[s].pattern: Invalid value: "(": must be a valid regular expression',
  ]);
});

test('defaults and storedVersions on create; scope is immutable', () => {
  const s = crdStrategy();
  const obj = crd({ names: { plural: 'widgets', kind: 'Widget' } });
  const c = {
    request: { user: { username: 'u', groups: [] }, namespace: '', dryRun: false, fieldValidation: 'Strict' as const, warnings: [] },
    now: new Date(),
    info: {} as never,
  };
  s.applyDefaults(obj, c);
  s.prepareForCreate(obj, c);
  const spec = obj.spec as { names: Record<string, string>; conversion: unknown };
  assert.equal(spec.names.listKind, 'WidgetList');
  assert.equal(spec.names.singular, 'widget');
  assert.deepEqual(spec.conversion, { strategy: 'None' });
  assert.deepEqual(obj.status, { storedVersions: ['v1'] });
  const changed = structuredClone(obj);
  (changed.spec as { scope: string }).scope = 'Cluster';
  assert.ok(s.validateUpdate(changed, obj, c).map(errorString).includes('spec.scope: Invalid value: "Cluster": field is immutable'));
});

test('groups of the Kubernetes project need the approval annotation', () => {
  const s = crdStrategy();
  const c = {
    request: { user: { username: 'u', groups: [] }, namespace: '', dryRun: false, fieldValidation: 'Strict' as const, warnings: [] },
    now: new Date(),
    info: {} as never,
  };
  const obj = crd({ group: 'x.k8s.io' });
  obj.metadata.name = 'widgets.x.k8s.io';
  assert.deepEqual(s.validate(obj, c).map(errorString), [
    'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111',
  ]);
  obj.metadata.annotations = { 'api-approved.kubernetes.io': 'unapproved, experimental-only' };
  assert.deepEqual(s.validate(obj, c), []);
});

test('list types and defaults are checked in the schema', () => {
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          replicas: { type: 'integer', default: 'three' },
          ports: { type: 'array', items: { type: 'object' }, 'x-kubernetes-list-type': 'map' },
          names: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'bag' },
        },
      },
    },
  };
  const got = validateCRD(crd({}, [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }])).map(errorString);
  const at = 'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties';
  assert.deepEqual(got, [
    `${at}[replicas].default: Invalid value: "string": spec.replicas in body must be of type integer: "three"`,
    `${at}[ports].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`,
    `${at}[names].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"`,
  ]);
});

test('preserveUnknownFields: true is refused in v1', () => {
  assert.deepEqual(validateCRD(crd({ preserveUnknownFields: true })).map(errorString), [
    'spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
  ]);
});

test('CEL rules at write time: result types, messageExpression, oldSelf where values correlate, optionalOldSelf', () => {
  const rules = (spec: Record<string, unknown>) =>
    crd({}, [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }]);
  const at = 'spec.versions[0].schema.openAPIV3Schema.properties[spec]';
  const spec = {
    type: 'object',
    properties: {
      name: { type: 'string', maxLength: 10 },
      tags: {
        type: 'array',
        maxItems: 5,
        items: { type: 'string', maxLength: 5, 'x-kubernetes-validations': [{ rule: 'self == oldSelf' }] },
      },
      ports: {
        type: 'array',
        maxItems: 5,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: {
          type: 'object',
          properties: { name: { type: 'string', maxLength: 5 } },
          'x-kubernetes-validations': [{ rule: 'self.name == oldSelf.name' }],
        },
      },
    },
    'x-kubernetes-validations': [
      { rule: 'self.name' },
      { rule: "self.name != ''", messageExpression: 'self.name.size()' },
      { rule: "self.name != ''", messageExpression: 'self.nosuch' },
      { rule: "self.name != ''", optionalOldSelf: true },
      {
        rule: 'oldSelf.hasValue() ? self.name == oldSelf.value().name : true',
        optionalOldSelf: true,
        messageExpression: "'name ' + self.name + ' is immutable'",
      },
    ],
  };
  assert.deepEqual(validateCRD(rules(spec)).map(errorString), [
    `${at}.x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.name", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: cel expression must evaluate to a bool`,
    `${at}.x-kubernetes-validations[1].messageExpression: Invalid value: apiextensions.ValidationRule{Rule:"self.name != ''", Message:"", MessageExpression:"self.name.size()", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: messageExpression must evaluate to a string`,
    `${at}.x-kubernetes-validations[2].messageExpression: Invalid value: apiextensions.ValidationRule{Rule:"self.name != ''", Message:"", MessageExpression:"self.nosuch", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: messageExpression compilation failed: ERROR: <input>:1:5: undefined field 'nosuch'\n | self.nosuch\n | ....^`,
    `${at}.x-kubernetes-validations[3].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule`,
    `${at}.properties[tags].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ${at}.properties[tags]`,
  ]);
});

test('CEL expressions the CRD already has compile with the stored-expression libraries on update', () => {
  const withRule = (rule: string) =>
    crd({}, [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', properties: { v: { type: 'string', maxLength: 20 } }, 'x-kubernetes-validations': [{ rule }] },
            },
          },
        },
      },
    ]);
  const semverRule = "isSemver(self.v) && semver(self.v).isGreaterThan(semver('1.0.0'))";
  // semver is a library of compatibility version 1.33: not for new expressions
  assert.match(
    validateCRD(withRule(semverRule)).map(errorString).join('\n'),
    /compilation failed: ERROR: <input>:1:9: undeclared reference to 'isSemver' \(in container ''\)/,
  );
  assert.deepEqual(validateCRDUpdate(withRule(semverRule), withRule(semverRule)).map(errorString), []);
  assert.match(validateCRDUpdate(withRule(semverRule), withRule('true')).map(errorString).join('\n'), /undeclared reference to 'isSemver'/);
});
