// The catalog of served resources: the generated kube-apiserver 1.33 catalog
// (generated/resources.json) filtered by `--runtime-config`, ordered as discovery lists it.

import { readGeneratedJson } from './assets.js';
import type { GroupVersionInfo, ResourceInfo } from './types.js';

/** A group version known to the catalog, with the APIService priorities discovery orders by. */
export interface GroupVersionMeta {
  group: string;
  version: string;
  /** kube-aggregator's GroupPriorityMinimum: higher is listed first */
  groupPriority: number;
  /** kube-aggregator's VersionPriority inside the group: higher is preferred */
  versionPriority: number;
  enabledByDefault: boolean;
}

/** A named group as `/apis` lists it. */
export interface APIGroupEntry {
  name: string;
  /** served versions, preferred first */
  versions: string[];
  preferredVersion: string;
  /** the highest group priority of its served versions */
  groupPriority: number;
}

export interface Catalog {
  /** every served resource, sorted by group, version, resource */
  resources(): ResourceInfo[];
  /** served group versions: core v1 first, then named groups in `/apis` order, preferred version first */
  groupVersions(): GroupVersionInfo[];
  /** served named groups (not core) in `/apis` order */
  groups(): APIGroupEntry[];
  /** the served resources of one group version sorted by name, or [] */
  resourcesFor(group: string, version: string): ResourceInfo[];
  isServed(group: string, version: string): boolean;
  lookup(group: string, version: string, resource: string): ResourceInfo | undefined;
  /** the (top-level) resource serving `kind` in a group version */
  lookupByKind(group: string, version: string, kind: string): ResourceInfo | undefined;
  /** the version discovery prefers for a served group; undefined when nothing of it is served */
  preferredVersion(group: string): string | undefined;
}

export interface CatalogOptions {
  /** `--runtime-config` entries: `api/all`, `api/ga`, `api/beta`, `api/alpha`, `<group>/<version>`,
   *  `<group>/<version>/<resource>`; '' means true, as on kube-apiserver's command line */
  runtimeConfig?: Record<string, boolean | string>;
  /** whether a feature gate is on; resources behind an alpha or beta gate are served only
   *  with it (and their group version enabled), as kube's storage providers decide */
  featureEnabled?: (gate: string) => boolean;
}

/** `<group>/<version>/<resource>` served only with a feature gate on */
const GATED_RESOURCES: Readonly<Record<string, string>> = {
  'admissionregistration.k8s.io/v1alpha1/mutatingadmissionpolicies': 'MutatingAdmissionPolicy',
  'admissionregistration.k8s.io/v1alpha1/mutatingadmissionpolicybindings': 'MutatingAdmissionPolicy',
};

export class RuntimeConfigError extends Error {
  override name = 'RuntimeConfigError';
}

interface GeneratedCatalog {
  groupVersions: GroupVersionMeta[];
  resources: ResourceInfo[];
}

let generated: GeneratedCatalog | undefined;

function generatedCatalog(): GeneratedCatalog {
  if (!generated) {
    const raw = readGeneratedJson('resources.json') as Partial<GeneratedCatalog>;
    if (!Array.isArray(raw.groupVersions) || !Array.isArray(raw.resources)) {
      throw new Error('generated/resources.json is malformed; run npm run generate');
    }
    generated = { groupVersions: raw.groupVersions, resources: raw.resources };
  }
  return generated;
}

const gvKey = (group: string, version: string): string => `${group}/${version}`;

// ---------------------------------------------------------------------------------------------
// --runtime-config, with kube-apiserver's precedence: api/all, api/ga, api/beta, api/alpha in
// that order, then group versions, then single resources.

const VERSION_MATCHERS: [string, (version: string) => boolean][] = [
  ['api/all', () => true],
  ['api/ga', (v) => /^v\d+$/.test(v)],
  ['api/beta', (v) => /^v\d+beta\d+$/.test(v)],
  ['api/alpha', (v) => /^v\d+alpha\d+$/.test(v)],
];

/** Go's strconv.ParseBool, which kube-apiserver uses for group version values. */
function parseBool(key: string, value: boolean | string): boolean {
  if (typeof value === 'boolean') return value;
  if (value === '') return true;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  throw new RuntimeConfigError(`invalid value of ${key}: ${value}`);
}

interface Enablement {
  versionEnabled: Map<string, boolean>;
  /** explicit per-resource settings, keyed group/version/resource */
  resourceEnabled: Map<string, boolean>;
}

function resolveEnablement(gvs: GroupVersionMeta[], runtimeConfig: Record<string, boolean | string>): Enablement {
  const versionEnabled = new Map(gvs.map((g) => [gvKey(g.group, g.version), g.enabledByDefault]));
  const resourceEnabled = new Map<string, boolean>();
  const knownGroups = new Set(gvs.map((g) => g.group));

  for (const [key, matches] of VERSION_MATCHERS) {
    if (!(key in runtimeConfig)) continue;
    const value = runtimeConfig[key];
    // kube-apiserver accepts only the literal words here
    const on = value === true || value === 'true' || value === '';
    const off = value === false || value === 'false';
    if (!on && !off) throw new RuntimeConfigError(`invalid value ${key}=${String(value)}`);
    for (const g of gvs) if (matches(g.version)) versionEnabled.set(gvKey(g.group, g.version), on);
  }

  const versionPrefs: [string, boolean][] = [];
  const resourcePrefs: [string, boolean][] = [];
  for (const [key, value] of Object.entries(runtimeConfig)) {
    if (VERSION_MATCHERS.some(([k]) => k === key)) continue;
    const tokens = key.split('/');
    if (tokens.length < 2 || tokens.length > 3) continue;
    const [group = '', version = ''] = tokens;
    if (!version || !knownGroups.has(group)) continue; // not ours (e.g. a CRD group): kube ignores it
    if (!versionEnabled.has(gvKey(group, version))) {
      throw new RuntimeConfigError(`group version ${group}/${version} that has not been registered`);
    }
    const enabled = parseBool(key, value);
    if (tokens.length === 2) {
      versionPrefs.push([gvKey(group, version), enabled]);
    } else {
      const resource = tokens[2] ?? '';
      if (resource.toLowerCase() !== resource) {
        throw new RuntimeConfigError(
          `invalid key ${key}: group/version/resource and resource is always lowercase plural, not "${resource}"`,
        );
      }
      resourcePrefs.push([`${gvKey(group, version)}/${resource}`, enabled]);
    }
  }
  for (const [gv, enabled] of versionPrefs) {
    versionEnabled.set(gv, enabled);
    for (const k of [...resourceEnabled.keys()]) if (k.startsWith(`${gv}/`)) resourceEnabled.delete(k);
  }
  for (const [gvr, enabled] of resourcePrefs) resourceEnabled.set(gvr, enabled);
  return { versionEnabled, resourceEnabled };
}

// ---------------------------------------------------------------------------------------------
// Ordering

/** k8s.io/apimachinery's CompareKubeAwareVersionStrings: GA > beta > alpha, then by major and
 *  minor number; names that do not look like versions sort last, lexically. Positive when `a`
 *  ranks before `b`. */
export function compareKubeAwareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return undefined;
    const stability = m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2;
    return { major: Number(m[1]), stability, minor: m[3] ? Number(m[3]) : 0 };
  };
  const pa = parse(a);
  const pb = parse(b);
  if (!pa && !pb) return a < b ? 1 : a > b ? -1 : 0;
  if (!pa) return -1;
  if (!pb) return 1;
  if (pa.stability !== pb.stability) return pa.stability - pb.stability;
  if (pa.major !== pb.major) return pa.major - pb.major;
  return pa.minor - pb.minor;
}

function byVersionPriority(a: GroupVersionMeta, b: GroupVersionMeta): number {
  if (a.versionPriority !== b.versionPriority) return b.versionPriority - a.versionPriority;
  return compareKubeAwareVersions(b.version, a.version);
}

/** The aggregator sorts APIServices by group priority, then by APIService name
 *  (`<version>.<group>`), and lists each group where its first APIService lands. */
function orderGroups(served: GroupVersionMeta[]): APIGroupEntry[] {
  const apiServices = served
    .filter((g) => g.group !== '')
    .sort((a, b) => {
      if (a.groupPriority !== b.groupPriority) return b.groupPriority - a.groupPriority;
      const na = `${a.version}.${a.group}`;
      const nb = `${b.version}.${b.group}`;
      return na < nb ? -1 : na > nb ? 1 : 0;
    });
  const byGroup = new Map<string, GroupVersionMeta[]>();
  for (const s of apiServices) {
    const list = byGroup.get(s.group) ?? [];
    list.push(s);
    byGroup.set(s.group, list);
  }
  return [...byGroup.entries()].map(([name, versions]) => {
    const ordered = versions.slice().sort(byVersionPriority);
    return {
      name,
      versions: ordered.map((v) => v.version),
      preferredVersion: ordered[0]?.version ?? '',
      groupPriority: Math.max(...ordered.map((v) => v.groupPriority)),
    };
  });
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------

export function loadCatalog(opts: CatalogOptions = {}): Catalog {
  const source = generatedCatalog();
  const { versionEnabled, resourceEnabled } = resolveEnablement(source.groupVersions, opts.runtimeConfig ?? {});

  const servedResources = source.resources.filter((r) => {
    const gate = GATED_RESOURCES[`${gvKey(r.group, r.version)}/${r.resource}`];
    if (gate !== undefined && !(opts.featureEnabled?.(gate) ?? false)) return false;
    const explicit = resourceEnabled.get(`${gvKey(r.group, r.version)}/${r.resource}`);
    return explicit ?? versionEnabled.get(gvKey(r.group, r.version)) ?? false;
  });
  const servedGVKeys = new Set(servedResources.map((r) => gvKey(r.group, r.version)));
  const servedGVs = source.groupVersions.filter((g) => servedGVKeys.has(gvKey(g.group, g.version)));

  const groupEntries = orderGroups(servedGVs);
  const preferred = new Map<string, string>(groupEntries.map((g) => [g.name, g.preferredVersion]));
  if (servedGVKeys.has(gvKey('', 'v1'))) preferred.set('', 'v1');

  const resources = servedResources.map((r) => deepFreeze({ ...r, preferredVersion: preferred.get(r.group) ?? r.version }));
  const byGV = new Map<string, ResourceInfo[]>();
  for (const r of resources) {
    const list = byGV.get(gvKey(r.group, r.version)) ?? [];
    list.push(r);
    byGV.set(gvKey(r.group, r.version), list);
  }
  for (const list of byGV.values()) list.sort((a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0));

  const groupVersions: GroupVersionInfo[] = [];
  if (byGV.has(gvKey('', 'v1'))) groupVersions.push({ group: '', version: 'v1', resources: byGV.get(gvKey('', 'v1')) ?? [] });
  for (const g of groupEntries) {
    for (const v of g.versions) groupVersions.push({ group: g.name, version: v, resources: byGV.get(gvKey(g.name, v)) ?? [] });
  }
  deepFreeze(groupEntries);

  return {
    resources: () => resources.slice(),
    groupVersions: () => groupVersions.slice(),
    groups: () => groupEntries.slice(),
    resourcesFor: (group, version) => (byGV.get(gvKey(group, version)) ?? []).slice(),
    isServed: (group, version) => byGV.has(gvKey(group, version)),
    lookup: (group, version, resource) => byGV.get(gvKey(group, version))?.find((r) => r.resource === resource),
    lookupByKind: (group, version, kind) => byGV.get(gvKey(group, version))?.find((r) => r.kind === kind),
    preferredVersion: (group) => preferred.get(group),
  };
}

/** Every group version the generated catalog knows (served or not), for tools and tests. */
export function knownGroupVersions(): GroupVersionMeta[] {
  return generatedCatalog().groupVersions.map((g) => ({ ...g }));
}
