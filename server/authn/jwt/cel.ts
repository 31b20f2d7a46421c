// CEL for the authentication configuration: expressions over `claims` (the verified JWT
// payload) or `user` (the mapped user: username, uid, groups, extra). Regular expressions run
// on RE2 (re2js): `matches` is routed to it, so a configured expression cannot backtrack
// catastrophically. JSON integers become CEL ints, as kube-apiserver's unstructured claims do.

import { Environment } from '@marcbachmann/cel-js';
import { RE2JS } from 're2js';

export type CelVariable = 'claims' | 'user';

export interface CompiledExpression {
  readonly expression: string;
  evaluate(value: Record<string, unknown>): unknown;
}

const RE2_MATCHES = 'kapiRe2Matches';
const regexCache = new Map<string, RE2JS>();

function re2Matches(s: string, pattern: string): boolean {
  let re = regexCache.get(pattern);
  if (!re) {
    re = RE2JS.compile(pattern);
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(pattern, re);
  }
  return re.matcher(s).find();
}

/** an environment with one map variable and `matches` on RE2 (with routeMatchesToRe2); the
 *  authorization configuration's match conditions use it too */
export function re2Environment(variable: string): Environment {
  return withRe2Matches(new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false }).registerVariable(variable, 'map'));
}

/** registers the RE2 `matches` that routeMatchesToRe2 points expressions at */
export function withRe2Matches(env: Environment): Environment {
  return env.registerFunction(`string.${RE2_MATCHES}(string): bool`, re2Matches).registerFunction(`${RE2_MATCHES}(string, string): bool`, re2Matches);
}

const environments = new Map<CelVariable, Environment>();

/** Calls to `matches` (receiver or global form) outside string literals now call the RE2 function. */
export function routeMatchesToRe2(expression: string): string {
  let out = '';
  let i = 0;
  while (i < expression.length) {
    const c = expression[i]!;
    if (c === '"' || c === "'") {
      const triple = expression.startsWith(c.repeat(3), i);
      const quote = triple ? c.repeat(3) : c;
      let j = i + quote.length;
      while (j < expression.length && !expression.startsWith(quote, j)) j += expression[j] === '\\' ? 2 : 1;
      j = Math.min(expression.length, j + quote.length);
      out += expression.slice(i, j);
      i = j;
      continue;
    }
    const m = /^matches(\s*\()/.exec(expression.slice(i));
    const prev = i > 0 ? expression[i - 1]! : '';
    if (m && !/[\w]/.test(prev)) {
      out += RE2_MATCHES + m[1];
      i += 'matches'.length + m[1]!.length;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

/** JSON values as CEL sees them: integral numbers are ints */
export function toCelValue(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(toCelValue);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = toCelValue(x);
    return out;
  }
  return v;
}

export class CelCompileError extends Error {}

/** Parses and type-checks; throws CelCompileError with the compiler's message. */
export function compileExpression(variable: CelVariable, expression: string): CompiledExpression {
  let env = environments.get(variable);
  if (!env) {
    env = re2Environment(variable);
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
