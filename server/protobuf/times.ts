// The JSON forms of metav1.Time (RFC 3339, whole seconds, UTC), metav1.MicroTime (RFC 3339
// with six fraction digits, UTC) and metav1.Duration (Go's time.Duration text, e.g. `1h0m0s`),
// and their protobuf forms (Timestamp{seconds, nanos}; Duration{duration: nanoseconds}).

import { ProtobufError } from './wire.js';
import { formatGoDuration } from '../machinery/duration.js';

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

export interface Timestamp {
  seconds: number;
  /** 0..999999999 */
  nanos: number;
}

/** Parses an RFC 3339 time (any offset, any fraction) into seconds since the epoch and nanos. */
export function parseTimestamp(text: string): Timestamp {
  const m = RFC3339.exec(text);
  if (!m) throw new ProtobufError(`invalid RFC 3339 time ${JSON.stringify(text)}`);
  const [, y, mo, d, h, mi, s, fraction, , sign, oh, om] = m;
  // setUTCFullYear, unlike Date.UTC, does not map years 0..99 to 1900..1999
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s), 0);
  let seconds = date.getTime() / 1000;
  if (sign) seconds -= (sign === '-' ? -1 : 1) * (Number(oh) * 3600 + Number(om) * 60);
  const nanos = fraction ? Number(fraction.slice(0, 9).padEnd(9, '0')) : 0;
  return { seconds, nanos };
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

function formatSeconds(seconds: number): string {
  const d = new Date(seconds * 1000);
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}` +
    `T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`
  );
}

/** metav1.Time's JSON: UTC, whole seconds (Go drops the nanos of protobuf times too) */
export function formatTime(seconds: number): string {
  return `${formatSeconds(seconds)}Z`;
}

/** metav1.MicroTime's JSON: UTC, microseconds */
export function formatMicroTime(seconds: number, nanos: number): string {
  return `${formatSeconds(seconds)}.${pad(Math.floor(nanos / 1000), 6)}Z`;
}

// ---------------------------------------------------------------- durations

const UNIT_NANOS: Record<string, bigint> = {
  ns: 1n,
  us: 1000n,
  µs: 1000n,
  μs: 1000n,
  ms: 1000_000n,
  s: 1000_000_000n,
  m: 60_000_000_000n,
  h: 3600_000_000_000n,
};

/** Go's time.ParseDuration: `[-+]?(\d*(\.\d*)?unit)+` or `0`, in nanoseconds */
export function parseDuration(text: string): bigint {
  let rest = text;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest[0] === '-';
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') throw new ProtobufError(`invalid duration ${JSON.stringify(text)}`);
  let total = 0n;
  const part = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/;
  while (rest !== '') {
    const m = part.exec(rest);
    if (!m || (m[1] === '' && (m[2] ?? '') === '')) throw new ProtobufError(`invalid duration ${JSON.stringify(text)}`);
    const unit = UNIT_NANOS[m[3]];
    total += BigInt(m[1] || '0') * unit;
    if (m[2]) total += (BigInt(m[2].slice(0, 18).padEnd(18, '0')) * unit) / 10n ** 18n;
    rest = rest.slice(m[0].length);
  }
  return negative ? -total : total;
}

/** Go's time.Duration.String() */
export const formatDuration = formatGoDuration;
