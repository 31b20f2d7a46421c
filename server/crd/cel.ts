// x-kubernetes-validations: CEL rules of a structural schema, evaluated with `self` (the value
// at the rule's node) and, for transition rules, `oldSelf` (the stored value at the same place,
// on updates only). A failing rule is an Invalid error at its field with the rule's message.

import type { Environment } from '@marcbachmann/cel-js';
import { withBudget } from '../cel/budget.js';
import { celEnvironment } from '../cel/environment.js';
import { costExceedsMessage, estimateCost, maxSize } from '../cel/cost.js';
import { celGoIssue } from '../cel/issues.js';
import { registerKeyedListOperators, routeOperatorsToKeyedLists } from '../cel/keyed-lists.js';
import { routeMatchesToRe2 } from '../cel/re2.js';
import { celValue } from './cel-types.js';
import { registerSchemaTypes } from '../cel/schema-types.js';
import { fieldErrors, type FieldError } from '../registry/validation/field-error.js';
import type { JSONSchemaProps } from './schema.js';

// Rules run in an environment where `self` and `oldSelf` are dyn, over values converted by the
// schema (cel-types.ts): the typed check at write time has already refused what does not fit,
// and one runtime program per rule text serves every schema node that carries it.
let runtimeEnv: Environment | undefined;
const programs = new Map<string, ReturnType<Environment['parse']> | Error>();

function compile(rule: string): ReturnType<Environment['parse']> | Error {
  let p = programs.get(rule);
  if (!p) {
    try {
      // literals were checked homogeneous by the typed check; here every field is dyn
      runtimeEnv ??= registerKeyedListOperators(
        celEnvironment({ age: 'stored', homogeneousAggregateLiterals: false }),
        celEnvironment({ age: 'stored', homogeneousAggregateLiterals: false }),
      )
        .registerVariable('self', 'dyn')
        .registerVariable('oldSelf', 'dyn');
      // `==`, `!=` and `+` follow the list types of set and map lists
      p = runtimeEnv.parse(routeOperatorsToKeyedLists(runtimeEnv.parse(routeMatchesToRe2(rule)).ast));
      const check = p.check() as { valid: boolean; error?: Error };
      if (!check.valid) p = check.error ?? new Error('type check failed');
    } catch (err) {
      p = err as Error;
    }
    if (programs.size > 5000) programs.clear();
    programs.set(rule, p);
  }
  return p;
}

let typedBase: Environment | undefined;
const typedEnvs = { root: new WeakMap<JSONSchemaProps, Environment | Error>(), node: new WeakMap<JSONSchemaProps, Environment | Error>() };

/** the environment where `self` and `oldSelf` have the node's type; the root is an object with
 *  apiVersion, kind and metadata whatever its schema says */
function typedEnvironment(schema: JSONSchemaProps, root: boolean): Environment | Error {
  const cache = root ? typedEnvs.root : typedEnvs.node;
  let env = cache.get(schema);
  if (env) return env;
  try {
    typedBase ??= celEnvironment({ age: 'new' });
    const e = typedBase.clone();
    const selfType = registerSchemaTypes(e, root ? { ...schema, 'x-kubernetes-embedded-resource': true } : schema, 'Object');
    env = e.registerVariable('self', selfType).registerVariable('oldSelf', selfType);
  } catch (err) {
    env = err as Error;
  }
  cache.set(schema, env);
  return env;
}

/** the compile error of a rule at a schema node, in cel-go's words, or undefined (the CRD's
 *  validation asks) */
export function ruleCompileError(rule: string, schema: JSONSchemaProps, root = false): string | undefined {
  const env = typedEnvironment(schema, root);
  if (env instanceof Error) return `compilation failed: ${env.message}`;
  const routed = routeMatchesToRe2(rule);
  try {
    const check = env.parse(routed).check() as { valid: boolean; error?: Error };
    if (!check.valid && check.error) return `compilation failed: ${celGoIssue(rule, check.error)}`;
  } catch (err) {
    return `compilation failed: ${celGoIssue(rule, err as Error)}`;
  }
  return undefined;
}

const childPath = (path: string, name: string): string => (path ? `${path}.${name}` : name);
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function typeName(s: JSONSchemaProps, v: unknown): string {
  if (s.type) return s.type;
  if (Array.isArray(v)) return 'array';
  if (isObj(v)) return 'object';
  return typeof v;
}

/** Runs every rule of `schema` over `value` (and `old`, for updates), depth first. */
export function validateRules(value: unknown, old: unknown, schema: JSONSchemaProps | undefined, path: string, update: boolean): FieldError[] {
  const errs: FieldError[] = [];
  walk(value, old, schema, path, update, errs);
  return errs;
}

function walk(v: unknown, old: unknown, s: JSONSchemaProps | undefined, path: string, update: boolean, errs: FieldError[]): void {
  if (!s || v === undefined || v === null) return;
  for (const r of s['x-kubernetes-validations'] ?? []) {
    const transition = /\boldSelf\b/.test(r.rule);
    if (transition && (!update || old === undefined || old === null)) continue;
    const p = compile(r.rule);
    const field = r.fieldPath ? (path ? path + (r.fieldPath.startsWith('.') ? r.fieldPath : '.' + r.fieldPath) : r.fieldPath.replace(/^\./, '')) : path;
    if (p instanceof Error) {
      errs.push(fieldErrors.internal(field, `rule compile error: ${p.message.split('\n')[0]}`));
      continue;
    }
    let ok: unknown;
    try {
      // a runtime budget per rule, so that a hostile rule cannot hold the replica
      ok = withBudget(() => p({ self: celValue(v, s), oldSelf: transition ? celValue(old, s) : null }));
    } catch (err) {
      errs.push(fieldErrors.invalid(field, typeName(s, v), `${r.message ?? `failed rule: ${r.rule}`}`));
      void err;
      continue;
    }
    if (ok !== true) {
      const detail = r.message ?? `failed rule: ${r.rule}`;
      if (r.reason === 'FieldValueForbidden') errs.push(fieldErrors.forbidden(field, detail));
      else if (r.reason === 'FieldValueRequired') errs.push(fieldErrors.required(field, detail));
      else if (r.reason === 'FieldValueDuplicate') errs.push({ type: 'FieldValueDuplicate', field, badValue: typeName(s, v), detail });
      else errs.push(fieldErrors.invalid(field, typeName(s, v), detail));
    }
  }
  if (isObj(v)) {
    for (const [name, item] of Object.entries(v)) {
      const prop = s.properties?.[name] ?? (isObj(s.additionalProperties) ? (s.additionalProperties as JSONSchemaProps) : undefined);
      walk(item, isObj(old) ? old[name] : undefined, prop, childPath(path, name), update, errs);
    }
  } else if (Array.isArray(v) && s.items) {
    // old items are matched by position only for atomic lists; for others transition rules below lists are skipped
    v.forEach((item, i) => walk(item, undefined, s.items, `${path}[${i}]`, update, errs));
  }
}

/** kube's limits on the static estimate: per rule, and for all the rules of one schema */
export const RULE_COST_LIMIT = 10_000_000;
export const SCHEMA_COST_LIMIT = 100_000_000;

/** the estimated worst-case cost of one evaluation of a rule at a node (undefined: it does not compile) */
export function ruleCost(rule: string, schema: JSONSchemaProps, root = false): number | undefined {
  const env = typedEnvironment(schema, root);
  if (env instanceof Error) return undefined;
  try {
    const p = env.parse(routeMatchesToRe2(rule));
    if (!(p.check() as { valid: boolean }).valid) return undefined;
    return estimateCost(p.ast, { self: schema, oldSelf: schema });
  } catch {
    return undefined;
  }
}

/** The cost errors of a version's schema, as kube reports them: a rule whose estimate times the
 *  number of times it can run (the sizes of the lists and maps above it) is over the per-rule
 *  limit; the sum over all rules is over the schema's limit. */
export function ruleCostErrors(schema: JSONSchemaProps, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const costs: { path: string; cost: number }[] = [];
  const visit = (s: JSONSchemaProps, p: string, cardinality: number, root: boolean): void => {
    (s['x-kubernetes-validations'] ?? []).forEach((r, i) => {
      if (typeof r.rule !== 'string') return;
      const once = ruleCost(r.rule, s, root);
      if (once === undefined) return;
      const cost = Math.min(Number.MAX_SAFE_INTEGER, once * cardinality);
      const rulePath = `${p}.x-kubernetes-validations[${i}].rule`;
      if (cost > RULE_COST_LIMIT) errs.push(fieldErrors.forbidden(rulePath, costExceedsMessage('estimated rule cost', cost, RULE_COST_LIMIT)));
      costs.push({ path: rulePath, cost });
    });
    const times = (n: number) => Math.min(Number.MAX_SAFE_INTEGER, cardinality * n);
    for (const [name, ps] of Object.entries(s.properties ?? {})) visit(ps, `${p}.properties[${name}]`, cardinality, false);
    if (s.additionalProperties && typeof s.additionalProperties === 'object') visit(s.additionalProperties as JSONSchemaProps, `${p}.additionalProperties`, times(maxSize(s)), false);
    if (s.items) visit(s.items, `${p}.items`, times(maxSize(s)), false);
  };
  visit(schema, path, 1, true);
  const total = costs.reduce((a, c) => Math.min(Number.MAX_SAFE_INTEGER, a + c.cost), 0);
  if (total > SCHEMA_COST_LIMIT) {
    // kube names the rules that weigh most, then the total
    for (const c of [...costs].sort((a, b) => b.cost - a.cost).slice(0, 4)) {
      errs.push(fieldErrors.forbidden(c.path, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'));
    }
    errs.push(fieldErrors.forbidden(path, costExceedsMessage('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', total, SCHEMA_COST_LIMIT)));
  }
  return errs;
}
