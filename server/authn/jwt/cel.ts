// CEL for the authentication configuration: expressions over `claims` (the verified JWT
// payload, a map of string to dyn) or `user` (the mapped user, typed as kube declares
// kubernetes.UserInfo: username, uid, groups, extra), over kube's base environment. Regular expressions run
// on RE2 (re2js): `matches` is routed to it, so a configured expression cannot backtrack
// catastrophically. JSON integers become CEL ints, as kube-apiserver's unstructured claims do.

import type { Environment } from '@marcbachmann/cel-js';
import { withBudget } from '../../cel/budget.js';
import { celEnvironment } from '../../cel/environment.js';
import { celGoIssue } from '../../cel/issues.js';
import { routeMatchesToRe2, toCelValue } from '../../cel/re2.js';
import { registerSchemaTypes, type CelSchema } from '../../cel/schema-types.js';

export { routeMatchesToRe2, toCelValue };

export type CelVariable = 'claims' | 'user';

export interface CompiledExpression {
  readonly expression: string;
  evaluate(value: Record<string, unknown>): unknown;
}

const strings: CelSchema = { type: 'array', items: { type: 'string' } };

/** kube's declaration of `user` */
const USER_INFO: CelSchema = {
  type: 'object',
  properties: {
    username: { type: 'string' },
    uid: { type: 'string' },
    groups: strings,
    extra: { type: 'object', additionalProperties: strings },
  },
};

const environments = new Map<CelVariable, Environment>();

export class CelCompileError extends Error {}

/** Parses and type-checks; throws CelCompileError with the compiler's message. */
export function compileExpression(variable: CelVariable, expression: string): CompiledExpression {
  let env = environments.get(variable);
  if (!env) {
    env = celEnvironment();
    env = env.registerVariable(
      variable,
      variable === 'user' ? registerSchemaTypes(env, USER_INFO, 'kubernetes.UserInfo', { escapeNames: false }) : 'map<string, dyn>',
    );
    environments.set(variable, env);
  }
  const routed = routeMatchesToRe2(expression);
  let program: ReturnType<Environment['parse']>;
  try {
    program = env.parse(routed);
    const check = program.check() as { valid: boolean; error?: Error };
    if (!check.valid) throw check.error ?? new Error('type check failed');
  } catch (err) {
    throw new CelCompileError(`compilation failed: ${celGoIssue(expression, err as Error, env)}`);
  }
  return {
    expression,
    // kube's per-call cost limit, as for every CEL expression
    evaluate: (value) => withBudget(program, { [variable]: toCelValue(value) }),
  };
}

/** a CEL result as a list of strings (a string is a list of one), else throws */
export function stringList(result: unknown): string[] {
  if (typeof result === 'string') return [result];
  if (Array.isArray(result) && result.every((x) => typeof x === 'string')) return result as string[];
  throw new Error('expression must return a string or a list of strings');
}

const selectOf = (field: string) => new RegExp(`\\bclaims\\s*\\.\\s*\\??\\s*${field}(?![\\w])`);

/** the expression reads `claims.email` / `claims.email_verified` (select or optional select) */
export function usesClaim(expression: string, field: 'email' | 'email_verified'): boolean {
  return selectOf(field).test(expression);
}
