import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubeObject } from '../../../storage/interface.js';
import { StatusError } from '../../machinery/status.js';
import type { AdmissionAttributes } from '../../registry/rest.js';
import { admin, ctx, startRegistry, type RegistryHarness } from '../../registry/testing/harness.js';
import type { AdmissionRequestContext } from '../plugin.js';
import { createValidatingAdmissionPolicyPlugin, type ValidatingAdmissionPolicyPlugin } from './plugin.js';

const G = 'admissionregistration.k8s.io';
let h: RegistryHarness;
let plugin: ValidatingAdmissionPolicyPlugin;
const abort = new AbortController();

before(async () => {
  h = await startRegistry();
  plugin = createValidatingAdmissionPolicyPlugin({ resolver: h.registry, signal: abort.signal, featureGates: {}, log: () => {} });
  await plugin.synced;
  for (const [name, labels] of [
    ['prod', { env: 'prod' }],
    ['dev', { env: 'dev' }],
  ] as const) {
    await h.rest('', 'v1', 'namespaces').create(ctx(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
  }
});

after(async () => {
  abort.abort();
  await h.close();
});

const policies = () => h.rest(G, 'v1', 'validatingadmissionpolicies');
const bindings = () => h.rest(G, 'v1', 'validatingadmissionpolicybindings');

function deployment(namespace: string, name: string, replicas: number, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'x' } },
      template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    },
  };
}

function attrsFor(
  obj: KubeObject,
  operation: AdmissionAttributes['operation'] = 'CREATE',
  oldObject: KubeObject | null = null,
): AdmissionAttributes {
  return {
    operation,
    resource: h.rest('apps', 'v1', 'deployments').info,
    namespace: obj.metadata.namespace ?? '',
    name: obj.metadata.name ?? '',
    object: operation === 'DELETE' ? null : obj,
    oldObject,
    dryRun: false,
    user: admin,
  };
}

async function admit(
  obj: KubeObject,
  operation: AdmissionAttributes['operation'] = 'CREATE',
): Promise<{ err?: StatusError; rc: AdmissionRequestContext }> {
  const rc: AdmissionRequestContext = { warnings: [], auditAnnotations: {} };
  try {
    await plugin.validate!(attrsFor(obj, operation, operation === 'CREATE' ? null : obj), rc);
    return { rc };
  } catch (err) {
    assert.ok(err instanceof StatusError, String(err));
    return { err, rc };
  }
}

/** polls until the plugin's informers see the change (a generous deadline, no timing assumption) */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, 'condition not reached');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const replicasRule = { operations: ['CREATE', 'UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] };

async function createPolicy(name: string, spec: Record<string, unknown>) {
  await policies().create(ctx(), { apiVersion: `${G}/v1`, kind: 'ValidatingAdmissionPolicy', metadata: { name }, spec });
}
async function createBinding(name: string, spec: Record<string, unknown>) {
  await bindings().create(ctx(), { apiVersion: `${G}/v1`, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name }, spec });
}
async function deleteBinding(name: string) {
  await bindings().delete(ctx(), name, {});
}

test("Deny: the first failing validation is kube's error; deleting the binding lifts it", async () => {
  await createPolicy('max-replicas', {
    failurePolicy: 'Fail',
    matchConstraints: { resourceRules: [replicasRule] },
    validations: [{ expression: 'object.spec.replicas <= 5' }],
  });
  await createBinding('max-replicas-deny', { policyName: 'max-replicas', validationActions: ['Deny'] });
  await eventually(async () => (await admit(deployment('prod', 'web', 6))).err !== undefined);
  const { err } = await admit(deployment('prod', 'web', 6));
  assert.equal(err!.code, 422);
  assert.equal(err!.reason, 'Invalid');
  assert.equal(
    err!.message,
    `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-deny' denied request: failed expression: object.spec.replicas <= 5`,
  );
  assert.deepEqual(err!.details, {
    name: 'web',
    group: 'apps',
    kind: 'deployments',
    causes: [
      {
        message: `ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-deny' denied request: failed expression: object.spec.replicas <= 5`,
      },
    ],
  });
  assert.equal((await admit(deployment('prod', 'web', 5))).err, undefined);
  // a DELETE is not in the rule's operations
  assert.equal((await admit(deployment('prod', 'web', 6), 'DELETE')).err, undefined);
  await deleteBinding('max-replicas-deny');
  await eventually(async () => (await admit(deployment('prod', 'web', 6))).err === undefined);
});

test('Warn and Audit: the request passes with a warning and the validation_failure annotation', async () => {
  await createPolicy('warn-replicas', {
    matchConstraints: { resourceRules: [replicasRule] },
    validations: [{ expression: 'object.spec.replicas <= 2', messageExpression: "'replicas ' + string(object.spec.replicas) + ' > 2'" }],
    auditAnnotations: [{ key: 'replicas', valueExpression: 'string(object.spec.replicas)' }],
  });
  await createBinding('warn-replicas', { policyName: 'warn-replicas', validationActions: ['Warn', 'Audit'] });
  await eventually(async () => (await admit(deployment('dev', 'a', 3))).rc.warnings.length > 0);
  const { err, rc } = await admit(deployment('dev', 'a', 3));
  assert.equal(err, undefined);
  assert.deepEqual(rc.warnings, [
    `Validation failed for ValidatingAdmissionPolicy 'warn-replicas' with binding 'warn-replicas': replicas 3 > 2`,
  ]);
  assert.equal(rc.auditAnnotations['warn-replicas/replicas'], '3');
  assert.deepEqual(JSON.parse(rc.auditAnnotations['validation.policy.admission.k8s.io/validation_failure']!), [
    {
      message: 'replicas 3 > 2',
      policy: 'warn-replicas',
      binding: 'warn-replicas',
      expressionIndex: 0,
      validationActions: ['Warn', 'Audit'],
    },
  ]);
  await deleteBinding('warn-replicas');
  await eventually(async () => (await admit(deployment('dev', 'a', 3))).rc.warnings.length === 0);
});

test('params: a ConfigMap sets the limit; a missing one follows parameterNotFoundAction', async () => {
  await h
    .rest('', 'v1', 'configmaps')
    .create(ctx('prod'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'limits', namespace: 'prod' }, data: { max: '3' } });
  await createPolicy('param-replicas', {
    paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    matchConstraints: { resourceRules: [replicasRule] },
    variables: [{ name: 'max', expression: 'int(params.data.max)' }],
    validations: [{ expression: 'object.spec.replicas <= variables.max', reason: 'Forbidden', message: 'too many replicas' }],
  });
  await createBinding('param-replicas', {
    policyName: 'param-replicas',
    validationActions: ['Deny'],
    paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' },
    matchResources: { namespaceSelector: { matchLabels: { env: 'prod' } } },
  });
  await eventually(async () => (await admit(deployment('prod', 'p', 4))).err !== undefined);
  const { err } = await admit(deployment('prod', 'p', 4));
  assert.equal(err!.code, 403);
  assert.equal(err!.reason, 'Forbidden');
  assert.match(err!.message, /with binding 'param-replicas' denied request: too many replicas$/);
  assert.equal((await admit(deployment('prod', 'p', 3))).err, undefined);
  // namespaceSelector: dev is not selected
  assert.equal((await admit(deployment('dev', 'p', 9))).err, undefined);
  // the param changes the limit at once (read at request time)
  await h.rest('', 'v1', 'configmaps').update(ctx('prod'), 'limits', (cur) => ({ ...cur!, data: { max: '10' } }), { allowCreate: false });
  assert.equal((await admit(deployment('prod', 'p', 9))).err, undefined);
  // no param and Deny: a configuration error under failurePolicy Fail
  await h.rest('', 'v1', 'configmaps').delete(ctx('prod'), 'limits', {});
  const missing = await admit(deployment('prod', 'p', 1));
  assert.match(
    missing.err!.message,
    /denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction$/,
  );
  await deleteBinding('param-replicas');
});

test('matchConditions, objectSelector, excludeResourceRules and failurePolicy Ignore', async () => {
  await createPolicy('labelled', {
    failurePolicy: 'Ignore',
    matchConstraints: {
      resourceRules: [replicasRule],
      excludeResourceRules: [{ ...replicasRule, resourceNames: ['excluded'] }],
      objectSelector: { matchLabels: { check: 'yes' } },
    },
    matchConditions: [{ name: 'not-system', expression: "request.userInfo.username != 'system:skip'" }],
    validations: [{ expression: 'object.spec.replicas < 2' }, { expression: 'object.spec.nothere == 1' }],
  });
  await createBinding('labelled', { policyName: 'labelled', validationActions: ['Deny'] });
  await eventually(async () => (await admit(deployment('dev', 'l', 3, { check: 'yes' }))).err !== undefined);
  // the erroring second validation is ignored; the first denies
  const { err } = await admit(deployment('dev', 'l', 3, { check: 'yes' }));
  assert.match(err!.message, /denied request: failed expression: object.spec.replicas < 2$/);
  assert.equal((await admit(deployment('dev', 'l', 1, { check: 'yes' }))).err, undefined);
  assert.equal((await admit(deployment('dev', 'l', 3))).err, undefined);
  assert.equal((await admit(deployment('dev', 'excluded', 3, { check: 'yes' }))).err, undefined);
  await deleteBinding('labelled');
});

test('failurePolicy Fail turns an evaluation error into a denial', async () => {
  await createPolicy('broken', {
    matchConstraints: { resourceRules: [replicasRule] },
    validations: [{ expression: 'object.spec.nothere == 1' }],
  });
  await createBinding('broken', { policyName: 'broken', validationActions: ['Deny'] });
  await eventually(async () => (await admit(deployment('dev', 'b', 1))).err !== undefined);
  const { err } = await admit(deployment('dev', 'b', 1));
  assert.equal(err!.code, 422);
  assert.match(
    err!.message,
    /ValidatingAdmissionPolicy 'broken' with binding 'broken' denied request: expression 'object.spec.nothere == 1' resulted in error: /,
  );
  await deleteBinding('broken');
});

test('every policy gets status.observedGeneration and its typeChecking, renewed with each generation', async () => {
  await createPolicy('status-policy', { matchConstraints: { resourceRules: [replicasRule] }, validations: [{ expression: 'true' }] });
  await eventually(
    async () =>
      ((await policies().get(ctx(), 'status-policy', {}))['status'] as { observedGeneration?: number } | undefined)?.observedGeneration ===
      1,
  );
  assert.deepEqual((await policies().get(ctx(), 'status-policy', {}))['status'], { observedGeneration: 1, typeChecking: {} });
  await policies().update(
    ctx(),
    'status-policy',
    (cur) => ({ ...cur!, spec: { ...(cur!['spec'] as object), validations: [{ expression: 'object.spec.nosuch' }] } }),
    { allowCreate: false },
  );
  await eventually(
    async () =>
      ((await policies().get(ctx(), 'status-policy', {}))['status'] as { observedGeneration?: number } | undefined)?.observedGeneration ===
      2,
  );
  assert.deepEqual(((await policies().get(ctx(), 'status-policy', {}))['status'] as { typeChecking?: unknown }).typeChecking, {
    expressionWarnings: [
      {
        fieldRef: 'spec.validations[0].expression',
        warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'nosuch'\n | object.spec.nosuch\n | ...........^\n",
      },
    ],
  });
  await policies().update(
    ctx(),
    'status-policy',
    (cur) => ({ ...cur!, spec: { ...(cur!['spec'] as object), validations: [{ expression: 'object.spec.replicas > 0' }] } }),
    { allowCreate: false },
  );
  await eventually(
    async () =>
      ((await policies().get(ctx(), 'status-policy', {}))['status'] as { observedGeneration?: number } | undefined)?.observedGeneration ===
      3,
  );
  assert.deepEqual(((await policies().get(ctx(), 'status-policy', {}))['status'] as { typeChecking?: unknown }).typeChecking, {});
});
