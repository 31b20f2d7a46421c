// The parts of cel-go's strings extension (version 2, the one kube-apiserver 1.33 declares) that
// cel-js lacks: `<string>.format(<list>)` and `strings.quote(<string>)`. `<string>.reverse()`
// arrived with version 3 and is not declared, as in kube 1.33.
//
// format follows cel-go's clauses: %s (any value; lists and maps in CEL literal form), %d, %f and
// %e (with a precision, %f grouped as cel-go's default en-US printer does), %b, %o, %x and %X,
// and %%; errors in cel-go's words.

import type { Environment } from '@marcbachmann/cel-js';
import { durationNanos, isDuration, isUint } from './values.js';

class StringsNamespace {}

const DEFAULT_PRECISION = 6;

class FormatError extends Error {}

/** the name cel-go gives a value's type in its messages */
function typeName(v: unknown): string {
  if (v === null || v === undefined) return 'null_type';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'double';
  if (typeof v === 'boolean') return 'bool';
  if (isUint(v)) return 'uint';
  if (isDuration(v)) return 'google.protobuf.Duration';
  if (v instanceof Date) return 'google.protobuf.Timestamp';
  if (v instanceof Uint8Array) return 'bytes';
  if (Array.isArray(v)) return 'list';
  if (v instanceof Map || typeof v === 'object') return 'map';
  return typeof v;
}

/** Go's strconv.FormatFloat(x, 'g', -1, 64), as cel-go turns a double into a string */
export function goFloatString(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const [mantissa, exp] = x.toExponential().split('e') as [string, string];
  const e = Number(exp);
  if (e < -4 || e >= 21) return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  return x.toString();
}

function durationString(d: Parameters<typeof durationNanos>[0]): string {
  const nanos = durationNanos(d);
  const sign = nanos < 0n ? '-' : '';
  const abs = nanos < 0n ? -nanos : nanos;
  const frac = (abs % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return `${sign}${abs / 1_000_000_000n}${frac ? `.${frac}` : ''}s`;
}

function timestampString(t: Date): string {
  // RFC 3339 in UTC, without fractional zeros
  return t
    .toISOString()
    .replace(/\.000Z$/, 'Z')
    .replace(/(\.\d*?)0+Z$/, '$1Z');
}

const goQuote = (s: string): string => JSON.stringify(s);

/** `%s` of a value: lists and maps in CEL literal form with their strings quoted */
function asString(v: unknown, nested = false): string {
  if (typeof v === 'string') return nested ? goQuote(v) : v;
  if (typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (isUint(v)) return String(v.valueOf());
  if (typeof v === 'number') {
    const s = goFloatString(v);
    return nested && !Number.isFinite(v) ? goQuote(s) : s;
  }
  if (v === null || v === undefined) return 'null';
  if (isDuration(v)) return nested ? `duration(${goQuote(durationString(v))})` : durationString(v);
  if (v instanceof Date) return nested ? `timestamp(${goQuote(timestampString(v))})` : timestampString(v);
  if (v instanceof Uint8Array) {
    const s = Buffer.from(v).toString('utf8');
    return nested ? `b${goQuote(s)}` : s;
  }
  if (Array.isArray(v)) return `[${v.map((x) => asString(x, true)).join(', ')}]`;
  if (v instanceof Map || typeof v === 'object') {
    const entries: [unknown, unknown][] = v instanceof Map ? [...v.entries()] : Object.entries(v as Record<string, unknown>);
    const pairs = entries.map(([k, x]) => {
      if (typeof k !== 'string' && typeof k !== 'bigint' && typeof k !== 'boolean' && !isUint(k)) {
        throw new FormatError(`no formatting function for map key of type ${typeName(k)}`);
      }
      return [asString(k, true), asString(x, true)] as const;
    });
    pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return `{${pairs.map(([k, x]) => `${k}:${x}`).join(', ')}}`;
  }
  throw new FormatError(
    `string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given ${typeName(v)}`,
  );
}

const integerOf = (v: unknown): bigint | undefined => (typeof v === 'bigint' ? v : isUint(v) ? v.valueOf() : undefined);

const isFloatWord = (v: unknown): boolean => v === 'NaN' || v === 'Infinity' || v === '-Infinity';

function floatOf(v: unknown, clause: 'fixed-point' | 'scientific'): number {
  if (typeof v === 'number') return v;
  if (isFloatWord(v)) return Number(v);
  throw new FormatError(`${clause} clause can only be used on doubles, was given ${typeName(v)}`);
}

/** en-US digit grouping of a formatted number's integer part */
function grouped(s: string): string {
  const [whole, frac] = s.split('.') as [string, string | undefined];
  const sign = whole.startsWith('-') ? '-' : '';
  const digits = sign ? whole.slice(1) : whole;
  const withCommas = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${sign}${withCommas}${frac !== undefined ? `.${frac}` : ''}`;
}

/** Go's %.<p>f: the exact value rounded half to even (JavaScript's toFixed rounds ties up) */
function toFixedGo(x: number, p: number): string {
  const fixed = x.toFixed(p);
  if (p > 60) return fixed;
  const exact = Math.abs(x).toFixed(p + 40);
  const rest = exact.slice(exact.indexOf('.') + p + 1);
  if (!/^50*$/.test(rest)) return fixed;
  // a tie: keep the even neighbour
  const truncated = (x < 0 ? '-' : '') + exact.slice(0, exact.indexOf('.') + p + (p > 0 ? 1 : 0));
  const lastDigit = Number(truncated.replace(/\D/g, '').slice(-1));
  return lastDigit % 2 === 0 ? truncated : fixed;
}

function nonFinite(x: number): string | undefined {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '∞' : '-∞';
  return undefined;
}

function clause(verb: string, precision: number | undefined, v: unknown): string {
  switch (verb) {
    case 's':
      return asString(v);
    case 'd': {
      const n = integerOf(v);
      if (n === undefined) throw new FormatError(`decimal clause can only be used on integers, was given ${typeName(v)}`);
      return n.toString();
    }
    case 'f': {
      const x = floatOf(v, 'fixed-point');
      return nonFinite(x) ?? grouped(toFixedGo(x, precision ?? DEFAULT_PRECISION));
    }
    case 'e': {
      // cel-go passes the precision as a width: the precision stays 6
      const x = floatOf(v, 'scientific');
      const bad = nonFinite(x);
      if (bad) return bad;
      const [m, e] = x.toExponential(DEFAULT_PRECISION).split('e') as [string, string];
      const exp = Number(e);
      return `${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
    }
    case 'b': {
      if (typeof v === 'boolean') return v ? '1' : '0';
      const n = integerOf(v);
      if (n === undefined) throw new FormatError(`only integers and bools can be formatted as binary, was given ${typeName(v)}`);
      return n.toString(2);
    }
    case 'o': {
      const n = integerOf(v);
      if (n === undefined) throw new FormatError(`octal clause can only be used on integers, was given ${typeName(v)}`);
      return n.toString(8);
    }
    case 'x':
    case 'X': {
      let out: string;
      const n = integerOf(v);
      if (n !== undefined) out = n.toString(16);
      else if (typeof v === 'string') out = Buffer.from(v, 'utf8').toString('hex');
      else if (v instanceof Uint8Array) out = Buffer.from(v).toString('hex');
      else throw new FormatError(`only integers, byte buffers, and strings can be formatted as hex, was given ${typeName(v)}`);
      return verb === 'X' ? out.toUpperCase() : out;
    }
    default:
      throw new Error(`could not parse formatting clause: unrecognized formatting clause "${verb}"`);
  }
}

/** Walks a format string as cel-go does, calling `onClause` for each clause with its argument
 *  index; returns the text with the clauses' results, and how many arguments it used. */
function walkFormat(
  format: string,
  argCount: number,
  onClause: (verb: string, precision: number | undefined, index: number) => string,
): { text: string; used: number } {
  let out = '';
  let argIndex = 0;
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== '%') {
      out += c;
      continue;
    }
    if (format[i + 1] === '%') {
      out += '%';
      i++;
      continue;
    }
    if (argIndex >= argCount) throw new Error(`index ${argIndex} out of range`);
    if (i + 1 >= format.length) throw new Error('unexpected end of string');
    let j = i + 1;
    let precision: number | undefined;
    if (format[j] === '.') {
      const m = /^\.(\d*)/.exec(format.slice(j))!;
      if (j + m[0].length >= format.length)
        throw new Error('could not parse formatting clause: error while parsing precision: could not find end of precision specifier');
      precision = Number(m[1] || '0');
      j += m[0].length;
    }
    const verb = format[j]!;
    if (!'sdfebxXo'.includes(verb)) throw new Error(`could not parse formatting clause: unrecognized formatting clause "${verb}"`);
    try {
      out += onClause(verb, precision, argIndex);
    } catch (err) {
      if (err instanceof FormatError) throw new FormatClauseError(`error during formatting: ${err.message}`, argIndex);
      throw err;
    }
    argIndex++;
    i = j;
  }
  return { text: out, used: argIndex };
}

/** a clause that does not fit its argument (the index of the argument) */
export class FormatClauseError extends Error {
  constructor(
    message: string,
    readonly argIndex: number,
  ) {
    super(message);
  }
}

/** cel-go's `<string>.format(<list>)` */
export function formatString(format: string, args: readonly unknown[]): string {
  return walkFormat(format, args.length, (verb, precision, i) => clause(verb, precision, args[i])).text;
}

/** the kinds of argument each clause accepts, as cel-go's compile-time check knows them */
const CLAUSE_KINDS: Record<string, readonly string[]> = {
  d: ['int', 'uint'],
  f: ['double', 'string'],
  e: ['double', 'string'],
  b: ['int', 'uint', 'bool'],
  x: ['int', 'uint', 'string', 'bytes'],
  X: ['int', 'uint', 'string', 'bytes'],
  o: ['int', 'uint'],
};
const STRING_KINDS = [
  'list',
  'map',
  'int',
  'uint',
  'double',
  'bool',
  'string',
  'google.protobuf.Timestamp',
  'bytes',
  'google.protobuf.Duration',
  'type',
  'null_type',
];

/** cel-go's compile-time check of a literal format string over a list literal whose elements
 *  have the given types (their kinds: `list<int>` is a list); undefined when it passes */
export function checkFormatCall(format: string, argTypes: readonly string[]): FormatClauseError | Error | undefined {
  const kindOf = (t: string) => (t === 'null' ? 'null_type' : t.replace(/<.*$/, ''));
  const fits = (t: string, kinds: readonly string[]) => t === 'dyn' || kinds.includes(kindOf(t));
  try {
    const { used } = walkFormat(format, argTypes.length, (verb, _precision, i) => {
      const t = argTypes[i]!;
      const kinds = verb === 's' ? STRING_KINDS : CLAUSE_KINDS[verb]!;
      if (!fits(t, kinds)) {
        const what: Record<string, string> = {
          s: 'string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps',
          d: 'decimal clause can only be used on integers',
          f: 'fixed-point clause can only be used on doubles',
          e: 'scientific clause can only be used on doubles',
          b: 'only integers and bools can be formatted as binary',
          x: 'only integers, byte buffers, and strings can be formatted as hex',
          X: 'only integers, byte buffers, and strings can be formatted as hex',
          o: 'octal clause can only be used on integers',
        };
        throw new FormatError(`${what[verb]}, was given ${kindOf(t)}`);
      }
      return '';
    });
    if (argTypes.length > used) return new Error(`too many arguments supplied to string.format (expected ${used}, got ${argTypes.length})`);
  } catch (err) {
    return err as Error;
  }
  return undefined;
}

/** cel-go's `strings.quote(<string>)`: a double-quoted CEL string literal */
export function quoteString(s: string): string {
  const escapes: Record<string, string> = {
    '\x07': '\\a',
    '\b': '\\b',
    '\f': '\\f',
    '\n': '\\n',
    '\r': '\\r',
    '\t': '\\t',
    '\v': '\\v',
    '\\': '\\\\',
    '"': '\\"',
  };
  let out = '';
  // invalid UTF-16 (a lone surrogate) becomes U+FFFD, as cel-go sanitizes invalid runes
  const sanitized = s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  for (const ch of sanitized) out += escapes[ch] ?? ch;
  return `"${out}"`;
}

export function registerStringsLibrary(env: Environment): Environment {
  return env
    .registerType('StringsNamespace', StringsNamespace)
    .registerConstant('strings', 'StringsNamespace', new StringsNamespace())
    .registerFunction('StringsNamespace.quote(string): string', (_ns: StringsNamespace, s: string) => quoteString(s))
    .registerFunction('string.format(list): string', (f: string, args: unknown[]) => formatString(f, args));
}
