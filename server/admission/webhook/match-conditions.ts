// A webhook's matchConditions: CEL expressions over `object`, `oldObject` and `request` (the
// AdmissionRequest) and `authorizer` (Kubernetes' authorizer library, as the requesting user).
// All true: the webhook is called; any false: skipped; an error: skipped under failurePolicy
// Ignore, the request refused under Fail.

import type { Environment } from '@marcbachmann/cel-js';
import { AuthorizationPending, AuthorizerValue, evaluateWithAuthorizer, type AuthorizerSession } from '../../cel/authorizer-library.js';
import { celEnvironment } from '../../cel/environment.js';
import { routeMatchesToRe2, toCelValue } from '../../cel/re2.js';
import type { UserInfo } from '../../machinery/user.js';
import { evaluateWithCost, MATCH_CONDITIONS_COST_BUDGET, OUT_OF_COST_BUDGET } from '../../cel/budget.js';
import type { MatchConditionSpec } from './types.js';

let env: Environment | undefined;
function environment(): Environment {
  env ??= celEnvironment({ authorizer: true })
    .registerVariable('request', 'map')
    .registerVariable('object', 'dyn')
    .registerVariable('oldObject', 'dyn');
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
  /** answers `authorizer` checks for the whole request */
  session: AuthorizerSession;
  user: UserInfo;
  /** what `authorizer.requestResource` checks */
  requestResource: { group: string; resource: string; subresource: string; namespace: string; name: string };
}

export type MatchResult = { matches: true } | { matches: false; failedCondition?: string } | { matches: false; error: string };

type Outcome = { ok: true; value: unknown } | { ok: false; error: string; pending: boolean };

export async function evaluateMatchConditions(conditions: readonly MatchConditionSpec[], input: MatchInput): Promise<MatchResult> {
  if (conditions.length === 0) return { matches: true };
  const vars = {
    object: input.object === null || input.object === undefined ? null : toCelValue(input.object),
    oldObject: input.oldObject === null || input.oldObject === undefined ? null : toCelValue(input.oldObject),
    request: toCelValue(input.request),
    authorizer: new AuthorizerValue(input.session, input.user, input.requestResource),
  };
  const errs: string[] = [];
  // kube's runtime budget for all the conditions of one webhook (or binding)
  let remaining = MATCH_CONDITIONS_COST_BUDGET;
  for (const c of conditions) {
    const program = compile(c.expression);
    if (program instanceof Error) {
      errs.push(`expression '${c.expression}' resulted in error: ${program.message}`);
      continue;
    }
    let outOfBudget = false;
    const run = (): Outcome => {
      // bounded by kube's per-call limit, so that no expression can hold the replica
      const r = evaluateWithCost(program, vars);
      if (!r.ok && r.error instanceof AuthorizationPending) return { ok: false, error: r.error.message, pending: true };
      if (r.cost > remaining) {
        outOfBudget = true;
        return { ok: false, error: OUT_OF_COST_BUDGET, pending: false };
      }
      remaining -= r.cost;
      return r.ok ? { ok: true, value: r.value } : { ok: false, error: r.error.message.split('\n')[0] ?? '', pending: false };
    };
    const r = await evaluateWithAuthorizer(input.session, run, (o) => !o.ok);
    if (outOfBudget) return { matches: false, error: OUT_OF_COST_BUDGET };
    if (!r.ok) {
      errs.push(`expression '${c.expression}' resulted in error: ${r.error}`);
      continue;
    }
    if (r.value === false) return { matches: false, failedCondition: c.name };
    if (r.value !== true) errs.push(`expression '${c.expression}' resulted in error: no such overload`);
  }
  if (errs.length > 0) return { matches: false, error: errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]` };
  return { matches: true };
}
