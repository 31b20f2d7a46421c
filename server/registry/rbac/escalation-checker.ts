// What the RBAC resources' storage asks before a role or binding is written. kube's
// rbac/role/policybased and rolebinding/policybased stores are handed a rule resolver and an
// authorizer for it; here the registry states the two questions and the RBAC authorizer
// (server/authz) answers them, handed in by the app's wiring, so the registry never reaches up.

import type { KubeObject } from '../../../storage/interface.js';
import type { UserInfo } from '../../machinery/user.js';

export interface RoleWrite {
  user: UserInfo;
  resource: 'roles' | 'clusterroles';
  /** '' for a ClusterRole */
  namespace: string;
  name: string;
  /** the role as it is about to be written */
  role: KubeObject;
  /** the write sets or changes an aggregationRule, which needs full authority */
  setsAggregationRule: boolean;
}

/** reads a bound role from storage, not from a cache that may lag behind a role created a
 *  moment ago; rejects with the registry's NotFound when it is missing */
export type BoundRoleReader = (kind: string, name: string, bindingNamespace: string) => Promise<KubeObject>;

export interface BindingWrite {
  user: UserInfo;
  resource: 'rolebindings' | 'clusterrolebindings';
  /** '' for a ClusterRoleBinding */
  namespace: string;
  name: string;
  /** the binding as it is about to be written */
  binding: KubeObject;
  readRole: BoundRoleReader;
}

/** Each check resolves when the writer may make the write and rejects with a 403 otherwise. */
export interface EscalationChecker {
  checkRoleWrite(write: RoleWrite): Promise<void>;
  checkBindingWrite(write: BindingWrite): Promise<void>;
}
