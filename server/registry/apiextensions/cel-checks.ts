// The checks kube makes of x-kubernetes-validations when a CRD is written: each rule (and its
// messageExpression) type-checked against the schema node with kube's type mapping, in
// cel-go's words; `oldSelf` only where old and new values correlate; optionalOldSelf only on
// rules that use oldSelf; and a static cost estimate within kube's budgets. Expressions already
// stored in the CRD being updated compile with the stored-expression libraries.

import type { Environment } from '@marcbachmann/cel-js';
import { celEnvironment, type ExpressionAge } from '../../cel/environment.js';
import { costExceedsMessage, estimateCost, maxSize } from '../../cel/cost.js';
import { celGoIssue } from '../../cel/issues.js';
import { routeMatchesToRe2 } from '../../cel/re2.js';
import { registerSchemaTypes } from '../../cel/schema-types.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import type { JSONSchemaProps } from './json-schema-props.js';

export interface RuleContext {
  /** the schema's root (or an embedded resource): it always has apiVersion, kind and metadata */
  root?: boolean;
  /** 'stored' for an expression the CRD being updated already has */
  age?: ExpressionAge;
  /** the rule sets optionalOldSelf: `oldSelf` is an optional */
  optionalOldSelf?: boolean;
}

const typedBases = new Map<ExpressionAge, Environment>();
const typedEnvs = new Map<string, WeakMap<JSONSchemaProps, Environment | Error>>();

/** the environment where `self` (and `oldSelf`) have the node's type */
function typedEnvironment(schema: JSONSchemaProps, ctx: RuleContext): Environment | Error {
  const age = ctx.age ?? 'new';
  const key = `${age}/${ctx.root ? 'root' : 'node'}/${ctx.optionalOldSelf ? 'optional' : 'plain'}`;
  let cache = typedEnvs.get(key);
  if (!cache) typedEnvs.set(key, (cache = new WeakMap()));
  let env = cache.get(schema);
  if (env) return env;
  try {
    let base = typedBases.get(age);
    if (!base) typedBases.set(age, (base = celEnvironment({ age })));
    const e = base.clone();
    const selfType = registerSchemaTypes(e, ctx.root ? { ...schema, 'x-kubernetes-embedded-resource': true } : schema, 'Object');
    env = e.registerVariable('self', selfType).registerVariable('oldSelf', ctx.optionalOldSelf ? `optional<${selfType}>` : selfType);
  } catch (err) {
    env = err as Error;
  }
  cache.set(schema, env);
  return env;
}

type Checked = { ok: true; type: string; ast: unknown } | { ok: false; issue: string };

function check(expression: string, schema: JSONSchemaProps, ctx: RuleContext): Checked {
  const env = typedEnvironment(schema, ctx);
  if (env instanceof Error) return { ok: false, issue: env.message };
  try {
    const p = env.parse(routeMatchesToRe2(expression));
    const c = p.check() as { valid: boolean; error?: Error; type?: string };
    if (!c.valid) return { ok: false, issue: celGoIssue(expression, c.error ?? new Error('type check failed'), env) };
    return { ok: true, type: c.type ?? 'dyn', ast: p.ast };
  } catch (err) {
    return { ok: false, issue: celGoIssue(expression, err as Error, env) };
  }
}

/** the compile error of a rule at a schema node, as kube words it, or undefined */
export function ruleCompileError(rule: string, schema: JSONSchemaProps, ctx: RuleContext | boolean = {}): string | undefined {
  const c = check(rule, schema, typeof ctx === 'boolean' ? { root: ctx } : ctx);
  if (!c.ok) return `compilation failed: ${c.issue}`;
  if (c.type !== 'bool') return 'cel expression must evaluate to a bool';
  return undefined;
}

/** the compile error of a rule's messageExpression, as kube words it, or undefined */
export function messageExpressionError(expression: string, schema: JSONSchemaProps, ctx: RuleContext = {}): string | undefined {
  const c = check(expression, schema, ctx);
  if (!c.ok) return `messageExpression compilation failed: ${c.issue}`;
  if (c.type !== 'string') return 'messageExpression must evaluate to a string';
  return undefined;
}

interface AstNode {
  op: string;
  args: unknown;
}

function refersTo(node: unknown, name: string): boolean {
  if (Array.isArray(node)) return node.some((n) => refersTo(n, name));
  if (!node || typeof node !== 'object' || !('op' in node)) return false;
  const n = node as AstNode;
  if (n.op === 'id') return n.args === name;
  // a selected field is a name, not a reference
  if (n.op === '.' || n.op === '.?') return refersTo((n.args as unknown[])[0], name);
  return refersTo(n.args, name);
}

const parser = celEnvironment({ age: 'stored', homogeneousAggregateLiterals: false })
  .registerVariable('self', 'dyn')
  .registerVariable('oldSelf', 'dyn');
const oldSelfUse = new Map<string, boolean>();

/** whether a rule refers to `oldSelf` (a transition rule) */
export function usesOldSelf(rule: string): boolean {
  let uses = oldSelfUse.get(rule);
  if (uses === undefined) {
    try {
      uses = refersTo(parser.parse(routeMatchesToRe2(rule)).ast, 'oldSelf');
    } catch {
      uses = /\boldSelf\b/.test(rule);
    }
    if (oldSelfUse.size > 5000) oldSelfUse.clear();
    oldSelfUse.set(rule, uses);
  }
  return uses;
}

/** kube's limits on the static estimate: per rule, and for all the rules of one schema */
export const RULE_COST_LIMIT = 10_000_000;
export const SCHEMA_COST_LIMIT = 100_000_000;

/** the estimated worst-case cost of one evaluation of an expression at a node (undefined: it
 *  does not compile) */
export function ruleCost(rule: string, schema: JSONSchemaProps, ctx: RuleContext | boolean = {}): number | undefined {
  const c = check(rule, schema, typeof ctx === 'boolean' ? { root: ctx } : ctx);
  return c.ok ? estimateCost(c.ast, { self: schema, oldSelf: schema }) : undefined;
}

/** The cost errors of a version's schema, as kube reports them: a rule whose estimate times the
 *  number of times it can run (the sizes of the lists and maps above it) is over the per-rule
 *  limit; the sum over all rules is over the schema's limit. */
export function ruleCostErrors(schema: JSONSchemaProps, path: string, stored: ReadonlySet<string> = new Set()): FieldError[] {
  const errs: FieldError[] = [];
  const costs: { path: string; cost: number }[] = [];
  const visit = (s: JSONSchemaProps, p: string, cardinality: number, root: boolean): void => {
    ((s['x-kubernetes-validations'] ?? []) as ValidationRule[]).forEach((r, i) => {
      if (typeof r.rule !== 'string') return;
      const ctx = (expression: string): RuleContext => ({
        root,
        optionalOldSelf: r.optionalOldSelf === true,
        age: stored.has(expression) ? 'stored' : 'new',
      });
      const observe = (expression: string, field: string, what: string): void => {
        const once = ruleCost(expression, s, ctx(expression));
        if (once === undefined) return;
        const cost = Math.min(Number.MAX_SAFE_INTEGER, once * cardinality);
        const at = `${p}.x-kubernetes-validations[${i}].${field}`;
        if (cost > RULE_COST_LIMIT) errs.push(fieldErrors.forbidden(at, costExceedsMessage(what, cost, RULE_COST_LIMIT)));
        costs.push({ path: at, cost });
      };
      observe(r.rule, 'rule', 'estimated rule cost');
      // a messageExpression is costed only when its rule compiles, as kube does
      if (r.messageExpression && ruleCost(r.rule, s, ctx(r.rule)) !== undefined)
        observe(r.messageExpression, 'messageExpression', 'estimated messageExpression cost');
    });
    const times = (n: number) => Math.min(Number.MAX_SAFE_INTEGER, cardinality * n);
    for (const [name, ps] of Object.entries(s.properties ?? {})) visit(ps, `${p}.properties[${name}]`, cardinality, false);
    if (s.additionalProperties && typeof s.additionalProperties === 'object')
      visit(s.additionalProperties as JSONSchemaProps, `${p}.additionalProperties`, times(maxSize(s)), false);
    if (s.items) visit(s.items, `${p}.items`, times(maxSize(s)), false);
  };
  visit(schema, path, 1, true);
  const total = costs.reduce((a, c) => Math.min(Number.MAX_SAFE_INTEGER, a + c.cost), 0);
  if (total > SCHEMA_COST_LIMIT) {
    // kube names the rules that weigh most, then the total
    for (const c of [...costs].sort((a, b) => b.cost - a.cost).slice(0, 4)) {
      errs.push(fieldErrors.forbidden(c.path, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'));
    }
    errs.push(
      fieldErrors.forbidden(
        path,
        costExceedsMessage('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', total, SCHEMA_COST_LIMIT),
      ),
    );
  }
  return errs;
}

type ValidationRule = NonNullable<JSONSchemaProps['x-kubernetes-validations']>[number] & { optionalOldSelf?: boolean };

/** a rule as Go's %#v prints kube's internal ValidationRule (the value of its compile errors) */
function renderValidationRule(r: ValidationRule): { rendered: string } {
  const q = (v: string | undefined) => JSON.stringify(v ?? '');
  // a set reason or optionalOldSelf is a pointer: Go prints its address, which no client can rely on
  const reason =
    r.reason === undefined ? '(*apiextensions.FieldValueErrorReason)(nil)' : '(*apiextensions.FieldValueErrorReason)(0xc000000000)';
  const optionalOldSelf = r.optionalOldSelf === undefined ? '(*bool)(nil)' : '(*bool)(0xc000000000)';
  return {
    rendered: `apiextensions.ValidationRule{Rule:${q(r.rule)}, Message:${q(r.message)}, MessageExpression:${q(r.messageExpression)}, Reason:${reason}, FieldPath:${q(r.fieldPath)}, OptionalOldSelf:${optionalOldSelf}}`,
  };
}

/** The compile errors of the rules at one schema node. `uncorrelatable`: the path of the
 *  nearest ancestor below which old and new values do not correlate (an atomic list, a set,
 *  an atomic map), where `oldSelf` is refused; `stored`: the expressions the CRD already has. */
export function nodeRuleErrors(
  s: JSONSchemaProps,
  path: string,
  root: boolean,
  uncorrelatable: string | undefined,
  stored: ReadonlySet<string>,
): FieldError[] {
  const errs: FieldError[] = [];
  ((s['x-kubernetes-validations'] ?? []) as ValidationRule[]).forEach((r, i) => {
    const at = `${path}.x-kubernetes-validations[${i}]`;
    if (typeof r.rule !== 'string') {
      errs.push(fieldErrors.invalid(`${at}.rule`, renderValidationRule(r), 'rule is required'));
      return;
    }
    if (!r.rule.trim()) return;
    const ctx = (expression: string): RuleContext => ({
      root,
      optionalOldSelf: r.optionalOldSelf === true,
      age: stored.has(expression) ? 'stored' : 'new',
    });
    const problem = ruleCompileError(r.rule, s, ctx(r.rule));
    if (problem) {
      errs.push(fieldErrors.invalid(`${at}.rule`, renderValidationRule(r), problem));
      return;
    }
    const messageProblem = r.messageExpression ? messageExpressionError(r.messageExpression, s, ctx(r.messageExpression)) : undefined;
    if (messageProblem) errs.push(fieldErrors.invalid(`${at}.messageExpression`, renderValidationRule(r), messageProblem));
    if (usesOldSelf(r.rule)) {
      if (uncorrelatable !== undefined)
        errs.push(
          fieldErrors.invalid(
            `${at}.rule`,
            r.rule,
            `oldSelf cannot be used on the uncorrelatable portion of the schema within ${uncorrelatable}`,
          ),
        );
    } else if (r.optionalOldSelf !== undefined) {
      errs.push(fieldErrors.invalid(`${at}.optionalOldSelf`, r.optionalOldSelf, 'may not be set if oldSelf is not used in rule'));
    }
  });
  return errs;
}

/** every rule and messageExpression text of a CRD's schemas (the stored ones, on an update) */
export function celExpressionsOf(schemas: readonly (JSONSchemaProps | undefined)[]): Set<string> {
  const out = new Set<string>();
  const visit = (s: JSONSchemaProps | undefined): void => {
    if (!s || typeof s !== 'object') return;
    for (const r of s['x-kubernetes-validations'] ?? []) {
      if (typeof r.rule === 'string') out.add(r.rule);
      if (typeof r.messageExpression === 'string') out.add(r.messageExpression);
    }
    for (const p of Object.values(s.properties ?? {})) visit(p);
    if (s.additionalProperties && typeof s.additionalProperties === 'object') visit(s.additionalProperties);
    visit(s.items);
  };
  for (const s of schemas) visit(s);
  return out;
}
