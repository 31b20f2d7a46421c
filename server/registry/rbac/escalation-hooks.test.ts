import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../storage/interface.js';
import { errors } from '../../machinery/status.js';
import type { ResourceStrategy } from '../strategy.js';
import { statusOf } from '../testing/harness.js';
import { kind } from '../testing/strategies.js';
import type { BindingWrite, EscalationChecker, RoleWrite } from './escalation-checker.js';
import { withEscalationChecks, type RbacResource } from './escalation-hooks.js';

/** answers every check, remembering what it was asked; refuses the names in `refuse` */
function recordingChecker(refuse: ReadonlySet<string> = new Set()) {
  const roles: RoleWrite[] = [];
  const bindings: BindingWrite[] = [];
  const answer = (name: string) =>
    refuse.has(name)
      ? Promise.reject(errors.forbidden({ group: 'rbac.authorization.k8s.io', resource: 'roles', name }, 'refused'))
      : Promise.resolve();
  const checker: EscalationChecker = {
    checkRoleWrite: (w) => (roles.push(w), answer(w.name)),
    checkBindingWrite: (w) => (bindings.push(w), answer(w.name)),
  };
  return { checker, roles, bindings };
}

const noRoles = async (): Promise<KubeObject> => {
  throw new Error('no role is read in these tests');
};

function hooked(resource: RbacResource, checker: EscalationChecker) {
  const k = kind('rbac.authorization.k8s.io', 'v1', resource);
  const strategy: ResourceStrategy = withEscalationChecks(resource, k.strategy, checker, noRoles);
  return { strategy, ctx: k.ctx };
}

const role = (extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'Role',
  metadata: { name: 'r', namespace: 'a' },
  rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
  ...extra,
});

describe('RBAC escalation hooks', () => {
  it('a role write asks the checker with the role, its scope and whether it sets an aggregationRule', async () => {
    const { checker, roles } = recordingChecker();
    const { strategy, ctx } = hooked('clusterroles', checker);
    const aggregated = role({
      kind: 'ClusterRole',
      metadata: { name: 'agg' },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'b' } }] },
    });
    await strategy.beginCreate?.(aggregated, ctx);
    await strategy.beginUpdate?.({ ...aggregated, rules: [] }, aggregated, ctx);
    assert.deepEqual(
      roles.map((w) => [w.resource, w.namespace, w.name, w.setsAggregationRule, w.user.username]),
      [
        ['clusterroles', '', 'agg', true, ctx.request.user.username],
        ['clusterroles', '', 'agg', false, ctx.request.user.username],
      ],
    );
    assert.equal(roles[0]?.role, aggregated);
  });

  it('an update that only changes ownerReferences or finalizers is not checked', async () => {
    const { checker, roles } = recordingChecker();
    const { strategy, ctx } = hooked('roles', checker);
    const old = role();
    const gcOnly = role({
      metadata: {
        name: 'r',
        namespace: 'a',
        finalizers: ['x'],
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'u' }],
      },
    });
    await strategy.beginUpdate?.(gcOnly, old, ctx);
    assert.equal(roles.length, 0);
    await strategy.beginUpdate?.(role({ rules: [] }), old, ctx);
    assert.deepEqual(
      roles.map((w) => [w.resource, w.namespace, w.name]),
      [['roles', 'a', 'r']],
    );
  });

  it('a binding write hands the checker the binding and the role reader; a refusal fails the write', async () => {
    const { checker, bindings } = recordingChecker(new Set(['refused']));
    const { strategy, ctx } = hooked('rolebindings', checker);
    const binding = (name: string): KubeObject => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name, namespace: 'a' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
      subjects: [{ kind: 'User', name: 'bob', apiGroup: 'rbac.authorization.k8s.io' }],
    });
    await strategy.beginCreate?.(binding('allowed'), ctx);
    const err = await statusOf(Promise.resolve(strategy.beginCreate?.(binding('refused'), ctx)));
    assert.equal(err.code, 403);
    assert.deepEqual(
      bindings.map((w) => [w.resource, w.namespace, w.name, w.readRole === noRoles]),
      [
        ['rolebindings', 'a', 'allowed', true],
        ['rolebindings', 'a', 'refused', true],
      ],
    );
  });
});
