// A webhook's matchConditions: CEL expressions over `object`, `oldObject` and `request` (the
// AdmissionRequest). All true: the webhook is called; any false: skipped; an error: skipped
// under failurePolicy Ignore, the request refused under Fail. The `authorizer` variable is
// not offered (kapi's CEL has no authorizer library yet).

import { Environment } from '@marcbachmann/cel-js';
import { re2Environment, routeMatchesToRe2, toCelValue } from '../../authn/jwt/cel.js';
import type { MatchConditionSpec } from './types.js';

let env: Environment | undefined;
function environment(): Environment {
  env ??= re2Environment('request').registerVariable('object', 'dyn').registerVariable('oldObject', 'dyn');
  return env;
}

type Program = ReturnType<Environment['parse']>;
const compiled = new Map<string, Program | Error>();

function compile(expression: string): Program | Error {
  let p = compiled.get(expression);
  if (p) return p;
  try {
    p = environment().parse(routeMatchesToRe2(expression));
  } catch (err) {
    p = new Error(`compilation failed: ${(err as Error).message.split('\n')[0]}`);
  }
  if (compiled.size > 1000) compiled.clear();
  compiled.set(expression, p);
  return p;
}

export interface MatchInput {
  object: unknown;
  oldObject: unknown;
  request: Record<string, unknown>;
}

export type MatchResult = { matches: true } | { matches: false; failedCondition?: string } | { matches: false; error: string };

export function evaluateMatchConditions(conditions: readonly MatchConditionSpec[], input: MatchInput): MatchResult {
  if (conditions.length === 0) return { matches: true };
  const vars = {
    object: input.object === null || input.object === undefined ? null : toCelValue(input.object),
    oldObject: input.oldObject === null || input.oldObject === undefined ? null : toCelValue(input.oldObject),
    request: toCelValue(input.request),
  };
  const errs: string[] = [];
  for (const c of conditions) {
    const program = compile(c.expression);
    if (program instanceof Error) {
      errs.push(`expression '${c.expression}' resulted in error: ${program.message}`);
      continue;
    }
    let v: unknown;
    try {
      v = program(vars);
    } catch (err) {
      errs.push(`expression '${c.expression}' resulted in error: ${(err as Error).message.split('\n')[0]}`);
      continue;
    }
    if (v === false) return { matches: false, failedCondition: c.name };
    if (v !== true) errs.push(`expression '${c.expression}' resulted in error: no such overload`);
  }
  if (errs.length > 0) return { matches: false, error: errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]` };
  return { matches: true };
}
