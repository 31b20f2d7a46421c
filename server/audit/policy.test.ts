import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePolicy, policyEvaluator, PolicyError, type PolicyAttributes } from './policy.js';

const admin = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };
const alice = { username: 'alice', groups: ['dev', 'system:authenticated'] };

function res(over: Partial<PolicyAttributes>): PolicyAttributes {
  return {
    user: admin,
    verb: 'get',
    isResourceRequest: true,
    path: '/api/v1/namespaces/default/pods/p',
    apiGroup: '',
    resource: 'pods',
    subresource: '',
    namespace: 'default',
    name: 'p',
    ...over,
  };
}

function nonRes(path: string, verb = 'get'): PolicyAttributes {
  return { user: admin, verb, isResourceRequest: false, path, apiGroup: '', resource: '', subresource: '', namespace: '', name: '' };
}

const POLICY = `
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
omitManagedFields: true
rules:
  - level: None
    verbs: [get]
    nonResourceURLs: [/livez, /readyz*]
  - level: None
    users: [system:kube-proxy]
  - level: Metadata
    resources:
      - group: ""
        resources: [secrets]
  - level: RequestResponse
    omitManagedFields: false
    omitStages: [ResponseStarted]
    resources:
      - group: ""
        resources: [configmaps]
        resourceNames: [keep]
  - level: Request
    resources:
      - group: ""
        resources: [configmaps]
  - level: Request
    resources:
      - group: ""
        resources: ["pods/log", "*/status"]
  - level: RequestResponse
    resources:
      - group: apps
        resources: ["deployments/*"]
  - level: Metadata
    userGroups: [dev]
    namespaces: ["", kube-system]
  - level: RequestResponse
    resources:
      - group: "*"
        resources: ["*"]
    verbs: [delete]
  - level: Metadata
    nonResourceURLs: ["*"]
`;

test('first matching rule decides; omitStages and omitManagedFields merge with the policy', () => {
  const evaluate = policyEvaluator(parsePolicy(POLICY));
  assert.equal(evaluate(nonRes('/livez')).level, 'None');
  assert.equal(evaluate(nonRes('/readyz/etcd')).level, 'None');
  assert.equal(evaluate(nonRes('/livez', 'post')).level, 'Metadata', 'verbs restrict the rule');
  assert.equal(evaluate(nonRes('/version')).level, 'Metadata', '"*" matches every path');
  assert.equal(evaluate(res({ user: { username: 'system:kube-proxy', groups: [] } })).level, 'None');

  const secret = evaluate(res({ resource: 'secrets', name: 's' }));
  assert.equal(secret.level, 'Metadata');
  assert.deepEqual([...secret.omitStages], ['RequestReceived']);
  assert.equal(secret.omitManagedFields, true);

  const kept = evaluate(res({ resource: 'configmaps', name: 'keep' }));
  assert.equal(kept.level, 'RequestResponse', 'resourceNames match');
  assert.deepEqual([...kept.omitStages].sort(), ['RequestReceived', 'ResponseStarted']);
  assert.equal(kept.omitManagedFields, false, 'the rule overrides the policy');
  assert.equal(evaluate(res({ resource: 'configmaps', name: 'other' })).level, 'Request', 'other names fall through');
  assert.equal(evaluate(res({ resource: 'configmaps', name: '', verb: 'list' })).level, 'Request');
});

test('subresource forms and wildcards', () => {
  const evaluate = policyEvaluator(parsePolicy(POLICY));
  assert.equal(evaluate(res({ subresource: 'log' })).level, 'Request', 'pods/log');
  assert.equal(evaluate(res({ subresource: 'status' })).level, 'Request', '*/status');
  assert.equal(evaluate(res({ resource: 'nodes', subresource: 'status', namespace: '' })).level, 'Request', '*/status for any resource');
  assert.equal(evaluate(res({ subresource: 'exec' })).level, 'None', 'pods/exec is not pods/log');
  assert.equal(
    evaluate(res({ apiGroup: 'apps', resource: 'deployments', subresource: 'scale' })).level,
    'RequestResponse',
    'deployments/*',
  );
  // as kube-apiserver's checker: "deployments/*" matches the resource itself too
  assert.equal(evaluate(res({ apiGroup: 'apps', resource: 'deployments' })).level, 'RequestResponse', 'deployments/* covers deployments');
  assert.equal(evaluate(res({ apiGroup: 'apps', resource: 'replicasets' })).level, 'None');
  assert.equal(evaluate(res({ apiGroup: 'batch', resource: 'jobs', verb: 'delete' })).level, 'RequestResponse', 'group "*"');
});

test('namespaces: "" is cluster-scoped; users and groups', () => {
  const evaluate = policyEvaluator(parsePolicy(POLICY));
  assert.equal(evaluate(res({ user: alice, resource: 'namespaces', namespace: '', name: 'x' })).level, 'Metadata');
  assert.equal(evaluate(res({ user: alice, namespace: 'kube-system' })).level, 'Metadata');
  assert.equal(evaluate(res({ user: alice, namespace: 'default' })).level, 'None');
  assert.equal(evaluate(res({ user: undefined, namespace: 'kube-system' })).level, 'None', 'no user matches no group');
  assert.equal(evaluate(nonRes('/version')).level, 'Metadata');
  // a resource rule never matches a non-resource request
  assert.equal(
    policyEvaluator(parsePolicy('{"apiVersion":"audit.k8s.io/v1","kind":"Policy","rules":[{"level":"Metadata","namespaces":[""]}]}'))(
      nonRes('/api'),
    ).level,
    'None',
  );
});

test('no rule matches: None; a rule without conditions matches everything', () => {
  const evaluate = policyEvaluator(parsePolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  users: [bob]\n'));
  assert.equal(evaluate(res({})).level, 'None');
  const all = policyEvaluator(parsePolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Request\n'));
  assert.equal(all(res({})).level, 'Request');
  assert.equal(all(nonRes('/healthz')).level, 'Request');
});

test('bad policies are refused with the reason', () => {
  const bad: [string, RegExp][] = [
    ['apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n', /0 rules/],
    ['apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules:\n- level: None\n', /unknown group version/],
    ['apiVersion: v1\nkind: ConfigMap\n', /kind "ConfigMap" is not Policy/],
    ['apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n', /rules\[0\]\.level: Unsupported value: "Everything"/],
    ['apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- verbs: [get]\n', /rules\[0\]\.level: Required value/],
    [
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  nonResourceURLs: [healthz]\n',
      /must begin with a '\/' character/,
    ],
    ['apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  nonResourceURLs: ["/a*b"]\n', /must be the final character/],
    [
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  nonResourceURLs: ["/a"]\n  namespaces: [x]\n',
      /cannot apply to both/,
    ],
    [
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  resources: [{group: "", resourceNames: [a]}]\n',
      /requires at least one resource/,
    ],
    ['apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Done]\nrules:\n- level: None\n', /omitStages\[0\]: Invalid value: "Done"/],
    ['{not yaml', /failed decoding/],
  ];
  for (const [text, re] of bad) {
    assert.throws(
      () => parsePolicy(text),
      (err: unknown) => err instanceof PolicyError && re.test(err.message),
      text,
    );
  }
});

test("a policy file's plain scalars read as kube reads them (go-yaml v2): yes is true, a quoted yes is text", () => {
  const policy = parsePolicy(
    ['apiVersion: audit.k8s.io/v1', 'kind: Policy', 'omitManagedFields: yes', 'rules:', '- level: Metadata', '  users: ["yes"]'].join('\n'),
  );
  assert.equal(policy.omitManagedFields, true);
  assert.deepEqual(policy.rules[0]!.users, ['yes']);
  assert.throws(
    () => parsePolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nomitManagedFields: "yes"\nrules:\n- level: None\n'),
    /must be a boolean/,
  );
});
