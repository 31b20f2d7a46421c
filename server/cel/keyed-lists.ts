// Lists declared `x-kubernetes-list-type: set` or `map` as CRD rules see them (kube's
// unstructured set and map lists): `==` ignores order (a set compares its elements, a map list
// its elements by key) and `+` is a union (a set appends the elements it lacks; a map list
// replaces the elements whose keys it has, in place, and appends the others). As in cel-go,
// the left operand decides: `[...] == self.set` compares by position.
//
// cel-js has one list type whose `==` and `+` cannot be overloaded, so the lists are marked
// (markSetList/markMapList) and rules that may meet them are rewritten so that every `==`,
// `!=` and `+` goes through the functions registered here; those fall back to the library's
// own operators for everything that is not a marked list.

import { type Environment, serialize, type ASTNode } from '@marcbachmann/cel-js';
import { uncharged } from './budget.js';
import { ROUTED_ADD, ROUTED_EQUALS } from './runtime-cost.js';

/** set lists have no keys; map lists have the (escaped) names of their key fields */
const marked = new WeakMap<readonly unknown[], { keys?: readonly string[] }>();

export function markSetList<T extends unknown[]>(list: T): T {
  marked.set(list, {});
  return list;
}

export function markMapList<T extends unknown[]>(list: T, keys: readonly string[]): T {
  marked.set(list, { keys });
  return list;
}

const EQUALS = ROUTED_EQUALS;
const ADD = ROUTED_ADD;

interface Node {
  op: string;
  args: unknown;
}

const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && 'op' in v;

function rewrite(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewrite);
  if (!isNode(node)) return node;
  const args = Array.isArray(node.args) ? node.args.map(rewrite) : rewrite(node.args);
  switch (node.op) {
    case '==':
      return { op: 'call', args: [EQUALS, args] };
    case '!=':
      return { op: '!_', args: { op: 'call', args: [EQUALS, args] } };
    case '+':
      return { op: 'call', args: [ADD, args] };
    default:
      return { op: node.op, args };
  }
}

/** the source of `ast` with its `==`, `!=` and `+` routed through the keyed-list functions */
export function routeOperatorsToKeyedLists(ast: ASTNode): string {
  return serialize(rewrite(ast) as ASTNode);
}

/** the library's own `==` and `+`, for operands that are not marked lists */
interface Fallback {
  equals(a: unknown, b: unknown): boolean;
  add(a: unknown, b: unknown): unknown;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && (v.constructor === Object || v.constructor === undefined);

function scalarKey(v: unknown): string {
  if (Array.isArray(v) || isPlainObject(v) || v instanceof Map)
    throw new Error('listSet operations are only supported on lists of scalar values');
  if (typeof v === 'bigint') return `i${v}`;
  if (typeof v === 'number') return Number.isInteger(v) ? `i${v}` : `d${v}`;
  if (typeof v === 'string') return `s${v}`;
  if (typeof v === 'boolean') return `b${v}`;
  if (v === null || v === undefined) return 'n';
  return `o${String(v)}`;
}

function mapKey(v: unknown, keys: readonly string[]): string {
  const el = isPlainObject(v) ? v : {};
  return JSON.stringify(keys.map((k) => (el[k] === undefined ? null : scalarKey(el[k]))));
}

function makeEquals(fallback: Fallback): (a: unknown, b: unknown) => boolean {
  const equals = (a: unknown, b: unknown): boolean => {
    if (Array.isArray(a)) {
      if (!Array.isArray(b)) return fallback.equals(a, b);
      if (a.length !== b.length) return false;
      const mark = marked.get(a);
      if (!mark) return a.every((x, i) => equals(x, b[i]));
      if (!mark.keys) {
        const own = new Set(a.map(scalarKey));
        const seen = new Set<string>();
        for (const x of b) {
          const k = scalarKey(x);
          if (!own.has(k)) return false;
          seen.add(k);
        }
        return seen.size === own.size;
      }
      const keys = mark.keys;
      const own = new Map(a.map((x) => [mapKey(x, keys), x] as const));
      const seen = new Set<string>();
      for (const x of b) {
        const k = mapKey(x, keys);
        if (!own.has(k) || !equals(own.get(k), x)) return false;
        seen.add(k);
      }
      return seen.size === own.size;
    }
    if (isPlainObject(a) && isPlainObject(b)) {
      const ka = Object.keys(a);
      return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && equals(a[k], b[k]));
    }
    if (typeof a === typeof b && (typeof a === 'string' || typeof a === 'bigint' || typeof a === 'boolean')) return a === b;
    return fallback.equals(a, b);
  };
  return equals;
}

function makeAdd(fallback: Fallback): (a: unknown, b: unknown) => unknown {
  return (a, b) => {
    const mark = Array.isArray(a) ? marked.get(a) : undefined;
    if (!mark || !Array.isArray(a) || !Array.isArray(b)) return fallback.add(a, b);
    if (!mark.keys) {
      const own = new Set(a.map(scalarKey));
      const out = [...a];
      for (const x of b) {
        const k = scalarKey(x);
        if (!own.has(k)) {
          own.add(k);
          out.push(x);
        }
      }
      return markSetList(out);
    }
    const keys = mark.keys;
    const out = [...a];
    const at = new Map(out.map((x, i) => [mapKey(x, keys), i] as const));
    for (const x of b) {
      const k = mapKey(x, keys);
      const i = at.get(k);
      if (i === undefined) {
        at.set(k, out.length);
        out.push(x);
      } else out[i] = x;
    }
    return markMapList(out, keys);
  };
}

/** Registers the functions rewritten rules call; `base` is an environment with the same
 *  operators as `env` (the fallback for values that are not marked lists). */
export function registerKeyedListOperators(env: Environment, base: Environment): Environment {
  const probe = base.clone().registerVariable('a', 'dyn').registerVariable('b', 'dyn');
  const eq = probe.parse('a == b');
  const plus = probe.parse('a + b');
  // the routed call is charged as the operator; the fallback's own evaluation is not charged again
  const fallback: Fallback = { equals: (a, b) => uncharged(() => eq({ a, b })) === true, add: (a, b) => uncharged(() => plus({ a, b })) };
  return env
    .registerFunction(`${EQUALS}(dyn, dyn): bool`, makeEquals(fallback))
    .registerFunction(`${ADD}(dyn, dyn): dyn`, makeAdd(fallback));
}
