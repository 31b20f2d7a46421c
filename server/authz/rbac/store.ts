// Where the rule resolver reads RBAC objects from. In the server this is a watch-fed cache
// (informer.ts); tests use `staticRbacStore`. Lookups of missing roles fail with the
// lister's NotFound text, which RBAC reasons and escalation errors quote.

import type { BindingLike, RoleLike } from './types.js';

export interface RbacStore {
  /** throws RbacLookupError when missing */
  getRole(namespace: string, name: string): RoleLike;
  getClusterRole(name: string): RoleLike;
  listRoleBindings(namespace: string): BindingLike[];
  listClusterRoleBindings(): BindingLike[];
}

export class RbacLookupError extends Error {}

export function roleNotFound(kind: 'Role' | 'ClusterRole', name: string): RbacLookupError {
  const resource = kind === 'Role' ? 'role' : 'clusterrole';
  return new RbacLookupError(`${resource}.rbac.authorization.k8s.io ${JSON.stringify(name)} not found`);
}

export interface StaticRbac {
  roles?: RoleLike[];
  clusterRoles?: RoleLike[];
  roleBindings?: BindingLike[];
  clusterRoleBindings?: BindingLike[];
}

export function staticRbacStore(data: StaticRbac): RbacStore {
  return {
    getRole(namespace, name) {
      const r = (data.roles ?? []).find((x) => x.namespace === namespace && x.name === name);
      if (!r) throw roleNotFound('Role', name);
      return r;
    },
    getClusterRole(name) {
      const r = (data.clusterRoles ?? []).find((x) => x.name === name);
      if (!r) throw roleNotFound('ClusterRole', name);
      return r;
    },
    listRoleBindings: (namespace) => (data.roleBindings ?? []).filter((b) => b.namespace === namespace),
    listClusterRoleBindings: () => data.clusterRoleBindings ?? [],
  };
}
