// Pod Security levels and versions, and the policy a namespace's labels select
// (pod-security.kubernetes.io/{enforce,audit,warn}[-version]) over the configured defaults.

import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';

export type Level = 'privileged' | 'baseline' | 'restricted';

const LEVELS: readonly Level[] = ['privileged', 'baseline', 'restricted'];

/** `latest`, or v1.<minor> */
export type PolicyVersion = { latest: true } | { latest: false; minor: number };

export interface LevelVersion {
  level: Level;
  version: PolicyVersion;
}

export interface Policy {
  enforce: LevelVersion;
  audit: LevelVersion;
  warn: LevelVersion;
}

export const LABEL_PREFIX = 'pod-security.kubernetes.io/';
export const ENFORCE_LABEL = LABEL_PREFIX + 'enforce';
export const ENFORCE_VERSION_LABEL = LABEL_PREFIX + 'enforce-version';
export const AUDIT_LABEL = LABEL_PREFIX + 'audit';
export const AUDIT_VERSION_LABEL = LABEL_PREFIX + 'audit-version';
export const WARN_LABEL = LABEL_PREFIX + 'warn';
export const WARN_VERSION_LABEL = LABEL_PREFIX + 'warn-version';

export const LATEST: PolicyVersion = { latest: true };

export function versionString(v: PolicyVersion): string {
  return v.latest ? 'latest' : `v1.${v.minor}`;
}

export function levelVersionString(lv: LevelVersion): string {
  return `${lv.level}:${versionString(lv.version)}`;
}

export function sameLevelVersion(a: LevelVersion, b: LevelVersion): boolean {
  return a.level === b.level && versionString(a.version) === versionString(b.version);
}

/** both privileged, or the same level and version */
export function equivalentLevelVersion(a: LevelVersion, b: LevelVersion): boolean {
  return (a.level === 'privileged' && b.level === 'privileged') || sameLevelVersion(a, b);
}

export function fullyPrivileged(p: Policy): boolean {
  return p.enforce.level === 'privileged' && p.audit.level === 'privileged' && p.warn.level === 'privileged';
}

/** an unknown level parses as restricted (fail closed) with an error */
export function parseLevel(value: string): { level: Level; error?: string } {
  if ((LEVELS as readonly string[]).includes(value)) return { level: value as Level };
  return { level: 'restricted', error: `must be one of ${LEVELS.join(', ')}` };
}

/** an unknown version parses as latest with an error */
export function parseVersion(value: string): { version: PolicyVersion; error?: string } {
  if (value === 'latest') return { version: LATEST };
  const m = /^v1\.(0|[1-9][0-9]*)$/.exec(value);
  const minor = m ? Number(m[1]) : NaN;
  if (!m || !Number.isSafeInteger(minor)) return { version: LATEST, error: 'must be "latest" or "v1.x"' };
  return { version: { latest: false, minor } };
}

/** -1 when a is less strict than b, 0 when equal, 1 when stricter */
export function compareLevels(a: Level, b: Level): number {
  return Math.sign(LEVELS.indexOf(a) - LEVELS.indexOf(b));
}

/**
 * The namespace's policy: each label overrides its default. A bad enforce level fails closed
 * (restricted), bad audit/warn levels fail open (privileged); the errors come back as field
 * errors on metadata.labels. An enforce level stricter than warn also raises warn to it.
 */
export function policyToEvaluate(
  labels: Record<string, string> | null | undefined,
  defaults: Policy,
): { policy: Policy; errors: FieldError[] } {
  const p: Policy = { enforce: { ...defaults.enforce }, audit: { ...defaults.audit }, warn: { ...defaults.warn } };
  const errors: FieldError[] = [];
  if (!labels) return { policy: p, errors };
  const fail = (label: string, value: string, error: string | undefined) => {
    if (error) errors.push(fieldErrors.invalid(`metadata.labels[${label}]`, value, error));
    return !error;
  };
  let hasEnforceLevel = false;
  const enforce = labels[ENFORCE_LABEL];
  if (enforce !== undefined) {
    const r = parseLevel(enforce);
    p.enforce.level = r.level;
    hasEnforceLevel = fail(ENFORCE_LABEL, enforce, r.error);
  }
  const enforceVersion = labels[ENFORCE_VERSION_LABEL];
  if (enforceVersion !== undefined) {
    const r = parseVersion(enforceVersion);
    p.enforce.version = r.version;
    fail(ENFORCE_VERSION_LABEL, enforceVersion, r.error);
  }
  const audit = labels[AUDIT_LABEL];
  if (audit !== undefined) {
    const r = parseLevel(audit);
    p.audit.level = fail(AUDIT_LABEL, audit, r.error) ? r.level : 'privileged';
  }
  const auditVersion = labels[AUDIT_VERSION_LABEL];
  if (auditVersion !== undefined) {
    const r = parseVersion(auditVersion);
    p.audit.version = r.version;
    fail(AUDIT_VERSION_LABEL, auditVersion, r.error);
  }
  const warn = labels[WARN_LABEL];
  if (warn !== undefined) {
    const r = parseLevel(warn);
    p.warn.level = fail(WARN_LABEL, warn, r.error) ? r.level : 'privileged';
  }
  const warnVersion = labels[WARN_VERSION_LABEL];
  if (warnVersion !== undefined) {
    const r = parseVersion(warnVersion);
    p.warn.version = r.version;
    fail(WARN_VERSION_LABEL, warnVersion, r.error);
  }
  if (warn === undefined && hasEnforceLevel && compareLevels(p.enforce.level, p.warn.level) > 0) {
    p.warn.level = p.enforce.level;
    if (warnVersion === undefined) p.warn.version = p.enforce.version;
  }
  return { policy: p, errors };
}
