// The runtime cost of CEL evaluation, tracked as cel-go tracks it for kube-apiserver
// (runtime-cost.ts has the units): every evaluated node is charged its step's cost and every
// comprehension iteration what cel-go's macro expansion spends on its accumulator; an
// evaluation whose cost passes its limit is cancelled with cel-go's error. cel-js has no cost
// tracker, so two of its methods are wrapped while a budget is active: the evaluator's `run`
// (every node below the root goes through it) and the iteration context's `setIterValue`
// (every iteration of every comprehension). A wall-clock deadline checked on the same path
// also bounds what the units do not see (JavaScript's own work inside a library function).
//
// Evaluation is synchronous (no async functions are registered), so one module-level tracker
// is enough: `withCost` installs it for the duration of one call.

import { Environment } from '@marcbachmann/cel-js';
import { actualSize, MACRO_COSTS, macroOf, nodeCost, type CostNode } from './runtime-cost.js';

/** kube-apiserver's per-expression runtime cost limit (celconfig.PerCallLimit) */
export const PER_CALL_LIMIT = 1_000_000;
/** kube-apiserver's runtime budget for all the expressions of one CustomResource or one
 *  ValidatingAdmissionPolicyBinding (celconfig.RuntimeCELCostBudget) */
export const RUNTIME_COST_BUDGET = 10_000_000;
/** kube-apiserver's runtime budget for the match conditions of one webhook or binding
 *  (celconfig.RuntimeCELCostBudgetMatchConditions) */
export const MATCH_CONDITIONS_COST_BUDGET = 2_500_000;
/** kube's message when a budget shared by several expressions is spent */
export const OUT_OF_COST_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run';
/** a safety net only: the cost limit bounds the work; this bounds what the units do not see */
export const DEFAULT_DEADLINE_MS = 10_000;

export class CelBudgetExceededError extends Error {
  constructor() {
    super('operation cancelled: actual cost limit exceeded');
    this.name = 'CelBudgetExceededError';
  }
}

interface Tracker {
  cost: number;
  limit: number;
  deadline: number;
  ticks: number;
  /** sticky: all/exists may absorb one error, so every later step fails too */
  spent: boolean;
  /** the last value of every evaluated node, for the costs that depend on operand sizes */
  values: WeakMap<object, unknown>;
  /** the macros being evaluated, innermost last */
  macros: MacroFrame[];
  /** attribute branches of conditionals, resolved at no cost */
  free: WeakSet<object>;
}

interface MacroFrame {
  /** charged at each setting of an iteration variable */
  perCall: number;
  calls: number;
  receiver: CostNode;
  twoVariables: boolean;
  /** the loop condition's cost when it ends the loop early */
  earlyExit?: number;
  /** a filter's predicate, and what keeping an element adds to the step */
  filterNode?: CostNode;
  kept: number;
}

/** what keeping an element costs a filtering step (a dropped one costs nothing: cel-go reads
 *  the accumulator as the attribute branch of a conditional, which is not charged): the append
 *  (filter's read of the element is a node of cel-js's expansion, charged as such) or, for
 *  exists_one, the count's increment */
const KEPT_COSTS: Readonly<Record<string, number>> = {
  filter: 12,
  map: 12,
  transformList: 12,
  transformMap: 3,
  transformMapEntry: 2,
  exists_one: 2,
  existsOne: 2,
};
/** `all`: @not_strictly_false(__result__); `exists`: @not_strictly_false(!__result__) */
const EARLY_EXIT_CONDITION: Readonly<Record<string, number>> = { all: 2, exists: 3 };

let active: Tracker | undefined;

function charge(t: Tracker, units: number): void {
  t.cost += units;
  // the clock is read every 256 steps only
  if (t.spent || t.cost > t.limit || ((++t.ticks & 255) === 0 && performance.now() > t.deadline)) {
    t.spent = true;
    throw new CelBudgetExceededError();
  }
}

const valueOf = (t: Tracker) => (n: unknown) => (n && typeof n === 'object' ? t.values.get(n) : undefined);

/** what cel-go's expansion of a macro spends beyond the per-iteration steps: the loop
 *  condition that ends `all` and `exists` early, and the append of a kept element */
function macroFrame(node: CostNode, name: string, twoVariables: boolean): MacroFrame {
  const costs = MACRO_COSTS[name]!;
  const [, receiver, args] = node.args as [string, CostNode, CostNode[]];
  const filtered = name === 'filter' || (name === 'map' && args.length === 3) || (name.startsWith('transform') && args.length === 4);
  const counted = name === 'exists_one' || name === 'existsOne';
  // the predicate whose truth decides the step's cost
  const filterNode = name === 'filter' || counted ? args.at(-1) : filtered ? args.at(-2) : undefined;
  const perIteration = filterNode ? 0 : costs.perIteration;
  return {
    perCall: twoVariables ? perIteration / 2 : perIteration,
    calls: 0,
    receiver,
    twoVariables,
    earlyExit: EARLY_EXIT_CONDITION[name],
    filterNode,
    kept: filterNode ? KEPT_COSTS[name]! : 0,
  };
}

/** the number of elements of a macro's range: its last value, or a list literal's length */
function rangeSize(t: Tracker, receiver: CostNode): number {
  if (t.values.has(receiver)) return actualSize(t.values.get(receiver));
  return receiver.op === 'list' && Array.isArray(receiver.args) ? receiver.args.length : 1;
}

/** a value cel-go resolves as an attribute: a variable and its fields and constant indexes */
function isAttributeChain(node: CostNode | undefined): boolean {
  if (!node) return false;
  if (node.op === 'id') return true;
  const a = node.args as CostNode[];
  if (node.op === '.' || node.op === '.?') return isAttributeChain(a[0]);
  if (node.op === '[]' || node.op === '[?]') return a[1]?.op === 'value' && isAttributeChain(a[0]);
  return false;
}

/** marks a chain's nodes as resolved without cost */
function freeChain(t: Tracker, node: CostNode): void {
  t.free.add(node);
  if (node.op !== 'id') freeChain(t, (node.args as CostNode[])[0]!);
}

/** evaluates one node with its cost charged (the root: withCost; the others: the run hook) */
function runCharged(t: Tracker, node: CostNode, evaluate: () => unknown): unknown {
  const macro = macroOf(node);
  if (macro) {
    charge(t, MACRO_COSTS[macro.name]!.start);
    const frame = macroFrame(node, macro.name, macro.twoVariables);
    t.macros.push(frame);
    let result: unknown;
    try {
      result = evaluate();
    } finally {
      t.macros.pop();
    }
    t.values.set(node, result);
    // the loop condition that stopped the loop before the range's end
    const iterations = frame.twoVariables ? frame.calls / 2 : frame.calls;
    if (frame.earlyExit && iterations < rangeSize(t, frame.receiver)) charge(t, frame.earlyExit);
    return result;
  }
  if (node.op === '?:') {
    // cel-go resolves a branch that is an attribute within the conditional, at no cost
    const [, whenTrue, whenFalse] = node.args as CostNode[];
    for (const branch of [whenTrue, whenFalse]) if (isAttributeChain(branch)) freeChain(t, branch!);
  }
  const result = evaluate();
  t.values.set(node, result);
  if (t.free.has(node)) return result;
  charge(t, nodeCost(node, result, valueOf(t)));
  const frame = t.macros.at(-1);
  if (frame?.filterNode === node && result === true) charge(t, frame.kept);
  return result;
}

let installed = false;

/** hooks the tracker into the library once (idempotent) */
function install(): void {
  if (installed) return;
  installed = true;
  const env = new Environment().registerType('CostProbe', { fields: {} });
  let evaluator: object | undefined;
  // operator handlers receive the evaluator after their operands (not in the library's types)
  const probe = (...args: unknown[]): boolean => {
    evaluator = args[3] as object;
    return true;
  };
  env.registerOperator('CostProbe == int', probe as (left: unknown, right: unknown) => boolean);
  env.registerVariable('probe', 'CostProbe');
  const program = env.parse('probe == 1 && [1].all(x, true)');
  program.check();
  try {
    program({ probe: Object.assign(Object.create(null) as object, {}) });
  } catch {
    // the probe value need not be accepted: the operator has run or the search below fails
  }
  const ctxProto = findIterationContextPrototype(program.ast as unknown);
  const evProto = evaluator ? (Object.getPrototypeOf(evaluator) as Record<string, unknown>) : undefined;
  if (!ctxProto || !evProto || typeof evProto['run'] !== 'function')
    throw new Error('cel cost: cannot find the evaluator of @marcbachmann/cel-js');
  const setIterValue = ctxProto['setIterValue'] as (this: unknown, ...args: unknown[]) => unknown;
  ctxProto['setIterValue'] = function (this: unknown, ...args: unknown[]) {
    const t = active;
    const frame = t?.macros.at(-1);
    if (t && frame) {
      frame.calls++;
      charge(t, frame.perCall);
    } else if (t) charge(t, MACRO_COSTS['all']!.perIteration);
    return setIterValue.apply(this, args);
  };
  const run = evProto['run'] as (this: unknown, node: CostNode, ctx: unknown) => unknown;
  evProto['run'] = function (this: unknown, node: CostNode, ctx: unknown) {
    const t = active;
    if (!t) return run.call(this, node, ctx);
    return runCharged(t, node, () => run.call(this, node, ctx));
  };
}

function findIterationContextPrototype(node: unknown, seen = new Set<unknown>()): Record<string, unknown> | undefined {
  if (!node || typeof node !== 'object' || seen.has(node)) return undefined;
  seen.add(node);
  const args = (node as { args?: unknown }).args;
  if (args && typeof args === 'object' && 'iterCtx' in args) {
    const ctx = (args as { iterCtx: unknown }).iterCtx;
    if (ctx && typeof (ctx as { setIterValue?: unknown }).setIterValue === 'function') {
      return Object.getPrototypeOf(ctx) as Record<string, unknown>;
    }
  }
  // a macro call keeps its expansion (the comprehension) in its metadata
  const alternate = (node as { meta?: { alternate?: unknown } }).meta?.alternate;
  const children = [alternate, ...(Array.isArray(args) ? args : args && typeof args === 'object' ? Object.values(args) : [])];
  for (const c of children) {
    const found = findIterationContextPrototype(c, seen);
    if (found) return found;
  }
  return undefined;
}

export interface CostOptions {
  /** the cost past which the evaluation is cancelled (kube's per-call limit by default) */
  limit?: number;
  deadlineMs?: number;
}

/** A program as cel-js makes it: callable, with its AST. */
export interface CostedProgram {
  (activation: Record<string, unknown>): unknown;
  readonly ast: unknown;
}

/** runs `fn` with no cost charged (a library's own work on behalf of an already charged step) */
export function uncharged<T>(fn: () => T): T {
  const outer = active;
  active = undefined;
  try {
    return fn();
  } finally {
    active = outer;
  }
}

export type CostedResult = { ok: true; value: unknown; cost: number } | { ok: false; error: Error; cost: number };

/** Evaluates a program with its runtime cost tracked. An evaluation past the limit fails with
 *  CelBudgetExceededError; like any failure, it still reports what it had cost. */
export function evaluateWithCost(program: CostedProgram, activation: Record<string, unknown>, opts: CostOptions = {}): CostedResult {
  install();
  const outer = active;
  const t: Tracker = {
    cost: 0,
    limit: opts.limit ?? PER_CALL_LIMIT,
    deadline: performance.now() + (opts.deadlineMs ?? DEFAULT_DEADLINE_MS),
    ticks: 0,
    spent: false,
    values: new WeakMap(),
    macros: [],
    free: new WeakSet(),
  };
  active = t;
  try {
    // the root is evaluated by the library directly, not through `run`
    const value = runCharged(t, program.ast as CostNode, () => program(activation));
    if (value instanceof Promise) throw new Error('cel cost: evaluation must be synchronous');
    return { ok: true, value, cost: t.cost };
  } catch (err) {
    return { ok: false, error: t.spent ? new CelBudgetExceededError() : (err as Error), cost: t.cost };
  } finally {
    active = outer;
  }
}

/** evaluateWithCost's value; its error is thrown */
export function withBudget(program: CostedProgram, activation: Record<string, unknown>, opts: CostOptions = {}): unknown {
  const r = evaluateWithCost(program, activation, opts);
  if (!r.ok) throw r.error;
  return r.value;
}
