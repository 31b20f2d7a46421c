import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AuthorizationAttributes } from '../authorizer.js';
import { createRbacAuthorizer } from './authorizer.js';
import { RuleResolver } from './resolver.js';
import { staticRbacStore, type StaticRbac } from './store.js';

const attrs = (o: Partial<AuthorizationAttributes>): AuthorizationAttributes => ({
  user: { username: 'jane', groups: ['system:authenticated'] },
  verb: 'get',
  isResourceRequest: true,
  path: '/api/v1/namespaces/ns/configmaps/a',
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'configmaps',
  subresource: '',
  namespace: 'ns',
  name: 'a',
  ...o,
});

describe('RBAC decisions remembered per generation', () => {
  // the store is read live, so a change made without a new generation shows what was remembered
  const data: StaticRbac = {
    roles: [{ namespace: 'ns', name: 'reader', rules: [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }] }],
    roleBindings: [
      {
        namespace: 'ns',
        name: 'jane-reads',
        subjects: [{ kind: 'User', name: 'jane' }],
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
      },
    ],
  };
  let generation: number | undefined = 1;
  const rbac = createRbacAuthorizer(new RuleResolver(staticRbacStore(data)), undefined, () => generation);

  it('answers again from memory until the RBAC objects change', async () => {
    const allowed = await rbac.authorize(attrs({}));
    assert.deepEqual(allowed, {
      decision: 'allow',
      reason: 'RBAC: allowed by RoleBinding "jane-reads/ns" of Role "reader" to User "jane"',
    });
    data.roleBindings = [];
    assert.deepEqual(await rbac.authorize(attrs({})), allowed);
    generation = 2;
    assert.equal((await rbac.authorize(attrs({}))).decision, 'noOpinion');
  });

  it('tells apart users, groups, verbs, namespaces and names', async () => {
    data.roleBindings = [
      {
        namespace: 'ns',
        name: 'team-reads',
        subjects: [{ kind: 'Group', name: 'team' }],
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
      },
    ];
    generation = 3;
    const member = { username: 'jane', groups: ['team', 'system:authenticated'] };
    assert.equal((await rbac.authorize(attrs({ user: member }))).decision, 'allow');
    assert.equal((await rbac.authorize(attrs({}))).decision, 'noOpinion');
    assert.equal((await rbac.authorize(attrs({ user: member, verb: 'delete' }))).decision, 'noOpinion');
    assert.equal((await rbac.authorize(attrs({ user: member, namespace: 'other' }))).decision, 'noOpinion');
    assert.equal((await rbac.authorize(attrs({ user: member, name: 'b' }))).decision, 'allow');
  });

  it('remembers nothing while the objects are not watched', async () => {
    generation = undefined;
    data.roleBindings = [];
    const member = { username: 'jane', groups: ['team', 'system:authenticated'] };
    assert.equal((await rbac.authorize(attrs({ user: member }))).decision, 'noOpinion');
  });
});
