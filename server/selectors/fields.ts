// Field selectors: the `fieldSelector` query grammar of kube-apiserver (`f=v`, `f==v`,
// `f!=v`, comma = AND, `\` escapes `\`, `,` and `=` in values), plus the per-kind check of
// which field labels a kind supports (field-sets.ts). Error texts are kube-apiserver's.

import { SelectorError } from './labels.js';

export type FieldOperator = '=' | '==' | '!=';

export interface FieldRequirement {
  readonly field: string;
  readonly operator: FieldOperator;
  readonly value: string;
}

/** The fields of one object that selectors can test; a missing field reads as ''. */
export type FieldSet = Readonly<Record<string, string>>;

export class FieldSelector {
  static readonly everything = new FieldSelector([]);

  private constructor(readonly requirements: readonly FieldRequirement[]) {}

  static of(requirements: readonly FieldRequirement[]): FieldSelector {
    return new FieldSelector([...requirements]);
  }

  empty(): boolean {
    return this.requirements.length === 0;
  }

  matches(fields: FieldSet): boolean {
    return this.requirements.every((r) => {
      const actual = fields[r.field] ?? '';
      return r.operator === '!=' ? actual !== r.value : actual === r.value;
    });
  }

  /** the value `field` must equal for a match, when the selector pins one */
  requiresExactMatch(field: string): string | undefined {
    for (const r of this.requirements) {
      if (r.field === field && r.operator !== '!=') return r.value;
    }
    return undefined;
  }

  /** rewrites every requirement (kube-apiserver's per-kind field label conversion) */
  transform(fn: (field: string, value: string) => [string, string]): FieldSelector {
    return new FieldSelector(
      this.requirements.map((r) => {
        const [field, value] = fn(r.field, r.value);
        return { field, operator: r.operator, value };
      }),
    );
  }

  toString(): string {
    return this.requirements.map((r) => `${r.field}${r.operator === '!=' ? '!=' : '='}${escapeFieldValue(r.value)}`).join(',');
  }
}

export function escapeFieldValue(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/,/g, '\\,').replace(/=/g, '\\=');
}

export function unescapeFieldValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c === '\\' || c === ',' || c === '=') out += c;
      else throw new SelectorError(`invalid field selector: invalid escape sequence: \\${c}`);
      inSlash = false;
      continue;
    }
    if (c === '\\') inSlash = true;
    else if (c === ',' || c === '=') {
      // Go prints the rune with %v: its code point number
      throw new SelectorError(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    } else out += c;
  }
  if (inSlash) throw new SelectorError('invalid field selector: invalid escape sequence: \\');
  return out;
}

/** splits on commas that are not escaped */
function splitTerms(s: string): string[] {
  if (s.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

const termOperators: FieldOperator[] = ['!=', '==', '='];

function splitTerm(term: string): [string, FieldOperator, string] | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of termOperators) {
      if (term.startsWith(op, i)) return [term.slice(0, i), op, term.slice(i + op.length)];
    }
  }
  return undefined;
}

/** Parses a `fieldSelector` query value; throws SelectorError with kube-apiserver's text. */
export function parseFieldSelector(selector: string): FieldSelector {
  // Go sorts the terms with byte order; so do we
  const parts = splitTerms(selector).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const reqs: FieldRequirement[] = [];
  for (const part of parts) {
    if (part === '') continue;
    const split = splitTerm(part);
    if (!split) throw new SelectorError(`invalid selector: '${selector}'; can't understand '${part}'`);
    const [field, operator, raw] = split;
    reqs.push({ field, operator, value: unescapeFieldValue(raw) });
  }
  return FieldSelector.of(reqs);
}

/** Parses a `fieldSelector` query value; throws a 400 StatusError. */
export function parseFieldSelectorOrBadRequest(selector: string | undefined): FieldSelector {
  if (!selector) return FieldSelector.everything;
  try {
    return parseFieldSelector(selector);
  } catch (e) {
    if (e instanceof SelectorError) throw e.toStatus();
    throw e;
  }
}
