// A static estimate of an expression's worst-case cost, in the units of cel-go's estimator as
// kube-apiserver uses it: reading a variable or a field costs 1, a call 1 plus its arguments,
// string operations a tenth of the string's length, a list literal 10 and a map literal 30,
// and a comprehension its range's largest size times its body and its accumulator steps (the
// same steps the runtime cost counts, runtime-cost.ts). Sizes come from the schema
// (maxItems, maxProperties, maxLength); without a bound, from the largest value that fits in a
// request (3 MiB), as kube estimates them. The walk follows cel-js's AST; it is an upper bound
// close to cel-go's, not a copy of it.

import { escapeProperty } from './escaping.js';
import { RE2_MATCHES } from './re2.js';
import { MACRO_COSTS } from './runtime-cost.js';

/** the part of an OpenAPI schema the estimate reads */
export interface SizedSchema {
  type?: string;
  format?: string;
  maxItems?: number;
  maxLength?: number;
  maxProperties?: number;
  items?: SizedSchema;
  properties?: Record<string, SizedSchema>;
  additionalProperties?: SizedSchema | boolean;
  'x-kubernetes-int-or-string'?: boolean;
}

const MAX_REQUEST_BYTES = 3 * 1024 * 1024;
const STRING_TRAVERSAL_FACTOR = 0.1;
const LIST_CREATE_COST = 10;
const MAP_CREATE_COST = 30;
/** the estimate saturates here rather than grow without meaning */
const SATURATED = Number.MAX_SAFE_INTEGER;

/** the fewest bytes one value of the schema takes in JSON */
function minSerializedSize(s: SizedSchema | undefined): number {
  switch (s?.type) {
    case 'string':
      return 2;
    case 'boolean':
      return 4;
    case 'array':
    case 'object':
      return 2;
    default:
      return 1;
  }
}

/** the most elements (items, properties, characters) a value of the schema can have */
export function maxSize(s: SizedSchema | undefined): number {
  if (!s) return MAX_REQUEST_BYTES;
  if (s.type === 'array') return s.maxItems ?? Math.floor((MAX_REQUEST_BYTES - 2) / (minSerializedSize(s.items) + 1));
  if (s.type === 'object') {
    const value = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
    // a property costs at least its quoted empty name, a colon and a separator
    return s.maxProperties ?? Math.floor((MAX_REQUEST_BYTES - 2) / (minSerializedSize(value) + 4));
  }
  if (s.type === 'string') return s.maxLength ?? MAX_REQUEST_BYTES - 2;
  return 1;
}

interface AstNode {
  op: string;
  args: unknown;
}

interface Estimate {
  cost: number;
  /** the schema of the value, when known */
  shape?: SizedSchema;
  /** the number of elements of a literal list or map */
  size?: number;
}

const add = (...xs: number[]): number => Math.min(SATURATED, xs.reduce((a, b) => a + b, 0));
const mul = (a: number, b: number): number => (a === 0 || b === 0 ? 0 : a > SATURATED / b ? SATURATED : a * b);

function child(s: SizedSchema | undefined, field: string): SizedSchema | undefined {
  if (!s) return undefined;
  for (const [name, p] of Object.entries(s.properties ?? {})) if (escapeProperty(name) === field) return p;
  return typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
}

function element(s: SizedSchema | undefined): SizedSchema | undefined {
  if (!s) return undefined;
  if (s.type === 'array') return s.items;
  return typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
}

const sizeOf = (e: Estimate): number => e.size ?? maxSize(e.shape);
const strCost = (e: Estimate): number => Math.ceil(sizeOf(e) * STRING_TRAVERSAL_FACTOR);

const MACROS = new Set(['all', 'exists', 'exists_one', 'existsOne', 'map', 'filter', 'transformList', 'transformMap', 'transformMapEntry']);
const STRING_SCANS = new Set(['contains', 'startsWith', 'endsWith', 'indexOf', 'lastIndexOf', 'lowerAscii', 'upperAscii', 'trim', 'replace', 'split', 'substring', 'charAt']);

type Scope = ReadonlyMap<string, SizedSchema | undefined>;

function estimate(node: AstNode, scope: Scope): Estimate {
  const a = node.args as unknown[];
  switch (node.op) {
    case 'value':
      return { cost: 0, size: typeof node.args === 'string' ? node.args.length : undefined };
    case 'id':
      return { cost: 1, shape: scope.get(node.args as string) };
    case '.':
    case '.?': {
      const obj = estimate(a[0] as AstNode, scope);
      return { cost: add(obj.cost, 1), shape: child(obj.shape, a[1] as string) };
    }
    case '[]':
    case '[?]': {
      const obj = estimate(a[0] as AstNode, scope);
      const idx = estimate(a[1] as AstNode, scope);
      return { cost: add(obj.cost, idx.cost, 1), shape: element(obj.shape) };
    }
    case 'list': {
      const items = (a as AstNode[]).map((x) => estimate(x, scope));
      return { cost: add(LIST_CREATE_COST, ...items.map((x) => x.cost)), size: items.length };
    }
    case 'map': {
      const entries = (a as [AstNode, AstNode][]).map(([k, v]) => add(estimate(k, scope).cost, estimate(v, scope).cost));
      return { cost: add(MAP_CREATE_COST, ...entries), size: entries.length };
    }
    case 'call': {
      const [name, args] = a as [string, AstNode[]];
      const est = args.map((x) => estimate(x, scope));
      // presence tests cost nothing beyond their operand (kube keeps has() free)
      if (name === 'has') return { cost: est[0]?.cost ?? 0 };
      return { cost: add(1, ...est.map((x) => x.cost)) };
    }
    case 'rcall': {
      const [name, receiverNode, args] = a as [string, AstNode, AstNode[]];
      const receiver = estimate(receiverNode, scope);
      if (MACROS.has(name) && args.length >= 2 && args[0]!.op === 'id') {
        return comprehension(name, receiver, args, scope);
      }
      const est = args.map((x) => estimate(x, scope));
      const argCost = add(...est.map((x) => x.cost));
      if (name === 'matches' || name === RE2_MATCHES || name === 'find' || name === 'findAll') {
        // a regex costs its input's length times the pattern's, scaled as cel-go does
        const pattern = est[0]?.size ?? 1;
        return { cost: add(receiver.cost, argCost, 1, Math.ceil(sizeOf(receiver) * STRING_TRAVERSAL_FACTOR * pattern)) };
      }
      if (STRING_SCANS.has(name)) return { cost: add(receiver.cost, argCost, 1, strCost(receiver)) };
      if (name === 'join' || name === 'sum' || name === 'min' || name === 'max' || name === 'isSorted' || name === 'indexOf') {
        return { cost: add(receiver.cost, argCost, 1, sizeOf(receiver)) };
      }
      return { cost: add(receiver.cost, argCost, 1) };
    }
    case '+': {
      const l = estimate(a[0] as AstNode, scope);
      const r = estimate(a[1] as AstNode, scope);
      const stringy = l.shape?.type === 'string' || r.shape?.type === 'string';
      return { cost: add(l.cost, r.cost, 1, stringy ? Math.ceil((sizeOf(l) + sizeOf(r)) * STRING_TRAVERSAL_FACTOR) : 0) };
    }
    case '==':
    case '!=': {
      const l = estimate(a[0] as AstNode, scope);
      const r = estimate(a[1] as AstNode, scope);
      const scan = l.shape?.type === 'string' || l.shape?.type === 'array' || l.shape?.type === 'object' ? Math.ceil(Math.min(sizeOf(l), sizeOf(r)) * STRING_TRAVERSAL_FACTOR) : 0;
      return { cost: add(l.cost, r.cost, 1, scan) };
    }
    case 'in': {
      const l = estimate(a[0] as AstNode, scope);
      const r = estimate(a[1] as AstNode, scope);
      return { cost: add(l.cost, r.cost, 1, sizeOf(r)) };
    }
    default: {
      // operators: every operand, plus the operation; `&&`, `||` and the ternary cost only
      // their operands, as in cel-go
      const parts = Array.isArray(a) ? (a as unknown[]).filter((x): x is AstNode => typeof x === 'object' && x !== null && 'op' in x) : [];
      const own = node.op === '&&' || node.op === '||' || node.op === '?:' ? 0 : 1;
      return { cost: add(own, ...parts.map((x) => estimate(x, scope).cost)) };
    }
  }
}

function comprehension(name: string, range: Estimate, args: AstNode[], scope: Scope): Estimate {
  const twoVar = name.startsWith('transform') || (args.length === 3 && (name === 'all' || name === 'exists' || name === 'existsOne'));
  const vars = twoVar ? [args[0]!, args[1]!] : [args[0]!];
  const inner = new Map(scope);
  const el = element(range.shape);
  if (twoVar) {
    inner.set(vars[0]!.args as string, range.shape?.type === 'array' ? { type: 'integer' } : { type: 'string' });
    inner.set(vars[1]!.args as string, el);
  } else {
    inner.set(vars[0]!.args as string, range.shape?.type === 'array' ? el : { type: 'string' });
  }
  const body = args.slice(vars.length).reduce((c, x) => add(c, estimate(x, inner).cost), 0);
  // what cel-go's expansion of the macro spends on its accumulator, as the runtime cost counts
  // it (map and filter also build their empty result list)
  const steps = MACRO_COSTS[name] ?? { start: 1, perIteration: 3 };
  const start = steps.start + (name === 'map' || name === 'filter' ? LIST_CREATE_COST : 0);
  return { cost: add(range.cost, start, mul(sizeOf(range), add(body, steps.perIteration))) };
}

/** the estimated worst-case cost of a checked expression whose variables have these schemas */
export function estimateCost(ast: unknown, variables: Record<string, SizedSchema | undefined>): number {
  return estimate(ast as AstNode, new Map(Object.entries(variables))).cost;
}

/** kube's wording of an estimate over its limit */
export function costExceedsMessage(what: string, cost: number, limit: number): string {
  const factor = cost / limit;
  const shown = factor > 100 ? 'more than 100x' : factor < 1.5 ? `${factor.toFixed(6)}x` : `${factor.toFixed(1)}x`;
  return `${what} exceeds budget by factor of ${shown} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}
