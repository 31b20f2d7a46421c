// Which rules apply to a user in a namespace: every ClusterRoleBinding naming the user (or
// one of their groups, or their service account), then every RoleBinding in the namespace.
// Rules are visited with a description of where they came from (kube's wording, quoted in
// "RBAC: allowed by ..." reasons); problems (a binding to a missing role) are visited as
// errors and never stop the walk.

import { SERVICE_ACCOUNT_PREFIX } from './subjects.js';
import type { RbacStore } from './store.js';
import type { BindingLike, PolicyRule, RoleRef, Subject } from './types.js';
import type { UserInfo } from '../../machinery/user.js';

export type RuleVisitor = (source: string | undefined, rule: PolicyRule | undefined, err: Error | undefined) => boolean;

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} ${JSON.stringify(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${JSON.stringify(s.name)}`;
}

export function subjectAppliesTo(user: UserInfo, s: Subject, bindingNamespace: string): boolean {
  switch (s.kind) {
    case 'User':
      return user.username === s.name;
    case 'Group':
      return user.groups.includes(s.name);
    case 'ServiceAccount': {
      const ns = s.namespace || bindingNamespace;
      if (!ns) return false;
      return user.username === `${SERVICE_ACCOUNT_PREFIX}${ns}:${s.name}`;
    }
    default:
      return false;
  }
}

function firstApplying(user: UserInfo, b: BindingLike, namespace: string): Subject | undefined {
  return b.subjects.find((s) => subjectAppliesTo(user, s, namespace));
}

export class RuleResolver {
  constructor(private readonly store: RbacStore) {}

  /** the rules a roleRef points at (a Role in `bindingNamespace`, or a ClusterRole) */
  roleReferenceRules(ref: RoleRef, bindingNamespace: string): PolicyRule[] {
    switch (ref.kind) {
      case 'Role':
        return this.store.getRole(bindingNamespace, ref.name).rules;
      case 'ClusterRole':
        return this.store.getClusterRole(ref.name).rules;
      default:
        throw new Error(`unsupported role reference kind: ${JSON.stringify(ref.kind)}`);
    }
  }

  visitRulesFor(user: UserInfo, namespace: string, visit: RuleVisitor): void {
    let bindings: BindingLike[];
    try {
      bindings = this.store.listClusterRoleBindings();
    } catch (err) {
      if (!visit(undefined, undefined, err as Error)) return;
      bindings = [];
    }
    for (const b of bindings) {
      const subject = firstApplying(user, b, '');
      if (!subject) continue;
      let rules: PolicyRule[];
      try {
        rules = this.roleReferenceRules(b.roleRef, '');
      } catch (err) {
        if (!visit(undefined, undefined, err as Error)) return;
        continue;
      }
      const source = `ClusterRoleBinding ${JSON.stringify(b.name)} of ${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)} to ${describeSubject(subject, '')}`;
      for (const r of rules) if (!visit(source, r, undefined)) return;
    }
    if (!namespace) return;
    let roleBindings: BindingLike[];
    try {
      roleBindings = this.store.listRoleBindings(namespace);
    } catch (err) {
      visit(undefined, undefined, err as Error);
      return;
    }
    for (const b of roleBindings) {
      const subject = firstApplying(user, b, namespace);
      if (!subject) continue;
      let rules: PolicyRule[];
      try {
        rules = this.roleReferenceRules(b.roleRef, namespace);
      } catch (err) {
        if (!visit(undefined, undefined, err as Error)) return;
        continue;
      }
      const source = `RoleBinding ${JSON.stringify(`${b.name}/${b.namespace}`)} of ${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)} to ${describeSubject(subject, namespace)}`;
      for (const r of rules) if (!visit(source, r, undefined)) return;
    }
  }

  /** every rule that applies, and the errors met while resolving them */
  rulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: Error[] } {
    const rules: PolicyRule[] = [];
    const errors: Error[] = [];
    this.visitRulesFor(user, namespace, (_source, rule, err) => {
      if (rule) rules.push(rule);
      if (err) errors.push(err);
      return true;
    });
    return { rules, errors };
  }
}

/** Go's utilerrors.NewAggregate(...).Error(): one message alone, several in brackets */
export function aggregateMessage(errs: readonly Error[]): string {
  if (errs.length === 1) return errs[0]!.message;
  return `[${errs.map((e) => e.message).join(', ')}]`;
}
