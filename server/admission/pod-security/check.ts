// What a Pod Security Standards check is: a level, and one function per policy version
// where its rules changed (kube's pod-security-admission policy package). A check reports a
// violation with a short reason (used alone in namespace-wide warnings) and a detail (added
// in parentheses when one object is evaluated).

import type { PodMeta, PodSpec } from './spec.js';

export interface Violation {
  reason: string;
  /** may be '' */
  detail: string;
}

export interface CheckOptions {
  /** the UserNamespacesPodSecurityStandards feature: pods with hostUsers=false skip the
   *  runAsNonRoot, runAsUser and procMount rules */
  relaxForUserNamespaces: boolean;
}

export type CheckFn = (meta: PodMeta, spec: PodSpec, opts: CheckOptions) => Violation | undefined;

export interface VersionedCheck {
  /** the v1.<minor> policy version this rule applies from */
  minMinor: number;
  fn: CheckFn;
  /** baseline checks this restricted rule replaces at its versions */
  overrides?: string[];
}

export interface Check {
  id: string;
  level: 'baseline' | 'restricted';
  /** strictly increasing minMinor */
  versions: VersionedCheck[];
}

export function joinQuote(items: readonly string[]): string {
  return items.length === 0 ? '' : items.map((s) => `"${s}"`).join(', ');
}

export function pluralize(singular: string, plural: string, count: number): string {
  return count === 1 ? singular : plural;
}

/** `container "a"` / `containers "a", "b"` */
export function containersPhrase(names: readonly string[]): string {
  return `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`;
}

/** sorted, de-duplicated, as Go's sets.String List() gives them */
export function sortedSet(values: Iterable<string>): string[] {
  return [...new Set(values)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

export function isWindows(spec: PodSpec): boolean {
  return spec.os?.name === 'windows';
}

export function relaxedForUserNamespace(spec: PodSpec, opts: CheckOptions): boolean {
  return opts.relaxForUserNamespaces && spec.hostUsers === false;
}

/** Go's %q for the strings annotations hold */
export function quoteValue(s: string): string {
  return JSON.stringify(s);
}
