// Go's time.Duration text form, as kube-apiserver's duration flags take it: "5m", "30s",
// "1h0m0s", "1.5h", "300ms", "-2s", a bare "0". We keep durations as milliseconds (a JS
// number; nanosecond inputs become fractions) because every timer API in Node takes ms.

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3, // U+00B5 micro sign
  μs: 1e-3, // U+03BC greek mu
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

export class DurationError extends Error {
  constructor(input: string, why: string) {
    super(`time: ${why} ${JSON.stringify(input)}`);
    this.name = 'DurationError';
  }
}

/** Parses a Go duration string into milliseconds. Throws DurationError on bad input. */
export function parseDuration(input: string): number {
  let s = input;
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s[0] === '-') sign = -1;
    s = s.slice(1);
  }
  // Go accepts a bare zero without a unit, and nothing else unit-less.
  if (s === '0') return 0;
  if (s === '') throw new DurationError(input, 'invalid duration');
  let total = 0;
  while (s !== '') {
    const num = /^(\d*)(?:\.(\d*))?/.exec(s);
    const whole = num?.[1] ?? '';
    const frac = num?.[2];
    if (whole === '' && (frac === undefined || frac === '')) {
      throw new DurationError(input, 'invalid duration');
    }
    s = s.slice(num![0].length);
    const unit = /^[^\d.]+/.exec(s)?.[0];
    if (unit === undefined) throw new DurationError(input, 'missing unit in duration');
    const perUnit = UNIT_MS[unit];
    if (perUnit === undefined) {
      throw new DurationError(input, `unknown unit ${JSON.stringify(unit)} in duration`);
    }
    s = s.slice(unit.length);
    const value = Number(`${whole || '0'}.${frac || '0'}`);
    total += value * perUnit;
  }
  // Go's Duration is an int64 of nanoseconds: about 292 years.
  // biome-ignore lint/correctness/noPrecisionLoss: int64's maximum, as Go's parser writes it
  if (total * 1e6 > 9.223372036854775807e18) throw new DurationError(input, 'invalid duration');
  return sign * total;
}

/** Formats milliseconds the way Go's Duration.String() does: "5m0s", "1h0m0s", "0s", "1.5s", "300ms". */
export function formatDuration(ms: number): string {
  // whole nanoseconds, as Go holds them, so that fractional parts carry no float noise
  const nanos = BigInt(Math.round(Math.abs(ms) * 1e6));
  return ms < 0 && nanos !== 0n ? '-' + formatGoDuration(nanos) : formatGoDuration(nanos);
}

function fractionText(value: bigint, digits: number): string {
  // value < 10^digits; trailing zeros dropped, as Go's fmtFrac does
  const text = value.toString().padStart(digits, '0').replace(/0+$/, '');
  return text === '' ? '' : `.${text}`;
}

/** Go's time.Duration.String() */
export function formatGoDuration(nanos: bigint): string {
  if (nanos === 0n) return '0s';
  const negative = nanos < 0n;
  const u = negative ? -nanos : nanos;
  let text: string;
  if (u < 1000_000_000n) {
    if (u < 1000n) text = `${u}ns`;
    else if (u < 1000_000n) text = `${u / 1000n}${fractionText(u % 1000n, 3)}µs`;
    else text = `${u / 1000_000n}${fractionText(u % 1000_000n, 6)}ms`;
  } else {
    const totalSeconds = u / 1000_000_000n;
    const secondsText = `${totalSeconds % 60n}${fractionText(u % 1000_000_000n, 9)}s`;
    const minutes = totalSeconds / 60n;
    if (minutes === 0n) text = secondsText;
    else if (minutes < 60n) text = `${minutes}m${secondsText}`;
    else text = `${minutes / 60n}h${minutes % 60n}m${secondsText}`;
  }
  return negative ? `-${text}` : text;
}
