// Resource quantities (`500m`, `1Gi`, `1e3`) with apimachinery's semantics: parsing (the
// same errors as ParseQuantity), exact comparison, and the canonical text kube-apiserver
// writes back (`0.5` -> `500m`, `1024Mi` -> `1Gi`, `1.5k` -> `1500`). Values are exact
// rationals (a bigint times a power of ten), rounded up to nano units like Go's.

import { BoundedMemo } from './bounded-memo.js';

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

export interface Quantity {
  /** the value is unscaled × 10^exp10 */
  readonly unscaled: bigint;
  readonly exp10: number;
  readonly format: QuantityFormat;
}

export const quantityFormatError = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
export const quantitySuffixError = "unable to parse quantity's suffix";
export const quantityNumericError = 'unable to parse numeric part of quantity';

export class QuantityError extends Error {}

const suffixChars = 'eEinumkKMGTP';
const decimalSuffixes: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const binarySuffixes: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const maxInt64 = (1n << 63n) - 1n;

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

interface Parts {
  positive: boolean;
  num: string;
  denom: string;
  suffix: string;
}

/** apimachinery's scanner: sign, integer digits, fraction digits, suffix */
function scan(str: string): Parts {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') {
    pos++;
  }
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { positive, num: '0', denom: '', suffix: '' };
  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  let num = str.slice(pos, i);
  if (i >= end) return { positive, num: num || '0', denom: '', suffix: '' };
  pos = i;
  if (num === '') num = '0';
  let denom = '';
  if (str[pos] === '.') {
    pos++;
    i = pos;
    while (i < end && isDigit(str[i])) i++;
    denom = str.slice(pos, i);
    if (i >= end) return { positive, num, denom, suffix: '' };
    pos = i;
  }
  const suffixStart = pos;
  i = pos;
  while (i < end && suffixChars.includes(str[i] as string)) i++;
  if (i >= end) return { positive, num, denom, suffix: str.slice(suffixStart) };
  pos = i;
  if (str[pos] === '-' || str[pos] === '+') pos++;
  for (i = pos; i < end; i++) if (!isDigit(str[i])) throw new QuantityError(quantityFormatError);
  return { positive, num, denom, suffix: str.slice(suffixStart) };
}

function interpretSuffix(suffix: string): { base: 2 | 10; exponent: number; format: QuantityFormat } {
  if (suffix in decimalSuffixes) return { base: 10, exponent: decimalSuffixes[suffix] as number, format: 'DecimalSI' };
  if (suffix in binarySuffixes) return { base: 2, exponent: binarySuffixes[suffix] as number, format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E') && /^[+-]?\d+$/.test(suffix.slice(1))) {
    return { base: 10, exponent: Number(suffix.slice(1)), format: 'DecimalExponent' };
  }
  throw new QuantityError(quantitySuffixError);
}

const pow10 = (n: number): bigint => 10n ** BigInt(n);

/** rounds away from zero to at most nano precision (exp10 >= -9) */
function roundToNano(unscaled: bigint, exp10: number): [bigint, number] {
  if (exp10 >= -9 || unscaled === 0n) return [unscaled, exp10];
  const div = pow10(-9 - exp10);
  const neg = unscaled < 0n;
  const abs = neg ? -unscaled : unscaled;
  let q = abs / div;
  if (abs % div !== 0n) q += 1n;
  return [neg ? -q : q, -9];
}

/** ParseQuantity: throws QuantityError with apimachinery's message */
export function parseQuantity(input: string | number): Quantity {
  const str = typeof input === 'number' ? numberText(input) : input.trim();
  if (str.length === 0) throw new QuantityError(quantityFormatError);
  if (str === '0') return { unscaled: 0n, exp10: 0, format: 'DecimalSI' };
  const p = scan(str);
  const { base, exponent, format: parsedFormat } = interpretSuffix(p.suffix);
  let format = parsedFormat;
  let unscaled = BigInt(p.num + p.denom);
  let exp10 = -p.denom.length;
  if (base === 10) exp10 += exponent;
  else unscaled *= 1n << BigInt(exponent);
  [unscaled, exp10] = roundToNano(unscaled, exp10);
  if (format === 'BinarySI') {
    if (compareParts(unscaled, exp10, maxInt64, 0) > 0) [unscaled, exp10] = [maxInt64, 0];
    if (compareParts(unscaled, exp10, 1n, 0) < 0 && unscaled > 0n) format = 'DecimalSI';
  }
  return { unscaled: p.positive ? unscaled : -unscaled, exp10, format };
}

/** how Go's encoder writes a JSON number that reached us as a JS number */
function numberText(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return BigInt(n).toString();
  return String(n).replace('e+', 'e');
}

/** undefined when `v` parses, else ParseQuantity's error text */
export function quantityError(v: unknown): string | undefined {
  if (typeof v !== 'string' && typeof v !== 'number') return quantityFormatError;
  try {
    parseQuantity(v);
    return undefined;
  } catch (e) {
    if (e instanceof QuantityError) return e.message;
    throw e;
  }
}

function compareParts(a: bigint, ea: number, b: bigint, eb: number): number {
  const e = Math.min(ea, eb);
  const x = a * pow10(ea - e);
  const y = b * pow10(eb - e);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** -1, 0 or 1 as a is less than, equal to or greater than b */
export function compareQuantities(a: Quantity, b: Quantity): number {
  return compareParts(a.unscaled, a.exp10, b.unscaled, b.exp10);
}

export function quantitySign(q: Quantity): number {
  return q.unscaled < 0n ? -1 : q.unscaled > 0n ? 1 : 0;
}

/** whether the value is a whole number (kube's MilliValue() % 1000 == 0) */
export function isWholeQuantity(q: Quantity): boolean {
  if (q.exp10 >= 0) return true;
  return q.unscaled % pow10(-q.exp10) === 0n;
}

/** Value(): rounded up to a whole number (away from zero) */
export function quantityValue(q: Quantity): bigint {
  if (q.exp10 >= 0) return q.unscaled * pow10(q.exp10);
  const div = pow10(-q.exp10);
  const neg = q.unscaled < 0n;
  const abs = neg ? -q.unscaled : q.unscaled;
  let v = abs / div;
  if (abs % div !== 0n) v += 1n;
  return neg ? -v : v;
}

const decimalSuffixFor: Record<number, string> = {
  [-9]: 'n',
  [-6]: 'u',
  [-3]: 'm',
  0: '',
  3: 'k',
  6: 'M',
  9: 'G',
  12: 'T',
  15: 'P',
  18: 'E',
};
const binarySuffixFor: Record<number, string> = { 1: 'Ki', 2: 'Mi', 3: 'Gi', 4: 'Ti', 5: 'Pi', 6: 'Ei' };

/** The canonical text (Quantity.String() / what MarshalJSON writes). */
export function formatQuantity(q: Quantity): string {
  if (q.unscaled === 0n) return '0';
  let format = q.format;
  if (format === 'BinarySI') {
    const small = compareParts(q.unscaled, q.exp10, -1024n, 0) > 0 && compareParts(q.unscaled, q.exp10, 1024n, 0) < 0;
    if (small || !isWholeQuantity(q)) format = 'DecimalSI';
  }
  if (format === 'BinarySI') {
    let v = quantityValue(q);
    let k = 0;
    while (v % 1024n === 0n) {
      v /= 1024n;
      k++;
    }
    return v.toString() + (binarySuffixFor[k] ?? '');
  }
  let amount = q.unscaled;
  let exp = q.exp10;
  while (amount % 10n === 0n) {
    amount /= 10n;
    exp++;
  }
  while (exp % 3 !== 0) {
    amount *= 10n;
    exp--;
  }
  let suffix: string;
  if (format === 'DecimalExponent') suffix = exp === 0 ? '' : `e${exp}`;
  else suffix = decimalSuffixFor[exp] ?? '';
  return amount.toString() + suffix;
}

/** RoundUp(scale): at most 10^exp10 precision, rounding away from zero */
export function roundUpQuantity(q: Quantity, exp10: number): Quantity {
  if (q.exp10 >= exp10 || q.unscaled === 0n) return q;
  const div = pow10(exp10 - q.exp10);
  const neg = q.unscaled < 0n;
  const abs = neg ? -q.unscaled : q.unscaled;
  let v = abs / div;
  if (abs % div !== 0n) v += 1n;
  return { unscaled: neg ? -v : v, exp10, format: q.format };
}

/** the canonical text of a quantity value (rounded up to 10^roundTo when given), or the value
 *  unchanged when it does not parse */
export function canonicalQuantity(v: unknown, roundTo?: number): unknown {
  if (typeof v !== 'string' && typeof v !== 'number') return v;
  // objects of one kind repeat the same few quantities (`100m`, `128Mi`) write after write
  if (typeof v === 'string' && v.length > CANONICAL_TEXT_KEY_MAX) return canonicalQuantityOnce(v, roundTo);
  const key = `${typeof v === 'string' ? 's' : 'n'}${roundTo ?? ''}:${v}`;
  return canonicalTexts.get(key, () => canonicalQuantityOnce(v, roundTo));
}

const CANONICAL_TEXTS_MAX = 4096;
const CANONICAL_TEXT_KEY_MAX = 64;
const canonicalTexts = new BoundedMemo<unknown>(CANONICAL_TEXTS_MAX);

function canonicalQuantityOnce(v: string | number, roundTo: number | undefined): unknown {
  try {
    const q = parseQuantity(v);
    return formatQuantity(roundTo === undefined ? q : roundUpQuantity(q, roundTo));
  } catch (e) {
    if (e instanceof QuantityError) return v;
    throw e;
  }
}
