import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../storage/interface.js';
import { cause, kind } from '../testing/strategies.js';

const G = 'admissionregistration.k8s.io';
const validating = kind(G, 'v1', 'validatingwebhookconfigurations');
const mutating = kind(G, 'v1', 'mutatingwebhookconfigurations');

function hook(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'deny.example.com',
    clientConfig: { url: 'https://hooks.example.com/validate' },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    ...extra,
  };
}

function config(kindName: string, hooks: Record<string, unknown>[]): KubeObject {
  return { apiVersion: `${G}/v1`, kind: kindName, metadata: { name: 'cfg' }, webhooks: hooks } as KubeObject;
}

const vwc = (...hooks: Record<string, unknown>[]) => config('ValidatingWebhookConfiguration', hooks);
const mwc = (...hooks: Record<string, unknown>[]) => config('MutatingWebhookConfiguration', hooks);

describe('webhook configuration defaults', () => {
  it('fills kube v1 defaults into a validating webhook', () => {
    const out = validating.defaulted(vwc(hook({ clientConfig: { service: { name: 's', namespace: 'ns' } } })));
    const h = (out.webhooks as Record<string, unknown>[])[0]!;
    assert.equal(h.failurePolicy, 'Fail');
    assert.equal(h.matchPolicy, 'Equivalent');
    assert.deepEqual(h.namespaceSelector, {});
    assert.deepEqual(h.objectSelector, {});
    assert.equal(h.timeoutSeconds, 10);
    assert.equal(h.reinvocationPolicy, undefined);
    assert.equal((h.rules as Record<string, unknown>[])[0]!.scope, '*');
    assert.deepEqual(h.clientConfig, { service: { name: 's', namespace: 'ns', port: 443 } });
    assert.equal(h.sideEffects, 'None');
    assert.equal(out.metadata.generation, 1);
    assert.deepEqual(validating.createCauses(vwc(hook())), []);
  });

  it('gives mutating webhooks reinvocationPolicy Never and keeps set values', () => {
    const out = mutating.defaulted(
      mwc(hook({ failurePolicy: 'Ignore', timeoutSeconds: 3, reinvocationPolicy: 'IfNeeded' }), hook({ name: 'b.example.com' })),
    );
    const [a, b] = out.webhooks as Record<string, unknown>[];
    assert.equal(a!.failurePolicy, 'Ignore');
    assert.equal(a!.timeoutSeconds, 3);
    assert.equal(a!.reinvocationPolicy, 'IfNeeded');
    assert.equal(b!.reinvocationPolicy, 'Never');
    assert.deepEqual(mutating.createCauses(out), []);
  });
});

describe('webhook configuration validation', () => {
  const cases: [string, Record<string, unknown>, ReturnType<typeof cause>[]][] = [
    [
      'name not qualified',
      { name: 'deny' },
      [
        cause(
          'FieldValueInvalid',
          'webhooks[0].name',
          'Invalid value: "deny": should be a domain with at least three segments separated by dots',
        ),
      ],
    ],
    ['name missing', { name: '' }, [cause('FieldValueRequired', 'webhooks[0].name', 'Required value')]],
    [
      'name not a subdomain',
      { name: 'Deny.example.com' },
      [
        cause(
          'FieldValueInvalid',
          'webhooks[0].name',
          `Invalid value: "Deny.example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
        ),
      ],
    ],
    [
      'sideEffects missing',
      { sideEffects: undefined },
      [cause('FieldValueRequired', 'webhooks[0].sideEffects', 'Required value: must specify one of None, NoneOnDryRun')],
    ],
    [
      'sideEffects Unknown',
      { sideEffects: 'Unknown' },
      [
        cause(
          'FieldValueNotSupported',
          'webhooks[0].sideEffects',
          'Unsupported value: "Unknown": supported values: "None", "NoneOnDryRun"',
        ),
      ],
    ],
    [
      'admissionReviewVersions missing',
      { admissionReviewVersions: undefined },
      [cause('FieldValueRequired', 'webhooks[0].admissionReviewVersions', 'Required value: must specify one of v1, v1beta1')],
    ],
    [
      'admissionReviewVersions unknown',
      { admissionReviewVersions: ['v2', 'v2'] },
      [
        cause('FieldValueInvalid', 'webhooks[0].admissionReviewVersions[1]', 'Invalid value: "v2": duplicate version'),
        cause(
          'FieldValueInvalid',
          'webhooks[0].admissionReviewVersions',
          'Invalid value: []string{"v2", "v2"}: must include at least one of v1, v1beta1',
        ),
      ],
    ],
    [
      'no clientConfig',
      { clientConfig: {} },
      [cause('FieldValueRequired', 'webhooks[0].clientConfig', 'Required value: exactly one of url or service is required')],
    ],
    [
      'url and service',
      { clientConfig: { url: 'https://a.b', service: { name: 's', namespace: 'n' } } },
      [cause('FieldValueRequired', 'webhooks[0].clientConfig', 'Required value: exactly one of url or service is required')],
    ],
    [
      'http url with query and fragment',
      { clientConfig: { url: 'http://u:p@h.example.com/x?a=1#frag' } },
      [
        cause(
          'FieldValueInvalid',
          'webhooks[0].clientConfig.url',
          `Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
        ),
        cause('FieldValueInvalid', 'webhooks[0].clientConfig.url', 'Invalid value: "u:p": user information is not permitted in the URL'),
        cause('FieldValueInvalid', 'webhooks[0].clientConfig.url', 'Invalid value: "frag": fragments are not permitted in the URL'),
        cause('FieldValueInvalid', 'webhooks[0].clientConfig.url', 'Invalid value: "a=1": query parameters are not permitted in the URL'),
      ],
    ],
    [
      'url without host',
      { clientConfig: { url: 'https:///x' } },
      [
        cause(
          'FieldValueInvalid',
          'webhooks[0].clientConfig.url',
          'Invalid value: "": host must be specified; desired format: https://host[/path]',
        ),
      ],
    ],
    [
      'unparsable url',
      { clientConfig: { url: ':bad' } },
      [
        cause(
          'FieldValueRequired',
          'webhooks[0].clientConfig.url',
          'Required value: url must be a valid URL: parse ":bad": missing protocol scheme; desired format: https://host[/path]',
        ),
      ],
    ],
    [
      'service without name, bad port and path',
      { clientConfig: { service: { namespace: 'ns', port: 70000, path: 'x//Y' } } },
      [
        // kube-apiserver swaps name and namespace in this check
        cause('FieldValueRequired', 'webhooks[0].clientConfig.service.namespace', 'Required value'),
        cause(
          'FieldValueInvalid',
          'webhooks[0].clientConfig.service.port',
          'Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive',
        ),
        cause('FieldValueInvalid', 'webhooks[0].clientConfig.service.path', `Invalid value: "x//Y": must start with a '/'`),
        // kube drops the first character whatever it is: "//Y" splits into "", "", "Y"
        cause('FieldValueInvalid', 'webhooks[0].clientConfig.service.path', 'Invalid value: "x//Y": segment[0] may not be empty'),
        cause('FieldValueInvalid', 'webhooks[0].clientConfig.service.path', 'Invalid value: "x//Y": segment[1] may not be empty'),
        cause(
          'FieldValueInvalid',
          'webhooks[0].clientConfig.service.path',
          `Invalid value: "x//Y": segment[2]: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
        ),
      ],
    ],
    [
      'rules',
      {
        rules: [
          { operations: ['*', 'PATCH'], apiGroups: ['*', 'apps'], apiVersions: [], resources: ['*', 'pods', '*/*'], scope: 'Everywhere' },
        ],
      },
      [
        cause(
          'FieldValueInvalid',
          'webhooks[0].rules[0].operations',
          'Invalid value: []admissionregistration.OperationType{"*", "PATCH"}: if \'*\' is present, must not specify other operations',
        ),
        cause(
          'FieldValueNotSupported',
          'webhooks[0].rules[0].operations[1]',
          'Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
        ),
        cause(
          'FieldValueInvalid',
          'webhooks[0].rules[0].apiGroups',
          'Invalid value: []string{"*", "apps"}: if \'*\' is present, must not specify other API groups',
        ),
        cause('FieldValueRequired', 'webhooks[0].rules[0].apiVersions', 'Required value'),
        cause(
          'FieldValueInvalid',
          'webhooks[0].rules[0].resources',
          'Invalid value: []string{"*", "pods", "*/*"}: if \'*/*\' is present, must not specify other resources',
        ),
        cause(
          'FieldValueInvalid',
          'webhooks[0].rules[0].resources',
          'Invalid value: []string{"*", "pods", "*/*"}: if \'*\' is present, must not specify other resources without subresources',
        ),
        cause(
          'FieldValueNotSupported',
          'webhooks[0].rules[0].scope',
          'Unsupported value: "Everywhere": supported values: "*", "Cluster", "Namespaced"',
        ),
      ],
    ],
    [
      'subresource wildcards',
      { rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/*', 'pods/status', ''] }] },
      [
        cause(
          'FieldValueInvalid',
          'webhooks[0].rules[0].resources[1]',
          'Invalid value: "pods/status": if \'pods/*\' is present, must not specify pods/status',
        ),
        cause('FieldValueRequired', 'webhooks[0].rules[0].resources[2]', 'Required value'),
      ],
    ],
    [
      'enums and timeout',
      { failurePolicy: 'Maybe', matchPolicy: 'Close', timeoutSeconds: 31 },
      [
        cause('FieldValueNotSupported', 'webhooks[0].failurePolicy', 'Unsupported value: "Maybe": supported values: "Fail", "Ignore"'),
        cause('FieldValueNotSupported', 'webhooks[0].matchPolicy', 'Unsupported value: "Close": supported values: "Equivalent", "Exact"'),
        cause('FieldValueInvalid', 'webhooks[0].timeoutSeconds', 'Invalid value: 31: the timeout value must be between 1 and 30 seconds'),
      ],
    ],
    [
      'selectors',
      { namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] }, objectSelector: { matchLabels: { a: 'b c' } } },
      [
        cause(
          'FieldValueRequired',
          'webhooks[0].namespaceSelector.matchExpressions[0].values',
          "Required value: must be specified when `operator` is 'In' or 'NotIn'",
        ),
        cause(
          'FieldValueInvalid',
          'webhooks[0].objectSelector.matchLabels',
          `Invalid value: "b c": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
        ),
      ],
    ],
    [
      'matchConditions',
      {
        matchConditions: [
          { name: 'a', expression: 'true' },
          { name: 'a', expression: 'object.x ==' },
          { name: 'bad name!', expression: '1' },
          { name: '', expression: ' ' },
          { name: 'p', expression: 'params.x == 1' },
        ],
      },
      [
        cause(
          'FieldValueInvalid',
          'webhooks[0].matchConditions[1].expression',
          `Invalid value: "object.x ==": compilation failed: ERROR: <input>:1:12: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | object.x ==\n | ...........^`,
        ),
        cause('FieldValueDuplicate', 'webhooks[0].matchConditions[1].name', 'Duplicate value: "a"'),
        cause('FieldValueInvalid', 'webhooks[0].matchConditions[2].expression', 'Invalid value: "1": must evaluate to bool but got int'),
        cause(
          'FieldValueInvalid',
          'webhooks[0].matchConditions[2].name',
          `Invalid value: "bad name!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
        ),
        cause('FieldValueRequired', 'webhooks[0].matchConditions[3].expression', 'Required value'),
        cause('FieldValueRequired', 'webhooks[0].matchConditions[3].name', 'Required value'),
        cause(
          'FieldValueInvalid',
          'webhooks[0].matchConditions[4].expression',
          "Invalid value: \"params.x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^",
        ),
      ],
    ],
  ];
  for (const [name, extra, want] of cases) {
    it(name, () => {
      const h = hook(extra);
      for (const [k, v] of Object.entries(extra)) if (v === undefined) delete h[k];
      assert.deepEqual(validating.createCauses(vwc(h)), want);
    });
  }

  it('more than 64 match conditions', () => {
    const conds = Array.from({ length: 65 }, (_, i) => ({ name: `c${i}`, expression: 'true' }));
    assert.deepEqual(validating.createCauses(vwc(hook({ matchConditions: conds }))), [
      cause('FieldValueTooMany', 'webhooks[0].matchConditions', 'Too many: 65: must have at most 64 items'),
    ]);
  });

  it('webhook names are unique in a configuration', () => {
    assert.deepEqual(validating.createCauses(vwc(hook(), hook())), [
      cause('FieldValueDuplicate', 'webhooks[1].name', 'Duplicate value: "deny.example.com"'),
    ]);
  });

  it('mutating: reinvocationPolicy enum', () => {
    assert.deepEqual(mutating.createCauses(mwc(hook({ reinvocationPolicy: 'Always' }))), [
      cause(
        'FieldValueNotSupported',
        'webhooks[0].reinvocationPolicy',
        'Unsupported value: "Always": supported values: "IfNeeded", "Never"',
      ),
    ]);
  });

  it('an update keeps what the stored object already had, and checks new things', () => {
    // a stored configuration with duplicate names stays updatable
    const stored = vwc(hook(), hook());
    assert.deepEqual(validating.updateCauses(stored, vwc(hook({ timeoutSeconds: 5 }), hook())), []);
    const ok = vwc(hook());
    assert.deepEqual(validating.updateCauses(ok, vwc(hook({ sideEffects: 'Some' }))), [
      cause('FieldValueNotSupported', 'webhooks[0].sideEffects', 'Unsupported value: "Some": supported values: "None", "NoneOnDryRun"'),
    ]);
    assert.deepEqual(validating.updateCauses(ok, vwc(hook({ matchConditions: [{ name: 'x', expression: '1' }] }))), [
      cause('FieldValueInvalid', 'webhooks[0].matchConditions[0].expression', 'Invalid value: "1": must evaluate to bool but got int'),
    ]);
  });
});
