import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Authorizer } from '../authorizer.js';
import { StatusError } from '../../machinery/status.js';
import { createRbacAuthorizer } from './authorizer.js';
import { checkBindingWrite, checkRoleWrite, confirmNoEscalation } from './escalation.js';
import { RuleResolver } from './resolver.js';
import { staticRbacStore } from './store.js';
import { RBAC_GROUP } from './types.js';

const bob = { username: 'bob', groups: ['system:authenticated'] };
const store = staticRbacStore({
  clusterRoles: [
    { namespace: '', name: 'pod-reader', rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }] },
    { namespace: '', name: 'secret-reader', rules: [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }] },
    {
      namespace: '',
      name: 'binder',
      rules: [{ verbs: ['bind'], apiGroups: [RBAC_GROUP], resources: ['clusterroles'], resourceNames: ['secret-reader'] }],
    },
    { namespace: '', name: 'escalator', rules: [{ verbs: ['escalate'], apiGroups: [RBAC_GROUP], resources: ['roles'] }] },
  ],
  roleBindings: [
    {
      namespace: 'a',
      name: 'bob-reads',
      subjects: [{ kind: 'User', name: 'bob', apiGroup: RBAC_GROUP }],
      roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: 'pod-reader' },
    },
    {
      namespace: 'a',
      name: 'bob-binds',
      subjects: [{ kind: 'User', name: 'bob', apiGroup: RBAC_GROUP }],
      roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: 'binder' },
    },
    {
      namespace: 'b',
      name: 'bob-escalates',
      subjects: [{ kind: 'Group', name: 'system:authenticated', apiGroup: RBAC_GROUP }],
      roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: 'escalator' },
    },
    {
      namespace: 'a',
      name: 'dangling',
      subjects: [{ kind: 'User', name: 'bob', apiGroup: RBAC_GROUP }],
      roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name: 'missing' },
    },
  ],
});
const resolver = new RuleResolver(store);
const authorizer: Authorizer = createRbacAuthorizer(resolver);
const deps = { authorizer, resolver };

async function forbidden(p: Promise<void>): Promise<string> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof StatusError);
    assert.equal(err.code, 403);
    return err.message;
  }
  assert.fail('expected a 403');
}

describe('RBAC escalation prevention', () => {
  it('a role within what the writer holds is allowed; more is refused with kube text', async () => {
    await checkRoleWrite(deps, bob, 'roles', 'a', 'r', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], 'none');
    const msg = await forbidden(
      checkRoleWrite(deps, bob, 'roles', 'a', 'r', [{ verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods'] }], 'none'),
    );
    assert.equal(
      msg,
      'roles.rbac.authorization.k8s.io "r" is forbidden: user "bob" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}; resolution errors: [role.rbac.authorization.k8s.io "missing" not found]',
    );
    // the same rules at another scope are not held
    await forbidden(checkRoleWrite(deps, bob, 'roles', 'c', 'r', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], 'none'));
  });

  it('escalate on roles lifts the check; system:masters always passes', async () => {
    await checkRoleWrite(deps, bob, 'roles', 'b', 'r', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], 'none');
    await checkRoleWrite(
      deps,
      { username: 'root', groups: ['system:masters'] },
      'clusterroles',
      '',
      'r',
      [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      'set',
    );
  });

  it('bindings: held rules or bind on that role name', async () => {
    const ref = (name: string) => ({ apiGroup: RBAC_GROUP, kind: 'ClusterRole', name });
    await checkBindingWrite(deps, bob, 'rolebindings', 'a', 'x', ref('pod-reader'));
    await checkBindingWrite(deps, bob, 'rolebindings', 'a', 'x', ref('secret-reader'));
    const msg = await forbidden(checkBindingWrite(deps, bob, 'rolebindings', 'a', 'x', ref('escalator')));
    assert.match(
      msg,
      /^rolebindings\.rbac\.authorization\.k8s\.io "x" is forbidden: user "bob" .*attempting to grant RBAC permissions not currently held:\n\{APIGroups:\["rbac\.authorization\.k8s\.io"\], Resources:\["roles"\], Verbs:\["escalate"\]\}/,
    );
    await forbidden(checkBindingWrite(deps, bob, 'clusterrolebindings', '', 'x', ref('secret-reader')));
  });

  it('confirmNoEscalation is quiet when covered', () => {
    assert.equal(confirmNoEscalation(resolver, bob, 'a', [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }]), undefined);
  });

  it('the RBAC authorizer names the binding that allowed, and resolution errors otherwise', async () => {
    const attrs = {
      user: bob,
      verb: 'get',
      isResourceRequest: true,
      path: '',
      apiGroup: '',
      apiVersion: 'v1',
      resource: 'pods',
      subresource: '',
      namespace: 'a',
      name: 'p',
    };
    assert.deepEqual(await authorizer.authorize(attrs), {
      decision: 'allow',
      reason: 'RBAC: allowed by RoleBinding "bob-reads/a" of ClusterRole "pod-reader" to User "bob"',
    });
    assert.deepEqual(await authorizer.authorize({ ...attrs, verb: 'delete' }), {
      decision: 'noOpinion',
      reason: 'RBAC: role.rbac.authorization.k8s.io "missing" not found',
    });
  });
});
