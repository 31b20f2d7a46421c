// x-kubernetes-validations: CEL rules of a structural schema, evaluated with `self` (the value
// at the rule's node) and, for transition rules, `oldSelf` (the stored value at the same place,
// on updates only, or an optional with optionalOldSelf). A failing rule is an error at its
// field with the rule's message (or its messageExpression's), within kube's runtime cost
// limits. The checks when a CRD is written are in cel-checks.ts.

import type { Environment } from '@marcbachmann/cel-js';
import { CelBudgetExceededError, evaluateWithCost, RUNTIME_COST_BUDGET } from '../cel/budget.js';
import { celEnvironment } from '../cel/environment.js';
import { celGoRuntimeError } from '../cel/issues.js';
import { celOptional } from '../cel/values.js';
import { registerKeyedListOperators, routeOperatorsToKeyedLists } from '../cel/keyed-lists.js';
import { routeMatchesToRe2 } from '../cel/re2.js';
import { usesOldSelf } from '../registry/apiextensions/cel-checks.js';
import { celValue } from './cel-types.js';
import { fieldErrors, type FieldError } from '../machinery/validation/field-error.js';
import type { JSONSchemaProps } from '../registry/apiextensions/json-schema-props.js';

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

const childPath = (path: string, name: string): string => (path ? `${path}.${name}` : name);
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function typeName(s: JSONSchemaProps, v: unknown): string {
  if (s.type) return s.type;
  if (Array.isArray(v)) return 'array';
  if (isObj(v)) return 'object';
  return typeof v;
}

type ValidationRule = NonNullable<JSONSchemaProps['x-kubernetes-validations']>[number] & { optionalOldSelf?: boolean };

/** what kube names a rule by in its errors: its message, else its text */
const ruleErrorString = (r: ValidationRule): string => (r.message ? r.message.trim() : r.rule.trim());

/** kube's cap on an evaluated messageExpression (celconfig.MaxEvaluatedMessageExpressionSizeBytes) */
const MAX_MESSAGE_BYTES = 5 * 1024;

/** the remaining runtime budget of one object's validation; negative once it stopped */
interface Budget {
  remaining: number;
}

/** Runs every rule of `schema` over `value` (and `old`, for updates), depth first, within
 *  kube's runtime cost budget for one object: a rule over the per-call limit, or the budget
 *  running out, stops the validation with kube's message. */
export function validateRules(
  value: unknown,
  old: unknown,
  schema: JSONSchemaProps | undefined,
  path: string,
  update: boolean,
  budget = RUNTIME_COST_BUDGET,
): FieldError[] {
  const errs: FieldError[] = [];
  walk(value, update ? old : undefined, schema, path, errs, { remaining: budget });
  return errs;
}

const stopped = (b: Budget): boolean => b.remaining < 0;

/** charges an evaluation's cost; false (and the budget spent) when it does not fit */
function spend(b: Budget, cost: number): boolean {
  if (cost > b.remaining) {
    b.remaining = -1;
    return false;
  }
  b.remaining -= cost;
  return true;
}

/** kube's messageExpression result, or undefined to fall back to the rule's message; a spent
 *  budget is an error that stops the validation */
function messageOf(r: ValidationRule, act: Record<string, unknown>, b: Budget): { detail?: string; stop?: string } {
  if (!r.messageExpression) return {};
  const p = compile(r.messageExpression);
  if (p instanceof Error) return {};
  const run = evaluateWithCost(p, act);
  if (!spend(b, run.cost))
    return { stop: 'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run' };
  if (!run.ok) {
    if (run.error instanceof CelBudgetExceededError) {
      b.remaining = -1;
      return {
        stop: `no further validation rules will be run due to call cost exceeds limit for messageExpression: ${JSON.stringify(r.messageExpression)}`,
      };
    }
    return {};
  }
  if (typeof run.value !== 'string') return {};
  const message = run.value.trim();
  if (message === '' || /[\r\n]/.test(message) || Buffer.byteLength(message) > MAX_MESSAGE_BYTES) return {};
  return { detail: message };
}

function walk(v: unknown, old: unknown, s: JSONSchemaProps | undefined, path: string, errs: FieldError[], b: Budget): void {
  if (!s || v === undefined || v === null || stopped(b)) return;
  const rules = (s['x-kubernetes-validations'] ?? []) as ValidationRule[];
  if (rules.length > 0 && b.remaining === 0) {
    errs.push(
      fieldErrors.invalid(
        path,
        typeName(s, v),
        'validation failed due to running out of cost budget, no further validation rules will be run',
      ),
    );
    b.remaining = -1;
    return;
  }
  const hasOld = old !== undefined && old !== null;
  for (const r of rules) {
    const transition = usesOldSelf(r.rule);
    const optionalOld = transition && r.optionalOldSelf === true;
    // transition rules run only against a correlated old value, unless oldSelf is optional
    if (transition && !hasOld && !optionalOld) continue;
    const p = compile(r.rule);
    const field = r.fieldPath
      ? path
        ? path + (r.fieldPath.startsWith('.') ? r.fieldPath : '.' + r.fieldPath)
        : r.fieldPath.replace(/^\./, '')
      : path;
    const invalid = (detail: string) => errs.push(fieldErrors.invalid(path, typeName(s, v), detail));
    if (p instanceof Error) {
      invalid(`rule compile error: ${p.message.split('\n')[0]}`);
      continue;
    }
    const oldSelf = !transition ? null : optionalOld ? celOptional(hasOld ? celValue(old, s) : undefined) : celValue(old, s);
    const act = { self: celValue(v, s), oldSelf };
    const run = evaluateWithCost(p, act);
    if (!spend(b, run.cost)) {
      invalid('validation failed due to running out of cost budget, no further validation rules will be run');
      return;
    }
    if (!run.ok) {
      if (run.error instanceof CelBudgetExceededError) {
        invalid(
          `'${run.error.message}': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleErrorString(r)}`,
        );
        b.remaining = -1;
        return;
      }
      const message = celGoRuntimeError(run.error);
      if (message.startsWith('no such overload'))
        invalid(
          `'${message}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(r)}`,
        );
      else invalid(`${message} evaluating rule: ${ruleErrorString(r)}`);
      continue;
    }
    if (run.value === true) continue;
    const custom = messageOf(r, act, b);
    if (custom.stop) {
      errs.push(fieldErrors.invalid(field, typeName(s, v), custom.stop));
      return;
    }
    const detail = custom.detail ?? (r.message ? r.message.trim() : `failed rule: ${ruleErrorString(r)}`);
    if (r.reason === 'FieldValueForbidden') errs.push(fieldErrors.forbidden(field, detail));
    else if (r.reason === 'FieldValueRequired') errs.push(fieldErrors.required(field, detail));
    else if (r.reason === 'FieldValueDuplicate') errs.push({ type: 'FieldValueDuplicate', field, badValue: typeName(s, v), detail });
    else errs.push(fieldErrors.invalid(field, typeName(s, v), detail));
  }
  if (isObj(v)) {
    // an atomic map's old value does not correlate with the new one
    const oldMap = isObj(old) && s['x-kubernetes-map-type'] !== 'atomic' ? old : undefined;
    for (const [name, item] of Object.entries(v)) {
      const prop = s.properties?.[name] ?? (isObj(s.additionalProperties) ? (s.additionalProperties as JSONSchemaProps) : undefined);
      walk(item, oldMap?.[name], prop, childPath(path, name), errs, b);
      if (stopped(b)) return;
    }
  } else if (Array.isArray(v) && s.items) {
    // only map lists correlate old items with new ones, by their keys
    const oldItem = correlateByKeys(s, old);
    for (let i = 0; i < v.length; i++) {
      walk(v[i], oldItem(v[i]), s.items, `${path}[${i}]`, errs, b);
      if (stopped(b)) return;
    }
  }
}

function correlateByKeys(s: JSONSchemaProps, old: unknown): (item: unknown) => unknown {
  const keys = s['x-kubernetes-list-map-keys'] ?? [];
  if (s['x-kubernetes-list-type'] !== 'map' || keys.length === 0 || !Array.isArray(old)) return () => undefined;
  const keyOf = (x: unknown) => (isObj(x) ? JSON.stringify(keys.map((k) => x[k] ?? null)) : undefined);
  const byKey = new Map<string, unknown>();
  for (const x of old) {
    const k = keyOf(x);
    if (k !== undefined && !byKey.has(k)) byKey.set(k, x);
  }
  return (item) => {
    const k = keyOf(item);
    return k === undefined ? undefined : byKey.get(k);
  };
}
