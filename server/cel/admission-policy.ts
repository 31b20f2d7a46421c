// CEL as ValidatingAdmissionPolicy expressions see it: the variables `object`, `oldObject`,
// `request`, `params`, `namespaceObject` and `variables` (the policy's named variables, each
// evaluated on first use), `authorizer`, over kube's base environment (server/cel/environment.ts:
// expressions being written get compatibility version 1.32's libraries, stored ones 1.33's), and
// kube's runtime cost limits (server/cel/budget.ts): per expression, and for all the
// expressions of one binding's validations.

import type { Environment } from '@marcbachmann/cel-js';
import { AuthorizationPending, AuthorizerSession, AuthorizerValue, evaluateWithAuthorizer } from './authorizer-library.js';
import { CelBudgetExceededError, evaluateWithCost, OUT_OF_COST_BUDGET } from './budget.js';
import { celEnvironment, type ExpressionAge } from './environment.js';
import { celGoIssue } from './issues.js';
import { registerMessageLiterals, rewriteMessageLiteralsSource } from './message-literals.js';
import { routeMatchesToRe2Source, toCelValue } from './re2.js';
import { chain, type RewrittenSource, unchanged } from './rewritten-source.js';
import { registerJsonPatchLibrary } from './json-patch-library.js';

/** 'mutating': MutatingAdmissionPolicy's environment, which adds message construction
 *  (`JSONPatch{...}`, `Object{...}`) and `jsonpatch.escapeKey` */
export type PolicyFlavour = 'validating' | 'mutating';

/** the policy's variables in declaration order, each with the CEL type its expression
 *  compiled to (as `variableFieldType` declares it) */
export type VariableTypes = ReadonlyMap<string, string>;

/** the object type kube declares `variables` with */
export const VARIABLES_TYPE = 'kubernetes.variables';

const bases = new Map<string, Environment>();
/** the environment without `variables` */
function baseEnvironment(age: ExpressionAge, flavour: PolicyFlavour): Environment {
  const key = `${age}/${flavour}`;
  let env = bases.get(key);
  if (env) return env;
  env = celEnvironment({ age, authorizer: true });
  if (flavour === 'mutating') env = registerJsonPatchLibrary(registerMessageLiterals(env));
  env = env
    .registerVariable('request', 'map')
    .registerVariable('object', 'dyn')
    .registerVariable('oldObject', 'dyn')
    .registerVariable('params', 'dyn')
    .registerVariable('namespaceObject', 'dyn');
  bases.set(key, env);
  return env;
}

/** policies seldom change; the bound only keeps a stream of distinct ones from growing it */
const MAX_CACHED_ENVIRONMENTS = 256;
const environments = new Map<string, Environment>();
/** `variables` undefined: declared as a map (callers that refuse it find it themselves);
 *  otherwise an object type whose fields are the variables, as kube's composition declares it */
function environment(age: ExpressionAge, flavour: PolicyFlavour = 'validating', variables?: VariableTypes): Environment {
  const key = `${age}/${flavour}/${variables ? JSON.stringify([...variables]) : ''}`;
  let env = environments.get(key);
  if (env) return env;
  env = baseEnvironment(age, flavour).clone();
  if (variables) env.registerType(VARIABLES_TYPE, { fields: Object.fromEntries(variables) }).registerVariable('variables', VARIABLES_TYPE);
  else env.registerVariable('variables', 'map');
  if (environments.size >= MAX_CACHED_ENVIRONMENTS) environments.delete(environments.keys().next().value!);
  environments.set(key, env);
  return env;
}

const DECLARABLE = new Set([
  'bool',
  'bytes',
  'double',
  'int',
  'uint',
  'string',
  'null',
  'dyn',
  'google.protobuf.Duration',
  'google.protobuf.Timestamp',
]);

/** the type parameters of `name<a, b<c, d>>`, split at the top level */
function typeParameters(t: string): string[] {
  const inner = t.slice(t.indexOf('<') + 1, -1);
  const params: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    if (inner[i] === '<') depth++;
    else if (inner[i] === '>') depth--;
    else if (inner[i] === ',' && depth === 0) {
      params.push(inner.slice(start, i).trim());
      start = i + 1;
    }
  }
  params.push(inner.slice(start).trim());
  return params;
}

/** The type a variable is declared with, from its expression's compiled type, as kube converts
 *  it: primitives, durations and timestamps stay, lists and maps keep their (converted)
 *  parameters, anything else (an object, an optional, a library type) is dyn, and so is a
 *  variable that does not compile (`undefined`). */
export function variableFieldType(outputType: string | undefined): string {
  if (outputType === undefined) return 'dyn';
  if (DECLARABLE.has(outputType)) return outputType;
  if (outputType === 'list') return 'list<dyn>';
  if (outputType === 'map') return 'map<dyn, dyn>';
  if (outputType.startsWith('list<') && outputType.endsWith('>')) return `list<${variableFieldType(typeParameters(outputType)[0])}>`;
  if (outputType.startsWith('map<') && outputType.endsWith('>')) {
    const [k, v] = typeParameters(outputType);
    return `map<${variableFieldType(k)}, ${variableFieldType(v)}>`;
  }
  return 'dyn';
}

/** the values an expression runs over; JSON numbers are converted by `activation()` */
export interface Activation {
  object: unknown;
  oldObject: unknown;
  request: Record<string, unknown>;
  params: unknown;
  namespaceObject: unknown;
  variables: Record<string, unknown>;
  /** `authorizer`: checks as the requesting user, answered through the session */
  authorizer: AuthorizerValue;
  /** kube's runtime cost budget for one binding's validations, shared by the expressions
   *  (and the variables they read) evaluated while it is set */
  budget?: { remaining: number };
}

/** kube's message when a binding's validations spend their runtime cost budget */
export const OUT_OF_BUDGET = OUT_OF_COST_BUDGET;

/** `pending`: the evaluation stopped at an authorizer check not answered yet; `outOfBudget`:
 *  the activation's budget is spent, and no further expression may run */
export type EvalResult = { ok: true; value: unknown } | { ok: false; error: string; pending?: boolean; outOfBudget?: boolean };

export interface Program {
  readonly expression: string;
  /** set when the expression did not compile */
  readonly compileError?: string;
  /** the type the checker gave the expression (cel-js's notation); unset when it did not compile */
  readonly outputType?: string;
  evaluate(activation: Activation): EvalResult;
  /** evaluate, answering the authorizer checks it asks for between attempts */
  evaluateAsync(activation: Activation): Promise<EvalResult>;
}

type Parsed = ReturnType<Environment['parse']>;

/** the text cel-js parses: message construction rewritten (mutating), `matches` routed to RE2 */
function parsedSource(expression: string, flavour: PolicyFlavour): RewrittenSource {
  const messages = flavour === 'mutating' ? rewriteMessageLiteralsSource(expression) : unchanged(expression);
  return chain(messages, routeMatchesToRe2Source);
}

const describe = (v: unknown): string => (v === null ? 'null_type' : typeof v === 'bigint' ? 'int' : typeof v);

/** Compiles an expression; `want` is the result type the field requires (checked when the
 *  checker knows it statically, and again at run time); `age`: 'new' when it is being written;
 *  `variables`: the policy's variables it may read, typed (see `environment`). Never throws. */
export function compile(
  expression: string,
  want: 'bool' | 'string' | 'string-or-null' | 'any',
  age: ExpressionAge = 'stored',
  flavour: PolicyFlavour = 'validating',
  variables?: VariableTypes,
): Program {
  let program: Parsed;
  let outputType: string | undefined;
  const env = environment(age, flavour, variables);
  try {
    program = env.parse(parsedSource(expression, flavour).text);
    const check = program.check() as { valid: boolean; error?: Error; type?: string };
    if (!check.valid) throw check.error ?? new Error('type check failed');
    const t = check.type;
    outputType = t ?? 'dyn';
    if (t && t !== 'dyn') {
      if (want === 'bool' && t !== 'bool') throw new Error(`must evaluate to bool but got ${t}`);
      if (want === 'string' && t !== 'string') throw new Error(`must evaluate to string but got ${t}`);
      if (want === 'string-or-null' && t !== 'string' && t !== 'null_type' && t !== 'null') {
        throw new Error(`must evaluate to one of [string null_type] but got ${t}`);
      }
    }
  } catch (err) {
    // syntax and type errors in cel-go's words and layout
    const e = err as Error & { code?: string };
    const reason =
      e.code && !/^must evaluate/.test(e.message)
        ? celGoIssue(expression, e, env, parsedSource(expression, flavour))
        : e.message.split('\n')[0];
    const message = `compilation error: ${reason}`;
    const failed: EvalResult = { ok: false, error: message };
    return { expression, compileError: message, evaluate: () => failed, evaluateAsync: async () => failed };
  }
  return {
    expression,
    outputType,
    evaluateAsync(activation) {
      return evaluateWithAuthorizer(
        activation.authorizer.session,
        () => this.evaluate(activation),
        (r) => !r.ok,
      );
    },
    evaluate(activation) {
      const budget = activation.budget;
      if (budget && budget.remaining < 0) return { ok: false, error: OUT_OF_BUDGET, outOfBudget: true };
      const run = evaluateWithCost(program, activation as unknown as Record<string, unknown>);
      // an attempt stopped at an unanswered authorizer check is run again: charged then
      if (!run.ok && run.error instanceof AuthorizationPending) return { ok: false, error: run.error.message, pending: true };
      if (budget) {
        if (run.cost > budget.remaining) {
          budget.remaining = -1;
          return { ok: false, error: OUT_OF_BUDGET, outOfBudget: true };
        }
        budget.remaining -= run.cost;
      }
      if (!run.ok) {
        const err = run.error;
        const message = err instanceof CelBudgetExceededError ? err.message : err.message.split('\n')[0];
        return { ok: false, error: `expression '${expression}' resulted in error: ${message}` };
      }
      const value = run.value;
      if (want === 'bool' && typeof value !== 'boolean') {
        return { ok: false, error: `expression '${expression}' resulted in error: no such overload: ${describe(value)} is not bool` };
      }
      return { ok: true, value };
    },
  };
}

/** Compiles a policy's variables in order, each seeing the ones before it typed; returns them
 *  with the types later expressions see them with. */
export function compileVariables(
  variables: readonly { name: string; expression: string }[],
  age: ExpressionAge = 'stored',
  flavour: PolicyFlavour = 'validating',
): { programs: { name: string; program: Program }[]; types: VariableTypes } {
  const types = new Map<string, string>();
  const programs = variables.map((v) => {
    const program = compile(v.expression, 'any', age, flavour, new Map(types));
    // a later variable of the same name replaces the earlier one's type
    types.set(v.name, variableFieldType(program.outputType));
    return { name: v.name, program };
  });
  return { programs, types };
}

/** builds an activation: objects become CEL values (integral numbers as ints); `variables`
 *  is filled by the caller with lazily evaluated entries */
export function activation(input: {
  object: unknown;
  oldObject: unknown;
  request: Record<string, unknown>;
  params: unknown;
  namespaceObject: unknown;
  /** the request's authorizer checks; without one every check is allowed */
  authorizer?: AuthorizerValue;
}): Activation {
  return {
    authorizer: input.authorizer ?? new AuthorizerValue(new AuthorizerSession(undefined), { username: '', groups: [] }),
    object: toCelValue(input.object ?? null),
    oldObject: toCelValue(input.oldObject ?? null),
    request: toCelValue(input.request) as Record<string, unknown>,
    params: toCelValue(input.params ?? null),
    namespaceObject: toCelValue(input.namespaceObject ?? null),
    variables: {},
  };
}

/** Fills `act.variables` with the named expressions, each evaluated (once) when an expression
 *  first reads it; a variable that fails makes every expression reading it fail. */
export function bindVariables(act: Activation, variables: readonly { name: string; program: Program }[]): void {
  for (const v of variables) {
    let done: EvalResult | undefined;
    Object.defineProperty(act.variables, v.name, {
      enumerable: true,
      configurable: false,
      get() {
        const r = done ?? v.program.evaluate(act);
        // an evaluation stopped at an unanswered authorizer check is tried again next time
        if (r.ok || (!r.pending && !act.authorizer.session.hasPending)) done = r;
        if (!r.ok) throw r.pending ? new AuthorizationPending() : new Error(r.error);
        return r.value;
      },
    });
  }
}
