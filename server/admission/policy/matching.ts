// Which requests a policy's matchConstraints (or a binding's matchResources) select, as
// kube-apiserver's policy matcher decides: namespaceSelector, objectSelector,
// excludeResourceRules, resourceRules (with resourceNames), and with matchPolicy Equivalent
// the same resource in the group's other served versions.

import type { KubeObject } from '../../../storage/interface.js';
import type { ResourceInfo } from '../../apis/types.js';
import { labelSelectorFromObject, type LabelSelector } from '../../selectors/labels.js';
import type { AdmissionAttributes } from '../../registry/rest.js';
import type { MatchResources, NamedRuleWithOperations, RuleWithOperations } from './types.js';

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface MatchResult {
  matches: boolean;
  /** the resource the rule matched (another version under Equivalent) */
  resource?: GroupVersionResource;
  kind?: GroupVersionKind;
}

/** What matching needs besides the request. */
export interface MatchEnvironment {
  /** the labels of a namespace; undefined when it does not exist */
  namespaceLabels(name: string): Promise<Record<string, string> | undefined>;
  /** the same resource served in the group's other versions (for matchPolicy Equivalent) */
  equivalents(resource: ResourceInfo): ResourceInfo[];
}

/** A misconfiguration found while matching; the failure policy decides what it does. */
export class MatchConfigError extends Error {}

function isNamespaceRequest(attrs: AdmissionAttributes): boolean {
  return attrs.resource.group === '' && attrs.resource.resource === 'namespaces';
}

function splitResource(r: string): [string, string] {
  const i = r.indexOf('/');
  return i < 0 ? [r, ''] : [r.slice(0, i), r.slice(i + 1)];
}

const listMatches = (list: string[] | undefined, value: string) => (list ?? []).some((x) => x === '*' || x === value);

function ruleMatches(rule: RuleWithOperations, attrs: AdmissionAttributes, gvr: GroupVersionResource): boolean {
  if (!listMatches(rule.operations, attrs.operation)) return false;
  if (!listMatches(rule.apiGroups, gvr.group)) return false;
  if (!listMatches(rule.apiVersions, gvr.version)) return false;
  const sub = attrs.subresource ?? '';
  const resourceOk = (rule.resources ?? []).some((r) => {
    const [res, rsub] = splitResource(r);
    return (res === '*' || res === gvr.resource) && (rsub === '*' || rsub === sub);
  });
  if (!resourceOk) return false;
  const scope = rule.scope ?? '*';
  if (scope === '*') return true;
  const namespaceObject = gvr.group === '' && gvr.resource === 'namespaces';
  if (scope === 'Namespaced') return !namespaceObject && attrs.namespace !== '';
  if (scope === 'Cluster') return namespaceObject || attrs.namespace === '';
  return false;
}

function nameMatches(rule: NamedRuleWithOperations, attrs: AdmissionAttributes): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(attrs.name);
}

function kindOf(info: ResourceInfo, attrs: AdmissionAttributes): GroupVersionKind {
  if (attrs.subresource) {
    const sub = info.subresources.find((s) => s.name === attrs.subresource);
    if (sub) return { ...sub.kind };
  }
  return { group: info.group, version: info.version, kind: info.kind };
}

const gvrOf = (info: ResourceInfo): GroupVersionResource => ({ group: info.group, version: info.version, resource: info.resource });

function matchRules(
  rules: NamedRuleWithOperations[],
  equivalentPolicy: boolean,
  attrs: AdmissionAttributes,
  env: MatchEnvironment,
): MatchResult {
  const own = gvrOf(attrs.resource);
  for (const rule of rules) {
    if (ruleMatches(rule, attrs, own) && nameMatches(rule, attrs)) {
      return { matches: true, resource: own, kind: kindOf(attrs.resource, attrs) };
    }
  }
  if (!equivalentPolicy) return { matches: false };
  const others = env.equivalents(attrs.resource).filter((r) => r.version !== attrs.resource.version || r.group !== attrs.resource.group);
  for (const rule of rules) {
    for (const other of others) {
      if (ruleMatches(rule, attrs, gvrOf(other)) && nameMatches(rule, attrs)) {
        return { matches: true, resource: gvrOf(other), kind: kindOf(other, attrs) };
      }
    }
  }
  return { matches: false };
}

function selectorOf(sel: MatchResources['namespaceSelector'], what: string): LabelSelector {
  // the API defaults both selectors to {}; a missing one after that is a broken object
  if (sel === null || sel === undefined) throw new MatchConfigError(`${what} selector is required`);
  try {
    return labelSelectorFromObject(sel);
  } catch (err) {
    throw new MatchConfigError((err as Error).message);
  }
}

const labelsOf = (o: KubeObject | null): Record<string, string> => (o?.metadata?.labels as Record<string, string> | undefined) ?? {};

async function namespaceSelectorMatches(sel: LabelSelector, attrs: AdmissionAttributes, env: MatchEnvironment): Promise<boolean> {
  const isNamespace = isNamespaceRequest(attrs);
  if (!isNamespace && attrs.namespace === '') return true;
  if (sel.empty()) return true;
  let labels: Record<string, string> | undefined;
  if (isNamespace) {
    labels = labelsOf(attrs.object ?? attrs.oldObject);
  } else {
    labels = await env.namespaceLabels(attrs.namespace);
    if (labels === undefined) throw new MatchConfigError(`namespaces "${attrs.namespace}" not found`);
  }
  return sel.matches(labels);
}

function objectSelectorMatches(sel: LabelSelector, attrs: AdmissionAttributes): boolean {
  if (sel.empty()) return true;
  return [attrs.object, attrs.oldObject].some((o) => o !== null && sel.matches(labelsOf(o)));
}

/** whether the request is selected; throws MatchConfigError for a misconfiguration that
 *  matters to this request */
export async function matchesResources(
  criteria: MatchResources | null | undefined,
  attrs: AdmissionAttributes,
  env: MatchEnvironment,
  opts: { required: boolean },
): Promise<MatchResult> {
  if (!criteria) {
    if (opts.required) throw new MatchConfigError('policy contained no match constraints, a required field');
    return { matches: true, resource: gvrOf(attrs.resource), kind: kindOf(attrs.resource, attrs) };
  }
  let nsErr: unknown;
  let nsMatches = true;
  try {
    nsMatches = await namespaceSelectorMatches(selectorOf(criteria.namespaceSelector ?? {}, 'namespace'), attrs, env);
  } catch (err) {
    nsErr = err;
  }
  if (!nsMatches) return { matches: false };
  let objErr: unknown;
  let objMatches = true;
  try {
    objMatches = objectSelectorMatches(selectorOf(criteria.objectSelector ?? {}, 'object'), attrs);
  } catch (err) {
    objErr = err;
  }
  if (!objMatches) return { matches: false };
  const equivalent = criteria.matchPolicy !== 'Exact';
  if (matchRules(criteria.excludeResourceRules ?? [], equivalent, attrs, env).matches) return { matches: false };
  const rules = criteria.resourceRules ?? [];
  const result =
    rules.length === 0
      ? { matches: true, resource: gvrOf(attrs.resource), kind: kindOf(attrs.resource, attrs) }
      : matchRules(rules, equivalent, attrs, env);
  if (!result.matches) return result;
  // selector errors count only for requests the rules select
  if (nsErr) throw nsErr;
  if (objErr) throw objErr;
  return result;
}
