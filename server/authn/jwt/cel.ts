// CEL for the authentication configuration: expressions over `claims` (the verified JWT
// payload) or `user` (the mapped user: username, uid, groups, extra). Regular expressions run
// on RE2 (re2js): `matches` is routed to it, so a configured expression cannot backtrack
// catastrophically. JSON integers become CEL ints, as kube-apiserver's unstructured claims do.

import type { Environment } from '@marcbachmann/cel-js';
import { celEnvironment } from '../../cel/environment.js';
import { routeMatchesToRe2, toCelValue } from '../../cel/re2.js';

export { routeMatchesToRe2, toCelValue };

export type CelVariable = 'claims' | 'user';

export interface CompiledExpression {
  readonly expression: string;
  evaluate(value: Record<string, unknown>): unknown;
}

const environments = new Map<CelVariable, Environment>();

export class CelCompileError extends Error {}

/** Parses and type-checks; throws CelCompileError with the compiler's message. */
export function compileExpression(variable: CelVariable, expression: string): CompiledExpression {
  let env = environments.get(variable);
  if (!env) {
    env = celEnvironment().registerVariable(variable, 'map');
    environments.set(variable, env);
  }
  const routed = routeMatchesToRe2(expression);
  let program: ReturnType<Environment['parse']>;
  try {
    program = env.parse(routed);
    const check = program.check() as { valid: boolean; error?: Error };
    if (!check.valid) throw check.error ?? new Error('type check failed');
  } catch (err) {
    throw new CelCompileError(`compilation failed: ${(err as Error).message.split('\n')[0]}`);
  }
  return {
    expression,
    evaluate: (value) => program({ [variable]: toCelValue(value) }),
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
