// The RBAC authorizer: allows when any applicable rule allows (kube's reason names the
// binding), otherwise has no opinion, with the resolution errors as the reason
// (`RBAC: clusterrole.rbac.authorization.k8s.io "x" not found`). RBAC never denies.

import type { AuthorizationAttributes, AuthorizationResult, Authorizer } from '../authorizer.js';
import { nameAndGroupsKey, type UserInfo } from '../../machinery/user.js';
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

/** decisions remembered per RBAC generation; past this many the memory starts over */
const MAX_REMEMBERED_DECISIONS = 10_000;

/** what a decision depends on: the user's name and groups and the rule-matched attributes */
function decisionKey(attrs: AuthorizationAttributes): string {
  const who = nameAndGroupsKey(attrs.user);
  if (!attrs.isResourceRequest) return `n\0${who}\0${attrs.verb}\0${attrs.path}`;
  return `r\0${who}\0${attrs.verb}\0${attrs.apiGroup}\0${attrs.resource}\0${attrs.subresource}\0${attrs.namespace}\0${attrs.name}`;
}

/**
 * `generation` (of the RBAC objects, undefined while they are not being watched) lets
 * decisions be remembered: a user asking the same thing again is answered without walking
 * the bindings, until any Role, ClusterRole or binding changes.
 */
export function createRbacAuthorizer(
  resolver: RuleResolver,
  ready?: () => Promise<void>,
  generation?: () => number | undefined,
): RuleListingAuthorizer {
  const remembered = new Map<string, AuthorizationResult>();
  let rememberedGeneration: number | undefined;
  return {
    async authorize(attrs: AuthorizationAttributes): Promise<AuthorizationResult> {
      await ready?.();
      const current = generation?.();
      if (current === undefined) return decide(resolver, attrs);
      if (current !== rememberedGeneration || remembered.size >= MAX_REMEMBERED_DECISIONS) {
        remembered.clear();
        rememberedGeneration = current;
      }
      const key = decisionKey(attrs);
      let result = remembered.get(key);
      if (!result) {
        // shared by every request that asks the same: nobody may change it
        result = Object.freeze(decide(resolver, attrs));
        remembered.set(key, result);
      }
      return result;
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

function decide(resolver: RuleResolver, attrs: AuthorizationAttributes): AuthorizationResult {
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
}
