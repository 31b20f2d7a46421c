// ValidatingAdmissionPolicy behind kubectl 1.33: a policy `object.spec.replicas <= 5` bound with
// Deny refuses a 6-replica Deployment with kube's message, only in the namespaces the binding's
// namespaceSelector picks; deleting the binding lifts it; a Warn binding prints kube's warning
// and creates the Deployment; an Audit binding records kube's validation_failure audit
// annotation (and the policy's auditAnnotations) in the audit log; a param ConfigMap sets the limit and a change to it applies to
// the next request; a missing param with parameterNotFoundAction Deny refuses. Two replicas on
// one etcd: a policy and binding made through one replica apply on the other, and so does the
// binding's deletion. A policy whose expression names a field Deployments lack gets kube's
// type-checking warning in its status. url() reads Go's opaque form and sets.* compare numbers
// across types.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kubectl, kubectlOk, startEtcd, startKapi, uniqueName, waitFor, type EtcdProcess, type KapiProcess } from './harness.js';

const G = 'admissionregistration.k8s.io/v1';

function deployment(name: string, namespace: string, replicas: number): string {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    },
  });
}

const replicasRule = { operations: ['CREATE', 'UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] };

describe('ValidatingAdmissionPolicy with kubectl 1.33', () => {
  let kapi: KapiProcess;
  let kc: { kubeconfig: string };
  const checked = uniqueName('vap-checked');
  const free = uniqueName('vap-free');
  let auditDir: string;

  const apply = (obj: unknown) => kubectlOk(['apply', '-f', '-'], { ...kc, input: JSON.stringify(obj) });
  const create = (yaml: string, extra: string[] = []) => kubectl(['create', '-f', '-', ...extra], { ...kc, input: yaml });
  /** a server-side dry run of the create: admission runs, nothing is stored */
  const dryRun = (yaml: string) => create(yaml, ['--dry-run=server']);

  before(async () => {
    // deployments are audited at Metadata level (annotations included) into a log file
    auditDir = mkdtempSync(path.join(os.tmpdir(), 'kapi-vap-audit-'));
    writeFileSync(
      path.join(auditDir, 'policy.yaml'),
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n  resources: [{group: apps, resources: [deployments]}]\n- level: None\n',
    );
    kapi = await startKapi({
      extraArgs: ['--audit-policy-file', path.join(auditDir, 'policy.yaml'), '--audit-log-path', path.join(auditDir, 'audit.log')],
    });
    kc = { kubeconfig: kapi.kubeconfig };
    await kubectlOk(['create', 'namespace', checked], kc);
    await kubectlOk(['label', 'namespace', checked, 'policy-test=checked'], kc);
    await kubectlOk(['create', 'namespace', free], kc);
    await apply({
      apiVersion: G,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'max-replicas' },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: [replicasRule] },
        validations: [{ expression: 'object.spec.replicas <= 5' }],
      },
    });
  });
  after(async () => {
    await kapi?.stop();
    if (auditDir) rmSync(auditDir, { recursive: true, force: true });
  });

  it('a Deny binding refuses 6 replicas with kube message, only where its namespaceSelector points; deleting it lifts it', async () => {
    await apply({
      apiVersion: G,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'max-replicas-deny' },
      spec: {
        policyName: 'max-replicas',
        validationActions: ['Deny'],
        matchResources: { namespaceSelector: { matchLabels: { 'policy-test': 'checked' } } },
      },
    });
    await waitFor('the binding to apply', async () => (await dryRun(deployment('web', checked, 6))).code !== 0);
    const refused = await create(deployment('web', checked, 6));
    assert.notEqual(refused.code, 0);
    assert.equal(
      refused.stderr.trim(),
      `The deployments "web" is invalid: : ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-deny' denied request: failed expression: object.spec.replicas <= 5`,
    );
    // the raw Status: 422 Invalid with kube's message and cause
    const raw = await kapi.http.post(`/apis/apps/v1/namespaces/${checked}/deployments?dryRun=All`, deployment('web', checked, 6));
    assert.equal(raw.status, 422);
    const status = JSON.parse(raw.body) as Record<string, unknown>;
    assert.equal(status['reason'], 'Invalid');
    assert.equal(
      status['message'],
      `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-deny' denied request: failed expression: object.spec.replicas <= 5`,
    );
    // 5 replicas pass; an update to 6 is refused too (a patch of the Deployment itself: the
    // rule names `deployments`, so `kubectl scale`, which writes deployments/scale, is not checked)
    assert.equal((await kubectl(['create', '-f', '-'], { ...kc, input: deployment('web', checked, 5) })).code, 0);
    const patched = await kubectl(['patch', 'deployment', 'web', '-n', checked, '--type=merge', '-p', '{"spec":{"replicas":6}}'], kc);
    assert.notEqual(patched.code, 0);
    assert.match(
      patched.stderr,
      /ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-deny' denied request: failed expression: object.spec.replicas <= 5/,
    );
    const scaled = await kubectl(['scale', 'deployment/web', '-n', checked, '--replicas=6'], kc);
    assert.equal(scaled.code, 0, scaled.stderr);
    // the namespace the selector does not pick is not checked
    const elsewhere = await create(deployment('web', free, 6));
    assert.equal(elsewhere.code, 0, elsewhere.stderr);
    assert.equal(elsewhere.stdout.trim(), 'deployment.apps/web created');

    await kubectlOk(['delete', 'validatingadmissionpolicybinding', 'max-replicas-deny'], kc);
    await waitFor('the binding deletion to apply', async () => (await dryRun(deployment('big', checked, 6))).code === 0);
    const lifted = await create(deployment('big', checked, 6));
    assert.equal(lifted.code, 0, lifted.stderr);
  });

  it('a Warn binding prints kube warning and creates the Deployment', async () => {
    await apply({
      apiVersion: G,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'max-replicas-warn' },
      spec: { policyName: 'max-replicas', validationActions: ['Warn'] },
    });
    await waitFor('the warn binding to apply', async () => (await dryRun(deployment('warned', checked, 7))).stderr.includes('Warning:'));
    const created = await create(deployment('warned', checked, 7));
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stdout.trim(), 'deployment.apps/warned created');
    assert.equal(
      created.stderr.trim(),
      `Warning: Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-warn': failed expression: object.spec.replicas <= 5`,
    );
    await kubectlOk(['delete', 'validatingadmissionpolicybinding', 'max-replicas-warn'], kc);
    await waitFor(
      'the warn binding deletion to apply',
      async () => !(await dryRun(deployment('quiet', checked, 7))).stderr.includes('Warning:'),
    );
  });

  it('an Audit binding admits and records the validation_failure audit annotation; auditAnnotations are recorded too', async () => {
    await apply({
      apiVersion: G,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'audited-replicas' },
      spec: {
        matchConstraints: { resourceRules: [replicasRule] },
        validations: [{ expression: 'object.spec.replicas <= 1', message: 'more than one replica' }],
        auditAnnotations: [{ key: 'replicas', valueExpression: "'replicas: ' + string(object.spec.replicas)" }],
      },
    });
    await apply({
      apiVersion: G,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'audited-replicas' },
      spec: { policyName: 'audited-replicas', validationActions: ['Audit'] },
    });
    const name = uniqueName('audited');
    const logPath = path.join(auditDir, 'audit.log');
    type Event = { stage: string; verb: string; objectRef?: { name?: string }; annotations?: Record<string, string> };
    const events = (): Event[] =>
      readFileSync(logPath, 'utf8')
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as Event);
    // the binding applies within the watch latency: create objects until one is audited with it
    let i = 0;
    const event = await waitFor('an audited create', async () => {
      const n = `${name}-${i++}`;
      const created = await create(deployment(n, free, 2));
      assert.equal(created.code, 0, created.stderr);
      assert.equal(created.stderr, '');
      return events().find(
        (e) =>
          e.stage === 'ResponseComplete' &&
          e.verb === 'create' &&
          e.objectRef?.name === n &&
          e.annotations?.['validation.policy.admission.k8s.io/validation_failure'],
      );
    });
    assert.deepEqual(JSON.parse(event.annotations!['validation.policy.admission.k8s.io/validation_failure']!), [
      {
        message: 'more than one replica',
        policy: 'audited-replicas',
        binding: 'audited-replicas',
        expressionIndex: 0,
        validationActions: ['Audit'],
      },
    ]);
    assert.equal(event.annotations!['audited-replicas/replicas'], 'replicas: 2');
    await kubectlOk(['delete', 'validatingadmissionpolicybinding', 'audited-replicas'], kc);
  });

  it('a policy with a type error gets its warning in status.typeChecking; fixing it clears the warning', async () => {
    await apply({
      apiVersion: G,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'typo' },
      spec: {
        matchConstraints: { resourceRules: [replicasRule] },
        validations: [{ expression: 'object.spec.replicas <= 5' }, { expression: 'object.spec.replicaz <= 5' }],
      },
    });
    const statusOf = async () =>
      JSON.parse(await kubectlOk(['get', 'validatingadmissionpolicy', 'typo', '-o', 'jsonpath={.status}'], kc)) as Record<string, unknown>;
    const first = await waitFor('the first type check', async () =>
      (await statusOf())['observedGeneration'] === 1 ? statusOf() : undefined,
    );
    assert.deepEqual(first['typeChecking'], {
      expressionWarnings: [
        {
          fieldRef: 'spec.validations[1].expression',
          warning:
            "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicaz'\n | object.spec.replicaz <= 5\n | ...........^\n",
        },
      ],
    });
    await kubectlOk(
      [
        'patch',
        'validatingadmissionpolicy',
        'typo',
        '--type=json',
        '-p',
        '[{"op":"replace","path":"/spec/validations/1/expression","value":"object.spec.replicas >= 0"}]',
      ],
      kc,
    );
    const second = await waitFor('the second type check', async () =>
      (await statusOf())['observedGeneration'] === 2 ? statusOf() : undefined,
    );
    assert.deepEqual(second['typeChecking'], {});
    await kubectlOk(['delete', 'validatingadmissionpolicy', 'typo'], kc);
  });

  it('a messageExpression with string.format and strings.quote gives the Warn message', async () => {
    await apply({
      apiVersion: G,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'formatted' },
      spec: {
        matchConstraints: { resourceRules: [replicasRule] },
        validations: [
          {
            expression: 'object.spec.replicas <= 5',
            messageExpression:
              "'%s asks for %d replicas (%.1f%% of the limit)'.format([strings.quote(object.metadata.name), object.spec.replicas, double(object.spec.replicas) * 20.0])",
          },
        ],
      },
    });
    await apply({
      apiVersion: G,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'formatted' },
      spec: { policyName: 'formatted', validationActions: ['Warn'] },
    });
    const warned = await waitFor('the formatted warning', async () => {
      const r = await dryRun(deployment('fmt', free, 7));
      return r.stderr.includes("'formatted'") ? r : undefined;
    });
    assert.match(
      warned.stderr,
      /Warning: Validation failed for ValidatingAdmissionPolicy 'formatted' with binding 'formatted': "fmt" asks for 7 replicas \(140\.0% of the limit\)/,
    );
    await kubectlOk(['delete', 'validatingadmissionpolicybinding', 'formatted'], kc);
    await kubectlOk(['delete', 'validatingadmissionpolicy', 'formatted'], kc);
  });

  it("url() reads Go's opaque form and sets.* compare numbers across types, as kube's libraries do", async () => {
    // kube's url() parses like Go's net/url: `https:://x` is opaque, with scheme https and no host;
    // sets.intersects over a double literal list and an int from the object (CEL's numeric equality)
    const expression =
      "!(url('https:://kubernetes.io/').getScheme() == 'https' && url('https:://kubernetes.io/').getHost() == '' && sets.intersects([1.0, 7.0], [object.spec.replicas]))";
    await apply({
      apiVersion: G,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'libraries' },
      spec: { matchConstraints: { resourceRules: [replicasRule] }, validations: [{ expression, message: 'seven replicas' }] },
    });
    await apply({
      apiVersion: G,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'libraries' },
      spec: { policyName: 'libraries', validationActions: ['Warn'] },
    });
    const warned = await waitFor('the libraries warning', async () => {
      const r = await dryRun(deployment('libs', free, 7));
      return r.stderr.includes("'libraries'") ? r : undefined;
    });
    assert.match(
      warned.stderr,
      /Warning: Validation failed for ValidatingAdmissionPolicy 'libraries' with binding 'libraries': seven replicas/,
    );
    const quiet = await dryRun(deployment('libs', free, 3));
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.doesNotMatch(quiet.stderr, /'libraries'/);
    await kubectlOk(['delete', 'validatingadmissionpolicybinding', 'libraries'], kc);
    await kubectlOk(['delete', 'validatingadmissionpolicy', 'libraries'], kc);
  });

  it('a param ConfigMap sets the limit; a change applies to the next request; a missing one denies', async () => {
    await kubectlOk(['create', 'configmap', 'replica-limit', '-n', checked, '--from-literal=maxReplicas=2'], kc);
    await apply({
      apiVersion: G,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'param-replicas' },
      spec: {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        matchConstraints: { resourceRules: [replicasRule] },
        validations: [
          {
            expression: 'object.spec.replicas <= int(params.data.maxReplicas)',
            messageExpression: "'replicas must be at most ' + params.data.maxReplicas",
            reason: 'Forbidden',
          },
        ],
      },
    });
    await apply({
      apiVersion: G,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'param-replicas' },
      spec: {
        policyName: 'param-replicas',
        validationActions: ['Deny'],
        paramRef: { name: 'replica-limit', parameterNotFoundAction: 'Deny' },
        matchResources: { namespaceSelector: { matchLabels: { 'policy-test': 'checked' } } },
      },
    });
    await waitFor('the param binding to apply', async () => (await dryRun(deployment('p3', checked, 3))).code !== 0);
    const refused = await create(deployment('p3', checked, 3));
    assert.equal(
      refused.stderr.trim(),
      `Error from server (Forbidden): error when creating "STDIN": deployments.apps "p3" is forbidden: ValidatingAdmissionPolicy 'param-replicas' with binding 'param-replicas' denied request: replicas must be at most 2`,
    );
    await kubectlOk(['patch', 'configmap', 'replica-limit', '-n', checked, '--type=merge', '-p', '{"data":{"maxReplicas":"4"}}'], kc);
    const allowed = await create(deployment('p3', checked, 3));
    assert.equal(allowed.code, 0, allowed.stderr);

    await kubectlOk(['delete', 'configmap', 'replica-limit', '-n', checked], kc);
    const missing = await create(deployment('p1', checked, 1));
    assert.notEqual(missing.code, 0);
    assert.match(
      missing.stderr,
      /ValidatingAdmissionPolicy 'param-replicas' with binding 'param-replicas' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction/,
    );
  });
});

describe('ValidatingAdmissionPolicy on two replicas', () => {
  let etcd: EtcdProcess;
  let a: KapiProcess;
  let b: KapiProcess;

  before(async () => {
    etcd = await startEtcd();
    [a, b] = await Promise.all([0, 1].map(() => startKapi({ etcdServers: etcd.endpoint })));
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await etcd?.stop();
  });

  it('a policy and binding made through one replica apply on the other; so does deleting the binding', async () => {
    const ns = uniqueName('vap-two');
    const onA = { kubeconfig: a.kubeconfig };
    const onB = { kubeconfig: b.kubeconfig };
    await kubectlOk(['create', 'namespace', ns], onA);
    const manifests = [
      {
        apiVersion: G,
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'two-replicas' },
        spec: {
          matchConstraints: { resourceRules: [replicasRule] },
          validations: [{ expression: 'object.spec.replicas <= 5', message: 'at most 5 replicas' }],
        },
      },
      {
        apiVersion: G,
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name: 'two-replicas' },
        spec: { policyName: 'two-replicas', validationActions: ['Deny'] },
      },
    ];
    await kubectlOk(['apply', '-f', '-'], { ...onA, input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests }) });
    const dryRunOnB = () => kubectl(['create', '-f', '-', '--dry-run=server'], { ...onB, input: deployment('web', ns, 6) });
    // generous deadlines: two kapi processes and kubectl share a busy machine
    let last = '';
    const refused = await waitFor(
      'replica B to enforce the binding',
      async () => {
        const r = await dryRunOnB();
        last = `${r.code} ${r.stdout} ${r.stderr}`;
        return r.code !== 0 ? r : undefined;
      },
      90_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; last answer: ${last}`);
    });
    assert.match(refused.stderr, /ValidatingAdmissionPolicy 'two-replicas' with binding 'two-replicas' denied request: at most 5 replicas/);
    await kubectlOk(['delete', 'validatingadmissionpolicybinding', 'two-replicas'], onB);
    const dryRunOnA = () => kubectl(['create', '-f', '-', '--dry-run=server'], { ...onA, input: deployment('web', ns, 6) });
    await waitFor(
      'replica A to drop the binding',
      async () => {
        const r = await dryRunOnA();
        last = `${r.code} ${r.stdout} ${r.stderr}`;
        return r.code === 0;
      },
      90_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; last answer: ${last}`);
    });
  });
});
