// Runs the checks a level and version select: baseline runs the baseline checks, restricted
// runs the restricted ones plus every baseline check they do not replace. A version newer
// than the newest rule change (and `latest`) gets the newest rules. Results come in kube's
// order: baseline check ids sorted, then restricted ids sorted.

import type { Check, CheckFn, CheckOptions, Violation } from './check.js';
import { BASELINE_CHECKS } from './checks-baseline.js';
import { RESTRICTED_CHECKS } from './checks-restricted.js';
import type { LevelVersion } from './policy.js';
import type { PodMeta, PodSpec } from './spec.js';

const byId = (a: Check, b: Check) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const ORDERED_BASELINE = [...BASELINE_CHECKS].sort(byId);
const ORDERED_RESTRICTED = [...RESTRICTED_CHECKS].sort(byId);

/** the newest policy version any rule changed at */
export const MAX_MINOR = Math.max(...[...BASELINE_CHECKS, ...RESTRICTED_CHECKS].map((c) => c.versions[c.versions.length - 1].minMinor));

function ruleAt(check: Check, minor: number) {
  let found: Check['versions'][number] | undefined;
  for (const v of check.versions) if (v.minMinor <= minor) found = v;
  return found;
}

const cache = new Map<string, CheckFn[]>();

/** the check functions of a level at a version (none for privileged) */
export function checksFor(lv: LevelVersion): CheckFn[] {
  if (lv.level === 'privileged') return [];
  const minor = lv.version.latest ? MAX_MINOR : Math.min(lv.version.minor, MAX_MINOR);
  const key = `${lv.level}/${minor}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const fns: CheckFn[] = [];
  const overridden = new Set<string>();
  const restricted = lv.level === 'restricted' ? ORDERED_RESTRICTED.map((c) => ruleAt(c, minor)) : [];
  for (const r of restricted) for (const id of r?.overrides ?? []) overridden.add(id);
  for (const c of ORDERED_BASELINE) {
    const rule = ruleAt(c, minor);
    if (rule && !overridden.has(c.id)) fns.push(rule.fn);
  }
  for (const r of restricted) if (r) fns.push(r.fn);
  cache.set(key, fns);
  return fns;
}

export function evaluatePod(lv: LevelVersion, meta: PodMeta, spec: PodSpec, opts: CheckOptions): Violation[] {
  const out: Violation[] = [];
  for (const fn of checksFor(lv)) {
    const v = fn(meta, spec, opts);
    if (v) out.push({ reason: v.reason || 'unknown forbidden reason', detail: v.detail });
  }
  return out;
}

/** `reason (detail), reason, ...`: the text of an error or warning about one object */
export function forbiddenDetail(violations: readonly Violation[]): string {
  return violations.map((v) => (v.detail ? `${v.reason} (${v.detail})` : v.reason)).join(', ');
}

/** `reason, reason`: the short form used when summarising existing pods */
export function forbiddenReason(violations: readonly Violation[]): string {
  return violations.map((v) => v.reason).join(', ');
}
