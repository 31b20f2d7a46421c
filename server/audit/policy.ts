// The audit policy (audit.k8s.io/v1 Policy): loading, validation, and the first-match rule
// evaluation that decides how much of a request is recorded.

import { readFileSync } from 'node:fs';
import { parseConfigYaml } from '../request/yaml.js';
import type { UserInfo } from '../machinery/user.js';

export const LEVELS = ['None', 'Metadata', 'Request', 'RequestResponse'] as const;
export type Level = (typeof LEVELS)[number];
export const STAGES = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const;
export type Stage = (typeof STAGES)[number];

/** true when `level` records at least as much as `min` */
export function levelAtLeast(level: Level, min: Level): boolean {
  return LEVELS.indexOf(level) >= LEVELS.indexOf(min);
}

export interface GroupResources {
  group: string;
  resources: string[];
  resourceNames: string[];
}

export interface PolicyRule {
  level: Level;
  users: string[];
  userGroups: string[];
  verbs: string[];
  resources: GroupResources[];
  namespaces: string[];
  nonResourceURLs: string[];
  omitStages: Stage[];
  omitManagedFields?: boolean;
}

export interface Policy {
  rules: PolicyRule[];
  omitStages: Stage[];
  omitManagedFields: boolean;
}

/** what the policy looks at: the authorization attributes of a request */
export interface PolicyAttributes {
  /** undefined when authentication failed */
  user?: UserInfo;
  verb: string;
  isResourceRequest: boolean;
  path: string;
  apiGroup: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

/** the outcome for one request */
export interface RequestAuditConfig {
  level: Level;
  omitStages: readonly Stage[];
  omitManagedFields: boolean;
}

export class PolicyError extends Error {}

type Doc = Record<string, unknown>;

function isObject(v: unknown): v is Doc {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function stringList(v: unknown, where: string, errs: string[]): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
    errs.push(`${where}: must be a list of strings`);
    return [];
  }
  return v as string[];
}

function stages(v: unknown, where: string, errs: string[]): Stage[] {
  const list = stringList(v, where, errs);
  list.forEach((s, i) => {
    if (!(STAGES as readonly string[]).includes(s)) {
      errs.push(`${where}[${i}]: Invalid value: "${s}": allowed stages are ${STAGES.join(',')}`);
    }
  });
  return list as Stage[];
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function parseRule(raw: unknown, i: number, errs: string[]): PolicyRule {
  const where = `rules[${i}]`;
  const r = isObject(raw) ? raw : {};
  if (!isObject(raw)) errs.push(`${where}: must be an object`);
  const level = r.level;
  if (level === undefined || level === '') errs.push(`${where}.level: Required value`);
  else if (typeof level !== 'string' || !(LEVELS as readonly string[]).includes(level)) {
    errs.push(`${where}.level: Unsupported value: ${JSON.stringify(level)}: supported values: ${LEVELS.map((l) => `"${l}"`).join(', ')}`);
  }
  const nonResourceURLs = stringList(r.nonResourceURLs, `${where}.nonResourceURLs`, errs);
  nonResourceURLs.forEach((url, j) => {
    if (url === '*') return;
    if (!url.startsWith('/'))
      errs.push(`${where}.nonResourceURLs[${j}]: Invalid value: "${url}": non-resource URL rules must begin with a '/' character`);
    if (url !== '' && url.slice(0, -1).includes('*')) {
      errs.push(
        `${where}.nonResourceURLs[${j}]: Invalid value: "${url}": non-resource URL wildcards '*' must be the final character of the rule`,
      );
    }
  });
  const resources: GroupResources[] = [];
  if (r.resources !== undefined && r.resources !== null) {
    if (!Array.isArray(r.resources)) errs.push(`${where}.resources: must be a list`);
    else {
      for (const g of r.resources as unknown[]) {
        const gr = isObject(g) ? g : {};
        const group = typeof gr.group === 'string' ? gr.group : '';
        if (group !== '' && group !== '*' && (group.length > 253 || !DNS_SUBDOMAIN.test(group))) {
          errs.push(`${where}.resources.group: Invalid value: "${group}": must be a DNS subdomain`);
        }
        const res = stringList(gr.resources, `${where}.resources.resources`, errs);
        const names = stringList(gr.resourceNames, `${where}.resources.resourceNames`, errs);
        if (names.length > 0 && res.length === 0) {
          errs.push(
            `${where}.resources.resourceNames: Invalid value: ${JSON.stringify(names)}: using resourceNames requires at least one resource`,
          );
        }
        resources.push({ group, resources: res, resourceNames: names });
      }
    }
  }
  const namespaces = stringList(r.namespaces, `${where}.namespaces`, errs);
  if (nonResourceURLs.length > 0 && (resources.length > 0 || namespaces.length > 0)) {
    errs.push(
      `${where}.nonResourceURLs: Invalid value: ${JSON.stringify(nonResourceURLs)}: rules cannot apply to both regular resources and non-resource URLs`,
    );
  }
  let omitManagedFields: boolean | undefined;
  if (r.omitManagedFields !== undefined && r.omitManagedFields !== null) {
    if (typeof r.omitManagedFields !== 'boolean') errs.push(`${where}.omitManagedFields: must be a boolean`);
    else omitManagedFields = r.omitManagedFields;
  }
  return {
    level: level as Level,
    users: stringList(r.users, `${where}.users`, errs),
    userGroups: stringList(r.userGroups, `${where}.userGroups`, errs),
    verbs: stringList(r.verbs, `${where}.verbs`, errs),
    resources,
    namespaces,
    nonResourceURLs,
    omitStages: stages(r.omitStages, `${where}.omitStages`, errs),
    omitManagedFields,
  };
}

/** Parses a Policy document (YAML or JSON); throws PolicyError naming every problem. */
export function parsePolicy(text: string): Policy {
  let doc: unknown;
  try {
    doc = parseConfigYaml(text);
  } catch (err) {
    throw new PolicyError(`failed decoding: ${(err as Error).message}`);
  }
  if (!isObject(doc)) throw new PolicyError('failed decoding: not a Policy object');
  if (doc.kind !== 'Policy') throw new PolicyError(`failed decoding: kind ${JSON.stringify(doc.kind ?? '')} is not Policy`);
  if (doc.apiVersion !== 'audit.k8s.io/v1') {
    throw new PolicyError(`unknown group version field ${JSON.stringify(doc.apiVersion ?? '')} in policy (only audit.k8s.io/v1 is served)`);
  }
  const errs: string[] = [];
  const omitStages = stages(doc.omitStages, 'omitStages', errs);
  const rulesRaw = doc.rules;
  if (rulesRaw !== undefined && rulesRaw !== null && !Array.isArray(rulesRaw)) errs.push('rules: must be a list');
  const rules = Array.isArray(rulesRaw) ? rulesRaw.map((r, i) => parseRule(r, i, errs)) : [];
  let omitManagedFields = false;
  if (doc.omitManagedFields !== undefined && doc.omitManagedFields !== null) {
    if (typeof doc.omitManagedFields !== 'boolean') errs.push('omitManagedFields: must be a boolean');
    else omitManagedFields = doc.omitManagedFields;
  }
  if (errs.length > 0) throw new PolicyError(errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`);
  if (rules.length === 0) throw new PolicyError('loaded illegal policy with 0 rules');
  return { rules, omitStages, omitManagedFields };
}

export function loadPolicyFile(file: string): Policy {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new PolicyError(`failed to read file path "${file}": ${(err as Error).message}`);
  }
  try {
    return parsePolicy(text);
  } catch (err) {
    throw new PolicyError(`${(err as Error).message}: from file ${file}`);
  }
}

function pathMatches(path: string, spec: string): boolean {
  if (spec === '*' || spec === path) return true;
  return spec.endsWith('*') && path.startsWith(spec.replace(/\*+$/, ''));
}

function matchesResource(rule: PolicyRule, a: PolicyAttributes): boolean {
  if (!a.isResourceRequest) return false;
  // cluster-scoped requests have the namespace ""
  if (rule.namespaces.length > 0 && !rule.namespaces.includes(a.namespace)) return false;
  if (rule.resources.length === 0) return true;
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  for (const gr of rule.resources) {
    if (gr.group !== a.apiGroup && gr.group !== '*') continue;
    if (gr.resources.length === 0) return true;
    if (gr.resourceNames.length > 0 && !gr.resourceNames.includes(a.name)) continue;
    for (const res of gr.resources) {
      if (res === combined || res === '*') return true;
      if (a.subresource && res.startsWith('*/') && res.slice(2) === a.subresource) return true;
      if (res.endsWith('/*') && res.slice(0, -2) === a.resource) return true;
    }
  }
  return false;
}

export function ruleMatches(rule: PolicyRule, a: PolicyAttributes): boolean {
  if (rule.users.length > 0 && (!a.user || !rule.users.includes(a.user.username))) return false;
  if (rule.userGroups.length > 0 && (!a.user || !a.user.groups.some((g) => rule.userGroups.includes(g)))) return false;
  if (rule.verbs.length > 0 && !rule.verbs.includes(a.verb)) return false;
  if (rule.namespaces.length > 0 || rule.resources.length > 0) return matchesResource(rule, a);
  if (rule.nonResourceURLs.length > 0) return !a.isResourceRequest && rule.nonResourceURLs.some((spec) => pathMatches(a.path, spec));
  return true;
}

export type PolicyEvaluator = (attrs: PolicyAttributes) => RequestAuditConfig;

/** First matching rule decides; a request no rule matches is not audited (level None). */
export function policyEvaluator(policy: Policy): PolicyEvaluator {
  const rules = policy.rules.map((rule) => ({
    rule,
    config: {
      level: rule.level,
      omitStages: [...new Set([...policy.omitStages, ...rule.omitStages])],
      omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields,
    } satisfies RequestAuditConfig,
  }));
  const fallback: RequestAuditConfig = { level: 'None', omitStages: policy.omitStages, omitManagedFields: policy.omitManagedFields };
  return (attrs) => rules.find((r) => ruleMatches(r.rule, attrs))?.config ?? fallback;
}
