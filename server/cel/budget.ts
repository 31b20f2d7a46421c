// A runtime budget for CEL evaluation. cel-js has no cost accounting, and CEL's only source of
// unbounded work is iteration (the comprehension macros all/exists/exists_one/map/filter, nested
// over lists of any length). Every iteration of every comprehension binds its iteration
// variable through one method of the library's iteration context; counting calls to it while
// a budget is active bounds the work of one evaluation: each step beyond them is bounded by the
// size of the input. A wall-clock deadline checked on the same path bounds steps that are
// individually expensive (list concatenation inside a loop).
//
// Evaluation is synchronous (no async functions are registered), so one module-level budget
// is enough: `withBudget` installs it for the duration of one call.

import { Environment } from '@marcbachmann/cel-js';

/** kube-apiserver's per-expression runtime cost limit (celconfig.PerCallLimit) */
export const DEFAULT_ITERATION_BUDGET = 1_000_000;
/** generous: a legitimate policy expression takes well under a millisecond */
export const DEFAULT_DEADLINE_MS = 250;

export class CelBudgetExceededError extends Error {
  constructor() {
    super('operation cancelled: actual cost limit exceeded');
    this.name = 'CelBudgetExceededError';
  }
}

interface ActiveBudget {
  remaining: number;
  deadline: number;
  ticks: number;
  /** sticky: all/exists may absorb one error, so every later iteration fails too */
  spent: boolean;
}

let active: ActiveBudget | undefined;

function charge(): void {
  const b = active;
  if (!b) return;
  b.remaining--;
  // the clock is read every 256 iterations only
  if (b.spent || b.remaining < 0 || ((++b.ticks & 255) === 0 && performance.now() > b.deadline)) {
    b.spent = true;
    throw new CelBudgetExceededError();
  }
}

let installed = false;

/** hooks the counter into the library once (idempotent) */
function install(): void {
  if (installed) return;
  installed = true;
  // find the iteration context's prototype through a checked comprehension's AST
  const env = new Environment();
  const program = env.parse('[1].all(x, true)');
  program.check();
  const proto = findIterationContextPrototype(program.ast as unknown);
  if (!proto) throw new Error('cel budget: cannot find the comprehension context of @marcbachmann/cel-js');
  const original = proto['setIterValue'] as (this: unknown, ...args: unknown[]) => unknown;
  proto['setIterValue'] = function (this: unknown, ...args: unknown[]) {
    charge();
    return original.apply(this, args);
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

export interface BudgetOptions {
  iterations?: number;
  deadlineMs?: number;
}

/** runs one synchronous evaluation under a budget; throws CelBudgetExceededError when it is spent */
export function withBudget<T>(fn: () => T, opts: BudgetOptions = {}): T {
  install();
  const outer = active;
  active = {
    remaining: opts.iterations ?? DEFAULT_ITERATION_BUDGET,
    deadline: performance.now() + (opts.deadlineMs ?? DEFAULT_DEADLINE_MS),
    ticks: 0,
    spent: false,
  };
  try {
    const result = fn();
    if (result instanceof Promise) throw new Error('cel budget: evaluation must be synchronous');
    return result;
  } finally {
    active = outer;
  }
}
