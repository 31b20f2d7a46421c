// ValidatingAdmissionPolicy type checking, as kube's validatingadmissionpolicy-status
// controller does it: every validation expression (and messageExpression) is compiled against
// each kind the policy's resource rules name (up to 10, wildcards skipped), with `object` and
// `oldObject` of that kind's schema, `params` of the paramKind's schema, and `request`,
// `namespaceObject` and `authorizer` typed as kube declares them. What does not compile for a
// kind becomes an expression warning in the policy's status; the policy itself still runs with
// dynamic types, so a warning never changes what the policy admits.

import type { Environment } from '@marcbachmann/cel-js';
import { VARIABLES_TYPE, variableFieldType } from '../../cel/admission-policy.js';
import { celEnvironment } from '../../cel/environment.js';
import { celGoIssue, renameTypes } from '../../cel/issues.js';
import { routeMatchesToRe2 } from '../../cel/re2.js';
import { registerSchemaTypes, type CelSchema, type SchemaTypeOptions } from '../../cel/schema-types.js';
import type { GroupVersionKind, KindSchemas } from './kind-schemas.js';
import type { PolicySpec } from './types.js';

export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

/** kube checks at most this many kinds per policy */
const MAX_TYPES_TO_CHECK = 10;

const str: CelSchema = { type: 'string' };
const strings: CelSchema = { type: 'array', items: str };
const gvk: CelSchema = { type: 'object', properties: { group: str, version: str, kind: str } };
const gvr: CelSchema = { type: 'object', properties: { group: str, version: str, resource: str } };

/** kube's hand-made declaration of `request` (an admission request) */
const REQUEST: CelSchema = {
  type: 'object',
  properties: {
    kind: gvk,
    resource: gvr,
    subResource: str,
    requestKind: gvk,
    requestResource: gvr,
    requestSubResource: str,
    name: str,
    namespace: str,
    operation: str,
    userInfo: {
      type: 'object',
      properties: { username: str, uid: str, groups: strings, extra: { type: 'object', additionalProperties: strings } },
    },
    dryRun: { type: 'boolean' },
    options: {},
  },
};

const timestamp: CelSchema = { type: 'string', format: 'date-time' };

/** kube's hand-made declaration of `namespaceObject` */
const NAMESPACE: CelSchema = {
  type: 'object',
  properties: {
    metadata: {
      type: 'object',
      properties: {
        name: str,
        generateName: str,
        namespace: str,
        labels: { type: 'object', additionalProperties: str },
        annotations: { type: 'object', additionalProperties: str },
        UID: str,
        creationTimestamp: timestamp,
        deletionGracePeriodSeconds: { type: 'integer' },
        deletionTimestamp: timestamp,
        generation: { type: 'integer' },
        resourceVersion: str,
        finalizers: strings,
      },
    },
    spec: { type: 'object', properties: { finalizers: strings } },
    status: {
      type: 'object',
      properties: {
        conditions: {
          type: 'array',
          items: { type: 'object', properties: { status: str, type: str, lastTransitionTime: timestamp, message: str, reason: str } },
        },
        phase: str,
      },
    },
  },
};

/** the kinds named by the policy's resource rules, sorted by group, version and kind */
export function kindsToCheck(spec: PolicySpec, kinds: KindSchemas): GroupVersionKind[] {
  const found = new Map<string, GroupVersionKind>();
  let count = 0;
  for (const rule of spec.matchConstraints?.resourceRules ?? []) {
    const groups = rule.apiGroups ?? [];
    const versions = rule.apiVersions ?? [];
    // a wildcard group or version gives up on the whole rule; wildcard and subresource
    // resources are skipped one by one
    if (groups.length === 0 || groups.some((g) => g.includes('*'))) continue;
    if (versions.length === 0 || versions.some((v) => v.includes('*'))) continue;
    const resources = (rule.resources ?? []).filter((r) => !/[*/]/.test(r));
    for (const group of [...groups].sort()) {
      for (const version of [...versions].sort()) {
        for (const resource of [...resources].sort()) {
          const kind = kinds.kindFor(group, version, resource);
          if (!kind) continue;
          found.set(`${kind.group}/${kind.version}/${kind.kind}`, kind);
          if (++count === MAX_TYPES_TO_CHECK) return sortKinds([...found.values()]);
        }
      }
    }
  }
  return sortKinds([...found.values()]);
}

const sortKinds = (list: GroupVersionKind[]): GroupVersionKind[] =>
  list.sort((a, b) => a.group.localeCompare(b.group) || a.version.localeCompare(b.version) || a.kind.localeCompare(b.kind));

/** the way Go prints a schema.GroupVersionKind */
const gvkString = (k: GroupVersionKind): string => `${k.group}/${k.version}, Kind=${k.kind}`;

function parseGroupVersion(apiVersion: string | undefined): { group: string; version: string } | undefined {
  if (!apiVersion) return undefined;
  const parts = apiVersion.split('/');
  if (parts.length === 1) return { group: '', version: parts[0]! };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]! };
  return undefined;
}

/** kube names a checked kind's type by the kind and the clock's nanoseconds, so that no
 *  expression can depend on it; kapi takes the number from the kind instead, so that every
 *  replica writes the same warnings */
export function generatedTypeName(kind: GroupVersionKind): string {
  let hash = 0x811c9dc5;
  for (const c of `${kind.group}/${kind.version}/${kind.kind}`) hash = Math.imul(hash ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return `${kind.kind}${hash % 1_000_000_000}`;
}

/** the compile issue of an expression in an environment, in cel-go's words, or undefined */
function issueOf(env: Environment, expression: string): string | undefined {
  try {
    const check = env.parse(routeMatchesToRe2(expression)).check() as { valid: boolean; error?: Error };
    return check.valid ? undefined : celGoIssue(expression, check.error ?? new Error('type check failed'), env);
  } catch (err) {
    return celGoIssue(expression, err as Error, env);
  }
}

/** the type a variable is declared with: its expression's type as kube converts it */
function checkedType(env: Environment, expression: string): string {
  try {
    const check = env.parse(routeMatchesToRe2(expression)).check() as { valid: boolean; type?: string };
    return variableFieldType(check.valid ? check.type : undefined);
  } catch {
    return 'dyn';
  }
}

/** one environment per checked kind: the policy's variables typed in order, each seeing the
 *  ones before it, as kube compiles and stores them */
function kindEnvironment(object: CelSchema, params: CelSchema | undefined | null, spec: PolicySpec): Environment {
  const base = celEnvironment({ age: 'stored', authorizer: true });
  const declare = (env: Environment): Environment => {
    const typed = (schema: CelSchema | undefined, name: string, opts: SchemaTypeOptions = {}): string =>
      schema ? registerSchemaTypes(env, schema, name, opts) : 'dyn';
    // kube's hand-made declarations: field names as they are
    env.registerVariable('request', typed(REQUEST, 'kubernetes.AdmissionRequest', { escapeNames: false }));
    env.registerVariable('namespaceObject', typed(NAMESPACE, 'kubernetes.Namespace', { escapeNames: false }));
    const objectType = typed({ ...object, 'x-kubernetes-embedded-resource': true }, 'Object');
    env.registerVariable('object', objectType).registerVariable('oldObject', objectType);
    // without paramKind kube declares no `params`; with one whose schema is unknown, dyn
    if (params !== null) env.registerVariable('params', typed(params && { ...params, 'x-kubernetes-embedded-resource': true }, 'Params'));
    return env;
  };
  const fields: Record<string, string> = {};
  const withVariables = (): Environment => {
    const env = declare(base.clone());
    env.registerType(VARIABLES_TYPE, { fields: { ...fields } });
    return env.registerVariable('variables', VARIABLES_TYPE);
  };
  for (const v of spec.variables ?? []) fields[v.name] = checkedType(withVariables(), v.expression);
  return withVariables();
}

/** the expression warnings of a policy, as kube's status controller writes them */
export function typeCheckPolicy(spec: PolicySpec, kinds: KindSchemas): ExpressionWarning[] {
  const checked = kindsToCheck(spec, kinds)
    .map((k) => ({ kind: k, schema: kinds.schemaFor(k) }))
    .filter((k): k is { kind: GroupVersionKind; schema: CelSchema } => k.schema !== undefined);
  if (checked.length === 0) return [];
  let params: CelSchema | undefined | null = null;
  if (spec.paramKind) {
    const gv = parseGroupVersion(spec.paramKind.apiVersion);
    params = gv && spec.paramKind.kind ? kinds.schemaFor({ ...gv, kind: spec.paramKind.kind }) : undefined;
  }
  const envs = checked.map((k) => ({ kind: k.kind, env: kindEnvironment(k.schema, params, spec) }));
  const paramKind = spec.paramKind?.kind
    ? { ...(parseGroupVersion(spec.paramKind.apiVersion) ?? { group: '', version: '' }), kind: spec.paramKind.kind }
    : undefined;
  const check = (expression: string): string | undefined => {
    const results = envs.flatMap(({ kind, env }) => {
      const issue = issueOf(env, expression);
      if (!issue) return [];
      // the object and params types by the names kube generates for them
      const names: Record<string, string> = { Object: generatedTypeName(kind) };
      if (paramKind) names['Params'] = generatedTypeName(paramKind);
      return [`${gvkString(kind)}: ${renameTypes(issue, names)}\n`];
    });
    return results.length > 0 ? results.join('\n') : undefined;
  };
  const warnings: ExpressionWarning[] = [];
  (spec.validations ?? []).forEach((v, i) => {
    const w = check(v.expression);
    if (w) warnings.push({ fieldRef: `spec.validations[${i}].expression`, warning: w });
    if (!v.messageExpression) return;
    const m = check(v.messageExpression);
    if (m) warnings.push({ fieldRef: `spec.validations[${i}].messageExpression`, warning: m });
  });
  return warnings;
}
