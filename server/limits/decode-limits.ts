// The bounds every request body is held to, whatever decodes or patches it: JSON, YAML and
// protobuf decoders, JSON patch, merge patch, strategic merge patch and server-side apply.
// This module imports nothing, so every layer (http, endpoints, admission, registry) may use it.
//
// Why the depth limit is lower than kube-apiserver's 10000: Go grows its goroutine stacks on
// demand, node does not. V8's stack is about 1 MB, and the `yaml` package's composer spends
// about 1.2 KB of it per level: it overflows near 750 levels of `[[[...]]]` even on an empty
// stack, and an overflow inside a lazily compiled regular expression is not a RangeError but
// a fatal "RegExpCompiler Allocation failed" that ends the process. Our own walkers (clone,
// defaulting, validation, pruning, field sets, merges) recurse once or twice per level. 500
// leaves room for all of them under any request stack, and is far above what real objects
// need (the deepest CustomResourceDefinition schemas stay under 100 levels).

/** the most bytes a request body may have (kube-apiserver's --max-request-body-bytes default) */
export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/** the deepest nesting of objects and arrays any decoded body or patched object may have */
export const MAX_NESTING_DEPTH = 500;

/** the most operations one JSON patch may carry (kube-apiserver's maxJSONPatchOperations) */
export const MAX_JSON_PATCH_OPERATIONS = 10000;

/** the most bytes the `copy` operations of one JSON patch may add together (kube-apiserver's
 *  JSONPatchMaxCopyBytes, the request body limit) */
export const MAX_JSON_PATCH_COPY_BYTES = MAX_REQUEST_BODY_BYTES;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** where a text nests deeper than the limit: the offset and character of the first opener past it */
export interface TooDeep {
  offset: number;
  char: string;
}

/**
 * Where JSON text first opens more than `limit` arrays and objects at once, or undefined.
 * One pass over the bytes, skipping strings; it does not check the syntax (the parser does),
 * so it runs before any parser sees the text.
 */
export function jsonTooDeep(bytes: Uint8Array, limit: number = MAX_NESTING_DEPTH): TooDeep | undefined {
  const n = bytes.length;
  // nesting deeper than the limit takes more opening brackets than a shorter text has
  if (n <= limit) return undefined;
  let depth = 0;
  let i = 0;
  while (i < n) {
    const c = bytes[i];
    if (c === QUOTE) {
      // the next unescaped quote ends the string; indexOf is far quicker than a byte loop
      let end = bytes.indexOf(QUOTE, i + 1);
      while (end > 0 && isEscaped(bytes, end)) end = bytes.indexOf(QUOTE, end + 1);
      if (end < 0) return undefined;
      i = end + 1;
      continue;
    }
    if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > limit) return { offset: i, char: String.fromCharCode(c) };
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--;
    }
    i++;
  }
  return undefined;
}

function isEscaped(bytes: Uint8Array, quoteAt: number): boolean {
  let backslashes = 0;
  for (let j = quoteAt - 1; j >= 0 && bytes[j] === BACKSLASH; j--) backslashes++;
  return backslashes % 2 === 1;
}

/** true when a decoded value nests arrays and objects deeper than `limit`; walks with its own
 *  stack, so any depth is safe to ask about. Values shared by YAML aliases are walked once per
 *  reference (the YAML decoder bounds aliases). */
export function valueTooDeep(value: unknown, limit: number = MAX_NESTING_DEPTH): boolean {
  if (value === null || typeof value !== 'object') return false;
  const values: unknown[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const v = values.pop() as object;
    const depth = depths.pop() as number;
    if (depth > limit) return true;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const child of children) {
      if (child !== null && typeof child === 'object') {
        values.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/** the deepest nesting of arrays and objects in a decoded value (1 for `{}`, 0 for a scalar) */
export function valueDepth(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  let deepest = 0;
  const values: unknown[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const v = values.pop() as object;
    const depth = depths.pop() as number;
    if (depth > deepest) deepest = depth;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const child of children) {
      if (child !== null && typeof child === 'object') {
        values.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return deepest;
}

export { yamlTooDeep } from './yaml-depth.js';

/** kube's CBOR decoder: the deepest nesting, and the most array elements and map pairs one
 *  data item may have (its DecOptions; lower than JSON's because CBOR declares lengths up
 *  front, so a small body could otherwise ask for huge allocations) */
export const MAX_CBOR_NESTING_DEPTH = 64;
export const MAX_CBOR_ARRAY_ELEMENTS = 1024;
export const MAX_CBOR_MAP_PAIRS = 1024;
