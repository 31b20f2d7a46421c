// The RBAC store of a running server: four informers (Roles, ClusterRoles, RoleBindings,
// ClusterRoleBindings) over the registry, parsed objects cached per resourceVersion.

import type { KubeObject } from '../../../storage/interface.js';
import type { ResourceResolver } from '../../registry/rest.js';
import type { Logger } from '../../log.js';
import { startInformer, type Informer } from '../informer.js';
import { roleNotFound, type RbacStore } from './store.js';
import { bindingOf, RBAC_GROUP, roleOf, type BindingLike, type RoleLike } from './types.js';

export interface RbacInformers {
  store: RbacStore;
  roles: Informer;
  clusterRoles: Informer;
  roleBindings: Informer;
  clusterRoleBindings: Informer;
  synced: Promise<void>;
  /** grows with every change to any RBAC object (decisions made before a change are stale) */
  generation(): number;
  stop(): void;
}

function parsedCache<T>(parse: (o: KubeObject) => T): (o: KubeObject) => T {
  const cache = new WeakMap<KubeObject, T>();
  return (o) => {
    let v = cache.get(o);
    if (v === undefined) {
      v = parse(o);
      cache.set(o, v);
    }
    return v;
  };
}

export function startRbacInformers(resolver: ResourceResolver, log: Logger, signal?: AbortSignal): RbacInformers {
  const lookup = (resource: string) => {
    const r = resolver.lookup(RBAC_GROUP, 'v1', resource);
    if (!r) throw new Error(`the registry serves no ${RBAC_GROUP}/v1 ${resource}`);
    return r;
  };
  const roles = startInformer(lookup('roles'), log, signal);
  const clusterRoles = startInformer(lookup('clusterroles'), log, signal);
  const roleBindings = startInformer(lookup('rolebindings'), log, signal);
  const clusterRoleBindings = startInformer(lookup('clusterrolebindings'), log, signal);
  const role = parsedCache<RoleLike>(roleOf);
  const binding = parsedCache<BindingLike>(bindingOf);
  const store: RbacStore = {
    getRole(namespace, name) {
      const o = roles.get(namespace, name);
      if (!o) throw roleNotFound('Role', name);
      return role(o);
    },
    getClusterRole(name) {
      const o = clusterRoles.get('', name);
      if (!o) throw roleNotFound('ClusterRole', name);
      return role(o);
    },
    listRoleBindings: (namespace) => roleBindings.list(namespace).map(binding),
    listClusterRoleBindings: () => clusterRoleBindings.list('').map(binding),
  };
  const all = [roles, clusterRoles, roleBindings, clusterRoleBindings];
  let generation = 0;
  for (const informer of all) informer.onChange(() => generation++);
  return {
    store,
    roles,
    clusterRoles,
    roleBindings,
    clusterRoleBindings,
    synced: Promise.all(all.map((i) => i.synced)).then(() => undefined),
    generation: () => generation,
    stop: () => all.forEach((i) => i.stop()),
  };
}
