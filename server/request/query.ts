// Query parameters read the way kube-apiserver's parameter codec reads them: the first value
// wins, booleans are true unless absent, "0" or "false", integers fail with Go's message.

import { errors } from '../machinery/status.js';

/** absent, `0` and `false` (any case) are false; anything else, even an empty value, is true */
export function parseBoolParam(query: URLSearchParams, name: string): boolean {
  const v = query.get(name);
  if (v === null) return false;
  return !(v === '0' || v.toLowerCase() === 'false');
}

/** like parseBoolParam but undefined when absent */
export function optionalBoolParam(query: URLSearchParams, name: string): boolean | undefined {
  return query.has(name) ? parseBoolParam(query, name) : undefined;
}

/** Go's strconv.ParseBool: used where kube-apiserver parses with it (`pretty`) */
export function goParseBool(v: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  return undefined;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** an int64 parameter; a 400 with Go's strconv message when it does not parse */
export function optionalIntParam(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  if (v === null) return undefined;
  if (!/^[+-]?\d+$/.test(v)) throw errors.badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  const big = BigInt(v);
  if (big < INT64_MIN || big > INT64_MAX) {
    throw errors.badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: value out of range`);
  }
  return Number(big);
}

export function optionalStringParam(query: URLSearchParams, name: string): string | undefined {
  const v = query.get(name);
  return v === null ? undefined : v;
}
