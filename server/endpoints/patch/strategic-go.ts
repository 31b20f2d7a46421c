// How Go sees decoded JSON values, for strategic merge patch: kube-apiserver decodes the patch
// into map[string]interface{} (integers as int64, other numbers as float64), compares list
// elements and merge keys with Go's `==` on interface values, and prints values with `%v` in
// its error messages. These helpers give the same answers for our JSON values.

import type { Json } from '../../machinery/json-patch.js';

export type JsonObject = { [key: string]: Json };

/** the dynamic Go type of a decoded JSON value */
export type GoType = 'nil' | 'bool' | 'string' | 'int64' | 'float64' | 'slice' | 'map';

export function goTypeOf(v: Json | undefined): GoType {
  if (v === null || v === undefined) return 'nil';
  if (Array.isArray(v)) return 'slice';
  switch (typeof v) {
    case 'boolean':
      return 'bool';
    case 'string':
      return 'string';
    case 'number':
      // Go keeps a JSON integer as int64 when it fits, else float64
      return Number.isInteger(v) && Math.abs(v) < 2 ** 63 ? 'int64' : 'float64';
    default:
      return 'map';
  }
}

/** the type's name as `%s` of its reflect.Type prints it (no type at all for nil) */
export function goTypeName(t: GoType): string {
  switch (t) {
    case 'nil':
      return '%!s(<nil>)';
    case 'slice':
      return '[]interface {}';
    case 'map':
      return 'map[string]interface {}';
    default:
      return t;
  }
}

export function isObject(v: Json | undefined): v is JsonObject {
  return v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);
}

export function hasKey(o: JsonObject, key: string): boolean {
  return Object.hasOwn(o, key);
}

/** Go's `==` on two interface values holding decoded JSON: equal dynamic types and values.
 *  (Go panics comparing two maps or slices; nothing here relies on that, so they differ.) */
export function goEqual(a: Json | undefined, b: Json | undefined): boolean {
  const ta = goTypeOf(a);
  if (ta !== goTypeOf(b)) return false;
  if (ta === 'nil') return true;
  if (ta === 'map' || ta === 'slice') return false;
  return a === b;
}

/** a float64 as `%v` prints it: shortest digits, exponent form below 1e-4 or from 1e6 */
function formatFloat(n: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'NaN' : n > 0 ? '+Inf' : '-Inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  const [mantissa, expText] = n.toExponential().split('e');
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? '-' : '+';
    const digits = String(Math.abs(exp)).padStart(2, '0');
    return `${mantissa}e${sign}${digits}`;
  }
  return String(n);
}

/** a value as Go's `%v` prints a decoded JSON value (maps with sorted keys) */
export function goFormat(v: Json | undefined): string {
  switch (goTypeOf(v)) {
    case 'nil':
      return '<nil>';
    case 'bool':
    case 'string':
      return String(v);
    case 'int64':
      return String(v);
    case 'float64':
      return formatFloat(v as number);
    case 'slice':
      return `[${(v as Json[]).map(goFormat).join(' ')}]`;
    case 'map': {
      const o = v as JsonObject;
      const keys = Object.keys(o).sort();
      return `map[${keys.map((k) => `${k}:${goFormat(o[k])}`).join(' ')}]`;
    }
  }
}

/** a value as Go's `%s` prints an interface value: strings as they are, others marked */
export function goFormatString(v: Json | undefined): string {
  const t = goTypeOf(v);
  if (t === 'string') return v as string;
  if (t === 'nil') return '%!s(<nil>)';
  return `%!s(${goTypeName(t)}=${goFormat(v)})`;
}
