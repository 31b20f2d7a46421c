// The escalation checks kube runs in its RBAC policy-based storage, as strategy hooks around
// the RBAC resources' generic strategies (provider.ts): before a Role or ClusterRole is
// written its writer must hold every rule it grants (or may `escalate`), and before a binding
// is written its writer must hold the bound role's rules at the binding's scope (or may
// `bind` that role). Writes that only touch ownerReferences or finalizers are never checked,
// so the garbage collector can always proceed. The EscalationChecker the registry is given
// decides; the hooks run before validation, as kube's checks do.

import type { KubeObject } from '../../../storage/interface.js';
import { errors } from '../../machinery/status.js';
import { clone, semanticEqual } from '../object.js';
import type { RESTResource } from '../rest.js';
import type { FinishFunc, ResourceStrategy, StrategyContext } from '../strategy.js';
import type { BoundRoleReader, EscalationChecker } from './escalation-checker.js';

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

export function withEscalationChecks(
  resource: RbacResource,
  base: ResourceStrategy,
  checker: EscalationChecker,
  readRole: BoundRoleReader,
): ResourceStrategy {
  const scopeOf = (obj: KubeObject, c: StrategyContext) => (base.namespaced ? (obj.metadata.namespace ?? c.request.namespace) : '');
  const check = async (obj: KubeObject, c: StrategyContext, old?: KubeObject): Promise<void> => {
    const write = { user: c.request.user, namespace: scopeOf(obj, c), name: obj.metadata.name ?? '' };
    if (resource === 'rolebindings' || resource === 'clusterrolebindings') {
      await checker.checkBindingWrite({ ...write, resource, binding: obj, readRole });
      return;
    }
    // setting (or changing) an aggregationRule needs full authority
    const setsAggregationRule = hasAggregationRule(obj) && (!old || !semanticEqual(obj.aggregationRule, old.aggregationRule));
    await checker.checkRoleWrite({ ...write, resource, role: obj, setsAggregationRule });
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

/** reads bound roles through `handler`, the registry's own stores */
export function roleReaderFrom(handler: (group: string, version: string, resource: string) => RESTResource | undefined): BoundRoleReader {
  return async (kind, name, bindingNamespace) => {
    const resource = kind === 'Role' ? 'roles' : 'clusterroles';
    const store = handler('rbac.authorization.k8s.io', 'v1', resource);
    if (!store) throw errors.notFound({ group: 'rbac.authorization.k8s.io', resource, name });
    const ctx = {
      user: { username: 'system:apiserver', groups: ['system:masters'] },
      namespace: kind === 'Role' ? bindingNamespace : '',
      dryRun: false,
      fieldValidation: 'Ignore' as const,
      warnings: [],
    };
    return store.get(ctx, name, {});
  };
}
