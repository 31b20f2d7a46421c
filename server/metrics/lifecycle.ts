// kube's metric lifecycle (component-base/metrics): every metric states a stability level,
// written first in its help text (`[ALPHA]`, `[BETA]`, `[STABLE]`, `[INTERNAL]`); a deprecated
// one also states since when (`[ALPHA] (Deprecated since 1.30.0) ...`). A metric deprecated
// before the current minor release is hidden: not exposed at all, unless
// --show-hidden-metrics-for-version names the previous minor release (which then shows every
// hidden metric). --disabled-metrics hides metrics by name, whatever else is set. The meta
// metrics registered_metrics_total, disabled_metrics_total and hidden_metrics_total count what
// happened.
//
// The level and the deprecation are read back from the help text, so each metric states them
// once, where it is declared.

export type StabilityLevel = 'ALPHA' | 'BETA' | 'STABLE' | 'INTERNAL';

export interface MetricLifecycle {
  stability: StabilityLevel;
  /** `1.30.0`; undefined when not deprecated */
  deprecatedVersion?: string;
}

export interface ReleaseVersion {
  major: number;
  minor: number;
}

/** the help text kube writes for a metric of that lifecycle */
export function lifecycleHelp(help: string, lifecycle: MetricLifecycle): string {
  const deprecated = lifecycle.deprecatedVersion ? `(Deprecated since ${lifecycle.deprecatedVersion}) ` : '';
  return `[${lifecycle.stability}] ${deprecated}${help}`;
}

const ANNOTATED = /^\[(ALPHA|BETA|STABLE|INTERNAL)\] (?:\(Deprecated since (\d+\.\d+\.\d+)\) )?/;

/** the lifecycle a help text states; metrics without one are kube's ALPHA */
export function lifecycleOf(help: string): MetricLifecycle {
  const m = ANNOTATED.exec(help);
  if (!m) return { stability: 'ALPHA' };
  return m[2] ? { stability: m[1] as StabilityLevel, deprecatedVersion: m[2] } : { stability: m[1] as StabilityLevel };
}

function parseRelease(text: string): ReleaseVersion & { patch: number } {
  const [major = 0, minor = 0, patch = 0] = text.split('.').map((p) => Number.parseInt(p, 10));
  return { major, minor, patch };
}

/** deprecated before the current minor release began */
export function deprecatedLongAgo(lifecycle: MetricLifecycle, current: ReleaseVersion): boolean {
  if (!lifecycle.deprecatedVersion) return false;
  const d = parseRelease(lifecycle.deprecatedVersion);
  return d.major < current.major || (d.major === current.major && d.minor < current.minor);
}

/** kube's check of --show-hidden-metrics-for-version: empty, or the previous minor release */
export function showHiddenMetricsVersionError(value: string, current: ReleaseVersion): string | undefined {
  if (value === '') return undefined;
  const previous = `${current.major}.${current.minor - 1}`;
  if (value === previous) return undefined;
  return `--show-hidden-metrics-for-version must be omitted or have the value '${previous}'. Only the previous minor version is allowed`;
}
