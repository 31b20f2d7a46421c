// Label selectors: the `labelSelector` query string grammar of kube-apiserver (`a=b`,
// `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, `a>1`, `a<1`, comma = AND), and the
// structured `metav1.LabelSelector` (matchLabels / matchExpressions). Error texts are
// kube-apiserver's, so a client sees the same 400 message.

import { errors, type StatusError } from '../machinery/status.js';
import { errorString, fieldErrors, type FieldError } from '../machinery/validation/field-error.js';
import { isQualifiedName, isValidLabelValue } from '../machinery/validation/names.js';

export type LabelOperator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

const binaryOperators = ['in', 'notin', '=', '==', '!=', 'gt', 'lt'];
const validOperators = [...binaryOperators, 'exists', '!'];

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  /** sorted and unique for `in`/`notin`; one value for equality and gt/lt; none for exists */
  readonly values: readonly string[];
}

export type Labels = Readonly<Record<string, string>> | undefined | null;

/** An error in a selector; `message` is what kube-apiserver puts in the 400. */
export class SelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SelectorError';
  }
  toStatus(): StatusError {
    return errors.badRequest(this.message);
  }
}

function has(labels: Labels, key: string): boolean {
  return labels !== undefined && labels !== null && Object.hasOwn(labels, key);
}

function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(s)) return undefined;
  const v = BigInt(s);
  if (v > 9223372036854775807n || v < -9223372036854775808n) return undefined;
  return v;
}

export function requirementMatches(r: LabelRequirement, labels: Labels): boolean {
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return has(labels, r.key) && r.values.includes(labels![r.key]);
    case 'notin':
    case '!=':
      return !has(labels, r.key) || !r.values.includes(labels![r.key]);
    case 'exists':
      return has(labels, r.key);
    case '!':
      return !has(labels, r.key);
    case 'gt':
    case 'lt': {
      if (!has(labels, r.key) || r.values.length !== 1) return false;
      const actual = parseInt64(labels![r.key]);
      const wanted = parseInt64(r.values[0]);
      if (actual === undefined || wanted === undefined) return false;
      return r.operator === 'gt' ? actual > wanted : actual < wanted;
    }
  }
}

function requirementString(r: LabelRequirement): string {
  let s = r.operator === '!' ? '!' + r.key : r.key;
  switch (r.operator) {
    case 'exists':
    case '!':
      return s;
    case 'in':
      s += ' in ';
      break;
    case 'notin':
      s += ' notin ';
      break;
    case 'gt':
      s += '>';
      break;
    case 'lt':
      s += '<';
      break;
    default:
      s += r.operator;
  }
  const vals = r.values.length === 1 ? r.values[0] : [...r.values].sort().join(',');
  return r.operator === 'in' || r.operator === 'notin' ? `${s}(${vals})` : s + vals;
}

export class LabelSelector {
  /** matches nothing (a nil metav1.LabelSelector) */
  static readonly nothing = new LabelSelector([], true);
  static readonly everything = new LabelSelector([]);

  private constructor(
    readonly requirements: readonly LabelRequirement[],
    private readonly matchesNothing = false,
  ) {}

  /** requirements are kept sorted by key, as kube-apiserver keeps them */
  static of(requirements: readonly LabelRequirement[]): LabelSelector {
    const sorted = [...requirements].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return new LabelSelector(sorted);
  }

  /** true when it selects everything */
  empty(): boolean {
    return !this.matchesNothing && this.requirements.length === 0;
  }

  matches(labels: Labels): boolean {
    if (this.matchesNothing) return false;
    return this.requirements.every((r) => requirementMatches(r, labels));
  }

  /** the value `key` must equal for a match, when the selector pins one */
  requiresExactMatch(key: string): string | undefined {
    const r = this.requirements.find((x) => x.key === key);
    if (!r) return undefined;
    if ((r.operator === '=' || r.operator === '==' || r.operator === 'in') && r.values.length === 1) return r.values[0];
    return undefined;
  }

  add(...more: LabelRequirement[]): LabelSelector {
    return LabelSelector.of([...this.requirements, ...more]);
  }

  toString(): string {
    return this.requirements.map(requirementString).join(',');
  }
}

// ---- requirement construction (validation) ----

function aggregate(list: FieldError[]): string {
  const msgs = [...new Set(list.map(errorString))];
  return msgs.length === 1 ? msgs[0] : `[${msgs.join(', ')}]`;
}

/** kube-apiserver's field.Path rendering of an unset root path */
const nilPath = '<nil>';

function keyError(key: string, path: string): FieldError | undefined {
  const msgs = isQualifiedName(key);
  return msgs.length ? fieldErrors.invalid(path, key, msgs.join('; ')) : undefined;
}

/** Builds a validated requirement; throws SelectorError with kube-apiserver's text. */
export function newRequirement(key: string, operator: LabelOperator, values: readonly string[], path = ''): LabelRequirement {
  const errs: FieldError[] = [];
  const ke = keyError(key, path ? `${path}.key` : 'key');
  if (ke) errs.push(ke);
  const valuesPath = path ? `${path}.values` : 'values';
  switch (operator) {
    case 'in':
    case 'notin':
      if (values.length === 0)
        errs.push(fieldErrors.invalid(valuesPath, [...values], "for 'in', 'notin' operators, values set can't be empty"));
      break;
    case '=':
    case '==':
    case '!=':
      if (values.length !== 1)
        errs.push(fieldErrors.invalid(valuesPath, [...values], 'exact-match compatibility requires one single value'));
      break;
    case 'exists':
    case '!':
      if (values.length !== 0)
        errs.push(fieldErrors.invalid(valuesPath, [...values], 'values set must be empty for exists and does not exist'));
      break;
    case 'gt':
    case 'lt':
      if (values.length !== 1)
        errs.push(fieldErrors.invalid(valuesPath, [...values], "for 'Gt', 'Lt' operators, exactly one value is required"));
      values.forEach((v, i) => {
        if (parseInt64(v) === undefined) {
          errs.push(fieldErrors.invalid(`${valuesPath}[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
        }
      });
      break;
    default:
      errs.push(fieldErrors.notSupported(path ? `${path}.operator` : 'operator', String(operator), validOperators));
  }
  values.forEach((v, i) => {
    const msgs = isValidLabelValue(v);
    if (msgs.length) errs.push(fieldErrors.invalid(`${valuesPath}[${i}][${key}]`, v, msgs.join('; ')));
  });
  if (errs.length) throw new SelectorError(aggregate(errs));
  return { key, operator, values: [...values] };
}

// ---- the string grammar ----

type Token = 'error' | 'eos' | ')' | ',' | '!' | '==' | '=' | '>' | 'identifier' | 'in' | '<' | '!=' | 'notin' | '(';

const literalTokens = new Map<string, Token>([
  [')', ')'],
  [',', ','],
  ['!', '!'],
  ['==', '=='],
  ['=', '='],
  ['>', '>'],
  ['in', 'in'],
  ['<', '<'],
  ['!=', '!='],
  ['notin', 'notin'],
  ['(', '('],
]);

interface Item {
  tok: Token;
  lit: string;
}

function isWhitespace(ch: string): boolean {
  return ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
}

function isSpecial(ch: string): boolean {
  return '=!(),><'.includes(ch);
}

/** Splits the selector into tokens the way kube-apiserver's lexer does (byte-wise). */
function lex(s: string): Item[] {
  const items: Item[] = [];
  let pos = 0;
  for (;;) {
    while (pos < s.length && isWhitespace(s[pos])) pos++;
    if (pos >= s.length) {
      items.push({ tok: 'eos', lit: '' });
      return items;
    }
    if (isSpecial(s[pos])) {
      let buf = '';
      let last: Item | undefined;
      while (pos < s.length && isSpecial(s[pos])) {
        buf += s[pos];
        const t = literalTokens.get(buf);
        if (t) {
          last = { tok: t, lit: buf };
          pos++;
        } else if (last) {
          break;
        } else {
          pos++;
        }
      }
      items.push(last ?? { tok: 'error', lit: `error expected: keyword found '${buf}'` });
      continue;
    }
    let buf = '';
    while (pos < s.length && !isSpecial(s[pos]) && !isWhitespace(s[pos])) buf += s[pos++];
    const t = literalTokens.get(buf);
    items.push({ tok: t ?? 'identifier', lit: buf });
  }
}

class Parser {
  private pos = 0;
  constructor(private readonly items: Item[]) {}

  /** in value context the keywords `in`/`notin` are plain identifiers */
  private peek(values: boolean): Item {
    const it = this.items[this.pos];
    return values && (it.tok === 'in' || it.tok === 'notin') ? { tok: 'identifier', lit: it.lit } : it;
  }

  private next(values: boolean): Item {
    const it = this.peek(values);
    this.pos++;
    return it;
  }

  parse(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    for (;;) {
      const { tok, lit } = this.peek(true);
      if (tok === 'identifier' || tok === '!') {
        let r: LabelRequirement;
        try {
          r = this.parseRequirement();
        } catch (e) {
          if (e instanceof SelectorError) throw new SelectorError(`unable to parse requirement: ${e.message}`);
          throw e;
        }
        reqs.push(r);
        const after = this.next(true);
        if (after.tok === 'eos') return reqs;
        if (after.tok === ',') {
          const t2 = this.peek(true);
          if (t2.tok !== 'identifier' && t2.tok !== '!') throw new SelectorError(`found '${t2.lit}', expected: identifier after ','`);
          continue;
        }
        throw new SelectorError(`found '${after.lit}', expected: ',' or 'end of string'`);
      }
      if (tok === 'eos') return reqs;
      throw new SelectorError(`found '${lit}', expected: !, identifier, or 'end of string'`);
    }
  }

  private parseRequirement(): LabelRequirement {
    let first = this.next(true);
    let op: LabelOperator | undefined;
    if (first.tok === '!') {
      op = '!';
      first = this.next(true);
    }
    if (first.tok !== 'identifier') throw new SelectorError(`found '${first.lit}', expected: identifier`);
    const key = first.lit;
    const ke = keyError(key, nilPath);
    if (ke) throw new SelectorError(errorString(ke));
    const la = this.peek(true).tok;
    if (la === 'eos' || la === ',') {
      if (op !== '!') op = 'exists';
    }
    if (op === 'exists' || op === '!') return newRequirement(key, op, []);
    const opItem = this.next(false);
    switch (opItem.tok) {
      case 'in':
        op = 'in';
        break;
      case '=':
        op = '=';
        break;
      case '==':
        op = '==';
        break;
      case '>':
        op = 'gt';
        break;
      case '<':
        op = 'lt';
        break;
      case 'notin':
        op = 'notin';
        break;
      case '!=':
        op = '!=';
        break;
      default:
        throw new SelectorError(`found '${opItem.lit}', expected: ${binaryOperators.join(', ')}`);
    }
    const values = op === 'in' || op === 'notin' ? this.parseValues() : this.parseExactValue();
    return newRequirement(key, op, [...values].sort());
  }

  private parseValues(): Set<string> {
    const open = this.next(true);
    if (open.tok !== '(') throw new SelectorError(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.peek(true);
    if (tok === 'identifier' || tok === ',') {
      const set = this.parseIdentifiers();
      if (this.next(true).tok !== ')') throw new SelectorError(`found '${lit}', expected: ')'`);
      return set;
    }
    if (tok === ')') {
      this.next(true);
      return new Set(['']);
    }
    throw new SelectorError(`found '${lit}', expected: ',', ')' or identifier`);
  }

  private parseIdentifiers(): Set<string> {
    const set = new Set<string>();
    for (;;) {
      const { tok, lit } = this.next(true);
      if (tok === 'identifier') {
        set.add(lit);
        const t2 = this.peek(true);
        if (t2.tok === ',') continue;
        if (t2.tok === ')') return set;
        throw new SelectorError(`found '${t2.lit}', expected: ',' or ')'`);
      }
      if (tok === ',') {
        // empty values: "(,a)", "(a,)", "(a,,b)"
        if (set.size === 0) set.add('');
        const t2 = this.peek(true);
        if (t2.tok === ')') {
          set.add('');
          return set;
        }
        if (t2.tok === ',') {
          this.next(true);
          set.add('');
        }
        continue;
      }
      throw new SelectorError(`found '${lit}', expected: ',', or identifier`);
    }
  }

  private parseExactValue(): Set<string> {
    const la = this.peek(true).tok;
    if (la === 'eos' || la === ',') return new Set(['']);
    const { tok, lit } = this.next(true);
    if (tok === 'identifier') return new Set([lit]);
    throw new SelectorError(`found '${lit}', expected: identifier`);
  }
}

/** Parses a `labelSelector` query value; throws SelectorError with kube-apiserver's text. */
export function parseLabelSelector(selector: string): LabelSelector {
  return LabelSelector.of(new Parser(lex(selector)).parse());
}

/** Parses a `labelSelector` query value; throws a 400 StatusError. */
export function parseLabelSelectorOrBadRequest(selector: string | undefined): LabelSelector {
  if (!selector) return LabelSelector.everything;
  try {
    return parseLabelSelector(selector);
  } catch (e) {
    if (e instanceof SelectorError) throw e.toStatus();
    throw e;
  }
}

// ---- metav1.LabelSelector ----

export interface LabelSelectorRequirementObject {
  key: string;
  operator: string;
  values?: string[];
}

export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirementObject[];
}

/** metav1.LabelSelectorAsSelector: null/undefined selects nothing, `{}` everything. */
export function labelSelectorFromObject(sel: LabelSelectorObject | null | undefined): LabelSelector {
  if (sel === null || sel === undefined) return LabelSelector.nothing;
  const matchLabels = Object.entries(sel.matchLabels ?? {});
  const exprs = sel.matchExpressions ?? [];
  if (matchLabels.length + exprs.length === 0) return LabelSelector.everything;
  const reqs: LabelRequirement[] = [];
  for (const [k, v] of matchLabels) reqs.push(newRequirement(k, '=', [v]));
  for (const e of exprs) {
    let op: LabelOperator;
    switch (e.operator) {
      case 'In':
        op = 'in';
        break;
      case 'NotIn':
        op = 'notin';
        break;
      case 'Exists':
        op = 'exists';
        break;
      case 'DoesNotExist':
        op = '!';
        break;
      default:
        throw new SelectorError(`"${e.operator}" is not a valid label selector operator`);
    }
    reqs.push(newRequirement(e.key, op, [...(e.values ?? [])]));
  }
  return LabelSelector.of(reqs);
}

/** metav1 validation of a LabelSelector object (ValidateLabelSelector), as field errors. */
export function validateLabelSelectorObject(sel: LabelSelectorObject | null | undefined, path: string): FieldError[] {
  if (!sel) return [];
  const out: FieldError[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) {
    for (const m of isQualifiedName(k)) out.push(fieldErrors.invalid(`${path}.matchLabels`, k, m));
    for (const m of isValidLabelValue(v)) out.push(fieldErrors.invalid(`${path}.matchLabels`, v, m));
  }
  (sel.matchExpressions ?? []).forEach((e, i) => {
    const p = `${path}.matchExpressions[${i}]`;
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) out.push(fieldErrors.required(`${p}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0)
          out.push(fieldErrors.forbidden(`${p}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        break;
      default:
        out.push(fieldErrors.invalid(`${p}.operator`, e.operator, 'not a valid selector operator'));
    }
    for (const m of isQualifiedName(e.key)) out.push(fieldErrors.invalid(`${p}.key`, e.key, m));
    values.forEach((v, j) => {
      for (const m of isValidLabelValue(v)) out.push(fieldErrors.invalid(`${p}.values[${j}]`, v, m));
    });
  });
  return out;
}

/** A LabelSelector object as the string form (e.g. for a Scale's status.selector). */
export function labelSelectorObjectToString(sel: LabelSelectorObject | null | undefined): string {
  return labelSelectorFromObject(sel).toString();
}
