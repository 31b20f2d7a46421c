// Spot checks of the default policy against kube-apiserver 1.33's (what `kubectl get
// clusterrole <name> -o yaml` shows there).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { clusterRoleBindings, controllerRoles, defaultPolicy } from './bootstrap-policy.js';

const policy = defaultPolicy();
const role = (name: string) => {
  const r = policy.clusterRoles.find((x) => x.metadata.name === name);
  assert.ok(r, name);
  return r;
};
const binding = (name: string) => policy.clusterRoleBindings.find((x) => x.metadata.name === name);

describe('default RBAC policy (kube-apiserver 1.33)', () => {
  it('cluster-admin: everything, bound to system:masters', () => {
    assert.deepEqual(role('cluster-admin').rules, [
      { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
      { verbs: ['*'], nonResourceURLs: ['*'] },
    ]);
    assert.deepEqual(binding('cluster-admin')?.subjects, [
      { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:masters' },
    ]);
  });

  it('system:discovery, system:basic-user, system:public-info-viewer, system:monitoring', () => {
    assert.deepEqual(role('system:discovery').rules, [
      {
        verbs: ['get'],
        nonResourceURLs: [
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
          '/healthz',
          '/livez',
          '/openapi',
          '/openapi/*',
          '/readyz',
          '/version',
          '/version/',
        ],
      },
    ]);
    assert.deepEqual(role('system:basic-user').rules, [
      { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'] },
      { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
    ]);
    assert.deepEqual(role('system:public-info-viewer').rules, [
      { verbs: ['get'], nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'] },
    ]);
    assert.deepEqual(role('system:monitoring').rules, [
      {
        verbs: ['get'],
        nonResourceURLs: ['/healthz', '/healthz/*', '/livez', '/livez/*', '/metrics', '/metrics/slis', '/readyz', '/readyz/*'],
      },
    ]);
    assert.deepEqual(
      (binding('system:public-info-viewer')?.subjects as { name: string }[]).map((s: { name: string }) => s.name),
      ['system:authenticated', 'system:unauthenticated'],
    );
    assert.deepEqual(
      (binding('system:discovery')?.subjects as { name: string }[]).map((s: { name: string }) => s.name),
      ['system:authenticated'],
    );
    assert.deepEqual(
      (binding('system:basic-user')?.subjects as { name: string }[]).map((s: { name: string }) => s.name),
      ['system:authenticated'],
    );
  });

  it('admin, edit and view are aggregated; their parts carry the rules', () => {
    assert.deepEqual(role('admin').aggregationRule, {
      clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } }],
    });
    assert.equal(role('admin').rules, undefined);
    assert.equal(role('edit').metadata.labels?.['rbac.authorization.k8s.io/aggregate-to-admin'], 'true');
    assert.equal(role('view').metadata.labels?.['rbac.authorization.k8s.io/aggregate-to-edit'], 'true');
    assert.deepEqual(role('system:aggregate-to-admin').rules, [
      { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['localsubjectaccessreviews'] },
      {
        verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
        apiGroups: ['rbac.authorization.k8s.io'],
        resources: ['rolebindings', 'roles'],
      },
    ]);
    const edit = role('system:aggregate-to-edit').rules as { verbs: string[]; apiGroups: string[]; resources: string[] }[];
    assert.equal(edit.length, 13);
    assert.deepEqual(edit[4], {
      verbs: ['create', 'delete', 'deletecollection', 'patch', 'update'],
      apiGroups: [''],
      resources: [
        'configmaps',
        'events',
        'persistentvolumeclaims',
        'replicationcontrollers',
        'replicationcontrollers/scale',
        'secrets',
        'serviceaccounts',
        'services',
        'services/proxy',
      ],
    });
    // clusters created at 1.22 or later: no endpoints or endpointslices writes
    assert.ok(!edit.some((r) => r.resources.includes('endpoints') || r.resources.includes('endpointslices')));
    const view = role('system:aggregate-to-view').rules as { verbs: string[]; apiGroups: string[]; resources: string[] }[];
    assert.deepEqual(view[0]!.resources, [
      'configmaps',
      'endpoints',
      'persistentvolumeclaims',
      'persistentvolumeclaims/status',
      'pods',
      'replicationcontrollers',
      'replicationcontrollers/scale',
      'serviceaccounts',
      'services',
      'services/status',
    ]);
    assert.ok(!view.some((r) => r.resources.includes('secrets')));
  });

  it('every default object is labelled and annotated for reconciliation', () => {
    for (const o of [...policy.clusterRoles, ...policy.clusterRoleBindings, ...policy.roles, ...policy.roleBindings]) {
      assert.equal(o.metadata.labels?.['kubernetes.io/bootstrapping'], 'rbac-defaults', o.metadata.name);
      assert.equal(o.metadata.annotations?.['rbac.authorization.kubernetes.io/autoupdate'], 'true', o.metadata.name);
    }
  });

  it('controller roles are bound to kube-system service accounts of their names', () => {
    const names = controllerRoles().map((r) => r.name);
    assert.ok(names.includes('system:controller:clusterrole-aggregation-controller'));
    assert.equal(new Set(names).size, names.length);
    const b = binding('system:controller:namespace-controller');
    assert.deepEqual(b?.subjects, [{ kind: 'ServiceAccount', name: 'namespace-controller', namespace: 'kube-system' }]);
    assert.equal(clusterRoleBindings().find((x) => x.name === 'system:node')?.subjects.length, 0);
  });
});
