// --authorization-mode=ABAC with --authorization-policy-file: kube's attribute-based policies,
// one JSON object per line (`#` lines and blank lines skipped). A versioned line is an
// abac.authorization.kubernetes.io/v1beta1 Policy; a line without apiVersion and kind is the
// unversioned v0 format and is converted as kube converts it (no subject: every
// authenticated user; no namespace/resource: all of them and every non-resource path; any API
// group). A policy allows a request when its subject, verb (read-only policies allow only get,
// list and watch) and resource or non-resource path match; nothing else is decided (no
// opinion), so later authorizers may still allow.

import { readFileSync } from 'node:fs';
import type { UserInfo } from '../machinery/user.js';
import type { RulesInfo } from './rbac/authorizer.js';
import type { PolicyRule } from './rbac/types.js';

const API_VERSION = 'abac.authorization.kubernetes.io/v1beta1';
const ALL_AUTHENTICATED = 'system:authenticated';
const READ_ONLY_VERBS = ['get', 'list', 'watch'];

export interface AbacPolicySpec {
  user: string;
  group: string;
  readonly: boolean;
  apiGroup: string;
  resource: string;
  namespace: string;
  nonResourcePath: string;
}

export class AbacPolicyError extends Error {}

/** what ABAC looks at in a request (a part of the HTTP layer's authorization attributes) */
export interface AbacRequest {
  user: UserInfo;
  verb: string;
  isResourceRequest: boolean;
  path: string;
  apiGroup: string;
  resource: string;
  namespace: string;
}

export interface AbacDecision {
  decision: 'allow' | 'noOpinion';
  reason?: string;
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** a v1beta1 spec as kube's internal Policy holds it: `*` subjects mean every authenticated user */
function fromV1beta1(spec: Record<string, unknown>): AbacPolicySpec {
  const out: AbacPolicySpec = {
    user: text(spec.user),
    group: text(spec.group),
    readonly: spec.readonly === true,
    apiGroup: text(spec.apiGroup),
    resource: text(spec.resource),
    namespace: text(spec.namespace),
    nonResourcePath: text(spec.nonResourcePath),
  };
  if (out.user === '*' || out.group === '*') Object.assign(out, { user: '', group: ALL_AUTHENTICATED });
  return out;
}

function fromV0(line: Record<string, unknown>): AbacPolicySpec {
  const user = text(line.user);
  const group = text(line.group);
  const namespace = text(line.namespace);
  const resource = text(line.resource);
  const out: AbacPolicySpec = {
    user,
    group,
    readonly: line.readonly === true,
    apiGroup: '*',
    resource: resource || '*',
    namespace: namespace || '*',
    nonResourcePath: !namespace && !resource ? '*' : '',
  };
  if ((!user && !group) || user === '*' || group === '*') Object.assign(out, { user: '', group: ALL_AUTHENTICATED });
  return out;
}

/** the policies of a file, or AbacPolicyError with kube's `error reading policy file` text */
export function loadAbacPolicies(path: string): AbacPolicySpec[] {
  let content: string;
  try {
    content = readFileSync(path, 'utf8');
  } catch (err) {
    throw new AbacPolicyError(`error reading policy file ${path}: ${(err as Error).message}`);
  }
  const policies: AbacPolicySpec[] = [];
  content.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const fail = (why: string) => new AbacPolicyError(`error reading policy file ${path}, line ${i + 1}: ${raw}: ${why}`);
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw fail((err as Error).message);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw fail('a policy must be a JSON object');
    const obj = value as Record<string, unknown>;
    if (obj.apiVersion === undefined && obj.kind === undefined) {
      policies.push(fromV0(obj));
      return;
    }
    if (obj.apiVersion !== API_VERSION || obj.kind !== 'Policy') {
      throw fail(`no kind "${text(obj.kind)}" is registered for version "${text(obj.apiVersion)}"`);
    }
    const spec = obj.spec;
    policies.push(fromV1beta1(spec && typeof spec === 'object' && !Array.isArray(spec) ? (spec as Record<string, unknown>) : {}));
  });
  return policies;
}

function subjectMatches(p: AbacPolicySpec, user: UserInfo): boolean {
  let matched = false;
  if (p.user) {
    if (p.user === '*') matched = true;
    else if (p.user === user.username) matched = true;
    else return false;
  }
  if (p.group) {
    if (p.group === '*') matched = true;
    else if ((user.groups ?? []).includes(p.group)) matched = true;
    else return false;
  }
  return matched;
}

function resourceMatches(p: AbacPolicySpec, a: AbacRequest): boolean {
  return (
    a.isResourceRequest &&
    (p.namespace === '*' || p.namespace === a.namespace) &&
    (p.resource === '*' || p.resource === a.resource) &&
    (p.apiGroup === '*' || p.apiGroup === a.apiGroup)
  );
}

function nonResourceMatches(p: AbacPolicySpec, a: AbacRequest): boolean {
  if (a.isResourceRequest) return false;
  if (p.nonResourcePath === '*' || p.nonResourcePath === a.path) return true;
  return p.nonResourcePath.endsWith('*') && a.path.startsWith(p.nonResourcePath.replace(/\*+$/, ''));
}

function allows(p: AbacPolicySpec, a: AbacRequest): boolean {
  if (!subjectMatches(p, a.user)) return false;
  if (!READ_ONLY_VERBS.includes(a.verb) && p.readonly) return false;
  return resourceMatches(p, a) || nonResourceMatches(p, a);
}

export interface AbacAuthorizer {
  authorize(request: AbacRequest): Promise<AbacDecision>;
  rulesFor(user: UserInfo, namespace: string): Promise<RulesInfo>;
}

export function createAbacAuthorizer(policies: readonly AbacPolicySpec[]): AbacAuthorizer {
  return {
    async authorize(attrs): Promise<AbacDecision> {
      return policies.some((p) => allows(p, attrs)) ? { decision: 'allow' } : { decision: 'noOpinion', reason: 'No policy matched.' };
    },
    async rulesFor(user, namespace) {
      const resourceRules: PolicyRule[] = [];
      const nonResourceRules: PolicyRule[] = [];
      for (const p of policies) {
        if (!subjectMatches(p, user) || (p.namespace !== '*' && p.namespace !== namespace)) continue;
        const verbs = p.readonly ? [...READ_ONLY_VERBS] : ['*'];
        if (p.resource) resourceRules.push({ verbs, apiGroups: [p.apiGroup], resources: [p.resource] });
        if (p.nonResourcePath) nonResourceRules.push({ verbs, nonResourceURLs: [p.nonResourcePath] });
      }
      return { resourceRules, nonResourceRules, incomplete: false };
    },
  };
}
