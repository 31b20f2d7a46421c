// JSON documents with room for what JSON.stringify cannot write: raw tokens (huge numbers,
// deep nesting written as text, duplicate keys), so that hostile bodies are built without
// recursion on our side and sent byte for byte.

import type { Prng } from './prng.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const RAW_MARK = '\u0000raw:';

/** a value that is written into the JSON text as it is */
export function raw(text: string): string {
  return `${RAW_MARK}${text}\u0000`;
}

/** JSON text of `doc` with every raw() value spliced in unquoted */
export function toJsonText(doc: Json): string {
  return JSON.stringify(doc).replace(/"\\u0000raw:((?:[^"\\]|\\.)*?)\\u0000"/g, (_m, body: string) => JSON.parse(`"${body}"`) as string);
}

/** `depth` levels of arrays or objects around `inner`, written as text */
export function deepText(depth: number, style: 'array' | 'object' | 'mixed', inner = '1'): string {
  if (style === 'array') return '['.repeat(depth) + inner + ']'.repeat(depth);
  if (style === 'object') return '{"a":'.repeat(depth) + inner + '}'.repeat(depth);
  const half = Math.floor(depth / 2);
  return '[{"a":'.repeat(half) + inner + '}]'.repeat(half);
}

/** numbers and scalars that strain a decoder: precision, range, exponent, sign, type */
export function hostileScalar(rng: Prng): string {
  return rng.pick([
    raw('1e999'),
    raw('-1e999'),
    raw('1e-999'),
    raw('-0'),
    raw('123456789012345678901234567890123456789'),
    raw('9223372036854775808'),
    raw('-9223372036854775809'),
    raw('0.1e1'),
    raw('1.0'),
    raw('2147483648'),
    raw('4294967296'),
    raw(`1${'0'.repeat(rng.size(5000))}`),
    raw(`0.${'1'.repeat(rng.size(5000))}`),
    raw('true'),
    raw('null'),
    raw('[]'),
    raw('{}'),
    raw('""'),
    `${'x'.repeat(rng.size(300_000))}`,
    '\u0000\u0001\u001f',
    '\ud800',
    '\u202e\u2066',
    'ß\u0130K\u212a',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a log-injection probe, meant literally
    '${jndi:ldap://x}',
    '../../etc/passwd',
    '-1',
    'NaN',
  ]);
}

/** any JSON value of a random type (for "wrong type at this field") */
export function anyValue(rng: Prng, depth = 0): Json {
  switch (rng.int(0, depth > 2 ? 5 : 8)) {
    case 0:
      return null;
    case 1:
      return rng.bool();
    case 2:
      return rng.int(-2_000_000_000, 2_000_000_000);
    case 3:
      return rng.string(rng.size(64));
    case 4:
      return hostileScalar(rng);
    case 5:
      return rng.next() * 1e6;
    case 6:
      return Array.from({ length: rng.int(0, 3) }, () => anyValue(rng, depth + 1));
    case 7: {
      const o: { [k: string]: Json } = {};
      for (let i = rng.int(0, 3); i > 0; i--) o[rng.string(rng.int(1, 8))] = anyValue(rng, depth + 1);
      return o;
    }
    default:
      return raw(deepText(rng.size(20_000), rng.pick(['array', 'object', 'mixed'] as const)));
  }
}

/** every path (list of keys/indexes) to a value inside `doc`, the root excluded */
export function pathsOf(doc: Json, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (out.length > 500) return out;
  if (Array.isArray(doc)) {
    doc.forEach((v, i) => {
      out.push([...prefix, i]);
      pathsOf(v, [...prefix, i], out);
    });
  } else if (doc !== null && typeof doc === 'object') {
    for (const [k, v] of Object.entries(doc)) {
      out.push([...prefix, k]);
      pathsOf(v, [...prefix, k], out);
    }
  }
  return out;
}

/** a copy of `doc` with the value at `path` replaced (or added, for a new key) */
export function setAt(doc: Json, path: (string | number)[], value: Json): Json {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  if (Array.isArray(doc)) {
    const copy = [...doc];
    copy[Number(head)] = setAt(copy[Number(head)] ?? null, rest, value);
    return copy;
  }
  const base = doc !== null && typeof doc === 'object' ? doc : {};
  return { ...base, [String(head)]: setAt(base[String(head)] ?? null, rest, value) };
}

/** the JSON text with one member of an object written twice (the second with another value) */
export function duplicateKey(text: string, rng: Prng): string {
  const positions: number[] = [];
  const re = /\{"((?:[^"\\]|\\.)*)":/g;
  for (let m = re.exec(text); m; m = re.exec(text)) positions.push(m.index);
  if (positions.length === 0) return text;
  const at = rng.pick(positions);
  const key = /^\{"((?:[^"\\]|\\.)*)":/.exec(text.slice(at))![1]!;
  return `${text.slice(0, at + 1)}"${key}":${JSON.stringify(rng.pick([1, 'dup', null, [], {}]))},${text.slice(at + 1)}`;
}

/** bytes that are not UTF-8 (lone continuation, overlong, surrogate, truncated sequence), put inside a string */
export function withInvalidUtf8(text: string, rng: Prng): Buffer {
  const bad = rng.pick([
    [0x80],
    [0xc0, 0xaf],
    [0xed, 0xa0, 0x80],
    [0xf8, 0x88, 0x80, 0x80, 0x80],
    [0xe2, 0x82],
    [0xff, 0xfe],
    [0xf4, 0x90, 0x80, 0x80],
  ]);
  const buf = Buffer.from(text, 'utf8');
  const quotes: number[] = [];
  for (let i = 0; i < buf.length; i++) if (buf[i] === 0x22) quotes.push(i);
  const at = quotes.length ? rng.pick(quotes) + 1 : rng.int(0, buf.length);
  return Buffer.concat([buf.subarray(0, at), Buffer.from(bad), buf.subarray(at)]);
}

/** the bytes cut at a random point (never empty unless they were) */
export function truncate(bytes: Buffer, rng: Prng): Buffer {
  if (bytes.length < 2) return bytes;
  return bytes.subarray(0, rng.int(1, bytes.length - 1));
}

/** a few random bytes flipped, inserted or removed */
export function mutateBytes(bytes: Buffer, rng: Prng): Buffer {
  let out = Buffer.from(bytes);
  for (let n = rng.int(1, 6); n > 0 && out.length > 0; n--) {
    const at = rng.int(0, out.length - 1);
    switch (rng.int(0, 2)) {
      case 0:
        out[at] = rng.int(0, 255);
        break;
      case 1:
        out = Buffer.concat([out.subarray(0, at), rng.bytes(rng.int(1, 4)), out.subarray(at)]);
        break;
      default:
        out = Buffer.concat([out.subarray(0, at), out.subarray(at + rng.int(1, 4))]);
    }
  }
  return out;
}
