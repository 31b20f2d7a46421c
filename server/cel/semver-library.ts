// Kubernetes' CEL semver library: semver(s[, normalize]), isSemver(s[, normalize]), and on a
// version major(), minor(), patch(), compareTo(v), isGreaterThan(v), isLessThan(v). Parsing is
// strict semver 2.0.0 (as blang/semver's Parse); `normalize` first accepts a `v` prefix,
// missing minor/patch parts and leading zeros, as kube's library does.

import type { Environment } from '@marcbachmann/cel-js';
import { parses } from './parses.js';

export class SemverValue {
  constructor(
    readonly major: bigint,
    readonly minor: bigint,
    readonly patch: bigint,
    readonly pre: string[],
  ) {}
}

const NUM = /^(0|[1-9]\d*)$/;
const IDENT = /^[0-9A-Za-z-]+$/;

function parse(s: string): SemverValue {
  const fail = () => new Error(`Invalid semver: ${s}`);
  const plus = s.indexOf('+');
  const core = plus < 0 ? s : s.slice(0, plus);
  if (
    plus >= 0 &&
    !s
      .slice(plus + 1)
      .split('.')
      .every((p) => IDENT.test(p))
  )
    throw fail();
  const dash = core.indexOf('-');
  const version = dash < 0 ? core : core.slice(0, dash);
  const pre = dash < 0 ? [] : core.slice(dash + 1).split('.');
  for (const p of pre) if (!IDENT.test(p) || (/^\d+$/.test(p) && !NUM.test(p))) throw fail();
  const parts = version.split('.');
  if (parts.length !== 3 || !parts.every((p) => NUM.test(p))) throw fail();
  return new SemverValue(BigInt(parts[0]!), BigInt(parts[1]!), BigInt(parts[2]!), pre);
}

function normalize(s: string): string {
  let v = s.startsWith('v') ? s.slice(1) : s;
  const cut = v.search(/[-+]/);
  const rest = cut < 0 ? '' : v.slice(cut);
  v = cut < 0 ? v : v.slice(0, cut);
  const parts = v.split('.');
  while (parts.length < 3) parts.push('0');
  return parts.map((p) => (/^\d+$/.test(p) ? String(BigInt(p)) : p)).join('.') + rest;
}

const toSemver = (s: string, norm = false) => parse(norm ? normalize(s) : s);

function comparePre(a: string[], b: string[]): number {
  if (a.length === 0 || b.length === 0) return a.length === b.length ? 0 : a.length === 0 ? 1 : -1;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const [x, y] = [a[i]!, b[i]!];
    if (x === y) continue;
    const [xn, yn] = [/^\d+$/.test(x), /^\d+$/.test(y)];
    if (xn && yn) return BigInt(x) < BigInt(y) ? -1 : 1;
    if (xn !== yn) return xn ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

export function compareSemver(a: SemverValue, b: SemverValue): number {
  for (const k of ['major', 'minor', 'patch'] as const) if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  return comparePre(a.pre, b.pre);
}

export function registerSemverLibrary(env: Environment): Environment {
  return env
    .registerType('Semver', SemverValue)
    .registerOperator('Semver == Semver', (a: SemverValue, b: SemverValue) => compareSemver(a, b) === 0)
    .registerFunction('semver(string): Semver', (s: string) => toSemver(s))
    .registerFunction('semver(string, bool): Semver', (s: string, n: boolean) => toSemver(s, n))
    .registerFunction('isSemver(string): bool', (s: string) => parses(() => toSemver(s)))
    .registerFunction('isSemver(string, bool): bool', (s: string, n: boolean) => parses(() => toSemver(s, n)))
    .registerFunction('Semver.major(): int', (v: SemverValue) => v.major)
    .registerFunction('Semver.minor(): int', (v: SemverValue) => v.minor)
    .registerFunction('Semver.patch(): int', (v: SemverValue) => v.patch)
    .registerFunction('Semver.compareTo(Semver): int', (a: SemverValue, b: SemverValue) => BigInt(compareSemver(a, b)))
    .registerFunction('Semver.isGreaterThan(Semver): bool', (a: SemverValue, b: SemverValue) => compareSemver(a, b) > 0)
    .registerFunction('Semver.isLessThan(Semver): bool', (a: SemverValue, b: SemverValue) => compareSemver(a, b) < 0);
}
