// x-kubernetes-validations: CEL rules of a structural schema, evaluated with `self` (the value
// at the rule's node) and, for transition rules, `oldSelf` (the stored value at the same place,
// on updates only). A failing rule is an Invalid error at its field with the rule's message.

import type { Environment } from '@marcbachmann/cel-js';
import { withBudget } from '../cel/budget.js';
import { celEnvironment } from '../cel/environment.js';
import { routeMatchesToRe2, toCelValue } from '../cel/re2.js';
import { fieldErrors, type FieldError } from '../registry/validation/field-error.js';
import type { JSONSchemaProps } from './schema.js';

let env: Environment | undefined;
const programs = new Map<string, ReturnType<Environment['parse']> | Error>();

function compile(rule: string): ReturnType<Environment['parse']> | Error {
  let p = programs.get(rule);
  if (!p) {
    try {
      // user regexes run on RE2 (no catastrophic backtracking), with Kubernetes' libraries
      env ??= celEnvironment()
        .registerVariable('self', 'dyn')
        .registerVariable('oldSelf', 'dyn');
      p = env.parse(routeMatchesToRe2(rule));
      const check = p.check() as { valid: boolean; error?: Error };
      if (!check.valid) p = check.error ?? new Error('type check failed');
    } catch (err) {
      p = err as Error;
    }
    programs.set(rule, p);
  }
  return p;
}

/** the compile error of a rule, or undefined (the CRD's validation asks) */
export function ruleCompileError(rule: string): string | undefined {
  const p = compile(rule);
  return p instanceof Error ? `compilation failed: ${p.message.split('\n')[0]}` : undefined;
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
      ok = withBudget(() => p({ self: toCelValue(v), oldSelf: transition ? toCelValue(old) : null }));
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
