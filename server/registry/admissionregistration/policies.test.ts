import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../storage/interface.js';
import { cause, kind } from '../testing/strategies.js';
import { validateMutatingAdmissionPolicy } from './mutating-policies.js';

const G = 'admissionregistration.k8s.io';
const policies = kind(G, 'v1', 'validatingadmissionpolicies');
const bindings = kind(G, 'v1', 'validatingadmissionpolicybindings');

const rule = { operations: ['CREATE', 'UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] };

function policy(spec: Record<string, unknown>, name = 'p'): KubeObject {
  return { apiVersion: `${G}/v1`, kind: 'ValidatingAdmissionPolicy', metadata: { name }, spec } as KubeObject;
}

function binding(spec: Record<string, unknown>): KubeObject {
  return { apiVersion: `${G}/v1`, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'b' }, spec } as KubeObject;
}

describe('ValidatingAdmissionPolicy', () => {
  it('gets kube v1 defaults and an empty status', () => {
    const out = policies.defaulted(
      policy({ matchConstraints: { resourceRules: [rule] }, validations: [{ expression: 'object.spec.replicas <= 5' }] }),
    );
    const spec = out.spec as Record<string, any>;
    assert.equal(spec.failurePolicy, 'Fail');
    assert.deepEqual(spec.matchConstraints, {
      resourceRules: [{ ...rule, scope: '*' }],
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
    });
    assert.deepEqual(out.status, {});
    assert.equal(out.metadata.generation, 1);
  });

  it('accepts a policy with params, variables, conditions, messages and audit annotations', () => {
    const p = policy({
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConstraints: { resourceRules: [{ ...rule, resourceNames: ['a', 'b'] }], excludeResourceRules: [rule] },
      matchConditions: [{ name: 'not-system', expression: "request.userInfo.username != 'system:x'" }],
      variables: [{ name: 'limit', expression: 'int(params.data.limit)' }],
      validations: [
        {
          expression: 'object.spec.replicas <= variables.limit',
          messageExpression: "'too many: ' + string(object.spec.replicas)",
          reason: 'Invalid',
        },
      ],
      auditAnnotations: [{ key: 'replicas', valueExpression: 'string(object.spec.replicas)' }],
    });
    assert.deepEqual(policies.createCauses(p), []);
  });

  it('requires matchConstraints with resourceRules and validations or auditAnnotations', () => {
    assert.deepEqual(policies.createCauses(policy({})), [
      cause('FieldValueRequired', 'spec.matchConstraints', 'Required value'),
      cause('FieldValueRequired', 'spec.validations', 'Required value: validations or auditAnnotations must contain at least one item'),
      cause(
        'FieldValueRequired',
        'spec.auditAnnotations',
        'Required value: validations or auditAnnotations must contain at least one item',
      ),
    ]);
    assert.deepEqual(policies.createCauses(policy({ matchConstraints: {}, validations: [{ expression: 'true' }] })), [
      cause('FieldValueRequired', 'spec.matchConstraints.resourceRules', 'Required value'),
    ]);
  });

  it("refuses bad enums, paramKind, expressions, messages and audit annotations with kube's messages", () => {
    const p = policy({
      failurePolicy: 'Never',
      paramKind: { apiVersion: 'a/b/c', kind: 'Config_Map' },
      matchConstraints: { matchPolicy: 'Close', resourceRules: [{ ...rule, resourceNames: ['x', 'x', 'a/b'] }] },
      variables: [{ name: 'in', expression: '1 +' }],
      validations: [
        { expression: '' },
        { expression: '1', message: 'two\nlines', reason: 'Teapot' },
        { expression: 'true', messageExpression: '1', message: '  ' },
      ],
      auditAnnotations: [
        { key: 'k', valueExpression: '1' },
        { key: 'k', valueExpression: '' },
      ],
    });
    assert.deepEqual(policies.createCauses(p), [
      cause('FieldValueNotSupported', 'spec.failurePolicy', 'Unsupported value: "Never": supported values: "Fail", "Ignore"'),
      cause('FieldValueInvalid', 'spec.paramKind.apiVersion', 'Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c'),
      cause(
        'FieldValueInvalid',
        'spec.paramKind.kind',
        `Invalid value: "Config_Map": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
      ),
      cause(
        'FieldValueNotSupported',
        'spec.matchConstraints.matchPolicy',
        'Unsupported value: "Close": supported values: "Equivalent", "Exact"',
      ),
      cause('FieldValueDuplicate', 'spec.matchConstraints.resourceRules[0].resourceNames[1]', 'Duplicate value: "x"'),
      cause('FieldValueInvalid', 'spec.matchConstraints.resourceRules[0].resourceNames[2]', `Invalid value: "a/b": may not contain '/'`),
      cause('FieldValueInvalid', 'spec.variables[0].name', 'Invalid value: "in": name is not a valid CEL identifier'),
      cause(
        'FieldValueInvalid',
        'spec.variables[0].expression',
        `Invalid value: "1 +": compilation failed: ERROR: <input>:1:4: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | 1 +\n | ...^`,
      ),
      cause('FieldValueRequired', 'spec.validations[0].expression', 'Required value: expression is not specified'),
      cause('FieldValueInvalid', 'spec.validations[1].expression', 'Invalid value: "1": must evaluate to bool but got int'),
      cause('FieldValueInvalid', 'spec.validations[1].message', 'Invalid value: "two\\nlines": message must not contain line breaks'),
      cause(
        'FieldValueNotSupported',
        'spec.validations[1].reason',
        'Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge"',
      ),
      cause('FieldValueInvalid', 'spec.validations[2].messageExpression', 'Invalid value: "1": must evaluate to string but got int'),
      cause('FieldValueInvalid', 'spec.validations[2].message', 'Invalid value: "  ": message must be non-empty if specified'),
      cause(
        'FieldValueInvalid',
        'spec.auditAnnotations[0].valueExpression',
        'Invalid value: "1": must evaluate to one of [string null_type] but got int',
      ),
      cause('FieldValueRequired', 'spec.auditAnnotations[1].valueExpression', 'Required value: valueExpression is not specified'),
      cause('FieldValueDuplicate', 'spec.auditAnnotations[1].key', 'Duplicate value: "k"'),
    ]);
  });

  it('params and variables are known only when declared', () => {
    const p = policy({ matchConstraints: { resourceRules: [rule] }, validations: [{ expression: "params.x == 1 && variables.y == 'a'" }] });
    assert.deepEqual(policies.createCauses(p), [
      cause(
        'FieldValueInvalid',
        'spec.validations[0].expression',
        "Invalid value: \"params.x == 1 && variables.y == 'a'\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1 && variables.y == 'a'\n | ^",
      ),
    ]);
  });

  it('variables see only the variables declared before them; match conditions see none', () => {
    const p = policy({
      matchConstraints: { resourceRules: [rule] },
      matchConditions: [{ name: 'c', expression: 'variables.a' }],
      variables: [
        { name: 'a', expression: 'variables.b > 1' },
        { name: 'b', expression: 'variables.a' },
      ],
      validations: [{ expression: 'variables.a && variables.c' }],
    });
    assert.deepEqual(policies.createCauses(p), [
      cause(
        'FieldValueInvalid',
        'spec.matchConditions[0].expression',
        "Invalid value: \"variables.a\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'variables' (in container '')\n | variables.a\n | ^",
      ),
      cause(
        'FieldValueInvalid',
        'spec.variables[0].expression',
        'Invalid value: "variables.b > 1": compilation failed: ERROR: <input>:1:10: undefined field \'b\'\n | variables.b > 1\n | .........^',
      ),
      cause(
        'FieldValueInvalid',
        'spec.validations[0].expression',
        'Invalid value: "variables.a && variables.c": compilation failed: ERROR: <input>:1:25: undefined field \'c\'\n | variables.a && variables.c\n | ........................^',
      ),
    ]);
  });

  it("variables are typed by their expressions: misuse is refused in cel-go's words", () => {
    const p = policy({
      matchConstraints: { resourceRules: [rule] },
      variables: [
        { name: 'name', expression: 'object.metadata.name + ""' },
        { name: 'replicas', expression: 'variables.name + 1' },
        { name: 'broken', expression: 'params.x' },
        { name: 'ok', expression: 'variables.broken' },
      ],
      validations: [{ expression: 'variables.name + 1 > 0', messageExpression: 'variables.name.size()' }],
      auditAnnotations: [{ key: 'k', valueExpression: 'variables.ok' }],
    });
    assert.deepEqual(policies.createCauses(p), [
      cause(
        'FieldValueInvalid',
        'spec.variables[1].expression',
        "Invalid value: \"variables.name + 1\": compilation failed: ERROR: <input>:1:16: found no matching overload for '_+_' applied to '(string, int)'\n | variables.name + 1\n | ...............^",
      ),
      cause(
        'FieldValueInvalid',
        'spec.variables[2].expression',
        "Invalid value: \"params.x\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x\n | ^",
      ),
      cause(
        'FieldValueInvalid',
        'spec.validations[0].expression',
        "Invalid value: \"variables.name + 1 > 0\": compilation failed: ERROR: <input>:1:16: found no matching overload for '_+_' applied to '(string, int)'\n | variables.name + 1 > 0\n | ...............^",
      ),
      cause(
        'FieldValueInvalid',
        'spec.validations[0].messageExpression',
        'Invalid value: "variables.name.size()": must evaluate to string but got int',
      ),
      // `ok` is `broken`, which did not compile and is dyn: so is `ok`, and it may be a string
    ]);
  });

  it('an audit annotation key must make a qualified name with the policy name', () => {
    const p = policy({ matchConstraints: { resourceRules: [rule] }, auditAnnotations: [{ key: 'bad key', valueExpression: "'x'" }] });
    const causes = policies.createCauses(p);
    assert.equal(causes.length, 1);
    assert.equal(causes[0]!.field, 'spec.auditAnnotations[0].key');
    assert.match(causes[0]!.message ?? '', /^Invalid value: "p\/bad key": name part must consist of alphanumeric characters/);
  });
});

describe('MutatingAdmissionPolicy', () => {
  it('mutations see the variables typed by their expressions', () => {
    const p = {
      apiVersion: `${G}/v1alpha1`,
      kind: 'MutatingAdmissionPolicy',
      metadata: { name: 'm' },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          matchPolicy: 'Equivalent',
          namespaceSelector: {},
          objectSelector: {},
          resourceRules: [{ ...rule, scope: '*' }],
        },
        variables: [{ name: 'label', expression: "'team-' + string(object.metadata.name)" }],
        mutations: [
          {
            patchType: 'JSONPatch',
            jsonPatch: { expression: "[JSONPatch{op: 'add', path: '/metadata/labels/team', value: variables.label}]" },
          },
          {
            patchType: 'ApplyConfiguration',
            applyConfiguration: { expression: 'Object{metadata: Object.metadata{generation: variables.label + 1}}' },
          },
        ],
      },
    } as KubeObject;
    assert.deepEqual(
      validateMutatingAdmissionPolicy(p).map((e) => [e.field, e.detail]),
      [
        [
          'spec.mutations[1].applyConfiguration.expression',
          "compilation failed: ERROR: <input>:1:62: found no matching overload for '_+_' applied to '(string, int)'\n | Object{metadata: Object.metadata{generation: variables.label + 1}}\n | .............................................................^",
        ],
      ],
    );
  });
});

describe('ValidatingAdmissionPolicyBinding', () => {
  it('defaults matchResources when given, and accepts a valid binding', () => {
    const out = bindings.defaulted(
      binding({ policyName: 'p', validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { a: 'b' } } } }),
    );
    assert.deepEqual((out.spec as Record<string, unknown>).matchResources, {
      namespaceSelector: { matchLabels: { a: 'b' } },
      matchPolicy: 'Equivalent',
      objectSelector: {},
    });
    assert.deepEqual(bindings.createCauses(out), []);
    const noMatch = bindings.defaulted(
      binding({
        policyName: 'p',
        validationActions: ['Warn', 'Audit'],
        paramRef: { name: 'cm', namespace: 'x', parameterNotFoundAction: 'Allow' },
      }),
    );
    assert.equal((noMatch.spec as Record<string, unknown>).matchResources, undefined);
    assert.deepEqual(bindings.createCauses(noMatch), []);
  });

  it('refuses what kube refuses', () => {
    assert.deepEqual(bindings.createCauses(binding({})), [
      cause('FieldValueRequired', 'spec.policyName', 'Required value'),
      cause('FieldValueRequired', 'spec.validationActions', 'Required value: at least one validation action is required'),
    ]);
    assert.deepEqual(
      bindings.createCauses(
        binding({
          policyName: 'Bad_Name',
          validationActions: ['Deny', 'Warn', 'Deny', 'Block'],
          paramRef: { name: 'a', selector: {}, parameterNotFoundAction: 'Ignore' },
          matchResources: { matchPolicy: 'Close' },
        }),
      ),
      [
        cause(
          'FieldValueInvalid',
          'spec.policyName',
          `Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
        ),
        cause('FieldValueForbidden', 'spec.paramRef.name', 'Forbidden: name and selector are mutually exclusive'),
        cause('FieldValueForbidden', 'spec.paramRef.selector', 'Forbidden: name and selector are mutually exclusive'),
        cause(
          'FieldValueNotSupported',
          'spec.paramRef.parameterNotFoundAction',
          'Unsupported value: "Ignore": supported values: "Deny", "Allow"',
        ),
        cause(
          'FieldValueNotSupported',
          'spec.matchResouces.matchPolicy',
          'Unsupported value: "Close": supported values: "Equivalent", "Exact"',
        ),
        cause('FieldValueDuplicate', 'spec.validationActions[2]', 'Duplicate value: "Deny"'),
        cause(
          'FieldValueNotSupported',
          'spec.validationActions[3]',
          'Unsupported value: "Block": supported values: "Audit", "Deny", "Warn"',
        ),
        cause(
          'FieldValueInvalid',
          'spec.validationActions',
          'Invalid value: []admissionregistration.ValidationAction{"Deny", "Warn", "Deny", "Block"}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
        ),
      ],
    );
    assert.deepEqual(bindings.createCauses(binding({ policyName: 'p', validationActions: ['Deny'], paramRef: {} })), [
      cause('FieldValueRequired', 'spec.paramRef', 'Required value: one of name or selector must be specified'),
      cause('FieldValueRequired', 'spec.paramRef.parameterNotFoundAction', 'Required value'),
    ]);
  });
});
