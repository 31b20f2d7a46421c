// CEL's two-variable comprehensions (cel-go's ext.TwoVarComprehensions, in kube's environments
// since compatibility version 1.32), which cel-js lacks:
//   range.all(i, v, p)   range.exists(i, v, p)   range.existsOne(i, v, p)
//   range.transformList(i, v, [filter,] e)     -> list of e
//   range.transformMap(i, v, [filter,] e)      -> map of i to e
//   range.transformMapEntry(i, v, [filter,] m) -> the union of the one-entry maps m
// Over a list, `i` is the index and `v` the element; over a map, `i` is the key and `v` its value.
// They are cel-js macros: the iteration variables live in the library's own overlay contexts, so
// the runtime budget (budget.ts) counts every iteration as it does for the one-variable macros.

import type { Environment } from '@marcbachmann/cel-js';

/** the parts of cel-js's macro protocol used here (the library does not type them) */
interface AstNode {
  op: string;
  args: unknown;
}
interface CelType {
  kind: string;
  isDynOrBool(): boolean;
  keyType?: CelType;
  valueType?: CelType;
}
interface Context {
  forkWithVariable(name: string, type: CelType): Context;
  reuse(parent: Context): Context;
  setIterValue(value: unknown, evaluator: Evaluator): Context;
}
interface Checker {
  check(node: AstNode, ctx: Context): CelType;
  getType(name: string): CelType;
  formatType(t: CelType): string;
  createError(code: string, message: string, node: AstNode): Error;
  registry: { getListType(t: CelType): CelType; getMapType(k: CelType, v: CelType): CelType };
}
interface Evaluator {
  run(node: AstNode, ctx: Context): unknown;
}
interface MacroCall {
  ast: AstNode;
  args: AstNode[];
  receiver: AstNode;
}

type Kind = 'all' | 'exists' | 'existsOne' | 'transformList' | 'transformMap' | 'transformMapEntry';

interface TwoVarMacro {
  kind: Kind;
  receiver: AstNode;
  indexVar: string;
  valueVar: string;
  filter?: AstNode;
  body: AstNode;
  keyCtx?: Context;
  valueCtx?: Context;
  typeCheck(chk: Checker, m: TwoVarMacro, ctx: Context): CelType;
  evaluate(ev: Evaluator, m: TwoVarMacro, ctx: Context): unknown;
}

function identifier(node: AstNode, kind: Kind, chk?: Checker): string {
  if (node.op === 'id' && typeof node.args === 'string') return node.args;
  const message = `${kind}() variable name must be a simple identifier`;
  throw chk ? chk.createError('invalid_macro_argument', message, node) : new Error(message);
}

function entriesOf(range: unknown): [unknown, unknown][] {
  if (Array.isArray(range)) return range.map((v, i) => [BigInt(i), v]);
  if (range instanceof Map) return [...range.entries()];
  if (range && typeof range === 'object') return Object.entries(range);
  throw new Error(`expression of type '${typeof range}' cannot be range of a comprehension (must be list, map, or dynamic)`);
}

function typeCheck(chk: Checker, m: TwoVarMacro, ctx: Context): CelType {
  const range = chk.check(m.receiver, ctx);
  const dyn = chk.getType('dyn');
  let keyType = dyn;
  let valueType = dyn;
  if (range.kind === 'list') {
    keyType = chk.getType('int');
    valueType = range.valueType ?? dyn;
  } else if (range.kind === 'map') {
    keyType = range.keyType ?? dyn;
    valueType = range.valueType ?? dyn;
  } else if (range.kind !== 'dyn') {
    throw chk.createError(
      'invalid_comprehension_range',
      `expression of type '${chk.formatType(range)}' cannot be range of a comprehension (must be list, map, or dynamic)`,
      m.receiver,
    );
  }
  m.keyCtx = ctx.forkWithVariable(m.indexVar, keyType);
  m.valueCtx = m.keyCtx.forkWithVariable(m.valueVar, valueType);
  const bool = chk.getType('bool');
  if (m.filter) expectBool(chk, chk.check(m.filter, m.valueCtx), m.filter, m.kind);
  const body = chk.check(m.body, m.valueCtx);
  switch (m.kind) {
    case 'all':
    case 'exists':
    case 'existsOne':
      expectBool(chk, body, m.body, m.kind);
      return bool;
    case 'transformList':
      return chk.registry.getListType(body);
    case 'transformMap':
      return chk.registry.getMapType(keyType, body);
    case 'transformMapEntry':
      if (body.kind !== 'map' && body.kind !== 'dyn') {
        throw chk.createError(
          'invalid_macro_argument',
          `transformMapEntry() expression must return a map, got '${chk.formatType(body)}'`,
          m.body,
        );
      }
      return body;
  }
}

function expectBool(chk: Checker, t: CelType, node: AstNode, kind: Kind): void {
  if (!t.isDynOrBool()) {
    throw chk.createError('invalid_macro_argument', `${kind}() predicate must return bool, got '${chk.formatType(t)}'`, node);
  }
}

function evaluate(ev: Evaluator, m: TwoVarMacro, ctx: Context): unknown {
  const entries = entriesOf(ev.run(m.receiver, ctx));
  const keyCtx = m.keyCtx!;
  const valueCtx = m.valueCtx!;
  // one context per element: the budget charges each setting of an iteration variable
  const bound = (key: unknown, value: unknown): Context => valueCtx.reuse(keyCtx.reuse(ctx).setIterValue(key, ev)).setIterValue(value, ev);
  const testIn = (c: Context, node: AstNode): boolean => {
    const r = ev.run(node, c);
    if (typeof r !== 'boolean') throw new Error(`no such overload: ${m.kind} predicate must return bool`);
    return r;
  };
  const test = (node: AstNode, key: unknown, value: unknown): boolean => testIn(bound(key, value), node);
  /** the body's value for an element, or `skip` when the filter drops it */
  const skip = Symbol('skip');
  const step = (key: unknown, value: unknown): unknown => {
    const c = bound(key, value);
    if (m.filter && !testIn(c, m.filter)) return skip;
    return ev.run(m.body, c);
  };
  switch (m.kind) {
    case 'all':
    case 'exists': {
      // as the one-variable macros: a decisive answer wins over an error met on another element
      const decisive = m.kind === 'exists';
      let error: unknown;
      for (const [k, v] of entries) {
        try {
          if (test(m.body, k, v) === decisive) return decisive;
        } catch (err) {
          error ??= err;
        }
      }
      if (error) throw error;
      return !decisive;
    }
    case 'existsOne': {
      let count = 0;
      for (const [k, v] of entries) if (test(m.body, k, v)) count++;
      return count === 1;
    }
    case 'transformList': {
      const out: unknown[] = [];
      for (const [k, v] of entries) {
        const r = step(k, v);
        if (r !== skip) out.push(r);
      }
      return out;
    }
    case 'transformMap': {
      const out = new Map<unknown, unknown>();
      for (const [k, v] of entries) {
        const r = step(k, v);
        if (r !== skip) out.set(k, r);
      }
      return toCelMap(out);
    }
    case 'transformMapEntry': {
      const out = new Map<unknown, unknown>();
      for (const [k, v] of entries) {
        const r = step(k, v);
        if (r === skip) continue;
        for (const [ek, ev2] of entriesOf(r)) {
          if (out.has(ek)) throw new Error(`insert failed: key ${String(ek)} already exists`);
          out.set(ek, ev2);
        }
      }
      return toCelMap(out);
    }
  }
}

/** cel-js represents map values as plain objects (keys as strings) */
function toCelMap(m: Map<unknown, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // defineProperty: a key named __proto__ stays an entry
  for (const [k, v] of m) Object.defineProperty(out, String(k), { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}

function macro(kind: Kind, withFilter: boolean) {
  return (call: MacroCall): TwoVarMacro => {
    const [i, v, ...rest] = call.args as [AstNode, AstNode, ...AstNode[]];
    const indexVar = identifier(i, kind);
    const valueVar = identifier(v, kind);
    if (indexVar === valueVar) throw new Error(`duplicate variable name: ${indexVar}`);
    return {
      kind,
      receiver: call.receiver,
      indexVar,
      valueVar,
      filter: withFilter ? rest[0] : undefined,
      body: withFilter ? rest[1]! : rest[0]!,
      typeCheck,
      evaluate,
    };
  };
}

/** registers the two-variable comprehension macros */
export function registerTwoVarComprehensions(env: Environment): Environment {
  return env
    .registerFunction('list.all(ast, ast, ast): bool', macro('all', false))
    .registerFunction('list.exists(ast, ast, ast): bool', macro('exists', false))
    .registerFunction('list.existsOne(ast, ast, ast): bool', macro('existsOne', false))
    .registerFunction('list.transformList(ast, ast, ast): list<dyn>', macro('transformList', false))
    .registerFunction('list.transformList(ast, ast, ast, ast): list<dyn>', macro('transformList', true))
    .registerFunction('list.transformMap(ast, ast, ast): map<dyn, dyn>', macro('transformMap', false))
    .registerFunction('list.transformMap(ast, ast, ast, ast): map<dyn, dyn>', macro('transformMap', true))
    .registerFunction('list.transformMapEntry(ast, ast, ast): map<dyn, dyn>', macro('transformMapEntry', false))
    .registerFunction('list.transformMapEntry(ast, ast, ast, ast): map<dyn, dyn>', macro('transformMapEntry', true));
}
