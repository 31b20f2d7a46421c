// Compile errors in cel-go's words and layout, as kube-apiserver returns them:
//   ERROR: <input>:1:5: undefined field 'nosuch'
//    | self.nosuch > 0
//    | ....^
// cel-js reports its own codes and source ranges; the common ones are translated here. cel-go
// parses before it checks, so an expression with syntax errors reports those
// (syntax-errors.ts), whatever cel-js found.

import { issueAtOffset, issueLayout } from './issue-layout.js';
import { messageFieldType, OPTIONAL_FIELD_FUNCTION } from './message-literals.js';
import { routeMatchesToRe2Source } from './re2.js';
import type { RewrittenSource } from './rewritten-source.js';
import { celSyntaxErrors } from './syntax-errors.js';

/** one issue at a 0-based offset (UTF-16 units, as JavaScript indexes strings) of the expression */
export function celIssue(expr: string, offset: number, message: string): string {
  return issueAtOffset([...expr], [...expr.slice(0, offset)].length, message);
}

interface CelJsNode {
  op?: string;
  start?: number;
  end?: number;
  args?: unknown;
}

interface CelJsError {
  code?: string;
  summary?: string;
  message: string;
  range?: { start: number; end: number };
  node?: CelJsNode;
}

/** where cel-go places a binary operator's issue: at the operator itself */
function operatorOffset(expr: string, node: CelJsNode | undefined, op: string): number | undefined {
  const args = Array.isArray(node?.args) ? (node.args as CelJsNode[]) : [];
  const left = args[0]?.end;
  if (left === undefined) return undefined;
  const at = expr.indexOf(op, left);
  return at < 0 ? undefined : at;
}

/** where cel-go places a call's issue: at its '(' (the one matching the closing parenthesis) */
function callOffset(expr: string, node: CelJsNode | undefined): number | undefined {
  if (node?.start === undefined || node.end === undefined) return undefined;
  let depth = 0;
  for (let i = node.end - 1; i >= node.start; i--) {
    if (expr[i] === ')') depth++;
    else if (expr[i] === '(' && --depth === 0) return i;
  }
  return undefined;
}

const OPERATOR_NAMES: Record<string, string> = {
  '+': '_+_',
  '-': '_-_',
  '*': '_*_',
  '/': '_/_',
  '%': '_%_',
  '<': '_<_',
  '<=': '_<=_',
  '>': '_>_',
  '>=': '_>=_',
  '==': '_==_',
  '!=': '_!=_',
  in: '@in',
};

/** the environment an issue was found in, when the caller has it: the names of its functions
 *  tell a call of an unknown function (cel-go: an undeclared reference) from a wrong overload */
export interface IssueEnvironment {
  getDefinitions(): { functions: readonly { name: string }[] };
}

const functionNames = new WeakMap<IssueEnvironment, Set<string>>();

function declaresFunction(env: IssueEnvironment, name: string): boolean {
  let names = functionNames.get(env);
  if (!names) functionNames.set(env, (names = new Set(env.getDefinitions().functions.map((f) => f.name))));
  return names.has(name);
}

/** the names kube's libraries give the types kapi registers under shorter ones */
const KUBE_TYPE_NAMES: Readonly<Record<string, string>> = {
  Authorizer: 'kubernetes.authorization.Authorizer',
  PathCheck: 'kubernetes.authorization.PathCheck',
  GroupCheck: 'kubernetes.authorization.GroupCheck',
  ResourceCheck: 'kubernetes.authorization.ResourceCheck',
  Decision: 'kubernetes.authorization.Decision',
  Quantity: 'kubernetes.Quantity',
  'net.URL': 'kubernetes.URL',
  Format: 'kubernetes.NamedFormat',
  Semver: 'kubernetes.Semver',
};

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Renames types in the messages of an issue text (its `ERROR:` lines, not the source it
 *  echoes): whole type names by `names`, a schema type's list items and map values as kube
 *  names them (`.@idx`, `.@elem`). */
export function renameTypes(issue: string, names: Readonly<Record<string, string>>): string {
  const patterns = Object.entries(names).map(([from, to]) => [new RegExp(`(?<![\\w.@])${escapeRegExp(from)}(?![\\w])`, 'g'), to] as const);
  return issue
    .split('\n')
    .map((line) => {
      if (!line.startsWith('ERROR: ')) return line;
      let out = line.replace(/\.0items(?![\w])/g, '.@idx').replace(/\.0values(?![\w])/g, '.@elem');
      // cel-go writes parameterized types with parentheses: list(int), map(string, int)
      for (let prev = ''; prev !== out; ) {
        prev = out;
        out = out.replace(/(?<![\w.])(list|map)<([^<>]*)>/g, '$1($2)');
      }
      for (const [re, to] of patterns) out = out.replace(re, to);
      return out;
    })
    .join('\n');
}

/** an issue found in the text cel-js parsed: its offset there and cel-go's words */
interface Issue {
  offset: number;
  message: string;
}

const issueAt = (offset: number, message: string): Issue => ({ offset, message });

/** A cel-js compile error as cel-go would word it, at the same place. `parsed` is the text
 *  cel-js parsed, mapped back to `expr`; by default `expr` with `matches` routed to RE2, as
 *  every kapi caller parses it. */
export function celGoIssue(
  expr: string,
  err: Error,
  env?: IssueEnvironment,
  parsed: RewrittenSource = routeMatchesToRe2Source(expr),
): string {
  const syntax = celSyntaxErrors(expr);
  if (syntax) return syntax;
  // a parser limit the parsed text reached (it may nest deeper than the expression)
  if ((err as CelJsError).code === 'parser_limit') return issueLayout(err.message, -1, -1);
  const issue = translateIssue(parsed.text, err, env);
  return renameTypes(celIssue(expr, parsed.toOriginal(issue.offset), issue.message), KUBE_TYPE_NAMES);
}

function translateIssue(expr: string, err: Error, env?: IssueEnvironment): Issue {
  const e = err as CelJsError;
  const summary = e.summary ?? e.message.split('\n')[0] ?? '';
  const start = e.range?.start ?? 0;
  let m: RegExpExecArray | null;
  switch (e.code) {
    case 'no_such_key':
      // cel-go points at the dot of the selection
      return issueAt(Math.max(0, start - 1), `undefined field '${summary.replace(/^No such key: /, '')}'`);
    case 'unknown_variable':
      return issueAt(start, `undeclared reference to '${summary.replace(/^Unknown variable: /, '')}' (in container '')`);
    case 'heterogeneous_list_element':
    case 'heterogeneous_map_key':
    case 'heterogeneous_map_value':
      return issueAt(start, summary.replace(/^.*?(expected type)/, '$1'));
    case 'no_such_overload':
      if ((m = /^no such overload: (.+?) (\+|-|\*|\/|%|<=|>=|<|>|==|!=|in) (.+)$/.exec(summary)) && OPERATOR_NAMES[m[2]!]) {
        const at = operatorOffset(expr, e.node, m[2]!) ?? start;
        return issueAt(at, `found no matching overload for '${OPERATOR_NAMES[m[2]!]}' applied to '(${m[1]}, ${m[3]})'`);
      }
      return issueAt(start, summary);
    case 'no_matching_overload': {
      const at = callOffset(expr, e.node) ?? start;
      if ((m = new RegExp(`^found no matching overload for '${OPTIONAL_FIELD_FUNCTION}\\(string, string, (.+)\\)'$`).exec(summary))) {
        // an optional field given a value that is not an optional (cel-go's field type mismatch)
        const [message, field] = ((e.node?.args as [string, CelJsNode[]] | undefined)?.[1] ?? []).map((n) => String(n?.args ?? ''));
        const type = messageFieldType(message ?? '', field ?? '');
        return issueAt(at, `expected type of field '${field}' is 'optional_type(${type})' but provided type is '${m[1]}'`);
      }
      const called = /^found no matching overload for '(?:.+\.)?(\w+)\(/.exec(summary)?.[1];
      if (env && called && !declaresFunction(env, called)) return issueAt(at, `undeclared reference to '${called}' (in container '')`);
      // cel-js: 'int.size()' / 'size(int, int)'; cel-go: 'size' applied to 'int.()' / '(int, int)'
      if ((m = /^found no matching overload for '(.+)\.(\w+)\((.*)\)'$/.exec(summary))) {
        return issueAt(at, `found no matching overload for '${m[2]}' applied to '${m[1]}.(${m[3]})'`);
      }
      if ((m = /^found no matching overload for '(\w+)\((.*)\)'$/.exec(summary))) {
        return issueAt(at, `found no matching overload for '${m[1]}' applied to '(${m[2]})'`);
      }
      return issueAt(at, summary);
    }
    case 'invalid_macro_argument': {
      // cel-go's macro expanders: at the argument (a selection: at its dot)
      const at = e.node?.op === '.' ? Math.max(0, start - 1) : start;
      if (/^(all|exists|exists_one)\(var, predicate\) invalid predicate iteration variable$/.test(summary))
        return issueAt(at, 'argument must be a simple name');
      if (/^(map|filter)\(var, .*\) invalid predicate iteration variable$/.test(summary))
        return issueAt(at, 'argument is not an identifier');
      if (summary === 'has() invalid argument') return issueAt(at, 'invalid argument to has() macro');
      return issueAt(start, summary);
    }
    case 'invalid_format':
      return issueAt((e.node?.op === 'rcall' ? callOffset(expr, e.node) : undefined) ?? start, summary);
    case 'cannot_index_type':
      if ((m = /^Cannot index type '(.+)'$/.exec(summary)) && e.node?.op === '.') {
        return issueAt(Math.max(0, (e.range?.start ?? start) - 1), `type '${m[1]}' does not support field selection`);
      }
      return issueAt(start, summary);
    default:
      return issueAt(start, summary);
  }
}

/** a cel-js evaluation error as cel-go words it (the start of the message callers match on) */
export function celGoRuntimeError(err: Error): string {
  const e = err as CelJsError;
  const summary = (e.summary ?? e.message).split('\n')[0] ?? '';
  let m: RegExpExecArray | null;
  switch (e.code) {
    case 'no_such_overload':
    case 'no_matching_overload':
      return 'no such overload';
    case 'no_such_key':
      return summary.replace(/^No such key: /, 'no such key: ');
    case 'index_out_of_bounds':
      return (m = /index (-?\d+)/.exec(summary)) ? `index out of bounds: ${m[1]}` : summary;
    case 'numeric_overflow':
      return 'integer overflow';
    default:
      return summary;
  }
}
