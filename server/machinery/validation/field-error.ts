// Field-level validation errors, rendered exactly as kube-apiserver renders them: each one
// becomes a StatusCause (`reason`, `message`, `field`) of a 422 `Invalid` Status, and the
// Status message joins `<field>: <body>` of every error.

import { errors, type StatusError, type StatusCause, withinCauseBudget } from '../status.js';
import { goQuote } from '../go-quote.js';

export type FieldErrorType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'InternalError'
  | 'FieldValueTypeInvalid';

const typeText: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  InternalError: 'Internal error',
  FieldValueTypeInvalid: 'Invalid value',
};

/** A value already rendered the way Go's `%#v` would (e.g. `0x0` for a uint64 zero). */
export interface RenderedValue {
  rendered: string;
}

export type BadValue = string | number | boolean | null | undefined | RenderedValue | readonly unknown[] | object;

export interface FieldError {
  type: FieldErrorType;
  field: string;
  badValue?: BadValue;
  detail?: string;
}

export { goQuote, isGoPrintable, isPrintableAscii } from '../go-quote.js';

function isRendered(v: unknown): v is RenderedValue {
  return typeof v === 'object' && v !== null && 'rendered' in v && typeof (v as RenderedValue).rendered === 'string';
}

/** Go's `%#v` for the value shapes validation reports: string lists and string maps. */
function goSyntax(v: unknown): string {
  if (Array.isArray(v)) {
    if (v.every((x) => typeof x === 'string')) return `[]string{${v.map((x) => goQuote(x as string)).join(', ')}}`;
    return JSON.stringify(v);
  }
  if (typeof v === 'object' && v !== null) {
    const entries = Object.entries(v);
    if (entries.every(([, x]) => typeof x === 'string')) {
      const sorted = entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `map[string]string{${sorted.map(([k, x]) => `${goQuote(k)}:${goQuote(x as string)}`).join(', ')}}`;
    }
    return JSON.stringify(v);
  }
  return String(v);
}

/** The part after `<field>: ` — what kube-apiserver puts in a cause's `message`. */
export function errorBody(e: FieldError): string {
  let s: string;
  switch (e.type) {
    case 'FieldValueRequired':
    case 'FieldValueForbidden':
    case 'FieldValueTooLong':
    case 'InternalError':
      s = typeText[e.type];
      break;
    default: {
      const v = e.badValue;
      let rendered: string;
      if (v === null || v === undefined) rendered = 'null';
      else if (isRendered(v)) rendered = v.rendered;
      else if (typeof v === 'string') rendered = goQuote(v);
      else if (typeof v === 'number' || typeof v === 'boolean') rendered = String(v);
      else rendered = goSyntax(v);
      s = `${typeText[e.type]}: ${rendered}`;
    }
  }
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

export function errorString(e: FieldError): string {
  return `${e.field}: ${errorBody(e)}`;
}

/** each list's text once: a value list repeated in thousands of errors shares one string */
const supportedTexts = new WeakMap<readonly string[], string>();

function supportedValues(valid: readonly string[]): string {
  if (valid.length === 0) return '';
  let text = supportedTexts.get(valid);
  if (text === undefined) {
    text = 'supported values: ' + valid.map((x) => goQuote(x)).join(', ');
    supportedTexts.set(valid, text);
  }
  return text;
}

export const fieldErrors = {
  required: (field: string, detail = ''): FieldError => ({ type: 'FieldValueRequired', field, badValue: '', detail }),
  invalid: (field: string, badValue: BadValue, detail: string): FieldError => ({ type: 'FieldValueInvalid', field, badValue, detail }),
  forbidden: (field: string, detail: string): FieldError => ({ type: 'FieldValueForbidden', field, badValue: '', detail }),
  duplicate: (field: string, badValue: BadValue): FieldError => ({ type: 'FieldValueDuplicate', field, badValue }),
  notFound: (field: string, badValue: BadValue): FieldError => ({ type: 'FieldValueNotFound', field, badValue }),
  notSupported: (field: string, badValue: BadValue, valid: readonly string[]): FieldError => ({
    type: 'FieldValueNotSupported',
    field,
    badValue,
    detail: supportedValues(valid),
  }),
  tooLong: (field: string, maxLength: number): FieldError => ({
    type: 'FieldValueTooLong',
    field,
    badValue: '<value omitted>',
    detail: maxLength >= 0 ? `may not be more than ${maxLength} bytes` : 'value is too long',
  }),
  tooMany: (field: string, actual: number, max: number): FieldError => ({
    type: 'FieldValueTooMany',
    field,
    badValue: actual,
    detail: max >= 0 ? `must have at most ${max} items` : 'has too many items',
  }),
  internal: (field: string, message: string): FieldError => ({ type: 'InternalError', field, detail: message }),
};

/** drops exact repeats (kube-apiserver's aggregate does the same for the message). The key
 *  leaves the detail out, which many errors share (a list of supported values): its text is
 *  compared once per distinct detail, not copied into a key per error. */
export function dedupe(list: readonly FieldError[]): FieldError[] {
  const seen = new Map<string, Set<string>>();
  const out: FieldError[] = [];
  for (const e of list) {
    const detail = e.detail ?? '';
    let keys = seen.get(detail);
    if (!keys) seen.set(detail, (keys = new Set()));
    const k = `${e.type}\u0000${e.field}\u0000${errorBody({ ...e, detail: '' })}`;
    if (keys.has(k)) continue;
    keys.add(k);
    out.push(e);
  }
  return out;
}

function toCause(e: FieldError): StatusCause {
  return { reason: e.type, message: errorBody(e), field: e.field };
}

export function toCauses(list: readonly FieldError[]): StatusCause[] {
  return list.map(toCause);
}

function* causesOf(list: readonly FieldError[]): Generator<StatusCause> {
  for (const e of list) yield toCause(e);
}

/** 422 Invalid for `kind` (e.g. `Pod`) in `group`, as errors.NewInvalid builds it. */
export function invalidError(group: string, kind: string, name: string, list: readonly FieldError[]): StatusError {
  const unique = dedupe(list);
  // causes are built only up to what the Status carries (each can be kilobytes)
  const causes = withinCauseBudget(causesOf(unique));
  return errors.invalid(group, kind, name, causes, unique.length - causes.length);
}

/** Joins a path the way field.Path prints it: `a.b[0][key]`. */
export function child(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

export function index(path: string, i: number | string): string {
  return `${path}[${i}]`;
}
