// Rule matching as kube's rules.Matcher: operations, groups, versions, resources and
// subresources with wildcards, scope; webhooks never see admission configuration objects.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AdmissionAttributes } from '../../registry/rest.js';
import type { ResourceInfo } from '../../apis/types.js';
import { isExemptFromWebhooks, ruleMatches, type RuleTarget } from './rules.js';

const pods: RuleTarget = { operation: 'CREATE', group: '', version: 'v1', resource: 'pods', subresource: '', namespace: 'default' };
const base = { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'] };

test('resources: exact, *, pods/*, */status, */*', () => {
  assert.ok(ruleMatches({ ...base, resources: ['pods'] }, pods));
  assert.ok(!ruleMatches({ ...base, resources: ['configmaps'] }, pods));
  assert.ok(ruleMatches({ ...base, resources: ['*'] }, pods));
  const status = { ...pods, operation: 'UPDATE', subresource: 'status' };
  const upd = { ...base, operations: ['UPDATE'] };
  assert.ok(!ruleMatches({ ...upd, resources: ['*'] }, status), '* is no subresource');
  assert.ok(!ruleMatches({ ...upd, resources: ['pods'] }, status));
  assert.ok(ruleMatches({ ...upd, resources: ['pods/*'] }, status));
  assert.ok(ruleMatches({ ...upd, resources: ['pods/*'] }, { ...status, subresource: '' }), 'pods/* covers pods itself');
  assert.ok(ruleMatches({ ...upd, resources: ['*/status'] }, status));
  assert.ok(!ruleMatches({ ...upd, resources: ['*/scale'] }, status));
  assert.ok(ruleMatches({ ...upd, resources: ['*/*'] }, status));
});

test('operations, groups and versions with *', () => {
  assert.ok(!ruleMatches({ ...base, operations: ['UPDATE'], resources: ['pods'] }, pods));
  assert.ok(ruleMatches({ ...base, operations: ['*'], resources: ['pods'] }, pods));
  assert.ok(!ruleMatches({ ...base, apiGroups: ['apps'], resources: ['*'] }, pods));
  assert.ok(ruleMatches({ ...base, apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }, pods));
  assert.ok(!ruleMatches({ ...base, apiVersions: ['v2'], resources: ['*'] }, pods));
  assert.ok(!ruleMatches({ apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }, pods), 'no operations: nothing');
});

test('scope: Namespaced, Cluster and the namespace object itself', () => {
  const rule = { ...base, apiGroups: ['*'], resources: ['*'] };
  const node = { ...pods, resource: 'nodes', namespace: '' };
  const ns = { ...pods, resource: 'namespaces', namespace: '' };
  assert.ok(ruleMatches({ ...rule, scope: 'Namespaced' }, pods));
  assert.ok(!ruleMatches({ ...rule, scope: 'Namespaced' }, node));
  assert.ok(!ruleMatches({ ...rule, scope: 'Namespaced' }, ns));
  assert.ok(ruleMatches({ ...rule, scope: 'Cluster' }, node));
  assert.ok(ruleMatches({ ...rule, scope: 'Cluster' }, ns));
  assert.ok(!ruleMatches({ ...rule, scope: 'Cluster' }, pods));
  assert.ok(ruleMatches({ ...rule, scope: '*' }, node));
});

test('admission configuration objects are exempt', () => {
  const a = (group: string, resource: string) => ({ resource: { group, resource } as ResourceInfo }) as AdmissionAttributes;
  assert.ok(isExemptFromWebhooks(a('admissionregistration.k8s.io', 'validatingwebhookconfigurations')));
  assert.ok(isExemptFromWebhooks(a('admissionregistration.k8s.io', 'validatingadmissionpolicybindings')));
  assert.ok(!isExemptFromWebhooks(a('', 'configmaps')));
});
