// Whether a webhook's rules cover a request (kube's rules.Matcher): operations, API groups,
// versions, resources with their subresources (`*`, `pods/*`, `*/status`, `*/*`) and scope.

import type { AdmissionAttributes } from '../../registry/rest.js';
import type { RuleWithOperations } from './types.js';

/** what a rule is matched against */
export interface RuleTarget {
  operation: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  /** '' for cluster-scoped objects */
  namespace: string;
}

const has = (list: readonly string[] | undefined, v: string) => !!list && (list.includes('*') || list.includes(v));

function resourceMatches(rule: RuleWithOperations, t: RuleTarget): boolean {
  for (const r of rule.resources ?? []) {
    const slash = r.indexOf('/');
    const res = slash < 0 ? r : r.slice(0, slash);
    const sub = slash < 0 ? '' : r.slice(slash + 1);
    if ((res === '*' || res === t.resource) && (sub === '*' || sub === t.subresource)) return true;
  }
  return false;
}

function scopeMatches(rule: RuleWithOperations, t: RuleTarget): boolean {
  const scope = rule.scope ?? '*';
  if (scope === '*') return true;
  // a namespace itself is cluster-scoped, its subresources are about that namespace
  const isNamespace = t.group === '' && t.resource === 'namespaces' && t.subresource === '';
  if (scope === 'Cluster') return isNamespace || t.namespace === '';
  if (scope === 'Namespaced') return !isNamespace && t.namespace !== '';
  return false;
}

export function ruleMatches(rule: RuleWithOperations, t: RuleTarget): boolean {
  return (
    has(rule.operations, t.operation) &&
    has(rule.apiGroups, t.group) &&
    has(rule.apiVersions, t.version) &&
    resourceMatches(rule, t) &&
    scopeMatches(rule, t)
  );
}

export function targetOf(attrs: AdmissionAttributes): RuleTarget {
  return {
    operation: attrs.operation,
    group: attrs.resource.group,
    version: attrs.resource.version,
    resource: attrs.resource.resource,
    subresource: attrs.subresource ?? '',
    namespace: attrs.namespace,
  };
}

const ADMISSION_CONFIGURATION_RESOURCES = new Set([
  'mutatingwebhookconfigurations',
  'validatingwebhookconfigurations',
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
  'mutatingadmissionpolicies',
  'mutatingadmissionpolicybindings',
]);

/** webhooks never see writes of admission configuration itself (so a webhook cannot lock
 *  itself in), as in kube */
export function isExemptFromWebhooks(attrs: AdmissionAttributes): boolean {
  return attrs.resource.group === 'admissionregistration.k8s.io' && ADMISSION_CONFIGURATION_RESOURCES.has(attrs.resource.resource);
}
