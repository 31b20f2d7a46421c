// CEL match conditions of webhook authorizers: boolean expressions over `request`, the v1
// SubjectAccessReview spec of the request being authorized (user, groups, uid, extra,
// resourceAttributes, nonResourceAttributes, with fieldSelector and labelSelector), typed as
// kube declares it. `matches` runs on RE2.

import type { Environment } from '@marcbachmann/cel-js';
import { withBudget } from '../cel/budget.js';
import { celEnvironment } from '../cel/environment.js';
import { celGoIssue } from '../cel/issues.js';
import { routeMatchesToRe2, toCelValue } from '../cel/re2.js';
import { registerSchemaTypes, type CelSchema } from '../cel/schema-types.js';

const str: CelSchema = { type: 'string' };
const strings: CelSchema = { type: 'array', items: str };
const selector: CelSchema = {
  type: 'object',
  properties: {
    rawSelector: str,
    requirements: { type: 'array', items: { type: 'object', properties: { key: str, operator: str, values: strings } } },
  },
};

/** kube's declaration of `request` (kubernetes.SubjectAccessReviewSpec, with the selectors of
 *  AuthorizeWithSelectors) */
const REQUEST: CelSchema = {
  type: 'object',
  properties: {
    resourceAttributes: {
      type: 'object',
      properties: {
        namespace: str,
        verb: str,
        group: str,
        version: str,
        resource: str,
        subresource: str,
        name: str,
        fieldSelector: selector,
        labelSelector: selector,
      },
    },
    nonResourceAttributes: { type: 'object', properties: { path: str, verb: str } },
    user: str,
    groups: strings,
    extra: { type: 'object', additionalProperties: strings },
    uid: str,
  },
};

let env: Environment | undefined;
function environment(): Environment {
  // kube's base environment: with the authorizer library's selectors (AuthorizeWithSelectors)
  if (!env) {
    const e = celEnvironment();
    env = e.registerVariable('request', registerSchemaTypes(e, REQUEST, 'kubernetes.SubjectAccessReviewSpec', { escapeNames: false }));
  }
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
    const e = err as Error;
    throw new Error(`compilation failed: ${'code' in e ? celGoIssue(expression, e, environment()) : e.message}`);
  }
  return {
    expression,
    evaluate(request) {
      // kube's per-call cost limit, as for every CEL expression
      const v = withBudget(program, { request: toCelValue(request) });
      if (typeof v !== 'boolean') throw new Error(`expression '${expression}' resulted in error: no such overload`);
      return v;
    },
  };
}
