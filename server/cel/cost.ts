// A static estimate of an expression's cost, as cel-go's checker estimates it for
// kube-apiserver: a range (min, max) for every node, built from the node's type (its overload)
// and the sizes of its operands. Sizes come from literals, from what a call is known to return
// (`lowerAscii` keeps its input's size, `+` adds sizes, a comprehension has its range's size),
// and else from the schema of the value (maxItems, maxProperties, maxLength; without a bound,
// the largest value that fits in a request, 3 MiB, as kube estimates them; scalars of a schema
// have no size). Other scalars (ints, bools, doubles, durations, timestamps) have size 1; a
// value whose size nothing tells has any size.
// Kube's library estimates (library-cost.ts) come before cel-go's own; macros are costed as
// cel-go's expansions of them into comprehensions.

import { escapeProperty } from './escaping.js';
import { libraryEstimate, type EstimateNode, type Range } from './library-cost.js';
import { RE2_MATCHES } from './re2.js';
import { maxSize, type SizedSchema } from './schema-sizes.js';
import { isNegativeLiteral, ROUTED_ADD, ROUTED_EQUALS } from './runtime-cost.js';

export type { Range } from './library-cost.js';
export { maxSize, type SizedSchema } from './schema-sizes.js';

const STRING_TRAVERSAL_FACTOR = 0.1;
const REGEX_LENGTH_FACTOR = 0.25;
const LIST_CREATE_COST = 10;
const MAP_CREATE_COST = 30;
/** sizes and costs saturate here, as cel-go's saturate at the largest uint64 */
export const SATURATED = Number.MAX_SAFE_INTEGER;
const UNKNOWN: Range = { min: 0, max: SATURATED };

// saturating arithmetic over ranges, as cel-go's CostEstimate and SizeEstimate
const sat = (x: number): number => Math.min(x, SATURATED);
const addR = (...rs: Range[]): Range => rs.reduce((a, b) => ({ min: sat(a.min + b.min), max: sat(a.max + b.max) }), { min: 0, max: 0 });
const mulR = (a: Range, b: Range): Range => ({ min: sat(a.min * b.min), max: sat(a.max * b.max) });
const unionR = (a: Range, b: Range): Range => ({ min: Math.min(a.min, b.min), max: Math.max(a.max, b.max) });
const factor = (x: number, f: number): number => (x >= SATURATED ? SATURATED : sat(Math.ceil(x * f)));
const scaleR = (r: Range, f: number): Range => ({ min: factor(r.min, f), max: factor(r.max, f) });
const exactly = (n: number): Range => ({ min: n, max: n });
const ONE = exactly(1);

interface AstNode {
  op: string;
  args: unknown;
  checkedType?: CheckedType;
}
interface CheckedType {
  name: string;
  kind: string;
  valueType?: CheckedType;
  keyType?: CheckedType;
}

/** what the walk knows of a node besides its cost */
interface Estimate {
  cost: Range;
  /** its size, when a literal or a call's result gives it */
  size?: Range;
  /** the schema of its value, when known */
  shape?: SizedSchema;
  /** it was reached from a variable by fields and indexes (cel-go: it has a path) */
  rooted?: boolean;
}

/** where the sizes of values without a schema come from (kube's CRD estimator: nowhere) */
export type FallbackSize = (type: string) => Range | undefined;

interface Walk {
  scope: ReadonlyMap<string, SizedSchema | undefined>;
  fallback?: FallbackSize;
}

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

/** kube's size of a schema node: its declared or estimated bound */
function schemaSize(s: SizedSchema): Range {
  // an object with properties is a struct to kube, declared with no size (a map has its entries)
  const isMap = s.type === 'object' && typeof s.additionalProperties === 'object';
  if (s['x-kubernetes-int-or-string'] || s.type === 'array' || isMap || s.type === 'string') return { min: 0, max: maxSize(s) };
  return exactly(0);
}

/** the types cel-go gives a fixed size of 1 */
const SCALARS = new Set(['bool', 'double', 'int', 'uint', 'google.protobuf.Duration', 'google.protobuf.Timestamp']);

function sizeOf(e: Estimate, type: CheckedType | undefined, w: Walk): Range {
  if (e.size) return e.size;
  // the schema first (kube declares scalars with no size), then the type
  if (e.shape && e.rooted) return schemaSize(e.shape);
  if (type && SCALARS.has(type.name)) return ONE;
  return (type && w.fallback?.(type.name)) ?? UNKNOWN;
}

/** the size of a literal, as cel-go computes it */
function literalSize(v: unknown): Range {
  if (typeof v === 'string') return exactly([...v].length);
  if (v instanceof Uint8Array) return exactly(v.length);
  return ONE;
}

const MACROS = new Set(['all', 'exists', 'exists_one', 'existsOne', 'map', 'filter', 'transformList', 'transformMap', 'transformMapEntry']);
const NAMESPACE = /Namespace$/;

function estimate(node: AstNode, w: Walk): Estimate {
  const a = node.args as unknown[];
  switch (node.op) {
    case 'value':
      return { cost: exactly(0), size: literalSize(node.args) };
    case 'id': {
      const name = node.args as string;
      return { cost: ONE, shape: w.scope.get(name), rooted: w.scope.has(name) };
    }
    case '.':
    case '.?': {
      const operand = a[0] as AstNode;
      const obj = estimate(operand, w);
      const kind = operand.checkedType?.kind;
      // cel-go charges a selection on a map or an object, not on a dyn value
      const own = node.op === '.?' || kind === 'map' || kind === 'message' ? 1 : 0;
      // kube sizes a map's values by index only: a value selected as a field has no schema size
      const byKey = typeof obj.shape?.additionalProperties === 'object';
      return { cost: addR(obj.cost, exactly(own)), shape: child(obj.shape, a[1] as string), rooted: obj.rooted && !byKey };
    }
    case '[]':
    case '[?]': {
      const obj = estimate(a[0] as AstNode, w);
      const idx = estimate(a[1] as AstNode, w);
      return { cost: addR(obj.cost, idx.cost, ONE), shape: element(obj.shape), rooted: obj.rooted };
    }
    case 'list': {
      const items = (a as AstNode[]).map((x) => estimate(x, w));
      return { cost: addR(exactly(LIST_CREATE_COST), ...items.map((x) => x.cost)), size: exactly(items.length) };
    }
    case 'map': {
      const entries = (a as [AstNode, AstNode][]).map(([k, v]) => addR(estimate(k, w).cost, estimate(v, w).cost));
      return { cost: addR(exactly(MAP_CREATE_COST), ...entries), size: exactly(entries.length) };
    }
    case 'call': {
      const [name, args] = a as [string, AstNode[]];
      // presence tests cost their operand only (kube: PresenceTestHasCost false)
      if (name === 'has') return { cost: args[0] ? hasOperandCost(args[0], w) : exactly(0) };
      return call(name, undefined, args, node, w);
    }
    case 'rcall': {
      const [name, receiverNode, args] = a as [string, AstNode, AstNode[]];
      if (receiverNode.op === 'id' && NAMESPACE.test(receiverNode.checkedType?.name ?? '')) {
        if (name === 'bind' && receiverNode.args === 'cel') return bind(args, w);
        // a namespaced function (sets.contains, strings.quote...): cel-go has no receiver
        return call(`${receiverNode.args as string}.${name}`, undefined, args, node, w);
      }
      if (MACROS.has(name) && args.length >= 2 && args[0]!.op === 'id') return comprehension(name, receiverNode, args, w);
      return call(name, receiverNode, args, node, w);
    }
    case '&&':
    case '||': {
      const l = estimate(a[0] as AstNode, w).cost;
      const r = estimate(a[1] as AstNode, w).cost;
      // the right side may not run
      return { cost: { min: l.min, max: addR(l, r).max } };
    }
    case '?:': {
      const [c, t, f] = (a as AstNode[]).map((x) => estimate(x, w));
      const ts = sizeOf(t!, (a[1] as AstNode).checkedType, w);
      const fs = sizeOf(f!, (a[2] as AstNode).checkedType, w);
      return { cost: addR(c!.cost, unionR(t!.cost, f!.cost)), size: unionR(ts, fs) };
    }
    case '-_':
      if (isNegativeLiteral(node)) return { cost: exactly(0), size: ONE };
      return operator(node, [a as unknown as AstNode], w);
    default: {
      const operands = (Array.isArray(a) ? a : [a]).filter((x): x is AstNode => typeof x === 'object' && x !== null && 'op' in x);
      return operator(node, operands, w);
    }
  }
}

/** has(a.b): the operand's own cost without the presence test */
function hasOperandCost(selection: AstNode, w: Walk): Range {
  if (selection.op === '.' || selection.op === '.?') return estimate((selection.args as unknown[])[0] as AstNode, w).cost;
  return estimate(selection, w).cost;
}

function operator(node: AstNode, operands: AstNode[], w: Walk): Estimate {
  const ests = operands.map((x) => estimate(x, w));
  const argCost = addR(...ests.map((x) => x.cost));
  const [l, r] = ests;
  const [ln, rn] = operands;
  const lt = ln?.checkedType?.name;
  switch (node.op) {
    case '==':
    case '!=': {
      if (node.op === '==') {
        const lib = libraryEstimate(
          '_==_',
          undefined,
          operands.map((n, i) => nodeView(n, ests[i]!, w)),
        );
        if (lib) return { cost: addR(lib.cost, argCost) };
      }
      return { cost: addR(comparison(l!, ln!, r!, rn!, w), argCost) };
    }
    case '<':
    case '<=':
    case '>':
    case '>=':
      if (lt === 'string' || lt === 'bytes') return { cost: addR(comparison(l!, ln!, r!, rn!, w), argCost) };
      return { cost: addR(ONE, argCost) };
    case '+': {
      if (lt === 'string' || lt === 'bytes' || ln?.checkedType?.kind === 'list') {
        const size = addR(sizeOf(l!, ln!.checkedType, w), sizeOf(r!, rn!.checkedType, w));
        if (ln?.checkedType?.kind === 'list') return { cost: addR(ONE, argCost), size };
        return { cost: addR(scaleR(size, STRING_TRAVERSAL_FACTOR), argCost), size };
      }
      return { cost: addR(ONE, argCost) };
    }
    case 'in':
      if (rn?.checkedType?.kind === 'list') return { cost: addR(sizeOf(r!, rn.checkedType, w), argCost) };
      return { cost: addR(ONE, argCost) };
    default:
      return { cost: addR(ONE, argCost) };
  }
}

/** equality and ordering of sized values: a tenth of the smaller one's size */
function comparison(l: Estimate, ln: AstNode, r: Estimate, rn: AstNode, w: Walk): Range {
  const smallest = Math.min(sizeOf(l, ln.checkedType, w).max, sizeOf(r, rn.checkedType, w).max);
  return scaleR({ min: smallest > 0 ? 1 : 0, max: smallest }, STRING_TRAVERSAL_FACTOR);
}

function nodeView(node: AstNode, e: Estimate, w: Walk): EstimateNode {
  const type = node.checkedType;
  const el = element(e.shape);
  return {
    type: type?.name ?? 'dyn',
    kind: type?.kind ?? 'dyn',
    size: sizeOf(e, type, w),
    literal: node.op === 'value' ? node.args : undefined,
    elementSize: () => (type?.valueType ? sizeOf({ cost: ONE, shape: el, rooted: e.rooted }, type.valueType, w) : undefined),
    elementType: type?.valueType?.name,
  };
}

function call(name: string, receiverNode: AstNode | undefined, args: AstNode[], node: AstNode, w: Walk): Estimate {
  // the functions CRD rules call in place of `==` and `+` on lists are costed as the operators
  if (!receiverNode && args.length === 2 && (name === ROUTED_EQUALS || name === ROUTED_ADD)) {
    return operator({ ...node, op: name === ROUTED_EQUALS ? '==' : '+' }, args, w);
  }
  const receiver = receiverNode ? estimate(receiverNode, w) : undefined;
  const ests = args.map((x) => estimate(x, w));
  const argCost = addR(...ests.map((x) => x.cost), receiver?.cost ?? exactly(0));
  const target = receiverNode ? nodeView(receiverNode, receiver!, w) : undefined;
  const views = args.map((n, i) => nodeView(n, ests[i]!, w));
  const lib = libraryEstimate(name, target, views);
  if (lib) return { cost: addR(lib.cost, argCost), size: lib.size };
  const sz = (i: number): Range => views[i]!.size;
  switch (name) {
    case 'startsWith':
    case 'endsWith':
      return { cost: addR(scaleR(sz(0), STRING_TRAVERSAL_FACTOR), argCost) };
    case 'matches':
    case RE2_MATCHES: {
      const input = receiverNode ? target!.size : sz(0);
      const pattern = receiverNode ? sz(0) : sz(1);
      const strCost = scaleR(addR(input, ONE), STRING_TRAVERSAL_FACTOR);
      return { cost: addR(mulR(strCost, scaleR(pattern, REGEX_LENGTH_FACTOR)), argCost) };
    }
    case 'contains':
      if (target && target.type === 'string')
        return { cost: addR(mulR(scaleR(target.size, STRING_TRAVERSAL_FACTOR), scaleR(sz(0), STRING_TRAVERSAL_FACTOR)), argCost) };
      break;
    case 'bytes':
      if (views[0]?.type === 'string')
        return { cost: addR(scaleR(sz(0), STRING_TRAVERSAL_FACTOR), argCost), size: { min: sz(0).min, max: sat(sz(0).max * 4) } };
      break;
    case 'string':
      if (views[0]?.type === 'bytes')
        return { cost: addR(scaleR(sz(0), STRING_TRAVERSAL_FACTOR), argCost), size: { min: Math.floor(sz(0).min / 4), max: sz(0).max } };
      break;
    case 'strings.quote':
      return {
        cost: addR(scaleR(sz(0), STRING_TRAVERSAL_FACTOR), argCost),
        size: { min: sat(sz(0).min + 2), max: sat(sz(0).max * 2 + 2) },
      };
    case 'format':
      if (target) return { cost: addR(scaleR(target.size, STRING_TRAVERSAL_FACTOR), argCost) };
      break;
  }
  return { cost: addR(ONE, argCost) };
}

/** cel.bind(v, init, expr): the initializer once and the expression */
function bind(args: AstNode[], w: Walk): Estimate {
  const [variable, init, body] = args;
  const value = estimate(init!, w);
  const inner = new Map(w.scope);
  inner.set(variable!.args as string, value.rooted ? value.shape : undefined);
  const result = estimate(body!, { ...w, scope: inner });
  return { cost: addR(value.cost, result.cost), size: result.size };
}

/** the cost of a macro as cel-go's expansion: its range, accumulator, loop condition, step and
 *  result, the loop's parts once per element of the range */
function comprehension(name: string, rangeNode: AstNode, args: AstNode[], w: Walk): Estimate {
  const range = estimate(rangeNode, w);
  const rangeType = rangeNode.checkedType;
  const twoVar = name.startsWith('transform') || (args.length === 3 && (name === 'all' || name === 'exists' || name === 'existsOne'));
  const vars = twoVar ? [args[0]!, args[1]!] : [args[0]!];
  const inner = new Map(w.scope);
  const isList = rangeType?.kind === 'list' || range.shape?.type === 'array';
  // an iteration variable reads the range's items (list) or keys (map)
  const el = range.rooted ? element(range.shape) : undefined;
  // kube declares map keys as strings of no size
  const keyShape: SizedSchema | undefined = range.rooted ? (isList ? { type: 'integer' } : { type: 'string', maxLength: 0 }) : undefined;
  if (twoVar) {
    inner.set(vars[0]!.args as string, keyShape);
    inner.set(vars[1]!.args as string, el);
  } else {
    inner.set(vars[0]!.args as string, isList ? el : keyShape);
  }
  const walk = { ...w, scope: inner };
  const rest = args.slice(vars.length).map((x) => estimate(x, walk).cost);
  const body = rest.at(-1)!;
  const filter = rest.length > 1 ? rest[0] : undefined;
  let init = exactly(0);
  let loop = exactly(0);
  let step: Range;
  let result = ONE;
  switch (name) {
    case 'all':
      loop = exactly(2);
      step = { min: 1, max: 1 + body.max };
      break;
    case 'exists':
      loop = exactly(3);
      step = { min: 1, max: 1 + body.max };
      break;
    case 'exists_one':
    case 'existsOne':
      step = addR(body, { min: 1, max: 2 });
      result = exactly(2);
      break;
    case 'filter':
      init = exactly(LIST_CREATE_COST);
      step = addR(body, { min: 1, max: 13 });
      break;
    case 'map':
    case 'transformList': {
      init = exactly(LIST_CREATE_COST);
      const append = addR(body, exactly(12));
      step = filter ? addR(filter, unionR(append, ONE)) : append;
      break;
    }
    case 'transformMap': {
      init = exactly(MAP_CREATE_COST);
      const insert = addR(body, exactly(3));
      step = filter ? addR(filter, unionR(insert, ONE)) : insert;
      break;
    }
    default: {
      init = exactly(MAP_CREATE_COST);
      const insert = addR(body, exactly(2));
      step = filter ? addR(filter, unionR(insert, ONE)) : insert;
    }
  }
  // map(x, p, t): the filter's form
  if (name === 'map' && args.length === 3) step = addR(rest[0]!, unionR(addR(body, exactly(12)), ONE));
  const count = sizeOf(range, rangeType, w);
  const cost = addR(range.cost, init, result, mulR(count, addR(loop, step)));
  return { cost, size: count };
}

export interface EstimateOptions {
  /** the sizes of values no schema describes (kube's CRDs: unknown) */
  fallbackSize?: FallbackSize;
}

/** the estimated cost range of a checked expression whose variables have these schemas */
export function estimateCostRange(ast: unknown, variables: Record<string, SizedSchema | undefined>, opts: EstimateOptions = {}): Range {
  return estimate(ast as AstNode, { scope: new Map(Object.entries(variables)), fallback: opts.fallbackSize }).cost;
}

/** the estimated worst-case cost of a checked expression (what kube holds to its limits) */
export function estimateCost(ast: unknown, variables: Record<string, SizedSchema | undefined>): number {
  return estimateCostRange(ast, variables).max;
}

/** kube's wording of an estimate over its limit */
export function costExceedsMessage(what: string, cost: number, limit: number): string {
  const factor = cost / limit;
  const shown = factor > 100 ? 'more than 100x' : factor < 1.5 ? `${factor.toFixed(6)}x` : `${factor.toFixed(1)}x`;
  return `${what} exceeds budget by factor of ${shown} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}
