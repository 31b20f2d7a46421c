// CEL match conditions of webhook authorizers: boolean expressions over `request`, the v1
// SubjectAccessReview spec of the request being authorized (user, groups, uid, extra,
// resourceAttributes, nonResourceAttributes, with fieldSelector and labelSelector). `matches`
// runs on RE2.

import type { Environment } from '@marcbachmann/cel-js';
import { celEnvironment } from '../cel/environment.js';
import { routeMatchesToRe2, toCelValue } from '../cel/re2.js';

let env: Environment | undefined;
function environment(): Environment {
  // kube's base environment: with the authorizer library's selectors (AuthorizeWithSelectors)
  env ??= celEnvironment().registerVariable('request', 'map');
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
