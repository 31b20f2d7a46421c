// Classification against kube-apiserver 1.33's default FlowSchemas: who lands where.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nonResourceInfo, parseRequestInfo } from '../request/request-info.js';
import type { UserInfo } from '../machinery/user.js';
import { mandatoryFlowSchemas, mandatoryPriorityLevels, suggestedFlowSchemas, suggestedPriorityLevels } from './bootstrap.js';
import { FlowController } from './controller.js';
import { matchesFlowSchema, sortFlowSchemas } from './classifier.js';
import { parseFlowSchema } from './config.js';

function controller(): FlowController {
  const c = new FlowController({ serverConcurrencyLimit: 600 });
  c.update([...mandatoryFlowSchemas(), ...suggestedFlowSchemas()], [...mandatoryPriorityLevels(), ...suggestedPriorityLevels()]);
  return c;
}

const resource = (method: string, path: string) => parseRequestInfo(method, path, new URLSearchParams());
const schemaOf = (c: FlowController, user: UserInfo, method: string, path: string) =>
  c.classify({ user, info: path.startsWith('/api') ? resource(method, path) : nonResourceInfo(method, path) });

const authed = (username: string, ...groups: string[]): UserInfo => ({ username, groups: [...groups, 'system:authenticated'] });

describe('classification with the default configuration', () => {
  const c = controller();

  it('system:masters is exempt, for resources and non-resource URLs alike', () => {
    const admin = authed('kubernetes-admin', 'system:masters');
    for (const [m, p] of [
      ['GET', '/api/v1/namespaces'],
      ['POST', '/api/v1/namespaces/default/configmaps'],
      ['GET', '/metrics'],
    ] as const) {
      const r = schemaOf(c, admin, m, p);
      assert.equal(r.classification.flowSchema, 'exempt');
      assert.equal(r.classification.priorityLevel, 'exempt');
      assert.equal(r.classification.exempt, true);
    }
  });

  it('probes are exempt for anyone, sub-paths included', () => {
    const anon: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };
    assert.equal(schemaOf(c, anon, 'GET', '/readyz').classification.flowSchema, 'probes');
    assert.equal(schemaOf(c, anon, 'GET', '/healthz/etcd').classification.flowSchema, 'probes');
    assert.equal(schemaOf(c, anon, 'GET', '/version').classification.flowSchema, 'global-default');
  });

  it('a node: node-high for its Node and Lease, system-nodes for the rest', () => {
    const node = authed('system:node:n1', 'system:nodes');
    assert.equal(schemaOf(c, node, 'PUT', '/api/v1/nodes/n1/status').classification.flowSchema, 'system-node-high');
    assert.equal(
      schemaOf(c, node, 'PUT', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1').classification.flowSchema,
      'system-node-high',
    );
    const pods = schemaOf(c, node, 'GET', '/api/v1/namespaces/default/pods');
    assert.equal(pods.classification.flowSchema, 'system-nodes');
    assert.equal(pods.classification.priorityLevel, 'system');
    assert.equal(pods.distinguisher, 'system:node:n1');
  });

  it('service accounts: kube-system ones by namespace at workload-high, others at workload-low', () => {
    const ks = authed(
      'system:serviceaccount:kube-system:replicaset-controller',
      'system:serviceaccounts',
      'system:serviceaccounts:kube-system',
    );
    const r = schemaOf(c, ks, 'GET', '/apis/apps/v1/namespaces/team/replicasets');
    assert.equal(r.classification.flowSchema, 'kube-system-service-accounts');
    assert.equal(r.classification.priorityLevel, 'workload-high');
    assert.equal(r.distinguisher, 'team');
    assert.equal(
      schemaOf(c, ks, 'PUT', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x').classification.flowSchema,
      'system-leader-election',
    );
    assert.equal(
      schemaOf(c, ks, 'GET', '/api/v1/namespaces/kube-system/configmaps/x').classification.flowSchema,
      'workload-leader-election',
    );
    const other = authed('system:serviceaccount:team:builder', 'system:serviceaccounts', 'system:serviceaccounts:team');
    const o = schemaOf(c, other, 'GET', '/api/v1/namespaces/team/pods');
    assert.equal(o.classification.flowSchema, 'service-accounts');
    assert.equal(o.classification.priorityLevel, 'workload-low');
    // a namespace that merely starts with kube-system is not kube-system
    const lookalike = authed('system:serviceaccount:kube-systemx:a', 'system:serviceaccounts');
    assert.equal(schemaOf(c, lookalike, 'GET', '/api/v1/pods').classification.flowSchema, 'service-accounts');
  });

  it('controller manager and scheduler users', () => {
    const kcm = authed('system:kube-controller-manager');
    assert.equal(schemaOf(c, kcm, 'PUT', '/api/v1/namespaces/default/endpoints/x').classification.flowSchema, 'endpoint-controller');
    assert.equal(schemaOf(c, kcm, 'GET', '/api/v1/pods').classification.flowSchema, 'kube-controller-manager');
    assert.equal(schemaOf(c, authed('system:kube-scheduler'), 'GET', '/api/v1/pods').classification.flowSchema, 'kube-scheduler');
  });

  it('anyone else: global-default by user; catch-all once global-default is gone', () => {
    const jane = authed('jane', 'dev');
    const r = schemaOf(c, jane, 'DELETE', '/api/v1/namespaces/a/pods/p');
    assert.equal(r.classification.flowSchema, 'global-default');
    assert.equal(r.distinguisher, 'jane');
    const bare = new FlowController({ serverConcurrencyLimit: 600 });
    bare.update([...mandatoryFlowSchemas()], [...mandatoryPriorityLevels()]);
    assert.equal(bare.classify({ user: jane, info: resource('GET', '/api/v1/pods') }).classification.flowSchema, 'catch-all');
  });

  it('without any objects the mandatory ones are imagined (no UIDs)', () => {
    const empty = new FlowController({ serverConcurrencyLimit: 10 });
    const r = empty.classify({ user: authed('jane'), info: resource('GET', '/api/v1/pods') });
    assert.deepEqual(r.classification, {
      flowSchema: 'catch-all',
      flowSchemaUID: '',
      priorityLevel: 'catch-all',
      priorityLevelUID: '',
      exempt: false,
    });
  });

  it('a FlowSchema whose level does not exist is dangling and skipped', () => {
    const c2 = new FlowController({ serverConcurrencyLimit: 10 });
    const fs = { ...suggestedFlowSchemas().find((f) => f.metadata.name === 'global-default')!, metadata: { name: 'x', uid: 'u1' } };
    c2.update([fs], mandatoryPriorityLevels());
    assert.equal(c2.danglingSchemas().get('x'), true);
    assert.equal(c2.classify({ user: authed('jane'), info: resource('GET', '/api/v1/pods') }).classification.flowSchema, 'catch-all');
  });
});

describe('rule matching details', () => {
  const schema = (rules: unknown[], precedence = 100, name = 's') =>
    parseFlowSchema({
      metadata: { name, uid: name },
      spec: { priorityLevelConfiguration: { name: 'global-default' }, matchingPrecedence: precedence, rules },
    })!;
  const jane = authed('jane', 'dev');

  it('resource rules: verbs, groups, resources with subresources, namespaces, clusterScope', () => {
    const fs = schema([
      {
        subjects: [{ kind: 'Group', group: { name: 'dev' } }],
        resourceRules: [{ verbs: ['get'], apiGroups: ['apps'], resources: ['deployments/scale'], namespaces: ['team'] }],
      },
    ]);
    const d = (m: string, p: string) => ({ user: jane, info: resource(m, p) });
    assert.equal(matchesFlowSchema(d('GET', '/apis/apps/v1/namespaces/team/deployments/x/scale'), fs), true);
    assert.equal(matchesFlowSchema(d('GET', '/apis/apps/v1/namespaces/other/deployments/x/scale'), fs), false);
    assert.equal(matchesFlowSchema(d('PUT', '/apis/apps/v1/namespaces/team/deployments/x/scale'), fs), false);
    assert.equal(matchesFlowSchema(d('GET', '/apis/apps/v1/namespaces/team/deployments/x'), fs), false);
    assert.equal(matchesFlowSchema(d('GET', '/apis/apps/v1/deployments'), fs), false, 'cluster scope not allowed');
  });

  it('subjects: User "*", ServiceAccount by name', () => {
    const any = schema([
      { subjects: [{ kind: 'User', user: { name: '*' } }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['/apis/*'] }] },
    ]);
    assert.equal(matchesFlowSchema({ user: jane, info: nonResourceInfo('GET', '/apis/x') }, any), true);
    assert.equal(matchesFlowSchema({ user: jane, info: nonResourceInfo('GET', '/api') }, any), false);
    const sa = schema([
      {
        subjects: [{ kind: 'ServiceAccount', serviceAccount: { namespace: 'team', name: 'bot' } }],
        nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['*'] }],
      },
    ]);
    assert.equal(matchesFlowSchema({ user: authed('system:serviceaccount:team:bot'), info: nonResourceInfo('GET', '/x') }, sa), true);
    assert.equal(matchesFlowSchema({ user: authed('system:serviceaccount:team:bot2'), info: nonResourceInfo('GET', '/x') }, sa), false);
  });

  it('order: lower matchingPrecedence first, ties by name', () => {
    const sorted = sortFlowSchemas([schema([], 500, 'b'), schema([], 500, 'a'), schema([], 10, 'z')]);
    assert.deepEqual(
      sorted.map((s) => s.name),
      ['z', 'a', 'b'],
    );
  });
});
