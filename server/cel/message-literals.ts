// cel-go's message construction, `Name.path{field: value, ...}`, which MutatingAdmissionPolicy
// expressions use to build `JSONPatch{op: "add", ...}` and `Object{metadata: Object.metadata{...}}`
// values. The CEL library kapi uses has no syntax for it, so the expression text is rewritten,
// token by token (strings, comments and numbers are skipped whole, never matched by patterns),
// into calls of `__kapi_message("Name.path", {"field": dyn(value), ...})`, a function declared
// by `registerMessageLiterals`. The field values are wrapped in `dyn` because a message's fields
// have different types, which a map literal of the library would refuse as heterogeneous. An
// optional field, `?field: value`, whose value must be an optional, becomes
// `"field": __kapi_optional_field("Name", "field", value)`: the field is set only when the
// optional has a value. Positions in the rewritten text map back to the user's (./rewritten-source.ts): what
// cel-go reports at a field is reported at the field's colon, as cel-go places it.

import type { Environment } from '@marcbachmann/cel-js';
import { applyEdits, type RewrittenSource, type TextEdit } from './rewritten-source.js';
import { CEL_WORDS } from './reserved-words.js';

export const MESSAGE_FUNCTION = '__kapi_message';
export const OPTIONAL_FIELD_FUNCTION = '__kapi_optional_field';

/** an optional field's value: `value` undefined when the optional was empty */
class OptionalField {
  constructor(readonly value: unknown) {}
}

interface CelOptional {
  hasValue(): boolean;
  value(): unknown;
}

/** the fields set: empty optional fields left out, the others unwrapped */
function setFields(fields: Record<string, unknown> | Map<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of fields instanceof Map ? fields : Object.entries(fields)) {
    if (!(v instanceof OptionalField)) out[k] = v;
    else if (v.value !== undefined) out[k] = v.value;
  }
  return out;
}

/** a value built by message construction: its type name (`JSONPatch`, `Object.spec`) and fields */
export class MessageLiteral {
  constructor(
    readonly typeName: string,
    readonly fields: Readonly<Record<string, unknown>>,
  ) {}
}

export function registerMessageLiterals(env: Environment): Environment {
  return env
    .registerType('MessageLiteral', MessageLiteral)
    .registerType('OptionalField', OptionalField)
    .registerFunction(
      `${MESSAGE_FUNCTION}(string, map): dyn`,
      (name: string, fields: Record<string, unknown>) => new MessageLiteral(name, setFields(fields)),
    )
    .registerFunction(
      `${OPTIONAL_FIELD_FUNCTION}(string, string, optional<dyn>): dyn`,
      (_message: string, _field: string, o: CelOptional) => new OptionalField(o.hasValue() ? o.value() : undefined),
    );
}

type TokenKind = 'ident' | 'punct' | 'other';
interface Token {
  kind: TokenKind;
  start: number;
  end: number;
  text: string;
}

const isIdentStart = (c: string) => /[A-Za-z_]/.test(c);
const isIdentPart = (c: string) => /[A-Za-z0-9_]/.test(c);
const isDigit = (c: string) => c >= '0' && c <= '9';

/** the end of a string literal starting at `i` (after any r/b prefix letters at `quoteAt`) */
function stringEnd(src: string, quoteAt: number, raw: boolean): number {
  const q = src[quoteAt]!;
  const triple = src.startsWith(q.repeat(3), quoteAt);
  const close = triple ? q.repeat(3) : q;
  let i = quoteAt + close.length;
  while (i < src.length) {
    if (!raw && src[i] === '\\') {
      i += 2;
      continue;
    }
    if (src.startsWith(close, i)) return i + close.length;
    if (!triple && src[i] === '\n') break;
    i++;
  }
  // unterminated: the parser reports it
  return src.length;
}

/** CEL's lexical tokens, enough to find message constructions; whitespace and comments dropped */
export function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (src.startsWith('//', i)) {
      while (i < src.length && src[i] !== '\n') i++;
    } else if (c === '"' || c === "'") {
      const end = stringEnd(src, i, false);
      out.push({ kind: 'other', start: i, end, text: src.slice(i, end) });
      i = end;
    } else if (isIdentStart(c)) {
      let j = i + 1;
      while (j < src.length && isIdentPart(src[j]!)) j++;
      const word = src.slice(i, j);
      const next = src[j];
      // string prefixes: r"..", b"..", rb"..", br".."
      if ((next === '"' || next === "'") && /^(?:[rR]|[bB]|[rR][bB]|[bB][rR])$/.test(word)) {
        const end = stringEnd(src, j, /[rR]/.test(word));
        out.push({ kind: 'other', start: i, end, text: src.slice(i, end) });
        i = end;
        continue;
      }
      out.push({ kind: 'ident', start: i, end: j, text: word });
      i = j;
    } else if (isDigit(c) || (c === '.' && isDigit(src[i + 1] ?? ''))) {
      let j = i + 1;
      if (c === '0' && /[xX]/.test(src[j] ?? '')) {
        j++;
        while (j < src.length && /[0-9a-fA-F]/.test(src[j]!)) j++;
      } else {
        while (j < src.length && isDigit(src[j]!)) j++;
        if (src[j] === '.' && isDigit(src[j + 1] ?? '')) {
          j++;
          while (j < src.length && isDigit(src[j]!)) j++;
        }
        if (/[eE]/.test(src[j] ?? '')) {
          let k = j + 1;
          if (/[+-]/.test(src[k] ?? '')) k++;
          if (isDigit(src[k] ?? '')) {
            j = k;
            while (j < src.length && isDigit(src[j]!)) j++;
          }
        }
      }
      if (/[uU]/.test(src[j] ?? '')) j++;
      out.push({ kind: 'other', start: i, end: j, text: src.slice(i, j) });
      i = j;
    } else {
      out.push({ kind: 'punct', start: i, end: i + 1, text: c });
      i++;
    }
  }
  return out;
}

type Frame = { kind: 'message'; name: string; valueOpen: boolean } | { kind: 'other' };

/** the field types kapi knows (JSONPatch's, as kube declares them); others are dyn */
const FIELD_TYPES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  JSONPatch: { op: 'string', path: 'string', from: 'string', value: 'dyn' },
};

/** a message field's type as cel-go would name it */
export const messageFieldType = (message: string, field: string): string => FIELD_TYPES[message]?.[field] ?? 'dyn';

/** the expression with every message construction turned into a call of `__kapi_message`, and
 *  the map of its offsets back to the expression's; the same text when it has none */
export function rewriteMessageLiteralsSource(src: string): RewrittenSource {
  const tokens = tokenize(src);
  const edits: TextEdit[] = [];
  const stack: Frame[] = [];
  const punct = (t: Token | undefined, p: string) => t?.kind === 'punct' && t.text === p;
  const closeValue = (frame: Frame | undefined, at: number) => {
    if (frame?.kind === 'message' && frame.valueOpen) {
      edits.push({ at, length: 0, text: ')' });
      frame.valueOpen = false;
    }
  };

  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const top = stack[stack.length - 1];
    if (t.kind === 'ident' && !CEL_WORDS.has(t.text) && !punct(tokens[i - 1], '.')) {
      // a qualified name `a.b.c` directly followed by `{` is a message construction
      let j = i;
      while (punct(tokens[j + 1], '.') && tokens[j + 2]?.kind === 'ident') j += 2;
      if (punct(tokens[j + 1], '{')) {
        const name = tokens
          .slice(i, j + 1)
          .filter((x) => x.kind === 'ident')
          .map((x) => x.text)
          .join('.');
        const brace = tokens[j + 1]!;
        // cel-go places a message construction at its '{'
        edits.push({
          at: t.start,
          length: brace.end - t.start,
          text: `${MESSAGE_FUNCTION}(${JSON.stringify(name)}, {`,
          anchor: brace.start,
        });
        stack.push({ kind: 'message', name, valueOpen: false });
        i = j + 1;
        continue;
      }
    }
    const fieldStart = top?.kind === 'message' && (punct(tokens[i - 1], '{') || punct(tokens[i - 1], ','));
    const optional = fieldStart && punct(t, '?') && tokens[i + 1]?.kind === 'ident' && punct(tokens[i + 2], ':');
    if (optional || (fieldStart && t.kind === 'ident' && punct(tokens[i + 1], ':'))) {
      // a field name: a string key, and its value typed dyn (an optional one unwrapped at run time)
      const name = optional ? tokens[i + 1]! : t;
      const colon = optional ? tokens[i + 2]! : tokens[i + 1]!;
      const valueStart = optional ? (tokens[i + 3]?.start ?? colon.end) : (tokens[i + 2]?.start ?? colon.end);
      const key = JSON.stringify(name.text);
      const message = JSON.stringify((top as { name: string }).name);
      const text = optional ? `${key}: ${OPTIONAL_FIELD_FUNCTION}(${message}, ${key}, ` : `${key}: dyn(`;
      edits.push({ at: t.start, length: valueStart - t.start, text, anchor: colon.start });
      (top as { valueOpen: boolean }).valueOpen = true;
      i = optional ? i + 2 : i + 1;
      continue;
    }
    if (t.kind !== 'punct') continue;
    if (t.text === '{' || t.text === '(' || t.text === '[') stack.push({ kind: 'other' });
    else if (t.text === ',') closeValue(top, t.start);
    else if (t.text === '}' || t.text === ')' || t.text === ']') {
      const frame = stack.pop();
      if (frame?.kind === 'message') {
        closeValue(frame, t.start);
        edits.push({ at: t.end, length: 0, text: ')' });
      }
    }
  }
  return applyEdits(src, edits);
}

/** the expression with every message construction turned into a call of `__kapi_message`;
 *  the same text when it has none */
export function rewriteMessageLiterals(src: string): string {
  return rewriteMessageLiteralsSource(src).text;
}

/** a CEL result as JSON: message literals become their fields, ints numbers */
export function messageToJson(v: unknown): unknown {
  if (v instanceof MessageLiteral) return messageToJson(v.fields);
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(messageToJson);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), messageToJson(x)]));
  if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, messageToJson(x)]));
  }
  if (v && typeof v === 'object' && 'valueOf' in v) {
    const p = (v as { valueOf(): unknown }).valueOf();
    if (typeof p === 'bigint') return Number(p);
  }
  return v;
}
