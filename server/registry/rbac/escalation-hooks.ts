// The escalation checks kube runs in its RBAC policy-based storage, as strategy hooks around
// the RBAC strategies (validation and defaulting live in rbac.ts): before a Role or
// ClusterRole is written its writer must hold every rule it grants (or may `escalate`), and
// before a binding is written its writer must hold the bound role's rules at the binding's
// scope (or may `bind` that role). Writes that only touch ownerReferences or finalizers are
// never checked, so the garbage collector can always proceed. server/authz/rbac/escalation.ts
// decides; the hooks run before validation, as kube's checks do.

import type { KubeObject } from '../../../storage/interface.js';
import { checkBindingWrite, checkRoleWrite, type EscalationDeps } from '../../authz/rbac/escalation.js';
import { roleRefOf, rulesOf, type RoleRef } from '../../authz/rbac/types.js';
import { errors } from '../../machinery/status.js';
import { clone, semanticEqual } from '../object.js';
import type { RESTResource } from '../rest.js';
import type { FinishFunc, ResourceStrategy, StrategyContext } from '../strategy.js';

export type { EscalationDeps };

export type RbacResource = 'roles' | 'clusterroles' | 'rolebindings' | 'clusterrolebindings';

const noop: FinishFunc = async () => undefined;

/** kube's IsOnlyMutatingGCFields: the update changes nothing but ownerReferences and finalizers */
export function onlyMutatesGCFields(obj: KubeObject, old: KubeObject): boolean {
  const strip = (o: KubeObject) => {
    const c = clone(o);
    const m = c.metadata as Record<string, unknown>;
    for (const k of ['ownerReferences', 'finalizers', 'managedFields', 'resourceVersion', 'generation']) delete m[k];
    return c;
  };
  return semanticEqual(strip(obj), strip(old));
}

function hasAggregationRule(obj: KubeObject): boolean {
  return obj.aggregationRule !== undefined && obj.aggregationRule !== null;
}

export function withEscalationChecks(resource: RbacResource, base: ResourceStrategy, deps: EscalationDeps): ResourceStrategy {
  const isBinding = resource === 'rolebindings' || resource === 'clusterrolebindings';
  const scopeOf = (obj: KubeObject, c: StrategyContext) => (base.namespaced ? obj.metadata.namespace ?? c.request.namespace : '');
  const check = async (obj: KubeObject, c: StrategyContext, old?: KubeObject): Promise<void> => {
    const user = c.request.user;
    const ns = scopeOf(obj, c);
    const name = obj.metadata.name ?? '';
    if (isBinding) {
      await checkBindingWrite(deps, user, resource as 'rolebindings' | 'clusterrolebindings', ns, name, roleRefOf(obj));
      return;
    }
    // setting (or changing) an aggregationRule needs full authority
    const aggregation = hasAggregationRule(obj) && (!old || !semanticEqual(obj.aggregationRule, old.aggregationRule)) ? 'set' : 'none';
    await checkRoleWrite(deps, user, resource as 'roles' | 'clusterroles', ns, name, rulesOf(obj), aggregation);
  };
  return {
    ...base,
    async beginCreate(obj, c) {
      await check(obj, c);
      return (await base.beginCreate?.(obj, c)) ?? noop;
    },
    async beginUpdate(obj, old, c) {
      if (!onlyMutatesGCFields(obj, old)) await check(obj, c, old);
      return (await base.beginUpdate?.(obj, old, c)) ?? noop;
    },
  };
}

/** the escalation checks' dependencies, with the rules of a bound role read from storage
 *  through `handler` (not from a cache that may lag behind a role created a moment ago) */
export function withRoleRulesFromStorage(deps: EscalationDeps, handler: (group: string, version: string, resource: string) => RESTResource | undefined): EscalationDeps {
  const roleRules = async (ref: RoleRef, namespace: string) => {
    const resource = ref.kind === 'Role' ? 'roles' : 'clusterroles';
    const store = handler('rbac.authorization.k8s.io', 'v1', resource);
    if (!store) throw errors.notFound({ group: 'rbac.authorization.k8s.io', resource, name: ref.name });
    const ctx = { user: { username: 'system:apiserver', groups: ['system:masters'] }, namespace: ref.kind === 'Role' ? namespace : '', dryRun: false, fieldValidation: 'Ignore' as const, warnings: [] };
    return rulesOf(await store.get(ctx, ref.name, {}));
  };
  return { roleRules, ...deps };
}
