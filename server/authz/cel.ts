// CEL match conditions of webhook authorizers: boolean expressions over `request`, the v1
// SubjectAccessReview spec of the request being authorized (user, groups, uid, extra,
// resourceAttributes, nonResourceAttributes). `matches` runs on RE2.

import { Environment } from '@marcbachmann/cel-js';
import { re2Environment, routeMatchesToRe2, toCelValue } from '../authn/jwt/cel.js';

let env: Environment | undefined;
function environment(): Environment {
  env ??= re2Environment('request');
  return env;
}

export interface MatchCondition {
  readonly expression: string;
  /** throws when evaluation fails or does not give a bool */
  evaluate(request: Record<string, unknown>): boolean;
}

/** parses and type-checks; throws with the compiler's message */
export function compileMatchCondition(expression: string): MatchCondition {
  let program: ReturnType<Environment['parse']>;
  try {
    program = environment().parse(routeMatchesToRe2(expression));
    const check = program.check() as { valid: boolean; error?: Error; type?: string };
    if (!check.valid) throw check.error ?? new Error('type check failed');
    if (check.type && check.type !== 'bool' && check.type !== 'dyn') throw new Error(`must evaluate to bool`);
  } catch (err) {
    throw new Error(`compilation failed: ${(err as Error).message.split('\n')[0]}`);
  }
  return {
    expression,
    evaluate(request) {
      const v = program({ request: toCelValue(request) });
      if (typeof v !== 'boolean') throw new Error(`expression '${expression}' resulted in error: no such overload`);
      return v;
    },
  };
}
