// Two checks cel-go makes when it compiles an expression for kube, which cel-js's checker does
// not make the same way, added by wrapping that checker once:
// - homogeneous aggregate literals (kube enables the check in every environment): the elements
//   of a list literal, and the keys and the values of a map literal, must join into one type,
//   where dyn joins with anything — `[dyn(1), 'a']` and `['a', object.x]` (object dyn)
//   compile, `[1, 'a']` does not. cel-js's own check wants every element of the first
//   element's exact type, so a literal is checked here first, then by cel-js without its check;
// - `'<literal>'.format([<list literal>])` (the strings extension's validator): each clause
//   must fit its argument's type and every argument must be used;
// - the selection inside `has()` is type-checked like any other;
// - `x == null` and `x != null` compile where x is an object (or another message type, a
//   timestamp, a duration or an optional), as cel-go keeps its legacy type checker's nullness
//   rule; cel-js has no such overload, so the comparison is checked and evaluated here;
// - cel-go's parser limits (expression size, rule recursion, depth of the tree), which cel-js
//   does not have: its parse refuses what cel-go's refuses, with a `parser_limit` error;
// - the sets extension's functions take `list(T), list(T)`: the two lists' types must join.
//   They are declared over `list<dyn>` because cel-js picks an overload at run time by the
//   first element of a `list<dyn>` literal, which would miss `sets.contains([1], [1.0, 1])`.

import { Environment } from '@marcbachmann/cel-js';
import { checkFormatCall, FormatClauseError } from './strings-library.js';
import { celParserLimitError } from './syntax-errors.js';

/** an expression beyond one of cel-go's parser limits; the message is cel-go's */
export class ParserLimitError extends Error {
  readonly code = 'parser_limit';
}

/** the parts of cel-js's checker used here (the library does not type them) */
interface CelType {
  kind: string;
  name: string;
  unify(registry: unknown, other: CelType): CelType | null | undefined;
}
interface AstNode {
  op: string;
  args: unknown;
  checkedType?: CelType;
  left?: AstNode;
  right?: AstNode;
  handle?: (left: unknown, right: unknown) => boolean;
}
interface Checker {
  opts: { homogeneousAggregateLiterals: boolean };
  registry: unknown;
  check(node: AstNode, ctx: unknown): CelType;
  getType(name: string): CelType;
  formatType(t: CelType): string;
  createError(code: string, message: string, node: AstNode): Error;
}

const PREFIX: Record<string, string> = {
  heterogeneous_list_element: 'List elements must have the same type,',
  heterogeneous_map_key: 'Map key uses wrong type,',
  heterogeneous_map_value: 'Map value uses wrong type,',
};

/** cel-go's join of the element types: an error at the first element that does not join */
function join(chk: Checker, ctx: unknown, nodes: readonly AstNode[], code: string): void {
  let joined: CelType | undefined;
  for (const node of nodes) {
    const t = chk.check(node, ctx);
    if (!joined) {
      joined = t;
      continue;
    }
    const next = joined.unify(chk.registry, t);
    if (!next)
      throw chk.createError(code, `${PREFIX[code]} expected type '${chk.formatType(joined)}' but found '${chk.formatType(t)}'`, node);
    joined = next;
  }
}

const isPresenceTest = (node: AstNode): boolean => {
  const [name, args] = node.args as [string, AstNode[]];
  return name === 'has' && Array.isArray(args) && args.length === 1 && args[0]!.op === '.';
};

/** the strings extension's check of a literal format string over a list literal */
function checkFormat(chk: Checker, node: AstNode): void {
  const [name, receiver, args] = node.args as [string, AstNode, AstNode[]];
  if (name !== 'format' || receiver?.op !== 'value' || typeof receiver.args !== 'string' || args?.length !== 1 || args[0]!.op !== 'list')
    return;
  const elements = args[0]!.args as AstNode[];
  const problem = checkFormatCall(
    receiver.args,
    elements.map((e) => (e.checkedType ? chk.formatType(e.checkedType) : 'dyn')),
  );
  if (!problem) return;
  // a clause that does not fit is reported at its argument; anything else at the call
  const at = problem instanceof FormatClauseError ? (elements[problem.argIndex] ?? node) : node;
  throw chk.createError('invalid_format', problem.message, at);
}

const isNull = (t: CelType) => t.kind === 'primitive' && t.name === 'null';
/** cel-go's legacy nullable kinds: structs (kapi's object and library types, timestamp and
 *  duration are cel-js message types) and opaque types (optional) */
const isNullable = (t: CelType) => t.kind === 'message' || t.kind === 'optional';

/** a comparison with null that cel-go compiles and cel-js has no overload for; undefined when it is not one */
function checkNullComparison(chk: Checker, node: AstNode, ctx: unknown): CelType | undefined {
  const [left, right] = node.args as [AstNode, AstNode];
  const l = chk.check(left, ctx);
  const r = chk.check(right, ctx);
  if (!((isNull(l) && isNullable(r)) || (isNull(r) && isNullable(l)))) return undefined;
  node.left = left;
  node.right = right;
  // only null equals null: a value of the other side's type never does
  node.handle = node.op === '==' ? (a, b) => a === null && b === null : (a, b) => !(a === null && b === null);
  return chk.getType('bool');
}

const SETS_FUNCTIONS = new Set(['contains', 'equivalent', 'intersects']);

/** cel-go binds the sets functions' type parameter once: `sets.contains([1], ['a'])` does not compile */
function checkSetsCall(chk: Checker, node: AstNode): void {
  const [name, receiver, args] = node.args as [string, AstNode, AstNode[]];
  if (!SETS_FUNCTIONS.has(name) || receiver?.op !== 'id' || receiver.args !== 'sets' || args?.length !== 2) return;
  const [a, b] = [args[0]!.checkedType, args[1]!.checkedType];
  if (!a || !b || a.unify(chk.registry, b)) return;
  throw chk.createError(
    'no_matching_overload',
    `found no matching overload for 'SetsNamespace.${name}(${chk.formatType(a)}, ${chk.formatType(b)})'`,
    node,
  );
}

const lenientOptions = new WeakMap<object, Checker['opts']>();

let installed = false;

/** wraps cel-js's checker once (idempotent) */
export function installCompileChecks(): void {
  if (installed) return;
  installed = true;
  const environment = Environment.prototype as unknown as { parse(expression: unknown): unknown };
  const parse = environment.parse;
  environment.parse = function (this: unknown, expression: unknown): unknown {
    const limit = typeof expression === 'string' ? celParserLimitError(expression) : undefined;
    if (limit) throw new ParserLimitError(limit);
    return parse.call(this, expression);
  };
  let checker: Checker | undefined;
  const probe = new Environment().registerFunction('list.homogeneousProbe(ast): bool', () => ({
    typeCheck(chk: Checker) {
      checker = chk;
      return (chk as unknown as { getType(n: string): CelType }).getType('bool');
    },
    evaluate: () => true,
  }));
  probe.parse('[1].homogeneousProbe(x)').check();
  const proto = checker ? (Object.getPrototypeOf(checker) as { check: Checker['check'] }) : undefined;
  if (!proto || typeof proto.check !== 'function')
    throw new Error('cel compile checks: cannot find the type checker of @marcbachmann/cel-js');
  const original = proto.check;
  proto.check = function (this: Checker, node: AstNode, ctx: unknown): CelType {
    if (node.checkedType === undefined && node.op === 'call' && isPresenceTest(node)) {
      // cel-go checks the selection a presence test makes: has(self.nosuch) does not compile
      this.check((node.args as [string, AstNode[]])[1][0]!, ctx);
      return original.call(this, node, ctx);
    }
    if (node.checkedType === undefined && (node.op === '==' || node.op === '!=')) {
      const type = checkNullComparison(this, node, ctx);
      if (type) return type;
      return original.call(this, node, ctx);
    }
    if (node.checkedType === undefined && node.op === 'rcall') {
      const type = original.call(this, node, ctx);
      checkFormat(this, node);
      checkSetsCall(this, node);
      return type;
    }
    if (node.checkedType !== undefined || !this.opts.homogeneousAggregateLiterals || (node.op !== 'list' && node.op !== 'map')) {
      return original.call(this, node, ctx);
    }
    if (node.op === 'list') join(this, ctx, node.args as AstNode[], 'heterogeneous_list_element');
    else {
      const entries = node.args as [AstNode, AstNode][];
      join(
        this,
        ctx,
        entries.map((e) => e[0]),
        'heterogeneous_map_key',
      );
      join(
        this,
        ctx,
        entries.map((e) => e[1]),
        'heterogeneous_map_value',
      );
    }
    const opts = this.opts;
    let lenient = lenientOptions.get(opts);
    if (!lenient) lenientOptions.set(opts, (lenient = { ...opts, homogeneousAggregateLiterals: false }));
    this.opts = lenient;
    try {
      return original.call(this, node, ctx);
    } finally {
      this.opts = opts;
    }
  };
}
