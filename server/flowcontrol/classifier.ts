// Picks the FlowSchema of a request: the first, by matchingPrecedence then name, whose rules
// match the user and the request; and the flow distinguisher of ByUser / ByNamespace schemas.

import type { UserInfo } from '../machinery/user.js';
import type { RequestInfo } from '../request/request-info.js';
import type { FlowSchemaConfig, NonResourceRule, PolicyRule, ResourceRule, Subject } from './config.js';

export interface RequestDigest {
  user: UserInfo;
  info: RequestInfo;
}

const SA_PREFIX = 'system:serviceaccount:';

function matchesSubject(user: UserInfo, s: Subject): boolean {
  switch (s.kind) {
    case 'User':
      return s.name === '*' || s.name === user.username;
    case 'Group':
      return s.name === '*' || user.groups.includes(s.name);
    case 'ServiceAccount': {
      if (!user.username.startsWith(SA_PREFIX)) return false;
      const rest = user.username.slice(SA_PREFIX.length);
      if (s.name === '*') return rest.startsWith(`${s.namespace}:`);
      return rest === `${s.namespace}:${s.name}`;
    }
  }
}

/** a list that is exactly the wildcard matches anything; otherwise only exact members */
function listHas(list: string[], value: string, wildcard: string): boolean {
  if (list.length === 1 && list[0] === wildcard) return true;
  return list.includes(value);
}

function matchesResourceRule(info: RequestInfo, r: ResourceRule): boolean {
  if (!listHas(r.verbs, info.verb, '*')) return false;
  const resource = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
  if (!listHas(r.resources, resource, '*')) return false;
  if (!listHas(r.apiGroups, info.apiGroup, '*')) return false;
  if (!info.namespace) return r.clusterScope;
  return listHas(r.namespaces, info.namespace, '*');
}

function matchesURL(patterns: string[], path: string): boolean {
  for (const p of patterns) {
    if (p === '*' || p === path) return true;
    // kube treats every pattern as a prefix of sub-paths too ("/healthz" covers "/healthz/etcd")
    let prefix = p.endsWith('*') ? p.slice(0, -1) : p;
    if (!prefix.endsWith('/')) prefix += '/';
    if (path.startsWith(prefix)) return true;
  }
  return false;
}

function matchesNonResourceRule(info: RequestInfo, r: NonResourceRule): boolean {
  return listHas(r.verbs, info.verb, '*') && matchesURL(r.nonResourceURLs, info.path);
}

export function matchesPolicyRule(d: RequestDigest, rule: PolicyRule): boolean {
  if (!rule.subjects.some((s) => matchesSubject(d.user, s))) return false;
  if (d.info.isResourceRequest) return rule.resourceRules.some((r) => matchesResourceRule(d.info, r));
  return rule.nonResourceRules.some((r) => matchesNonResourceRule(d.info, r));
}

export function matchesFlowSchema(d: RequestDigest, fs: FlowSchemaConfig): boolean {
  return fs.rules.some((r) => matchesPolicyRule(d, r));
}

/** kube's matching order: lower matchingPrecedence first, ties by name */
export function sortFlowSchemas(schemas: FlowSchemaConfig[]): FlowSchemaConfig[] {
  return [...schemas].sort((a, b) => a.matchingPrecedence - b.matchingPrecedence || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** the first match in `sorted`; undefined only if not even catch-all matches */
export function classify(sorted: readonly FlowSchemaConfig[], d: RequestDigest): FlowSchemaConfig | undefined {
  return sorted.find((fs) => matchesFlowSchema(d, fs));
}

export function flowDistinguisher(fs: FlowSchemaConfig, d: RequestDigest): string {
  if (fs.distinguisher === 'ByUser') return d.user.username;
  if (fs.distinguisher === 'ByNamespace') return d.info.namespace;
  return '';
}
