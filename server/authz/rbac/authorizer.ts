// The RBAC authorizer: allows when any applicable rule allows (kube's reason names the
// binding), otherwise has no opinion, with the resolution errors as the reason
// (`RBAC: clusterrole.rbac.authorization.k8s.io "x" not found`). RBAC never denies.

import type { AuthorizationAttributes, AuthorizationResult, Authorizer } from '../authorizer.js';
import type { UserInfo } from '../../machinery/user.js';
import { ruleAllows } from './rules.js';
import { aggregateMessage, type RuleResolver } from './resolver.js';
import type { PolicyRule } from './types.js';

/** What a rules review (SelfSubjectRulesReview) gets from one authorizer. */
export interface RulesInfo {
  resourceRules: PolicyRule[];
  nonResourceRules: PolicyRule[];
  /** the authorizer cannot list its rules (or could not list all of them) */
  incomplete: boolean;
  error?: string;
}

/** An authorizer that can also say which rules a user has in a namespace. */
export interface RuleListingAuthorizer extends Authorizer {
  rulesFor(user: UserInfo, namespace: string): Promise<RulesInfo>;
}

export function createRbacAuthorizer(resolver: RuleResolver, ready?: () => Promise<void>): RuleListingAuthorizer {
  return {
    async authorize(attrs: AuthorizationAttributes): Promise<AuthorizationResult> {
      await ready?.();
      let reason: string | undefined;
      const errors: Error[] = [];
      resolver.visitRulesFor(attrs.user, attrs.namespace, (source, rule, err) => {
        if (rule && ruleAllows(attrs, rule)) {
          reason = `RBAC: allowed by ${source}`;
          return false;
        }
        if (err) errors.push(err);
        return true;
      });
      if (reason) return { decision: 'allow', reason };
      return { decision: 'noOpinion', reason: errors.length ? `RBAC: ${aggregateMessage(errors)}` : undefined };
    },
    async rulesFor(user, namespace) {
      await ready?.();
      const { rules, errors } = resolver.rulesFor(user, namespace);
      const out: RulesInfo = { resourceRules: [], nonResourceRules: [], incomplete: false };
      for (const r of rules) {
        if ((r.resources ?? []).length > 0) {
          const rr: PolicyRule = { verbs: r.verbs, apiGroups: r.apiGroups ?? [], resources: r.resources };
          if (r.resourceNames?.length) rr.resourceNames = r.resourceNames;
          out.resourceRules.push(rr);
        }
        if ((r.nonResourceURLs ?? []).length > 0) out.nonResourceRules.push({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs });
      }
      if (errors.length) out.error = aggregateMessage(errors);
      return out;
    },
  };
}
