import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../../../storage/interface.js';
import type { ResourceInfo } from '../../apis/types.js';
import type { AdmissionAttributes } from '../../registry/rest.js';
import { MatchConfigError, matchesResources, type MatchEnvironment } from './matching.js';

function info(group: string, version: string, resource: string, kind: string, namespaced = true): ResourceInfo {
  return {
    group,
    version,
    resource,
    kind,
    namespaced,
    singularName: kind.toLowerCase(),
    listKind: `${kind}List`,
    verbs: [],
    shortNames: [],
    categories: [],
    subresources: [{ name: 'scale', kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: [] }],
    storageVersion: version,
    preferredVersion: version,
    storageVersionHash: '',
    definition: '',
  };
}

const deployments = info('apps', 'v1', 'deployments', 'Deployment');
const hpaV2 = info('autoscaling', 'v2', 'horizontalpodautoscalers', 'HorizontalPodAutoscaler');
const hpaV1 = info('autoscaling', 'v1', 'horizontalpodautoscalers', 'HorizontalPodAutoscaler');
const namespaces = info('', 'v1', 'namespaces', 'Namespace', false);
const nodes = info('', 'v1', 'nodes', 'Node', false);

const nsLabels: Record<string, Record<string, string>> = { prod: { env: 'prod' }, dev: { env: 'dev' } };
const env: MatchEnvironment = {
  namespaceLabels: async (name) => nsLabels[name],
  equivalents: (r) => (r.resource === 'horizontalpodautoscalers' ? [hpaV1, hpaV2] : [r]),
};

function attrs(resource: ResourceInfo, over: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  const obj: KubeObject = {
    apiVersion: 'x',
    kind: resource.kind,
    metadata: { name: 'n', namespace: resource.namespaced ? 'prod' : undefined, labels: { app: 'a' } },
  };
  return {
    operation: 'CREATE',
    resource,
    namespace: resource.namespaced ? 'prod' : '',
    name: 'n',
    object: obj,
    oldObject: null,
    dryRun: false,
    user: { username: 'u', groups: [] },
    ...over,
  };
}

const rule = (o: Record<string, unknown> = {}) => ({
  operations: ['CREATE'],
  apiGroups: ['apps'],
  apiVersions: ['v1'],
  resources: ['deployments'],
  ...o,
});

test('resource rules: operations, groups, versions, resources, names, wildcards and subresources', async () => {
  const m = (criteria: Parameters<typeof matchesResources>[0], a = attrs(deployments)) =>
    matchesResources(criteria, a, env, { required: true }).then((r) => r.matches);
  assert.equal(await m({ resourceRules: [rule()] }), true);
  assert.equal(await m({ resourceRules: [rule({ operations: ['UPDATE'] })] }), false);
  assert.equal(await m({ resourceRules: [rule({ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] })] }), true);
  assert.equal(await m({ resourceRules: [rule({ resourceNames: ['other'] })] }), false);
  assert.equal(await m({ resourceRules: [rule({ resourceNames: ['n'] })] }), true);
  const scale = attrs(deployments, { subresource: 'scale', operation: 'CREATE' });
  assert.equal(await m({ resourceRules: [rule()] }, scale), false);
  assert.equal(await m({ resourceRules: [rule({ resources: ['*'] })] }, scale), false);
  assert.equal(await m({ resourceRules: [rule({ resources: ['deployments/scale'] })] }, scale), true);
  assert.equal(await m({ resourceRules: [rule({ resources: ['*/*'] })] }, scale), true);
  assert.equal(await m({ resourceRules: [rule({ scope: 'Cluster' })] }), false);
  assert.equal(await m({ resourceRules: [rule({ scope: 'Namespaced' })] }), true);
  assert.equal(await m({ resourceRules: [rule()], excludeResourceRules: [rule({ resourceNames: ['n'] })] }), false);
  // no rules: everything
  assert.equal(await m({}), true);
});

test('matchPolicy Equivalent matches another version of the resource; Exact does not', async () => {
  const a = attrs(hpaV2);
  const c = {
    resourceRules: [{ operations: ['CREATE'], apiGroups: ['autoscaling'], apiVersions: ['v1'], resources: ['horizontalpodautoscalers'] }],
  };
  const eq = await matchesResources({ ...c, matchPolicy: 'Equivalent' }, a, env, { required: true });
  assert.equal(eq.matches, true);
  assert.deepEqual(eq.resource, { group: 'autoscaling', version: 'v1', resource: 'horizontalpodautoscalers' });
  assert.deepEqual(eq.kind, { group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler' });
  assert.equal((await matchesResources({ ...c, matchPolicy: 'Exact' }, a, env, { required: true })).matches, false);
});

test('namespaceSelector: the namespace labels; cluster-scoped objects always; a Namespace by its own labels', async () => {
  const sel = { namespaceSelector: { matchLabels: { env: 'prod' } } };
  assert.equal((await matchesResources(sel, attrs(deployments), env, { required: true })).matches, true);
  assert.equal((await matchesResources(sel, attrs(deployments, { namespace: 'dev' }), env, { required: true })).matches, false);
  assert.equal((await matchesResources(sel, attrs(nodes), env, { required: true })).matches, true);
  const ns = attrs(namespaces, { object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x', labels: { env: 'prod' } } } });
  assert.equal((await matchesResources(sel, ns, env, { required: true })).matches, true);
  const other = attrs(namespaces, { object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } } });
  assert.equal((await matchesResources(sel, other, env, { required: true })).matches, false);
  await assert.rejects(matchesResources(sel, attrs(deployments, { namespace: 'gone' }), env, { required: true }), MatchConfigError);
});

test('objectSelector: the object or the old object; missing constraints are an error only for policies', async () => {
  const sel = { objectSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['a'] }] } };
  assert.equal((await matchesResources(sel, attrs(deployments), env, { required: true })).matches, true);
  const unlabelled = attrs(deployments, { object: { apiVersion: 'x', kind: 'Deployment', metadata: { name: 'n' } } });
  assert.equal((await matchesResources(sel, unlabelled, env, { required: true })).matches, false);
  const del = attrs(deployments, {
    operation: 'DELETE',
    object: null,
    oldObject: { apiVersion: 'x', kind: 'Deployment', metadata: { name: 'n', labels: { app: 'a' } } },
  });
  assert.equal((await matchesResources(sel, del, env, { required: true })).matches, true);
  await assert.rejects(
    matchesResources(undefined, attrs(deployments), env, { required: true }),
    /policy contained no match constraints, a required field/,
  );
  assert.equal((await matchesResources(undefined, attrs(deployments), env, { required: false })).matches, true);
});
