// The runtime cost of one step of a CEL evaluation, in the units of cel-go's cost tracker as
// kube-apiserver configures it (cel-go's interpreter costs, then kube's library costs): reading
// a variable, a field or an index costs 1, a constant 0, a list literal 10 and a map literal 30,
// `&&`, `||` and `?:` nothing of their own; a call 1, unless its arguments' actual sizes make it
// more (string scans a tenth of the string's length, regexes the string times the pattern,
// `in` the list's size, an authorizer check 350000). Comprehensions add, per iteration, what
// cel-go's expansion of each macro spends on its accumulator.

import { RE2_MATCHES } from './re2.js';

/** the parts of cel-js's AST node read here */
export interface CostNode {
  op: string;
  args: unknown;
}

const STRING_TRAVERSAL = 0.1;
const REGEX_LENGTH = 0.25;
const LIST_CREATE = 10;
const MAP_CREATE = 30;

/** the size cel-go's tracker gives a value: its length for strings, bytes, lists and maps */
export function actualSize(v: unknown): number {
  if (typeof v === 'string') return [...v].length;
  if (v instanceof Uint8Array) return v.length;
  if (Array.isArray(v)) return v.length;
  if (v instanceof Map || v instanceof Set) return v.size;
  if (v !== null && typeof v === 'object' && (v.constructor === Object || v.constructor === undefined)) return Object.keys(v).length;
  return 1;
}

const isSized = (v: unknown): boolean =>
  typeof v === 'string' ||
  v instanceof Uint8Array ||
  Array.isArray(v) ||
  v instanceof Map ||
  v instanceof Set ||
  (v !== null && typeof v === 'object' && (v.constructor === Object || v.constructor === undefined));
const scan = (v: unknown, factor = STRING_TRAVERSAL): number => Math.ceil(actualSize(v) * factor);

/** kube's traversal cost: every string's tenth, every scalar 1 (isSorted, sum, min, max...) */
function traversalCost(v: unknown): number {
  if (typeof v === 'string' || v instanceof Uint8Array) return Math.floor(actualSize(v) * STRING_TRAVERSAL);
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + traversalCost(x), 0);
  if (v instanceof Map) return [...v].reduce((n: number, [k, x]) => n + traversalCost(k) + traversalCost(x), 0);
  if (v !== null && typeof v === 'object' && (v.constructor === Object || v.constructor === undefined)) {
    return Object.entries(v).reduce((n: number, [k, x]) => n + traversalCost(k) + traversalCost(x), 0);
  }
  return 1;
}

const regexCost = (input: unknown, pattern: unknown): number =>
  Math.ceil((1 + actualSize(input)) * STRING_TRAVERSAL) * Math.ceil(actualSize(pattern) * REGEX_LENGTH);

/** the functions CRD rules call in place of `==` and `+` (keyed-lists.ts): costed as the
 *  operators they stand for */
export const ROUTED_EQUALS = 'kubernetesListEquals';
export const ROUTED_ADD = 'kubernetesListAdd';

/** the cost of a call, from its function's name, its receiver and arguments (receiver first)
 *  and its result */
export function callCost(name: string, args: readonly unknown[], result: unknown): number {
  const [a0, a1] = args;
  switch (name) {
    case ROUTED_EQUALS:
      return operatorCost('==', a0, a1);
    case ROUTED_ADD:
      return operatorCost('+', a0, a1);
    case 'check':
      return 350_000;
    case 'fieldSelector':
    case 'labelSelector': {
      const n = actualSize(a1);
      return LIST_CREATE + Math.ceil(n * STRING_TRAVERSAL) + Math.ceil(Math.ceil(n * 0.5) * (LIST_CREATE + 40));
    }
    case 'isSorted':
    case 'sum':
    case 'max':
    case 'min':
    case 'indexOf':
    case 'lastIndexOf':
    case 'includes':
      return a0 === undefined ? 0 : traversalCost(a0);
    case 'url':
    case 'lowerAscii':
    case 'upperAscii':
    case 'substring':
    case 'trim':
    case 'cidr':
    case 'isIP':
    case 'isCIDR':
    case 'isURL':
    case 'quantity':
    case 'isQuantity':
    case 'semver':
    case 'isSemver':
    case 'bytes':
      return scan(a0);
    case 'startsWith':
    case 'endsWith':
      // the prefix or suffix is scanned
      return scan(a1);
    case 'ip':
      return typeof a0 === 'string' ? scan(a0) : 1;
    case 'replace':
    case 'split':
      return scan(a0, 2 * STRING_TRAVERSAL);
    case 'join':
      return scan(result, 2 * STRING_TRAVERSAL);
    case 'find':
    case 'findAll':
    case 'matches':
    case RE2_MATCHES:
      return regexCost(a0, a1);
    case 'contains':
      return typeof a0 === 'string' ? scan(a0) * scan(a1) : 1;
    case 'string':
      return a0 instanceof Uint8Array ? scan(a0) : 1;
    case 'strings.quote':
    case 'jsonpatch.escapeKey':
      return scan(a0);
    case 'ip.isCanonical':
      return scan(a0, 2 * STRING_TRAVERSAL);
    case 'containsIP':
    case 'containsCIDR': {
      // the network is no sized value to the tracker: size 1
      const own = 1;
      let cost = Math.ceil(2 * own * STRING_TRAVERSAL);
      if (name === 'containsCIDR') cost += Math.ceil(own * STRING_TRAVERSAL) + 1;
      if (typeof a1 === 'string') cost += scan(a1);
      return cost;
    }
    case 'validate': {
      const regex = FORMAT_REGEX_SIZES[(a0 as { name?: string } | undefined)?.name ?? ''];
      return regex === undefined ? 1 : Math.ceil((1 + actualSize(a1)) * STRING_TRAVERSAL) * Math.ceil(regex * REGEX_LENGTH);
    }
    case 'sets.contains':
    case 'sets.intersects':
      return 1 + actualSize(a0) * actualSize(a1);
    case 'sets.equivalent':
      return 1 + 2 * actualSize(a0) * actualSize(a1);
    case 'format':
      // cel-go's string.format: a tenth of the format string
      return typeof a0 === 'string' ? scan(a0) : 1;
    default:
      return 1;
  }
}

/** the size of each named format's validation regex, as kube estimates it (library/format.go) */
const FORMAT_REGEX_SIZES: Readonly<Record<string, number>> = {
  DNS1123Label: 30,
  DNS1123Subdomain: 60,
  DNS1035Label: 30,
  QualifiedName: 60,
  DNS1123LabelPrefix: 30,
  DNS1123SubdomainPrefix: 60,
  DNS1035LabelPrefix: 30,
  LabelValue: 40,
  URI: 1103,
  // kube-openapi's strfmt UUIDPattern and DateTimePattern
  uuid: 70,
  byte: 84,
  date: 71,
  datetime: 71,
};

/** the cost of an operator node given its operands' values */
export function operatorCost(op: string, left: unknown, right: unknown): number {
  switch (op) {
    case '==':
    case '!=':
      return Math.ceil(Math.min(actualSize(left), actualSize(right)) * STRING_TRAVERSAL);
    case '<':
    case '<=':
    case '>':
    case '>=':
      return (typeof left === 'string' || left instanceof Uint8Array) && isSized(right)
        ? Math.ceil(Math.min(actualSize(left), actualSize(right)) * STRING_TRAVERSAL)
        : 1;
    case '+':
      return typeof left === 'string' || left instanceof Uint8Array
        ? Math.ceil((actualSize(left) + actualSize(right)) * STRING_TRAVERSAL)
        : 1;
    case 'in':
      return Array.isArray(right) || right instanceof Set ? actualSize(right) : 1;
    default:
      return 1;
  }
}

/** what cel-go's expansion of a macro spends once (result and accumulator) and per iteration;
 *  cel-js's own expansion of map and filter evaluates their empty result list as a node,
 *  charged as such */
export const MACRO_COSTS: Readonly<Record<string, { start: number; perIteration: number }>> = {
  all: { start: 1, perIteration: 3 },
  exists: { start: 1, perIteration: 4 },
  exists_one: { start: 2, perIteration: 2 },
  existsOne: { start: 2, perIteration: 2 },
  map: { start: 1, perIteration: LIST_CREATE + 2 },
  // cel-go's filter spends 12 and the element's read on a kept element, 1 on a dropped one:
  // every element is charged as kept
  filter: { start: 1, perIteration: LIST_CREATE + 2 },
  transformList: { start: LIST_CREATE + 1, perIteration: LIST_CREATE + 2 },
  transformMap: { start: MAP_CREATE + 1, perIteration: 3 },
  transformMapEntry: { start: MAP_CREATE + 1, perIteration: 2 },
};

/** a macro call node: its name, and whether it binds two variables */
export function macroOf(node: CostNode): { name: string; twoVariables: boolean } | undefined {
  if (node.op !== 'rcall' || !Array.isArray(node.args)) return undefined;
  const [name, , args] = node.args as [string, unknown, CostNode[]];
  if (!MACRO_COSTS[name] || !Array.isArray(args) || args[0]?.op !== 'id') return undefined;
  // map(x, filter, transform) has three arguments and one variable
  const twoVariables = name.startsWith('transform') || (args.length === 3 && name !== 'map' && args[1]?.op === 'id');
  return { name, twoVariables };
}

const NAMESPACE = /Namespace$/;

/** `-5`: cel-go's parser reads a signed number as one constant, not a negation */
export function isNegativeLiteral(node: CostNode): boolean {
  const operand = node.args as CostNode | undefined;
  return node.op === '-_' && operand?.op === 'value' && (typeof operand.args === 'number' || typeof operand.args === 'bigint');
}

/** the name of a namespace constant (`sets` in `sets.contains(...)`), or undefined */
function namespaceOf(n: unknown): string | undefined {
  const node = n as { op?: string; args?: unknown; checkedType?: { name?: string } };
  return node?.op === 'id' && NAMESPACE.test(node.checkedType?.name ?? '') ? (node.args as string) : undefined;
}

/** the number of field selections in a chain `a.b.c` (2) */
function selections(node: unknown): number {
  let n = 0;
  for (let x = node as CostNode | undefined; x && (x.op === '.' || x.op === '.?'); x = (x.args as CostNode[])[0]) n++;
  return n;
}

/** The cost of a node's own step (its operands are charged as they are evaluated); `valueOf`
 *  gives the last value of an evaluated operand node. */
export function nodeCost(node: CostNode, result: unknown, valueOf: (n: unknown) => unknown): number {
  const a = node.args as unknown[];
  switch (node.op) {
    case 'value':
      return 0;
    case 'id':
      // a namespace (sets, strings, format...) is part of a function's name in cel-go
      return NAMESPACE.test((node as { checkedType?: { name?: string } }).checkedType?.name ?? '') ? 0 : 1;
    case '.':
    case '.?':
    case '[]':
    case '[?]':
      return 1;
    case 'list':
      return LIST_CREATE;
    case 'map':
      return MAP_CREATE;
    case '&&':
    case '||':
    case '?:':
      return 0;
    case '!_':
      return 1;
    case '-_':
      return isNegativeLiteral(node) ? 0 : 1;
    case '==':
    case '!=':
    case '<':
    case '<=':
    case '>':
    case '>=':
    case '+':
    case '-':
    case '*':
    case '/':
    case '%':
    case 'in':
      return operatorCost(node.op, valueOf(a[0]), valueOf(a[1]));
    case 'call': {
      const [name, args] = a as [string, unknown[]];
      // kube turns off the cost of presence tests (PresenceTestHasCost false): the operand's
      // variable is charged as it is read, and each field selected before the tested one
      if (name === 'has') return Math.max(0, selections(args[0]) - 1);
      return callCost(name, args.map(valueOf), result);
    }
    case 'rcall': {
      const [name, receiver, args] = a as [string, unknown, unknown[]];
      if (macroOf(node)) return 0;
      const ns = namespaceOf(receiver);
      if (ns) return callCost(`${ns}.${name}`, args.map(valueOf), result);
      return callCost(name, [valueOf(receiver), ...args.map(valueOf)], result);
    }
    default:
      return 0;
  }
}
