// cel-js's duration, uint and optional values. The library's entry point does not export their classes,
// so they are taken from values the library makes.

import { Environment, evaluate } from '@marcbachmann/cel-js';

export interface CelDuration {
  readonly seconds: bigint;
  readonly nanos: number;
}

interface DurationClass {
  new (seconds: bigint | number, nanos?: number): CelDuration;
}

const Duration = (evaluate('duration("0s")') as object).constructor as DurationClass;

export const durationNanos = (d: CelDuration): bigint => d.seconds * 1_000_000_000n + BigInt(d.nanos);

export function durationFromNanos(total: bigint): CelDuration {
  return new Duration(total / 1_000_000_000n, Number(total % 1_000_000_000n));
}

export const isDuration = (v: unknown): v is CelDuration => v instanceof Duration;

interface UintClass {
  new (value: bigint): { valueOf(): bigint };
}

const UnsignedInt = (evaluate('0u') as object).constructor as UintClass;

export const isUint = (v: unknown): v is { valueOf(): bigint } => v instanceof UnsignedInt;

export const toUint = (n: bigint): { valueOf(): bigint } => new UnsignedInt(n);

/** CEL's runtime equality for the values kapi hands to and gets from cel-js: numbers compare
 *  across int, uint and double; lists by position; maps by key */
export function celEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const num = (v: unknown): number | bigint | undefined =>
    typeof v === 'bigint' || typeof v === 'number' ? v : isUint(v) ? v.valueOf() : undefined;
  const x = num(a);
  const y = num(b);
  if (x !== undefined && y !== undefined) return typeof x === typeof y ? x === y : Number(x) === Number(y);
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => celEquals(v, b[i]));
  }
  if (isDuration(a) && isDuration(b)) return durationNanos(a) === durationNanos(b);
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (a instanceof Uint8Array && b instanceof Uint8Array) return a.length === b.length && a.every((v, i) => v === b[i]);
  if (a.constructor !== b.constructor) return false;
  if (a.constructor !== Object && a.constructor !== undefined) return String(a) === String(b);
  const ka = Object.keys(a);
  const rb = b as Record<string, unknown>;
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && celEquals((a as Record<string, unknown>)[k], rb[k]));
}

interface OptionalClass {
  of(value: unknown): unknown;
  none(): unknown;
}

const Optional = (new Environment({ enableOptionalTypes: true }).evaluate('optional.none()') as object)
  .constructor as unknown as OptionalClass;

/** a CEL optional: of the value, or none when it is undefined */
export const celOptional = (v: unknown): unknown => (v === undefined ? Optional.none() : Optional.of(v));
