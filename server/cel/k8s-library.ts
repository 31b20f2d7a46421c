// Kubernetes' CEL libraries that cel-js lacks, for any kapi environment that wants them
// (admission policies use them; authentication and authorization expressions could):
//   regex:    string.find(re), string.findAll(re[, n])            (RE2, via re2js)
//   strings:  string.replace(old, new[, n]), string.charAt(i)     (the rest is in cel-js)
//   lists:    list.isSorted(), sum() (int, uint, double, duration), min() and max() (any
//             comparable element), indexOf(x), lastIndexOf(x)
//   quantity: quantity(s), isQuantity(s), q.isInteger(), asInteger(), asApproximateFloat(),
//             sign(), compareTo(q), isGreaterThan(q), isLessThan(q), add(q|int), sub(q|int)
// Errors are thrown with the messages kube's libraries give, where they have one.

import type { Environment } from '@marcbachmann/cel-js';
import { RE2JS } from 're2js';
import { compareQuantities, isWholeQuantity, parseQuantity, quantitySign, quantityValue, type Quantity } from '../machinery/quantity.js';
import { durationFromNanos, durationNanos, isDuration, isUint, toUint, type CelDuration } from './values.js';
import { parses } from './parses.js';

const regexCache = new Map<string, RE2JS>();
function re2(pattern: string): RE2JS {
  let re = regexCache.get(pattern);
  if (!re) {
    re = RE2JS.compile(pattern);
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(pattern, re);
  }
  return re;
}

function findAll(s: string, pattern: string, limit: bigint = -1n): string[] {
  const out: string[] = [];
  if (limit === 0n) return out;
  const m = re2(pattern).matcher(s);
  while (m.find()) {
    out.push(m.group() ?? '');
    if (limit > 0n && BigInt(out.length) >= limit) break;
  }
  return out;
}

function replace(s: string, from: string, to: string, n: bigint = -1n): string {
  if (n < 0n) return s.split(from).join(to);
  let out = '';
  let rest = s;
  for (let i = 0n; i < n; i++) {
    const at = rest.indexOf(from);
    if (at < 0) break;
    out += rest.slice(0, at) + to;
    rest = rest.slice(at + from.length);
    if (from === '') {
      if (rest === '') return out;
      out += rest[0];
      rest = rest.slice(1);
    }
  }
  return out + rest;
}

function charAt(s: string, i: bigint): string {
  const chars = [...s];
  if (i < 0n || i > BigInt(chars.length)) throw new Error(`index out of range: ${i}`);
  return chars[Number(i)] ?? '';
}

// ---- lists ----

type Comparable = bigint | number | string | boolean;

function compare(a: unknown, b: unknown): number {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) {
    return Number(a) < Number(b) ? -1 : Number(a) > Number(b) ? 1 : 0;
  }
  if (typeof a === typeof b && (typeof a === 'string' || typeof a === 'boolean')) {
    return (a as Comparable) < (b as Comparable) ? -1 : (a as Comparable) > (b as Comparable) ? 1 : 0;
  }
  if (a instanceof QuantityValue && b instanceof QuantityValue) return compareQuantities(a.q, b.q);
  if (isDuration(a) && isDuration(b)) return sign(durationNanos(a) - durationNanos(b));
  if (a instanceof Date && b instanceof Date) return sign(a.getTime() - b.getTime());
  if (a instanceof Uint8Array && b instanceof Uint8Array) return compareBytes(a, b);
  if (isUint(a) && isUint(b)) return compare(a.valueOf(), b.valueOf());
  throw new Error('no such overload');
}

const sign = (n: number | bigint): number => (n < 0 ? -1 : n > 0 ? 1 : 0);

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return sign(a[i]! - b[i]!);
  return sign(a.length - b.length);
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  try {
    return compare(a, b) === 0;
  } catch {
    return (
      JSON.stringify(a, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)) ===
      JSON.stringify(b, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))
    );
  }
}

function extreme(list: unknown[], sign: number, name: string): unknown {
  if (list.length === 0) throw new Error(`${name} called on empty list`);
  return list.reduce((best, x) => (compare(x, best) * sign > 0 ? x : best));
}

/** a sum of a list whose element type is only known at run time (a list of dyn) */
function sum(list: unknown[]): unknown {
  if (list.length === 0) return 0n;
  if (list.every((x) => typeof x === 'bigint')) return (list as bigint[]).reduce((a, b) => a + b, 0n);
  if (list.every((x) => typeof x === 'number')) return (list as number[]).reduce((a, b) => a + b, 0);
  if (list.every(isDuration)) return sumDurations(list);
  if (list.every(isUint)) return toUint(list.reduce((a: bigint, b) => a + b.valueOf(), 0n));
  throw new Error('no such overload');
}

const sumDurations = (list: CelDuration[]): CelDuration => durationFromNanos(list.reduce((a, d) => a + durationNanos(d), 0n));

// ---- quantity ----

/** a resource quantity as a CEL value */
export class QuantityValue {
  constructor(readonly q: Quantity) {}
}

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

function addQuantities(a: Quantity, b: Quantity, sign: 1n | -1n): Quantity {
  const e = Math.min(a.exp10, b.exp10);
  const x = a.unscaled * pow10(a.exp10 - e);
  const y = b.unscaled * pow10(b.exp10 - e);
  return { unscaled: x + sign * y, exp10: e, format: a.format };
}

const intQuantity = (n: bigint): Quantity => ({ unscaled: n, exp10: 0, format: 'DecimalSI' });

function toQuantity(s: string): QuantityValue {
  try {
    return new QuantityValue(parseQuantity(s));
  } catch (err) {
    throw new Error(`invalid quantity: ${(err as Error).message}`);
  }
}

const MAX_INT64 = (1n << 63n) - 1n;
const MIN_INT64 = -(1n << 63n);

function asInteger(v: QuantityValue): bigint {
  if (!isWholeQuantity(v.q)) throw new Error('cannot convert value to integer');
  const n = quantityValue(v.q);
  if (n > MAX_INT64 || n < MIN_INT64) throw new Error('cannot convert value to integer');
  return n;
}

function asFloat(v: QuantityValue): number {
  return Number(v.q.unscaled) * 10 ** v.q.exp10;
}

/** registers the libraries above on an environment (before it is cloned or used) */
export function registerKubernetesLibraries(env: Environment): Environment {
  return env
    .registerFunction('string.find(string): string', (s: string, p: string) => findAll(s, p, 1n)[0] ?? '')
    .registerFunction('string.findAll(string): list<string>', (s: string, p: string) => findAll(s, p))
    .registerFunction('string.findAll(string, int): list<string>', (s: string, p: string, n: bigint) => findAll(s, p, n))
    .registerFunction('string.replace(string, string): string', (s: string, a: string, b: string) => replace(s, a, b))
    .registerFunction('string.replace(string, string, int): string', (s: string, a: string, b: string, n: bigint) => replace(s, a, b, n))
    .registerFunction('string.charAt(int): string', charAt)
    .registerFunction('list.isSorted(): bool', (l: unknown[]) => l.every((x, i) => i === 0 || compare(l[i - 1], x) <= 0))
    .registerFunction('list<int>.sum(): int', (l: bigint[]) => l.reduce((a, b) => a + b, 0n))
    .registerFunction('list<uint>.sum(): uint', (l: { valueOf(): bigint }[]) => toUint(l.reduce((a: bigint, b) => a + b.valueOf(), 0n)))
    .registerFunction('list<double>.sum(): double', (l: number[]) => l.reduce((a, b) => a + b, 0))
    .registerFunction('list<google.protobuf.Duration>.sum(): google.protobuf.Duration', sumDurations)
    .registerFunction('list<dyn>.sum(): dyn', sum)
    .registerFunction('list<A>.min(): A', (l: unknown[]) => extreme(l, -1, 'min'))
    .registerFunction('list<A>.max(): A', (l: unknown[]) => extreme(l, 1, 'max'))
    .registerFunction('list.indexOf(dyn): int', (l: unknown[], x: unknown) => BigInt(l.findIndex((y) => equal(y, x))))
    .registerFunction('list.lastIndexOf(dyn): int', (l: unknown[], x: unknown) => {
      for (let i = l.length - 1; i >= 0; i--) if (equal(l[i], x)) return BigInt(i);
      return -1n;
    })
    .registerType('Quantity', QuantityValue)
    .registerOperator('Quantity == Quantity', (a: QuantityValue, b: QuantityValue) => compareQuantities(a.q, b.q) === 0)
    .registerFunction('quantity(string): Quantity', toQuantity)
    .registerFunction('isQuantity(string): bool', (s: string) => parses(() => parseQuantity(s)))
    .registerFunction('Quantity.isInteger(): bool', (v: QuantityValue) => parses(() => asInteger(v)))
    .registerFunction('Quantity.asInteger(): int', asInteger)
    .registerFunction('Quantity.asApproximateFloat(): double', asFloat)
    .registerFunction('Quantity.sign(): int', (v: QuantityValue) => BigInt(quantitySign(v.q)))
    .registerFunction('Quantity.compareTo(Quantity): int', (a: QuantityValue, b: QuantityValue) => BigInt(compareQuantities(a.q, b.q)))
    .registerFunction('Quantity.isGreaterThan(Quantity): bool', (a: QuantityValue, b: QuantityValue) => compareQuantities(a.q, b.q) > 0)
    .registerFunction('Quantity.isLessThan(Quantity): bool', (a: QuantityValue, b: QuantityValue) => compareQuantities(a.q, b.q) < 0)
    .registerFunction(
      'Quantity.add(Quantity): Quantity',
      (a: QuantityValue, b: QuantityValue) => new QuantityValue(addQuantities(a.q, b.q, 1n)),
    )
    .registerFunction(
      'Quantity.add(int): Quantity',
      (a: QuantityValue, n: bigint) => new QuantityValue(addQuantities(a.q, intQuantity(n), 1n)),
    )
    .registerFunction(
      'Quantity.sub(Quantity): Quantity',
      (a: QuantityValue, b: QuantityValue) => new QuantityValue(addQuantities(a.q, b.q, -1n)),
    )
    .registerFunction(
      'Quantity.sub(int): Quantity',
      (a: QuantityValue, n: bigint) => new QuantityValue(addQuantities(a.q, intQuantity(n), -1n)),
    );
}
