// Standard cron schedules as kube-apiserver accepts them for CronJobs (robfig/cron's
// ParseStandard): five fields, names for months and weekdays, ranges, steps, `*`/`?`, the
// @descriptors and `@every <duration>`, an optional TZ=/CRON_TZ= prefix. Returns the parser's
// error text (kube puts it in the field error), or undefined when the schedule parses.

interface Bounds {
  min: number;
  max: number;
  names?: Record<string, number>;
}

const minutes: Bounds = { min: 0, max: 59 };
const hours: Bounds = { min: 0, max: 23 };
const dom: Bounds = { min: 1, max: 31 };
const months: Bounds = {
  min: 1,
  max: 12,
  names: { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 },
};
const dow: Bounds = { min: 0, max: 6, names: { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 } };

class CronError extends Error {}

/** Go's strconv.Atoi, with its error text */
function atoi(s: string): number {
  if (!/^[+-]?\d+$/.test(s)) throw new CronError(`strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`);
  const n = Number(s);
  if (!Number.isSafeInteger(n)) throw new CronError(`strconv.Atoi: parsing ${JSON.stringify(s)}: value out of range`);
  return n;
}

function mustParseInt(expr: string): number {
  let n: number;
  try {
    n = atoi(expr);
  } catch (e) {
    if (e instanceof CronError) throw new CronError(`failed to parse int from ${expr}: ${e.message}`);
    throw e;
  }
  if (n < 0) throw new CronError(`negative number (${n}) not allowed: ${expr}`);
  return n;
}

function parseIntOrName(expr: string, names?: Record<string, number>): number {
  const named = names?.[expr.toLowerCase()];
  return named ?? mustParseInt(expr);
}

function checkRange(expr: string, r: Bounds): void {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = (rangeAndStep[0] ?? '').split('-');
  const single = lowAndHigh.length === 1;
  let start: number;
  let end: number;
  let step: number;
  const low = lowAndHigh[0] ?? '';
  if (low === '*' || low === '?') {
    start = r.min;
    end = r.max;
  } else {
    start = parseIntOrName(low, r.names);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = parseIntOrName(lowAndHigh[1] ?? '', r.names);
    else throw new CronError(`too many hyphens: ${expr}`);
  }
  if (rangeAndStep.length === 1) step = 1;
  else if (rangeAndStep.length === 2) {
    step = mustParseInt(rangeAndStep[1] ?? '');
    if (single) end = r.max;
  } else throw new CronError(`too many slashes: ${expr}`);
  if (start < r.min) throw new CronError(`beginning of range (${start}) below minimum (${r.min}): ${expr}`);
  if (end > r.max) throw new CronError(`end of range (${end}) above maximum (${r.max}): ${expr}`);
  if (start > end) throw new CronError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new CronError(`step of range should be a positive number: ${expr}`);
}

function checkField(field: string, r: Bounds): void {
  for (const expr of field.split(',').filter((x) => x !== '')) checkRange(expr, r);
}

const durationUnits: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, μs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };

/** Go's time.ParseDuration, for its error text only */
function durationError(s: string): string | undefined {
  const quoted = JSON.stringify(s);
  let rest = s;
  if (rest.startsWith('-') || rest.startsWith('+')) rest = rest.slice(1);
  if (rest === '0') return undefined;
  if (rest === '') return `time: invalid duration ${quoted}`;
  while (rest !== '') {
    const m = /^(\d*)(\.\d*)?/.exec(rest);
    if (!m || (m[1] === '' && (m[2] === undefined || m[2] === '.'))) return `time: invalid duration ${quoted}`;
    rest = rest.slice(m[0].length);
    const u = /^[^\d.]*/.exec(rest)?.[0] ?? '';
    if (u === '') return `time: missing unit in duration ${quoted}`;
    if (!(u in durationUnits)) return `time: unknown unit ${JSON.stringify(u)} in duration ${quoted}`;
    rest = rest.slice(u.length);
  }
  return undefined;
}

export function isKnownTimeZone(tz: string): boolean {
  if (tz === 'UTC' || tz === 'Local' || tz === '') return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const descriptors = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

/** robfig/cron ParseStandard's error for `schedule`, or undefined */
export function cronScheduleError(schedule: string): string | undefined {
  let spec = schedule;
  if (spec.length === 0) return 'empty spec string';
  try {
    if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
      const i = spec.indexOf(' ');
      const eq = spec.indexOf('=');
      const name = i < 0 ? spec.slice(eq + 1) : spec.slice(eq + 1, i);
      if (!isKnownTimeZone(name)) return `provided bad location ${name}: unknown time zone ${name}`;
      spec = i < 0 ? '' : spec.slice(i).trim();
    }
    if (spec.startsWith('@')) {
      if (descriptors.has(spec)) return undefined;
      if (spec.startsWith('@every ')) {
        const err = durationError(spec.slice('@every '.length));
        return err ? `failed to parse duration ${spec}: ${err}` : undefined;
      }
      return `unrecognized descriptor: ${spec}`;
    }
    const fields = spec.split(/\s+/).filter((f) => f !== '');
    if (fields.length !== 5) return `expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`;
    const bounds = [minutes, hours, dom, months, dow];
    fields.forEach((f, i) => checkField(f, bounds[i] as Bounds));
    return undefined;
  } catch (e) {
    if (e instanceof CronError) return e.message;
    throw e;
  }
}
