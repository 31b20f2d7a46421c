// `matches` on RE2 (re2js) for every kapi CEL environment: expressions are rewritten to call
// an RE2 function (routeMatchesToRe2), so that a user's regular expression cannot backtrack
// catastrophically. Also the conversion of JSON values to CEL values.

import type { Environment } from '@marcbachmann/cel-js';
import { RE2JS } from 're2js';
import { applyEdits, type RewrittenSource, type TextEdit } from './rewritten-source.js';

export const RE2_MATCHES = 'kapiRe2Matches';
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

/** registers the RE2 `matches` that routeMatchesToRe2 points expressions at */
export function withRe2Matches(env: Environment): Environment {
  return env
    .registerFunction(`string.${RE2_MATCHES}(string): bool`, re2Matches)
    .registerFunction(`${RE2_MATCHES}(string, string): bool`, re2Matches);
}

/** Calls to `matches` (receiver or global form) outside string literals now call the RE2
 *  function; with the map back to the expression's offsets */
export function routeMatchesToRe2Source(expression: string): RewrittenSource {
  const edits: TextEdit[] = [];
  let i = 0;
  while (i < expression.length) {
    const c = expression[i]!;
    if (c === '"' || c === "'") {
      const triple = expression.startsWith(c.repeat(3), i);
      const quote = triple ? c.repeat(3) : c;
      let j = i + quote.length;
      while (j < expression.length && !expression.startsWith(quote, j)) j += expression[j] === '\\' ? 2 : 1;
      i = Math.min(expression.length, j + quote.length);
      continue;
    }
    const m = /^matches(\s*\()/.exec(expression.slice(i));
    const prev = i > 0 ? expression[i - 1]! : '';
    if (m && !/[\w]/.test(prev)) {
      edits.push({ at: i, length: 'matches'.length, text: RE2_MATCHES });
      i += 'matches'.length + m[1]!.length;
      continue;
    }
    i++;
  }
  return applyEdits(expression, edits);
}

/** Calls to `matches` (receiver or global form) outside string literals now call the RE2 function. */
export function routeMatchesToRe2(expression: string): string {
  return routeMatchesToRe2Source(expression).text;
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
