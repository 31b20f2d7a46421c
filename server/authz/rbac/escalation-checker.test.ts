import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../storage/interface.js';
import { StatusError } from '../../machinery/status.js';
import { createRbacAuthorizer } from './authorizer.js';
import { rbacEscalationChecker } from './escalation.js';
import { RuleResolver } from './resolver.js';
import { staticRbacStore } from './store.js';
import { RBAC_GROUP } from './types.js';

const bob = { username: 'bob', groups: ['system:authenticated'] };
const resolver = new RuleResolver(
  staticRbacStore({
    clusterRoles: [{ namespace: '', name: 'pod-reader', rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }] }],
    roleBindings: [
      {
        namespace: 'a',
        name: 'bob-reads',
        subjects: [{ kind: 'User', name: 'bob', apiGroup: RBAC_GROUP }],
        roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: 'pod-reader' },
      },
    ],
  }),
);
const checker = rbacEscalationChecker({ authorizer: createRbacAuthorizer(resolver), resolver });

/** roles as the registry's storage has them: `fresh` is not in the authorizer's cache yet */
const stored: Record<string, KubeObject> = {
  'Role/a/fresh': {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'fresh', namespace: 'a' },
    rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
  },
  'Role/a/writer': {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'writer', namespace: 'a' },
    rules: [{ verbs: ['create'], apiGroups: [''], resources: ['pods'] }],
  },
};
const asked: string[] = [];
async function readRole(kind: string, name: string, bindingNamespace: string): Promise<KubeObject> {
  const key = `${kind}/${kind === 'Role' ? bindingNamespace : ''}/${name}`;
  asked.push(key);
  const role = stored[key];
  if (!role) throw new Error(`no ${key}`);
  return role;
}

const binding = (roleName: string): KubeObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'RoleBinding',
  metadata: { name: 'b', namespace: 'a' },
  roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name: roleName },
});

async function refusal(p: Promise<void>): Promise<StatusError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(err instanceof StatusError, 'expected a StatusError');
  assert.equal(err.code, 403);
  return err;
}

describe("the registry's escalation checks, answered by RBAC", () => {
  it('a role write is checked against the rules the writer holds, read from the role object', async () => {
    const role = (verbs: string[]): KubeObject => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'r', namespace: 'a' },
      rules: [{ verbs, apiGroups: [''], resources: ['pods'] }],
    });
    const write = { user: bob, resource: 'roles' as const, namespace: 'a', name: 'r', setsAggregationRule: false };
    await checker.checkRoleWrite({ ...write, role: role(['get']) });
    const err = await refusal(checker.checkRoleWrite({ ...write, role: role(['delete']) }));
    assert.match(
      err.message,
      /^roles\.rbac\.authorization\.k8s\.io "r" is forbidden: user "bob" .*not currently held:\n\{APIGroups:\[""\], Resources:\["pods"\], Verbs:\["delete"\]\}$/,
    );
  });

  it('setting an aggregationRule needs full authority', async () => {
    const role: KubeObject = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'r', namespace: 'a' },
      rules: [],
    };
    const err = await refusal(
      checker.checkRoleWrite({ user: bob, resource: 'roles', namespace: 'a', name: 'r', role, setsAggregationRule: true }),
    );
    assert.match(err.message, /must have cluster-admin privileges to use the aggregationRule$/);
  });

  it("a binding's role is read through the registry's reader, so a role the cache lacks is seen", async () => {
    const write = { user: bob, resource: 'rolebindings' as const, namespace: 'a', name: 'b', readRole };
    await checker.checkBindingWrite({ ...write, binding: binding('fresh') });
    const err = await refusal(checker.checkBindingWrite({ ...write, binding: binding('writer') }));
    assert.match(
      err.message,
      /^rolebindings\.rbac\.authorization\.k8s\.io "b" is forbidden: user "bob" .*not currently held:\n\{APIGroups:\[""\], Resources:\["pods"\], Verbs:\["create"\]\}$/,
    );
    assert.deepEqual(asked, ['Role/a/fresh', 'Role/a/writer']);
  });
});
