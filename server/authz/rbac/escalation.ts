// Privilege-escalation prevention for RBAC writes (kube's pkg/registry/rbac): a Role or
// ClusterRole may only grant what its writer already holds at that scope, unless the writer
// may `escalate` roles; a binding may only bind a role whose permissions the writer holds at
// the binding's scope, unless the writer may `bind` that role. system:masters bypasses both.
// The registry asks through its EscalationChecker, which rbacEscalationChecker implements.

import type { Authorizer } from '../authorizer.js';
import { errors, type StatusError } from '../../machinery/status.js';
import type { UserInfo } from '../../machinery/user.js';
import type { EscalationChecker } from '../../registry/rbac/escalation-checker.js';
import { compactRules, compactString, covers, goQuotedList } from './rules.js';
import { aggregateMessage, type RuleResolver } from './resolver.js';
import { SYSTEM_PRIVILEGED_GROUP } from './subjects.js';
import { RBAC_GROUP, roleRefOf, rulesOf, type PolicyRule, type RoleRef } from './types.js';

/** `*` on everything: what using an aggregationRule requires */
export const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

export function escalationAllowed(user: UserInfo): boolean {
  return user.groups.includes(SYSTEM_PRIVILEGED_GROUP);
}

/** The message of a failed check, or undefined when `user` holds every rule in `namespace`. */
export function confirmNoEscalation(
  resolver: RuleResolver,
  user: UserInfo,
  namespace: string,
  rules: readonly PolicyRule[],
): string | undefined {
  const owner = resolver.rulesFor(user, namespace);
  const { covered, missing } = covers(owner.rules, rules);
  if (covered) return undefined;
  const descriptions = [...new Set(compactRules(missing).map(compactString))].sort();
  let msg = `user ${JSON.stringify(user.username)} (groups=${goQuotedList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${descriptions.join('\n')}`;
  if (owner.errors.length) msg += `; resolution errors: [${aggregateMessage(owner.errors)}]`;
  return msg;
}

export interface EscalationDeps {
  authorizer: Authorizer;
  resolver: RuleResolver;
  /** reads the rules of a bound role from storage (the cache may not have a role created a
   *  moment ago); throws the registry's NotFound. Default: the resolver's cache. */
  roleRules?: (ref: RoleRef, namespace: string) => Promise<PolicyRule[]>;
}

type RoleResource = 'roles' | 'clusterroles';

/** may `user` escalate roles of this kind (in this namespace)? */
export async function roleEscalationAuthorized(
  authorizer: Authorizer,
  user: UserInfo,
  resource: RoleResource,
  namespace: string,
): Promise<boolean> {
  const r = await authorizer.authorize({
    user,
    verb: 'escalate',
    isResourceRequest: true,
    path: '',
    apiGroup: RBAC_GROUP,
    apiVersion: '*',
    resource,
    subresource: '',
    namespace,
    name: '',
  });
  return r.decision === 'allow';
}

/** may `user` bind the role `ref` in a binding in `bindingNamespace` ('' for a ClusterRoleBinding)? */
export async function bindingAuthorized(authorizer: Authorizer, user: UserInfo, ref: RoleRef, bindingNamespace: string): Promise<boolean> {
  let resource: RoleResource;
  if (ref.kind === 'ClusterRole') resource = 'clusterroles';
  else if (ref.kind === 'Role') resource = 'roles';
  else return false;
  const r = await authorizer.authorize({
    user,
    verb: 'bind',
    isResourceRequest: true,
    path: '',
    apiGroup: ref.apiGroup,
    apiVersion: '*',
    resource,
    subresource: '',
    namespace: bindingNamespace,
    name: ref.name,
  });
  return r.decision === 'allow';
}

function forbiddenWrite(resource: string, name: string, message: string): StatusError {
  return errors.forbidden({ group: RBAC_GROUP, resource, name }, message);
}

/** the check of a Role or ClusterRole write; throws the 403 */
export async function checkRoleWrite(
  deps: EscalationDeps,
  user: UserInfo,
  resource: RoleResource,
  namespace: string,
  name: string,
  rules: readonly PolicyRule[],
  aggregation: 'none' | 'set',
): Promise<void> {
  if (escalationAllowed(user)) return;
  if (await roleEscalationAuthorized(deps.authorizer, user, resource, namespace)) return;
  const msg = confirmNoEscalation(deps.resolver, user, namespace, rules);
  if (msg) throw forbiddenWrite(resource, name, msg);
  if (aggregation === 'set' && confirmNoEscalation(deps.resolver, user, namespace, FULL_AUTHORITY)) {
    throw forbiddenWrite(resource, name, 'must have cluster-admin privileges to use the aggregationRule');
  }
}

/** the check of a RoleBinding or ClusterRoleBinding write; throws the 403 */
export async function checkBindingWrite(
  deps: EscalationDeps,
  user: UserInfo,
  resource: 'rolebindings' | 'clusterrolebindings',
  namespace: string,
  name: string,
  ref: RoleRef,
): Promise<void> {
  if (escalationAllowed(user)) return;
  if (await bindingAuthorized(deps.authorizer, user, ref, namespace)) return;
  let rules: PolicyRule[];
  if (deps.roleRules) {
    rules = await deps.roleRules(ref, namespace);
  } else {
    try {
      rules = deps.resolver.roleReferenceRules(ref, namespace);
    } catch {
      // kube answers with the registry's NotFound for a missing role
      throw errors.notFound({ group: RBAC_GROUP, resource: ref.kind === 'Role' ? 'roles' : 'clusterroles', name: ref.name });
    }
  }
  const msg = confirmNoEscalation(deps.resolver, user, namespace, rules);
  if (msg) throw forbiddenWrite(resource, name, msg);
}

/** the registry's escalation checks, answered from `deps`; a bound role's rules come from the
 *  registry's storage unless `deps` reads them itself */
export function rbacEscalationChecker(deps: EscalationDeps): EscalationChecker {
  return {
    checkRoleWrite: (w) =>
      checkRoleWrite(deps, w.user, w.resource, w.namespace, w.name, rulesOf(w.role), w.setsAggregationRule ? 'set' : 'none'),
    checkBindingWrite(w) {
      const roleRules = async (ref: RoleRef, namespace: string) => rulesOf(await w.readRole(ref.kind, ref.name, namespace));
      return checkBindingWrite({ roleRules, ...deps }, w.user, w.resource, w.namespace, w.name, roleRefOf(w.binding));
    },
  };
}
