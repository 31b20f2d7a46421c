// RBAC object shapes (rbac.authorization.k8s.io/v1) as the authorizer reads them, and
// tolerant readers from stored objects: a malformed field reads as empty, never throws.

import type { KubeObject } from '../../../storage/interface.js';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Subject {
  kind: string;
  apiGroup?: string;
  name: string;
  namespace?: string;
}

export interface RoleRef {
  apiGroup: string;
  kind: string;
  name: string;
}

export interface RoleLike {
  namespace: string;
  name: string;
  rules: PolicyRule[];
}

export interface BindingLike {
  namespace: string;
  name: string;
  subjects: Subject[];
  roleRef: RoleRef;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function optionalStrings(v: unknown): string[] | undefined {
  return Array.isArray(v) ? strings(v) : undefined;
}

export function ruleFromJson(v: unknown): PolicyRule {
  const o = (v && typeof v === 'object' ? v : {}) as Record<string, unknown>;
  const rule: PolicyRule = { verbs: strings(o.verbs) };
  const groups = optionalStrings(o.apiGroups);
  const resources = optionalStrings(o.resources);
  const names = optionalStrings(o.resourceNames);
  const urls = optionalStrings(o.nonResourceURLs);
  if (groups) rule.apiGroups = groups;
  if (resources) rule.resources = resources;
  if (names) rule.resourceNames = names;
  if (urls) rule.nonResourceURLs = urls;
  return rule;
}

export function rulesOf(obj: KubeObject): PolicyRule[] {
  return Array.isArray(obj.rules) ? obj.rules.map(ruleFromJson) : [];
}

export function roleOf(obj: KubeObject): RoleLike {
  return { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '', rules: rulesOf(obj) };
}

export function subjectFromJson(v: unknown): Subject {
  const o = (v && typeof v === 'object' ? v : {}) as Record<string, unknown>;
  const s: Subject = { kind: typeof o.kind === 'string' ? o.kind : '', name: typeof o.name === 'string' ? o.name : '' };
  if (typeof o.apiGroup === 'string') s.apiGroup = o.apiGroup;
  if (typeof o.namespace === 'string') s.namespace = o.namespace;
  return s;
}

export function roleRefOf(obj: KubeObject): RoleRef {
  const o = (obj.roleRef && typeof obj.roleRef === 'object' ? obj.roleRef : {}) as Record<string, unknown>;
  const str = (k: string) => (typeof o[k] === 'string' ? (o[k] as string) : '');
  return { apiGroup: str('apiGroup'), kind: str('kind'), name: str('name') };
}

export function bindingOf(obj: KubeObject): BindingLike {
  return {
    namespace: obj.metadata.namespace ?? '',
    name: obj.metadata.name ?? '',
    subjects: Array.isArray(obj.subjects) ? obj.subjects.map(subjectFromJson) : [],
    roleRef: roleRefOf(obj),
  };
}

/** the JSON form of a rule, fields in the API's order, empty lists left out */
export function ruleToJson(r: PolicyRule): Record<string, string[]> {
  const out: Record<string, string[]> = { verbs: [...r.verbs] };
  if (r.apiGroups?.length) out.apiGroups = [...r.apiGroups];
  if (r.resources?.length) out.resources = [...r.resources];
  if (r.resourceNames?.length) out.resourceNames = [...r.resourceNames];
  if (r.nonResourceURLs?.length) out.nonResourceURLs = [...r.nonResourceURLs];
  return out;
}
