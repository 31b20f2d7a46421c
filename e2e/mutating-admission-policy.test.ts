// MutatingAdmissionPolicy (alpha in 1.33) behind kubectl 1.33, on a kapi started with the
// MutatingAdmissionPolicy gate and admissionregistration.k8s.io/v1alpha1: a policy and binding
// created with kubectl apply add a label through ApplyConfiguration (the value read from a
// ConfigMap param) and an annotation through JSONPatch; a matchCondition keeps the policies
// off ConfigMaps labelled `skip`; an expression error with failurePolicy Fail refuses the
// write with kube's message; optional fields of a message construction are set only when
// present, and compile errors point into the expression as written. Without the gate the kinds
// are not served.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectl, kubectlOk, startKapi, uniqueName, waitFor, type KapiProcess } from './harness.js';

const G = 'admissionregistration.k8s.io/v1alpha1';
const configMapRule = { operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] };
const notSkipped = [{ name: 'not-skipped', expression: '!has(object.metadata.labels) || !("skip" in object.metadata.labels)' }];

describe('MutatingAdmissionPolicy with kubectl 1.33', () => {
  let kapi: KapiProcess;
  let kc: { kubeconfig: string };
  const ns = uniqueName('map');
  const apply = (obj: unknown) => kubectlOk(['apply', '-f', '-'], { ...kc, input: JSON.stringify(obj) });
  const configMap = (name: string, labels: Record<string, string> = {}) =>
    JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels }, data: { a: 'b' } });
  const getJson = async (name: string) =>
    JSON.parse(await kubectlOk(['get', 'configmap', name, '-n', ns, '-o', 'json'], kc)) as {
      metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
    };

  before(async () => {
    kapi = await startKapi({ extraArgs: ['--feature-gates=MutatingAdmissionPolicy=true', `--runtime-config=${G}=true`] });
    kc = { kubeconfig: kapi.kubeconfig };
    await kubectlOk(['create', 'namespace', ns], kc);
    await kubectlOk(['create', 'configmap', 'team', '-n', ns, '--from-literal=owner=blue'], kc);
    await apply({
      apiVersion: G,
      kind: 'MutatingAdmissionPolicy',
      metadata: { name: 'owner-label' },
      spec: {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        matchConstraints: { resourceRules: [configMapRule] },
        matchConditions: notSkipped,
        reinvocationPolicy: 'Never',
        mutations: [
          {
            patchType: 'ApplyConfiguration',
            applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"owner": params.data.owner}}}' },
          },
        ],
      },
    });
    await apply({
      apiVersion: G,
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: { name: 'owner-label' },
      spec: {
        policyName: 'owner-label',
        paramRef: { name: 'team', namespace: ns },
        matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } },
      },
    });
    await apply({
      apiVersion: G,
      kind: 'MutatingAdmissionPolicy',
      metadata: { name: 'stamp-annotation' },
      spec: {
        matchConstraints: { resourceRules: [configMapRule] },
        matchConditions: notSkipped,
        reinvocationPolicy: 'IfNeeded',
        mutations: [
          {
            patchType: 'JSONPatch',
            jsonPatch: {
              expression:
                '(has(object.metadata.annotations) ? [] : [JSONPatch{op: "add", path: "/metadata/annotations", value: {}}]) + ' +
                '[JSONPatch{op: "add", path: "/metadata/annotations/" + jsonpatch.escapeKey("example.com/stamped"), value: "true"}]',
            },
          },
        ],
      },
    });
    await apply({
      apiVersion: G,
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: { name: 'stamp-annotation' },
      spec: {
        policyName: 'stamp-annotation',
        matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } },
      },
    });
  });
  after(async () => {
    await kapi?.stop();
  });

  it('adds the label from the param through ApplyConfiguration and the annotation through JSONPatch', async () => {
    await waitFor('the policies to apply', async () => {
      const r = await kubectl(['create', '-f', '-', '--dry-run=server', '-o', 'json'], { ...kc, input: configMap('probe') });
      return r.code === 0 && r.stdout.includes('"owner": "blue"') && r.stdout.includes('example.com/stamped');
    });
    await kubectlOk(['create', '-f', '-'], { ...kc, input: configMap('first', { app: 'x' }) });
    const first = await getJson('first');
    assert.deepEqual(first.metadata.labels, { app: 'x', owner: 'blue' });
    assert.equal(first.metadata.annotations?.['example.com/stamped'], 'true');
    // a change to the param applies to the next write
    await kubectlOk(['patch', 'configmap', 'team', '-n', ns, '--type=merge', '-p', '{"data":{"owner":"green"}}'], kc);
    await waitFor('the param change', async () => {
      await kubectlOk(['create', '-f', '-'], { ...kc, input: configMap(uniqueName('second')) }).catch(() => '');
      const r = await kubectl(['create', '-f', '-', '--dry-run=server', '-o', 'json'], { ...kc, input: configMap('probe2') });
      return r.stdout.includes('"owner": "green"');
    });
  });

  it('a matchCondition leaves objects labelled skip alone', async () => {
    await kubectlOk(['create', '-f', '-'], { ...kc, input: configMap('skipped', { skip: 'yes' }) });
    const skipped = await getJson('skipped');
    assert.deepEqual(skipped.metadata.labels, { skip: 'yes' });
    assert.equal(skipped.metadata.annotations, undefined);
  });

  it('optional fields of a message construction are set only when present; compile errors point into the expression as written', async () => {
    await apply({
      apiVersion: G,
      kind: 'MutatingAdmissionPolicy',
      metadata: { name: 'optional-fields' },
      spec: {
        matchConstraints: { resourceRules: [configMapRule] },
        matchConditions: [{ name: 'only-opt', expression: 'object.metadata.name.startsWith("opt")' }],
        reinvocationPolicy: 'Never',
        mutations: [
          {
            patchType: 'ApplyConfiguration',
            applyConfiguration: {
              expression:
                'Object{metadata: Object.metadata{?labels: optional.of({"tier": "gold"}), ' +
                '?annotations: object.metadata.name == "never" ? optional.of({"never": "set"}) : optional.none()}}',
            },
          },
        ],
      },
    });
    await apply({
      apiVersion: G,
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: { name: 'optional-fields' },
      spec: { policyName: 'optional-fields' },
    });
    await waitFor('the optional-fields policy to apply', async () => {
      const r = await kubectl(['create', '-f', '-', '--dry-run=server', '-o', 'json'], { ...kc, input: configMap('opt-probe') });
      return r.code === 0 && r.stdout.includes('"tier": "gold"');
    });
    await kubectlOk(['create', '-f', '-'], { ...kc, input: configMap('opt-one') });
    const made = await getJson('opt-one');
    assert.equal(made.metadata.labels?.tier, 'gold');
    assert.equal(made.metadata.annotations?.never, undefined);

    // the expression is rewritten before it is parsed; the error's column is the one in the text written
    const expression = 'Object{metadata: Object.metadata{labels: {"a": 1 + "b"}}}';
    const bad = await kubectl(['apply', '-f', '-'], {
      ...kc,
      input: JSON.stringify({
        apiVersion: G,
        kind: 'MutatingAdmissionPolicy',
        metadata: { name: 'bad-column' },
        spec: {
          matchConstraints: { resourceRules: [configMapRule] },
          mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression } }],
        },
      }),
    });
    assert.notEqual(bad.code, 0);
    const column = expression.indexOf('+') + 1;
    assert.ok(
      bad.stderr.includes(
        `compilation failed: ERROR: <input>:1:${column}: found no matching overload for '_+_' applied to '(int, string)'\n | ${expression}\n | ${'.'.repeat(column - 1)}^`,
      ),
      bad.stderr,
    );
  });

  it('an expression error with failurePolicy Fail refuses the write with kube message', async () => {
    await apply({
      apiVersion: G,
      kind: 'MutatingAdmissionPolicy',
      metadata: { name: 'broken' },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: [configMapRule] },
        matchConditions: [{ name: 'only-broken', expression: 'object.metadata.name.startsWith("broken")' }],
        mutations: [
          { patchType: 'JSONPatch', jsonPatch: { expression: '[JSONPatch{op: "add", path: "/data/x", value: object.data.missing}]' } },
        ],
      },
    });
    await apply({ apiVersion: G, kind: 'MutatingAdmissionPolicyBinding', metadata: { name: 'broken' }, spec: { policyName: 'broken' } });
    let refused: { code: number | null; stderr: string } = { code: 0, stderr: '' };
    await waitFor('the broken policy to apply', async () => {
      refused = await kubectl(['create', '-f', '-'], { ...kc, input: configMap('broken-one') });
      return refused.code !== 0;
    });
    assert.match(refused.stderr, /policy 'broken' with binding 'broken' denied request: expression '.*' resulted in error: /);
    // other objects are not affected
    assert.equal((await kubectl(['create', '-f', '-'], { ...kc, input: configMap('fine') })).code, 0);
  });
});

describe('MutatingAdmissionPolicy without its feature gate', () => {
  let kapi: KapiProcess;
  before(async () => {
    kapi = await startKapi({ extraArgs: ['--runtime-config=admissionregistration.k8s.io/v1alpha1=true'] });
  });
  after(async () => {
    await kapi?.stop();
  });

  it('does not serve the kinds', async () => {
    const r = await kubectl(['get', 'mutatingadmissionpolicies'], { kubeconfig: kapi.kubeconfig });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /the server doesn't have a resource type "mutatingadmissionpolicies"/);
    const raw = await kapi.http.get('/apis/admissionregistration.k8s.io/v1alpha1');
    assert.equal(raw.status, 404);
  });
});
