// Go's time.Parse for the two layouts API timestamps use (metav1.Time: RFC3339, metav1.MicroTime:
// RFC3339 with exactly six fractional digits), down to its error texts, which kube-apiserver
// returns as they are when a body carries a malformed timestamp.

import { goQuote } from '../machinery/validation/field-error.js';

export const RFC3339 = '2006-01-02T15:04:05Z07:00';
export const RFC3339_MICRO = '2006-01-02T15:04:05.000000Z07:00';

/** the layout as a sequence of literal prefixes and elements, as Go's nextStdChunk splits it */
const CHUNKS: Record<string, [prefix: string, element: string][]> = {
  [RFC3339]: [
    ['', '2006'],
    ['-', '01'],
    ['-', '02'],
    ['T', '15'],
    [':', '04'],
    [':', '05'],
    ['', 'Z07:00'],
  ],
  [RFC3339_MICRO]: [
    ['', '2006'],
    ['-', '01'],
    ['-', '02'],
    ['T', '15'],
    [':', '04'],
    [':', '05'],
    ['', '.000000'],
    ['', 'Z07:00'],
  ],
};

const isDigit = (s: string, i: number): boolean => i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57;

/** Go's getnum: one or two digits (exactly two when `fixed`) */
function getnum(s: string, fixed: boolean): [number, string] | undefined {
  if (!isDigit(s, 0)) return undefined;
  if (!isDigit(s, 1)) return fixed ? undefined : [Number(s[0]), s.slice(1)];
  return [Number(s.slice(0, 2)), s.slice(2)];
}

function daysIn(month: number, year: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Go's atoi: an optional sign, then digits only */
function atoi(s: string): number | undefined {
  const m = /^[+-]?\d+$/.exec(s);
  return m ? Number(s) : undefined;
}

/**
 * The error Go's time.Parse(layout, value) returns, or undefined when the value parses.
 * Only the layouts above are known.
 */
export function goTimeParseError(layout: string, value: string): string | undefined {
  const chunks = CHUNKS[layout];
  if (!chunks) throw new Error(`unknown layout ${layout}`);
  const bad = (elem: string, rest: string) =>
    `parsing time ${goQuote(value)} as ${goQuote(layout)}: cannot parse ${goQuote(rest)} as ${goQuote(elem)}`;
  const outOfRange = (what: string) => `parsing time ${goQuote(value)}: ${what} out of range`;
  let rest = value;
  let year = 0;
  let month = 1;
  let day = 1;
  for (let c = 0; c < chunks.length; c++) {
    const [prefix, elem] = chunks[c];
    if (!rest.startsWith(prefix)) return bad(prefix, rest);
    rest = rest.slice(prefix.length);
    const hold = rest;
    switch (elem) {
      case '2006': {
        if (rest.length < 4) return bad(elem, hold);
        const y = atoi(rest.slice(0, 4));
        if (y === undefined) return bad(elem, hold);
        year = y;
        rest = rest.slice(4);
        break;
      }
      case '01':
      case '02':
      case '15':
      case '04':
      case '05': {
        const got = getnum(rest, elem !== '15');
        if (!got) return bad(elem, hold);
        const [n, after] = got;
        rest = after;
        if (elem === '01') {
          if (n < 1 || n > 12) return outOfRange('month');
          month = n;
        } else if (elem === '02') {
          if (n > 31) return outOfRange('day');
          day = n;
        } else if (elem === '15') {
          if (n >= 24) return outOfRange('hour');
        } else if (elem === '04') {
          if (n >= 60) return outOfRange('minute');
        } else {
          if (n >= 60) return outOfRange('second');
          // a fractional second the layout does not name is accepted after the seconds
          const next = chunks[c + 1]?.[1];
          if (next !== '.000000' && rest.length >= 2 && (rest[0] === '.' || rest[0] === ',') && isDigit(rest, 1)) {
            let n2 = 2;
            while (isDigit(rest, n2)) n2++;
            rest = rest.slice(n2);
          }
        }
        break;
      }
      case '.000000': {
        if (rest.length < 7) return bad(elem, hold);
        if (!(rest[0] === '.' || rest[0] === ',') || atoi(rest.slice(1, 7)) === undefined || /[+-]/.test(rest.slice(1, 7))) {
          return bad(elem, hold);
        }
        rest = rest.slice(7);
        break;
      }
      case 'Z07:00': {
        if (rest.startsWith('Z')) {
          rest = rest.slice(1);
          break;
        }
        if (rest.length < 6 || rest[3] !== ':') return bad(elem, hold);
        const sign = rest[0];
        const hh = getnum(rest.slice(1, 3), true);
        const mm = getnum(rest.slice(4, 6), true);
        if (!hh || !mm || (sign !== '+' && sign !== '-')) return bad(elem, hold);
        rest = rest.slice(6);
        if (hh[0] > 24) return outOfRange('time zone offset hour');
        if (mm[0] > 60) return outOfRange('time zone offset minute');
        break;
      }
    }
  }
  if (rest.length > 0) return `parsing time ${goQuote(value)}: extra text: ${goQuote(rest)}`;
  if (day < 1 || day > daysIn(month, year)) return `parsing time ${goQuote(value)}: day out of range`;
  return undefined;
}
