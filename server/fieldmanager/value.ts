// JSON values as structured-merge-diff sees them: equality, its total order (used to sort
// set items and map-list keys), Go's JSON text for path elements, and Go's %v-style rendering
// for messages. Numbers are one kind here; an integral number is Go's int64, any other a float64.

import { goEscape } from '../request/encode.js';
import { goQuote } from '../machinery/validation/field-error.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonMap = { [key: string]: Json };

export function isMap(v: unknown): v is JsonMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function isScalar(v: unknown): v is boolean | number | string {
  return typeof v === 'boolean' || typeof v === 'number' || typeof v === 'string';
}

/** deep equality; map member order does not matter, list order does */
export function valuesEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!valuesEqual(a[i], b[i])) return false;
    return true;
  }
  if (isMap(a)) {
    if (!isMap(b)) return false;
    // counted with for-in: no key arrays for what is called on every leaf of a write
    let size = 0;
    for (const k in a) {
      if (!Object.hasOwn(b, k) || !valuesEqual(a[k], b[k])) return false;
      size++;
    }
    return size === memberCount(b);
  }
  return false;
}

/** the number of members of a map */
export function memberCount(m: JsonMap): number {
  let n = 0;
  for (const _ in m) n++;
  return n;
}

/** a map without members (without allocating its key list) */
export function isEmptyMap(m: JsonMap): boolean {
  for (const _ in m) return false;
  return true;
}

function rank(v: Json): number {
  if (typeof v === 'number') return 0;
  if (typeof v === 'string') return 1;
  if (typeof v === 'boolean') return 2;
  if (Array.isArray(v)) return 3;
  if (isMap(v)) return 4;
  return 5;
}

/** Go's strings.Compare: byte-wise over UTF-8 */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  // UTF-16 order equals UTF-8 order unless the first difference involves a surrogate: only
  // then are code points compared (the rare slow path)
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === n) return a.length < b.length ? -1 : 1;
  const x = a.charCodeAt(i);
  const y = b.charCodeAt(i);
  if (!isSurrogate(x) && !isSurrogate(y)) return x < y ? -1 : 1;
  return compareCodePoints(a, b);
}

const isSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdfff;

function compareCodePoints(a: string, b: string): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done) return y.done ? 0 : -1;
    if (y.done) return 1;
    const cx = x.value.codePointAt(0) ?? 0;
    const cy = y.value.codePointAt(0) ?? 0;
    if (cx !== cy) return cx < cy ? -1 : 1;
  }
}

/** structured-merge-diff's total order: numbers < strings < booleans < lists < maps < null */
export function compareValues(a: Json, b: Json): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0:
      return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
    case 1:
      return compareStrings(a as string, b as string);
    case 2:
      return a === b ? 0 : a ? 1 : -1;
    case 3: {
      const la = a as Json[];
      const lb = b as Json[];
      for (let i = 0; i < Math.min(la.length, lb.length); i++) {
        const c = compareValues(la[i], lb[i]);
        if (c !== 0) return c;
      }
      return la.length === lb.length ? 0 : la.length < lb.length ? -1 : 1;
    }
    case 4: {
      // maps compare by their sorted members, then by size
      const ma = a as JsonMap;
      const mb = b as JsonMap;
      const ka = Object.keys(ma).sort(compareStrings);
      const kb = Object.keys(mb).sort(compareStrings);
      for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
        const c = compareStrings(ka[i], kb[i]) || compareValues(ma[ka[i]], mb[kb[i]]);
        if (c !== 0) return c;
      }
      return ka.length === kb.length ? 0 : ka.length < kb.length ? -1 : 1;
    }
    default:
      return 0;
  }
}

/** JSON text as Go writes it (HTML-safe escapes); map members in the order given */
export function goJson(v: Json): string {
  if (typeof v === 'string' && isPlainString(v)) return `"${v}"`;
  return goEscape(JSON.stringify(v));
}

/** a string JSON and Go write as it is between quotes (map-list key names and most values) */
function isPlainString(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // quote, backslash, controls, Go's HTML escapes (<, >, &), surrogates, U+2028/2029
    if (c < 0x20 || c === 0x22 || c === 0x5c || c === 0x3c || c === 0x3e || c === 0x26 || c >= 0xd800) return false;
  }
  return true;
}

/** JSON text of a map with its members sorted, as Go marshals map[string]interface{} */
export function goJsonSorted(v: Json): string {
  return goJson(sortedCopy(v));
}

function sortedCopy(v: Json): Json {
  if (Array.isArray(v)) return v.map(sortedCopy);
  if (isMap(v)) {
    const out: JsonMap = {};
    for (const k of Object.keys(v).sort(compareStrings)) out[k] = sortedCopy(v[k]);
    return out;
  }
  return v;
}

/** structured-merge-diff's value.ToString: strings quoted, lists and maps spelled out */
export function valueString(v: Json): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(valueString).join(', ')}]`;
  return `{${Object.keys(v)
    .sort(compareStrings)
    .map((k) => `${k}=${valueString(v[k])}`)
    .join(', ')}}`;
}

/** how Go's %v prints a decoded JSON value (map[...] and [...]) */
export function goValue(v: Json): string {
  if (v === null) return '<nil>';
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  return `map[${Object.keys(v)
    .sort(compareStrings)
    .map((k) => `${k}:${goValue(v[k])}`)
    .join(' ')}]`;
}
