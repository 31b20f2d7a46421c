// A small command-line parser with pflag's rules, because harnesses start kube-apiserver
// with pflag syntax: `--name=value`, `--name value`, booleans as `--x` or `--x=false` (a
// boolean never takes the next argument), `-v 4` / `-v=4` / `-v4` for shorthands, `_` and
// `-` interchangeable in names, comma lists that the first use replaces and later uses
// extend, `--` ending the flags. No positional arguments are taken.

import { parseDuration, formatDuration } from './duration.js';

export type FlagKind =
  | 'string'
  | 'int'
  | 'float'
  | 'bool'
  | 'duration'
  /** comma-separated; repeated uses append (pflag StringSlice) */
  | 'stringSlice'
  /** one value per use, commas kept (pflag StringArray) */
  | 'stringArray'
  /** k=v pairs, comma-separated; repeated uses merge */
  | 'mapStringString'
  /** k=true|false pairs, comma-separated; repeated uses merge (feature gates) */
  | 'mapStringBool';

export type FlagValue = string | number | boolean | string[] | Record<string, string> | Record<string, boolean>;

export interface FlagSpec {
  name: string;
  kind: FlagKind;
  /** the value when the flag is not given; for durations, milliseconds */
  default: FlagValue;
  /** the section in --help */
  group: string;
  usage: string;
  shorthand?: string;
  /** shown instead of the computed default in --help (e.g. "<data-dir>/pki") */
  defaultText?: string;
  /** the help's type column (pflag prints "int", "string", "ip", "strings", ...) */
  typeText?: string;
  /** kube's deprecation notice: each use prints `Flag --<name> has been deprecated, <notice>` */
  deprecated?: string;
}

export class FlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FlagError';
  }
}

export interface ParsedFlags {
  values: Map<string, FlagValue>;
  /** names the command line set explicitly */
  set: Set<string>;
  /** pflag's lines for uses of deprecated flags, one per use, in command-line order */
  deprecationNotices: string[];
}

function normalize(name: string): string {
  return name.replace(/_/g, '-');
}

function cloneDefault(v: FlagValue): FlagValue {
  if (Array.isArray(v)) return [...v];
  if (typeof v === 'object') return { ...v } as FlagValue;
  return v;
}

function invalid(spec: FlagSpec, raw: string, why: string): FlagError {
  return new FlagError(`invalid argument ${JSON.stringify(raw)} for "--${spec.name}" flag: ${why}`);
}

function parseBool(raw: string): boolean | undefined {
  // strconv.ParseBool's accepted spellings
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(raw)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(raw)) return false;
  return undefined;
}

function splitList(raw: string): string[] {
  // pflag reads a StringSlice value as one CSV record
  return raw === '' ? [] : raw.split(',').map((s) => s.trim());
}

function applyValue(spec: FlagSpec, raw: string, parsed: ParsedFlags): void {
  const first = !parsed.set.has(spec.name);
  const current = parsed.values.get(spec.name);
  let next: FlagValue;
  switch (spec.kind) {
    case 'string':
      next = raw;
      break;
    case 'int': {
      if (!/^[+-]?\d+$/.test(raw.trim())) throw invalid(spec, raw, 'not an integer');
      next = Number.parseInt(raw, 10);
      if (!Number.isSafeInteger(next)) throw invalid(spec, raw, 'value out of range');
      break;
    }
    case 'float': {
      const n = Number(raw);
      if (raw.trim() === '' || Number.isNaN(n)) throw invalid(spec, raw, 'not a number');
      next = n;
      break;
    }
    case 'bool': {
      const b = parseBool(raw);
      if (b === undefined) throw invalid(spec, raw, 'not a boolean');
      next = b;
      break;
    }
    case 'duration':
      try {
        next = parseDuration(raw);
      } catch (err) {
        throw invalid(spec, raw, (err as Error).message);
      }
      break;
    case 'stringSlice':
      next = first ? splitList(raw) : [...(current as string[]), ...splitList(raw)];
      break;
    case 'stringArray':
      next = first ? [raw] : [...(current as string[]), raw];
      break;
    case 'mapStringString':
    case 'mapStringBool': {
      const out: Record<string, string | boolean> = first ? {} : { ...(current as Record<string, string | boolean>) };
      for (const pair of splitList(raw)) {
        if (pair === '') continue;
        const eq = pair.indexOf('=');
        const k = (eq < 0 ? pair : pair.slice(0, eq)).trim();
        const v = eq < 0 ? '' : pair.slice(eq + 1).trim();
        if (k === '') throw invalid(spec, raw, `missing key in ${JSON.stringify(pair)}`);
        if (spec.kind === 'mapStringBool') {
          const b = parseBool(v);
          if (b === undefined) throw invalid(spec, raw, `invalid value of ${k}=${v}, err: not a boolean`);
          out[k] = b;
        } else {
          // runtime-config takes `api/all` alone as `api/all=true`
          out[k] = eq < 0 ? 'true' : v;
        }
      }
      next = out as FlagValue;
      break;
    }
  }
  parsed.values.set(spec.name, next);
  parsed.set.add(spec.name);
  if (spec.deprecated !== undefined) parsed.deprecationNotices.push(`Flag --${spec.name} has been deprecated, ${spec.deprecated}`);
}

/** Parses argv (without the node and script paths). Throws FlagError. */
export function parseFlagSet(argv: readonly string[], specs: readonly FlagSpec[], command = 'kapi'): ParsedFlags {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const byShort = new Map(specs.filter((s) => s.shorthand).map((s) => [s.shorthand!, s]));
  const parsed: ParsedFlags = { values: new Map(), set: new Set(), deprecationNotices: [] };
  for (const s of specs) parsed.values.set(s.name, cloneDefault(s.default));
  const positional: string[] = [];

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith('--')) {
      const body = arg.slice(2);
      const eq = body.indexOf('=');
      const name = normalize(eq < 0 ? body : body.slice(0, eq));
      const spec = byName.get(name);
      if (!spec) throw new FlagError(`unknown flag: --${eq < 0 ? body : body.slice(0, eq)}`);
      if (eq >= 0) {
        applyValue(spec, body.slice(eq + 1), parsed);
      } else if (spec.kind === 'bool') {
        applyValue(spec, 'true', parsed);
      } else {
        if (i + 1 >= argv.length) throw new FlagError(`flag needs an argument: --${name}`);
        applyValue(spec, argv[++i]!, parsed);
      }
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1) {
      const letter = arg[1]!;
      const spec = byShort.get(letter);
      if (!spec) throw new FlagError(`unknown shorthand flag: '${letter}' in ${arg}`);
      let rest = arg.slice(2);
      if (rest.startsWith('=')) rest = rest.slice(1);
      else if (rest === '' && spec.kind !== 'bool') {
        if (i + 1 >= argv.length) throw new FlagError(`flag needs an argument: '${letter}' in -${letter}`);
        rest = argv[++i]!;
      } else if (rest === '') rest = 'true';
      applyValue(spec, rest, parsed);
      continue;
    }
    positional.push(arg);
  }
  const nonEmpty = positional.filter((p) => p !== '');
  if (nonEmpty.length > 0) {
    throw new FlagError(`"${command}" does not take any arguments, got ${JSON.stringify(nonEmpty)}`);
  }
  return parsed;
}

function typeColumn(spec: FlagSpec): string {
  if (spec.typeText !== undefined) return spec.typeText;
  switch (spec.kind) {
    case 'bool':
      return '';
    case 'stringSlice':
      return 'strings';
    case 'mapStringString':
      return 'mapStringString';
    case 'mapStringBool':
      return 'mapStringBool';
    default:
      return spec.kind;
  }
}

function defaultColumn(spec: FlagSpec): string {
  if (spec.defaultText !== undefined) return spec.defaultText;
  const d = spec.default;
  switch (spec.kind) {
    case 'duration':
      return formatDuration(d as number);
    case 'bool':
      return d ? 'true' : '';
    case 'stringSlice':
    case 'stringArray':
      return (d as string[]).length ? `[${(d as string[]).join(',')}]` : '';
    case 'mapStringString':
    case 'mapStringBool': {
      const entries = Object.entries(d as Record<string, unknown>);
      return entries.length ? entries.map(([k, v]) => `${k}=${v}`).join(',') : '';
    }
    case 'string':
      return d === '' ? '' : `"${d}"`;
    default:
      return d === 0 ? '' : String(d);
  }
}

/** --help text: one section per group (in first-seen order), pflag's column layout. */
export function formatFlagHelp(specs: readonly FlagSpec[]): string {
  const groups = new Map<string, FlagSpec[]>();
  for (const s of specs) {
    const list = groups.get(s.group) ?? [];
    list.push(s);
    groups.set(s.group, list);
  }
  const out: string[] = [];
  for (const [group, list] of groups) {
    out.push(`${group} flags:`, '');
    const lefts = list.map((s) => {
      const short = s.shorthand ? `  -${s.shorthand}, ` : '      ';
      const type = typeColumn(s);
      return `${short}--${s.name}${type ? ' ' + type : ''}`;
    });
    const width = Math.max(...lefts.map((l) => l.length)) + 3;
    list.forEach((s, i) => {
      const def = defaultColumn(s);
      const usage = def ? `${s.usage} (default ${def})` : s.usage;
      out.push(lefts[i]!.padEnd(width) + usage);
    });
    out.push('');
  }
  return out.join('\n');
}
