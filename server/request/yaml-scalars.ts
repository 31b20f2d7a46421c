// Plain (unquoted, untagged) YAML scalars as kube-apiserver reads them. Its YAML decoder is
// sigs.k8s.io/yaml over a copy of go-yaml v2, which resolves scalars the YAML 1.1 way, not by
// the 1.2 core schema the `yaml` package uses by default: `yes`, `on`, `y` are true, `0644` is
// octal (420), `1_000` is 1000, `-0x1A` is -26, `0b101` is 5, while timestamps stay strings.
// A Pod's `defaultMode: 0644` in a YAML body must be 420 here as it is there.

import type { ScalarTag } from 'yaml';

const MAPPED = new Map<string, unknown>();
for (const s of ['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']) MAPPED.set(s, true);
for (const s of ['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']) MAPPED.set(s, false);
for (const s of ['', '~', 'null', 'Null', 'NULL']) MAPPED.set(s, null);
for (const s of ['.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF']) MAPPED.set(s, Number.POSITIVE_INFINITY);
for (const s of ['-.inf', '-.Inf', '-.INF']) MAPPED.set(s, Number.NEGATIVE_INFINITY);
for (const s of ['.nan', '.NaN', '.NAN']) MAPPED.set(s, Number.NaN);

/** Go's strconv.ParseInt(s, 0, 64) syntax: sign, then a base prefix or a leading zero (octal) */
const GO_INT = /^([+-]?)(?:0[xX]([0-9a-fA-F]+)|0[oO]([0-7]+)|0[bB]([01]+)|0([0-7]*)|([1-9][0-9]*))$/;
/** go-yaml's yamlStyleFloat */
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
/** what Go's ParseFloat reads of a text starting with `.` */
const GO_DOT_FLOAT = /^\.[0-9]+([eE][-+]?[0-9]+)?$/;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** ParseInt(s, 0, 64), else ParseUint(s, 0, 64) (no sign), as a number; undefined if neither */
function goInteger(s: string): number | undefined {
  const m = GO_INT.exec(s);
  if (!m) return undefined;
  const [, sign, hex, oct, bin, leadingZero, dec] = m;
  let magnitude: bigint;
  if (hex !== undefined) magnitude = BigInt(`0x${hex}`);
  else if (oct !== undefined) magnitude = BigInt(`0o${oct}`);
  else if (bin !== undefined) magnitude = BigInt(`0b${bin}`);
  else if (leadingZero !== undefined) magnitude = leadingZero === '' ? 0n : BigInt(`0o${leadingZero}`);
  else magnitude = BigInt(dec as string);
  const value = sign === '-' ? -magnitude : magnitude;
  if (value >= INT64_MIN && value <= INT64_MAX) return Number(value);
  if (sign === '' && value <= UINT64_MAX) return Number(value);
  return undefined;
}

/** go-yaml v2's resolve() of a plain scalar, as sigs.k8s.io/yaml hands it to JSON */
export function goPlainScalar(s: string): unknown {
  const named = MAPPED.get(s);
  if (named !== undefined || MAPPED.has(s)) return named;
  const c = s[0] as string;
  if (c === '.') {
    if (!GO_DOT_FLOAT.test(s)) return s;
    const f = Number(s);
    return Number.isFinite(f) ? f : s;
  }
  // only a sign or a digit starts a number; other names were looked up above
  if (!(c === '+' || c === '-' || (c >= '0' && c <= '9'))) return s;
  // timestamps (2001-12-14) are kept as their text, which no number rule below reads
  const plain = s.replaceAll('_', '');
  const int = goInteger(plain);
  if (int !== undefined) return int;
  if (YAML_STYLE_FLOAT.test(plain)) {
    const f = Number(plain);
    // Go's ParseFloat refuses what overflows: the text stays a string
    if (Number.isFinite(f)) return f;
  }
  return s;
}

export const UNSUPPORTED_JSON_VALUE = 'json: unsupported value: ';

/** The tag every plain scalar of a request body resolves through (tried before the schema's).
 *  NaN and infinities are the YAML decoder's, but Go's JSON encoder then refuses them: that
 *  error is the scalar's. */
export const GO_PLAIN_SCALAR: ScalarTag = {
  tag: 'tag:kapi.k8s.io,2026:go-yaml-v2-plain',
  default: true,
  test: /^/,
  resolve: (s) => {
    const v = goPlainScalar(s);
    if (typeof v === 'number' && !Number.isFinite(v)) {
      throw new Error(`${UNSUPPORTED_JSON_VALUE}${Number.isNaN(v) ? 'NaN' : v > 0 ? '+Inf' : '-Inf'}`);
    }
    return v;
  },
};

/** go-yaml's base-60 number pattern (YAML 1.1): it reads none, but quotes them when it writes */
const BASE60_FLOAT = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;
/** the timestamp layouts go-yaml v2 recognizes (it keeps them strings, but quotes them) */
const GO_TIMESTAMP =
  /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2}))|(?: [0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?))?$/;

function isGoTimestamp(s: string): boolean {
  const m = GO_TIMESTAMP.exec(s);
  if (!m) return false;
  const [, month, day] = /^[0-9]{4}-([0-9]{1,2})-([0-9]{1,2})/.exec(s) as RegExpExecArray;
  return Number(month) >= 1 && Number(month) <= 12 && Number(day) >= 1 && Number(day) <= 31;
}

/** Whether go-yaml v2 writes a string quoted: read back plain it would be something else (a
 *  boolean, a number, null) or it looks like a timestamp or a base-60 number. */
export function goQuotesString(s: string): boolean {
  return goPlainScalar(s) !== s || BASE60_FLOAT.test(s) || isGoTimestamp(s);
}

/** For writing YAML: the `yaml` package quotes a string that a default tag's test matches, so
 *  this tag makes it quote what go-yaml quotes (it is never chosen for a value: no identify). */
export const GO_QUOTED_STRINGS: ScalarTag = {
  tag: 'tag:kapi.k8s.io,2026:go-yaml-v2-quoted',
  default: true,
  // the package calls only test() on it
  test: { test: goQuotesString } as unknown as RegExp,
  resolve: (s) => s,
};
