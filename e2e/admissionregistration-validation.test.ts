// admissionregistration.k8s.io/v1 defaulting and validation seen through kubectl 1.33: an
// invalid ValidatingWebhookConfiguration is refused by `kubectl apply` with kube's 422 lines, a
// valid one shows kube's defaults in `get -o yaml`, a mutating webhook gets reinvocationPolicy
// Never, an update to an invalid timeout is refused; a ValidatingAdmissionPolicy whose
// expression does not compile and a binding with both Deny and Warn are refused, valid ones
// show their defaults; CEL compile errors in cel-go's words (an undeclared variable, the tree
// depth limit, a wide caret, the recovery lookahead limit); variables typed by their expressions,
// so misusing one is refused.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectl, kubectlOk, startKapi, type KapiProcess } from './harness.js';

const G = 'admissionregistration.k8s.io';

/** a webhook that matches nothing ever created here, so it never gets called */
function hook(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'never.example.com',
    clientConfig: { service: { name: 'hooks', namespace: 'default', path: '/validate' } },
    rules: [{ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['nothings'] }],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    ...extra,
  };
}

function doc(kind: string, name: string, body: Record<string, unknown>): string {
  return JSON.stringify({ apiVersion: `${G}/v1`, kind, metadata: { name }, ...body });
}

describe('admissionregistration validation and defaults with kubectl 1.33', { timeout: 300_000 }, () => {
  let kapi: KapiProcess;
  const k = (args: string[], input?: string) => kubectl(args, { kubeconfig: kapi.kubeconfig, input });
  const kOk = (args: string[], input?: string) => kubectlOk(args, { kubeconfig: kapi.kubeconfig, input });

  before(async () => {
    kapi = await startKapi();
  });

  after(async () => {
    await kapi?.stop();
  });

  it("kubectl apply of an invalid ValidatingWebhookConfiguration is refused with kube's messages", async () => {
    const bad = doc('ValidatingWebhookConfiguration', 'bad-hooks', {
      webhooks: [
        hook({
          name: 'deny',
          sideEffects: 'Unknown',
          timeoutSeconds: 40,
          clientConfig: { url: 'http://hooks.example.com/x' },
          admissionReviewVersions: undefined,
        }),
      ],
    });
    const r = await k(['apply', '-f', '-'], bad);
    assert.notEqual(r.code, 0);
    // kubectl renders a 422 with causes as one `* <field>: <message>` line per cause
    assert.ok(r.stderr.includes('The ValidatingWebhookConfiguration "bad-hooks" is invalid: \n* webhooks[0].name'), r.stderr);
    for (const line of [
      'webhooks[0].name: Invalid value: "deny": should be a domain with at least three segments separated by dots',
      'webhooks[0].sideEffects: Unsupported value: "Unknown": supported values: "None", "NoneOnDryRun"',
      'webhooks[0].timeoutSeconds: Invalid value: 40: the timeout value must be between 1 and 30 seconds',
      `webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
      'webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1',
    ]) {
      assert.ok(r.stderr.includes(line), `missing ${line} in ${r.stderr}`);
    }
    assert.match((await k(['get', 'validatingwebhookconfiguration', 'bad-hooks'])).stderr, /NotFound|not found/);
  });

  it("a valid ValidatingWebhookConfiguration shows kube's defaults in -o yaml; an invalid update is refused", async () => {
    await kOk(['apply', '-f', '-'], doc('ValidatingWebhookConfiguration', 'good-hooks', { webhooks: [hook()] }));
    const yaml = await kOk(['get', 'validatingwebhookconfiguration', 'good-hooks', '-o', 'yaml']);
    for (const line of [
      'failurePolicy: Fail',
      'matchPolicy: Equivalent',
      'namespaceSelector: {}',
      'objectSelector: {}',
      'timeoutSeconds: 10',
      'port: 443',
      "scope: '*'",
      'sideEffects: None',
    ]) {
      assert.ok(yaml.includes(line), `missing ${line} in\n${yaml}`);
    }
    assert.ok(!yaml.includes('reinvocationPolicy'), yaml);
    const h = JSON.parse(await kOk(['get', 'validatingwebhookconfiguration', 'good-hooks', '-o', 'json'])).webhooks[0];
    assert.deepEqual(h.clientConfig.service, { name: 'hooks', namespace: 'default', path: '/validate', port: 443 });
    assert.equal(h.rules[0].scope, '*');

    const r = await k(
      ['apply', '-f', '-'],
      doc('ValidatingWebhookConfiguration', 'good-hooks', { webhooks: [hook({ timeoutSeconds: 0 })] }),
    );
    assert.notEqual(r.code, 0);
    assert.ok(
      r.stderr.includes('webhooks[0].timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds'),
      r.stderr,
    );
    assert.equal(await kOk(['get', 'validatingwebhookconfiguration', 'good-hooks', '-o', 'jsonpath={.webhooks[0].timeoutSeconds}']), '10');
  });

  it('a MutatingWebhookConfiguration gets reinvocationPolicy Never; duplicate webhook names are refused', async () => {
    await kOk(['apply', '-f', '-'], doc('MutatingWebhookConfiguration', 'good-mutating', { webhooks: [hook()] }));
    assert.equal(
      await kOk(['get', 'mutatingwebhookconfiguration', 'good-mutating', '-o', 'jsonpath={.webhooks[0].reinvocationPolicy}']),
      'Never',
    );
    const r = await k(['create', '-f', '-'], doc('MutatingWebhookConfiguration', 'twice', { webhooks: [hook(), hook()] }));
    assert.notEqual(r.code, 0);
    assert.ok(r.stderr.includes('webhooks[1].name: Duplicate value: "never.example.com"'), r.stderr);
  });

  it('ValidatingAdmissionPolicy and binding: invalid ones refused, valid ones defaulted', async () => {
    const rule = { operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['nothings'] };
    const badPolicy = doc('ValidatingAdmissionPolicy', 'bad-policy', {
      spec: { matchConstraints: { resourceRules: [rule] }, validations: [{ expression: '1' }] },
    });
    const r = await k(['apply', '-f', '-'], badPolicy);
    assert.notEqual(r.code, 0);
    assert.ok(
      r.stderr.includes(
        'The ValidatingAdmissionPolicy "bad-policy" is invalid: spec.validations[0].expression: Invalid value: "1": must evaluate to bool but got int',
      ),
      r.stderr,
    );

    await kOk(
      ['apply', '-f', '-'],
      doc('ValidatingAdmissionPolicy', 'good-policy', {
        spec: { matchConstraints: { resourceRules: [rule] }, validations: [{ expression: 'true' }] },
      }),
    );
    const spec = JSON.parse(await kOk(['get', 'validatingadmissionpolicy', 'good-policy', '-o', 'json'])).spec;
    assert.equal(spec.failurePolicy, 'Fail');
    assert.equal(spec.matchConstraints.matchPolicy, 'Equivalent');
    assert.deepEqual(spec.matchConstraints.namespaceSelector, {});
    assert.deepEqual(spec.matchConstraints.objectSelector, {});
    assert.equal(spec.matchConstraints.resourceRules[0].scope, '*');

    const rb = await k(
      ['apply', '-f', '-'],
      doc('ValidatingAdmissionPolicyBinding', 'bad-binding', { spec: { policyName: 'good-policy', validationActions: ['Deny', 'Warn'] } }),
    );
    assert.notEqual(rb.code, 0);
    assert.ok(
      rb.stderr.includes(
        'spec.validationActions: Invalid value: []admissionregistration.ValidationAction{"Deny", "Warn"}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
      ),
      rb.stderr,
    );
    await kOk(
      ['apply', '-f', '-'],
      doc('ValidatingAdmissionPolicyBinding', 'good-binding', {
        spec: { policyName: 'good-policy', validationActions: ['Audit'], matchResources: {} },
      }),
    );
    const bspec = JSON.parse(await kOk(['get', 'validatingadmissionpolicybinding', 'good-binding', '-o', 'json'])).spec;
    assert.deepEqual(bspec.matchResources, { matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {} });
  });

  it("CEL compile errors in cel-go's words: undeclared variables, parser limits, a wide caret", async () => {
    const rule = { operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['nothings'] };
    const deep = `${Array.from({ length: 252 }, (_, i) => String(i + 1)).join(' + ')} > 0`;
    const policy = doc('ValidatingAdmissionPolicy', 'cel-errors', {
      spec: {
        matchConstraints: { resourceRules: [rule] },
        variables: [{ name: 'known', expression: 'true' }],
        validations: [{ expression: 'variables.known && variables.nosuch' }, { expression: deep }, { expression: "'é' == $" }],
      },
    });
    const r = await k(['apply', '-f', '-'], policy);
    assert.notEqual(r.code, 0);
    for (const text of [
      `spec.validations[0].expression: Invalid value: "variables.known && variables.nosuch": compilation failed: ERROR: <input>:1:29: undefined field 'nosuch'\n | variables.known && variables.nosuch\n | ............................^`,
      `spec.validations[1].expression: Invalid value: "${deep}": compilation failed: ERROR: <input>:-1:0: max recursion depth exceeded`,
      "spec.validations[2].expression: Invalid value: \"'é' == $\": compilation failed: ERROR: <input>:1:8: Syntax error: token recognition error at: '$'\n | 'é' == $\n | .\uff0e.....^",
    ]) {
      assert.ok(r.stderr.includes(text), `missing ${text} in ${r.stderr}`);
    }
    assert.match((await k(['get', 'validatingadmissionpolicy', 'cel-errors'])).stderr, /NotFound|not found/);
  });

  it("variables are typed by their expressions: an int added to a string variable is refused in cel-go's words", async () => {
    const rule = { operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['nothings'] };
    const variables = [
      { name: 'name', expression: 'string(object.metadata.name)' },
      { name: 'sizes', expression: '[size(variables.name)]' },
    ];
    const trailing = `1${' 2'.repeat(257)}`;
    const r = await k(
      ['apply', '-f', '-'],
      doc('ValidatingAdmissionPolicy', 'typed-variables', {
        spec: {
          matchConstraints: { resourceRules: [rule] },
          variables,
          validations: [
            { expression: 'variables.name + 1 > 0' },
            { expression: "variables.sizes[0] == 'a'", messageExpression: 'variables.sizes[0]' },
            { expression: trailing },
          ],
        },
      }),
    );
    assert.notEqual(r.code, 0);
    for (const text of [
      'The ValidatingAdmissionPolicy "typed-variables" is invalid: \n',
      `spec.validations[0].expression: Invalid value: "variables.name + 1 > 0": compilation failed: ERROR: <input>:1:16: found no matching overload for '_+_' applied to '(string, int)'\n | variables.name + 1 > 0\n | ...............^`,
      `spec.validations[1].expression: Invalid value: "variables.sizes[0] == 'a'": compilation failed: ERROR: <input>:1:20: found no matching overload for '_==_' applied to '(int, string)'\n | variables.sizes[0] == 'a'\n | ...................^`,
      'spec.validations[1].messageExpression: Invalid value: "variables.sizes[0]": must evaluate to string but got int',
      `spec.validations[2].expression: Invalid value: "${trailing}": compilation failed: ERROR: <input>:-1:0: error recovery token lookahead limit exceeded: 256\nERROR: <input>:1:3: Syntax error: mismatched input '2' expecting <EOF>`,
    ]) {
      assert.ok(r.stderr.includes(text), `missing ${text} in ${r.stderr}`);
    }
    assert.match((await k(['get', 'validatingadmissionpolicy', 'typed-variables'])).stderr, /NotFound|not found/);
    // used as their types, the same variables are accepted
    await kOk(
      ['apply', '-f', '-'],
      doc('ValidatingAdmissionPolicy', 'typed-variables', {
        spec: {
          matchConstraints: { resourceRules: [rule] },
          variables,
          validations: [
            {
              expression: "variables.name + '-x' != '' && variables.sizes[0] > 0",
              messageExpression: "'size ' + string(variables.sizes[0])",
            },
          ],
        },
      }),
    );
    assert.equal(await kOk(['get', 'validatingadmissionpolicy', 'typed-variables', '-o', 'jsonpath={.spec.variables[1].name}']), 'sizes');
  });
});
