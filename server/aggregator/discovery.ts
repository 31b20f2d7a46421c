// Discovery with the aggregated group versions in it. Legacy `/apis` and `/apis/<group>`
// list them among the local groups in the aggregator's order (group priority, then APIService
// name); `/apis/<group>/<version>` is the backend's own answer (proxied). The aggregated
// apidiscovery.k8s.io/v2 document carries each backend's resources, fetched from it as
// system:kube-aggregator and refreshed; a backend that stops answering keeps its last
// resources marked `Stale`, one never reached is left out, as kube's discovery manager does.

import type { APIGroupEntry } from '../apis/catalog.js';
import { compareKubeAwareVersions } from '../apis/catalog.js';
import {
  aggregatedDiscoveryOf,
  aggregatedItems,
  negotiateDiscovery,
  AGGREGATED_GROUP,
  AGGREGATED_KIND,
  type APIGroupDiscovery,
  type APIVersionDiscovery,
  type DiscoveryCatalog,
} from '../apis/discovery.js';
import type { NonResourceHandler, RawResponse } from '../request/non-resource.js';
import { jsonTooDeep } from '../limits/decode-limits.js';
import { MAX_BACKEND_DISCOVERY_BYTES } from '../limits/backend-limits.js';
import type { Logger } from '../log.js';
import type { ResourceResolver } from '../registry/rest.js';
import { refreshLoop } from './refresh-loop.js';
import type { APIServiceIndex, APIServiceView } from './api-services.js';
import { AGGREGATOR_USER, authProxyHeaders, backendURL, boundedGet, type BackendAgents } from './backend-client.js';
import { resolveServiceEndpoint } from './service-endpoint.js';

/** how often every backend's discovery is fetched again */
const REFRESH_MS = 30_000;

const V2_ACCEPT = `application/json;g=${AGGREGATED_GROUP};v=v2;as=${AGGREGATED_KIND},application/json`;

interface RemoteGroupDoc {
  items?: { metadata?: { name?: string }; versions?: APIVersionDiscovery[] }[];
}

interface LegacyResource {
  name: string;
  singularName?: string;
  namespaced?: boolean;
  group?: string;
  version?: string;
  kind: string;
  verbs?: string[];
  shortNames?: string[];
  categories?: string[];
}

/** an APIResourceList turned into the aggregated form, for backends without it */
function fromLegacy(version: string, list: { resources?: LegacyResource[] }): APIVersionDiscovery {
  const top = new Map<string, Record<string, unknown>>();
  const resources = list.resources ?? [];
  for (const r of resources) {
    if (r.name.includes('/')) continue;
    const entry: Record<string, unknown> = {
      resource: r.name,
      responseKind: { group: r.group ?? '', version: r.version ?? '', kind: r.kind },
      scope: r.namespaced ? 'Namespaced' : 'Cluster',
      singularResource: r.singularName ?? '',
      verbs: r.verbs ?? [],
    };
    if (r.shortNames?.length) entry.shortNames = r.shortNames;
    if (r.categories?.length) entry.categories = r.categories;
    top.set(r.name, entry);
  }
  for (const r of resources) {
    const slash = r.name.indexOf('/');
    if (slash < 0) continue;
    const parent = top.get(r.name.slice(0, slash));
    if (!parent) continue;
    const subs = (parent.subresources as unknown[] | undefined) ?? [];
    subs.push({
      subresource: r.name.slice(slash + 1),
      responseKind: { group: r.group ?? '', version: r.version ?? '', kind: r.kind },
      verbs: r.verbs ?? [],
    });
    parent.subresources = subs;
  }
  const out: APIVersionDiscovery = { version, freshness: 'Current' };
  if (top.size > 0) out.resources = [...top.values()];
  return out;
}

function parseBounded(body: Buffer): unknown {
  if (jsonTooDeep(body)) throw new Error('discovery document nests too deeply');
  return JSON.parse(body.toString('utf8'));
}

/** The last discovery answer of every remote APIService, refreshed in the background. */
export class RemoteDiscovery {
  private readonly docs = new Map<string, { fingerprint: string; version: APIVersionDiscovery }>();
  private gen = 0;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly index: APIServiceIndex,
    private readonly resolver: ResourceResolver,
    private readonly agents: BackendAgents,
    private readonly log: Logger,
  ) {}

  /** grows whenever a backend's answer changes (or goes stale) */
  get generation(): number {
    return this.gen;
  }

  onChange(listener: () => void): void {
    this.listeners.add(listener);
  }

  versionOf(api: APIServiceView): APIVersionDiscovery | undefined {
    return this.docs.get(api.name)?.version;
  }

  private changed(): void {
    this.gen++;
    for (const l of this.listeners) l();
  }

  private async fetch(api: APIServiceView, signal: AbortSignal): Promise<APIVersionDiscovery> {
    const endpoint = await resolveServiceEndpoint(this.resolver, api.service!);
    if (!endpoint.ok) throw new Error(endpoint.message);
    const target = { api, ...endpoint };
    const headers = authProxyHeaders(AGGREGATOR_USER, ['system:masters'], undefined);
    const agent = this.agents.agentFor(api);
    const aggregated = await boundedGet(backendURL(target, '/apis'), {
      agent,
      headers: { ...headers, accept: V2_ACCEPT },
      maxBytes: MAX_BACKEND_DISCOVERY_BYTES,
      signal,
    });
    if (aggregated.status === 200 && String(aggregated.headers['content-type'] ?? '').includes(`as=${AGGREGATED_KIND}`)) {
      const doc = parseBounded(aggregated.body) as RemoteGroupDoc;
      const group = (doc.items ?? []).find((i) => (i.metadata?.name ?? '') === api.group);
      const version = group?.versions?.find((v) => v.version === api.version);
      if (!version) throw new Error(`${api.group}/${api.version} is not in the server's discovery`);
      return { version: api.version, ...(Array.isArray(version.resources) ? { resources: version.resources } : {}), freshness: 'Current' };
    }
    const legacy = await boundedGet(backendURL(target, `/apis/${api.group}/${api.version}`), {
      agent,
      headers: { ...headers, accept: 'application/json' },
      maxBytes: MAX_BACKEND_DISCOVERY_BYTES,
      signal,
    });
    if (legacy.status !== 200) throw new Error(`bad status from the server's discovery: ${legacy.status}`);
    return fromLegacy(api.version, parseBounded(legacy.body) as { resources?: LegacyResource[] });
  }

  /** fetches every remote APIService's discovery once */
  async refresh(signal: AbortSignal): Promise<void> {
    const remotes = this.index.remotes();
    let changed = false;
    const names = new Set(remotes.map((r) => r.name));
    for (const name of [...this.docs.keys()]) {
      if (!names.has(name)) {
        this.docs.delete(name);
        changed = true;
      }
    }
    await Promise.all(
      remotes.map(async (api) => {
        const previous = this.docs.get(api.name);
        try {
          const version = await this.fetch(api, signal);
          const fingerprint = JSON.stringify(version);
          if (previous?.fingerprint !== fingerprint) {
            this.docs.set(api.name, { fingerprint, version });
            changed = true;
          }
        } catch (err) {
          if (signal.aborted) return;
          this.log.v(1).info('aggregated discovery not fetched', { apiservice: api.name, error: (err as Error).message });
          if (previous && previous.version.freshness !== 'Stale') {
            const stale = { ...previous.version, freshness: 'Stale' as const };
            this.docs.set(api.name, { fingerprint: JSON.stringify(stale), version: stale });
            changed = true;
          }
        }
      }),
    );
    if (changed) this.changed();
  }

  /** refreshes every REFRESH_MS and whenever the APIServices change, until `signal` aborts */
  async run(signal: AbortSignal): Promise<void> {
    await refreshLoop(this.index, (sig) => this.refresh(sig), REFRESH_MS, signal);
  }
}

function apiServiceOrder(a: { priority: number; name: string }, b: { priority: number; name: string }): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** the local catalog with the remote APIServices' groups and versions added */
export function withAggregatedGroups(base: DiscoveryCatalog, index: APIServiceIndex): DiscoveryCatalog {
  const groups = (): APIGroupEntry[] => {
    const remotes = index.remotes();
    const local = base.groups();
    if (remotes.length === 0) return local;
    const entries = new Map<string, { entry: APIGroupEntry; firstName: string; versionPriority: Map<string, number> }>();
    for (const g of local) {
      const firstName = g.versions.map((v) => `${v}.${g.name}`).sort()[0] ?? g.name;
      entries.set(g.name, { entry: { ...g, versions: [...g.versions] }, firstName, versionPriority: new Map() });
    }
    for (const api of remotes) {
      if (api.group === '') continue;
      const name = `${api.version}.${api.group}`;
      let e = entries.get(api.group);
      if (!e) {
        e = {
          entry: { name: api.group, versions: [], preferredVersion: api.version, groupPriority: api.groupPriorityMinimum },
          firstName: name,
          versionPriority: new Map(),
        };
        entries.set(api.group, e);
      }
      e.versionPriority.set(api.version, api.versionPriority);
      if (!e.entry.versions.includes(api.version)) e.entry.versions.push(api.version);
      if (api.groupPriorityMinimum > e.entry.groupPriority || (api.groupPriorityMinimum === e.entry.groupPriority && name < e.firstName))
        e.firstName = name;
      e.entry.groupPriority = Math.max(e.entry.groupPriority, api.groupPriorityMinimum);
    }
    for (const e of entries.values()) {
      if (e.versionPriority.size === 0) continue;
      // remote versions join the local ones by version priority, then kube-aware version order
      const priority = (v: string): number => e.versionPriority.get(v) ?? 0;
      const localOrder = new Map(e.entry.versions.map((v, i) => [v, i]));
      e.entry.versions.sort((a, b) => {
        const la = e.versionPriority.has(a) ? undefined : localOrder.get(a);
        const lb = e.versionPriority.has(b) ? undefined : localOrder.get(b);
        if (la !== undefined && lb !== undefined) return la - lb;
        if (priority(a) !== priority(b)) return priority(b) - priority(a);
        return compareKubeAwareVersions(b, a);
      });
      e.entry.preferredVersion = e.entry.versions[0] ?? e.entry.preferredVersion;
    }
    return [...entries.values()]
      .sort((a, b) =>
        apiServiceOrder({ priority: a.entry.groupPriority, name: a.firstName }, { priority: b.entry.groupPriority, name: b.firstName }),
      )
      .map((e) => e.entry);
  };
  return {
    groups,
    resourcesFor: (group, version) => (index.remote(group, version) ? [] : base.resourcesFor(group, version)),
    isServed: (group, version) => index.remote(group, version) !== undefined || base.isServed(group, version),
  };
}

/** `/apis` in the aggregated form with every backend's resources in it */
function aggregatedApis(catalog: DiscoveryCatalog, index: APIServiceIndex, remote: RemoteDiscovery, form: 'v2' | 'v2beta1'): RawResponse {
  const items: APIGroupDiscovery[] = [];
  for (const item of aggregatedItems(catalog, 'apis')) {
    const group = item.metadata.name ?? '';
    const versions: APIVersionDiscovery[] = [];
    for (const v of item.versions) {
      const api = index.remote(group, v.version);
      if (!api) versions.push(v);
      else {
        const fetched = remote.versionOf(api);
        if (fetched) versions.push(fetched);
      }
    }
    if (versions.length > 0) items.push({ ...item, versions });
  }
  const doc = aggregatedDiscoveryOf(items, form);
  return { status: 200, body: doc.body, contentType: doc.contentType, etag: doc.etag, headers: { ...doc.headers } };
}

/** the discovery handler, with `/apis` in the aggregated form composed here when remote
 *  APIServices exist (the inner handler serves everything else from the overlaid catalog) */
export function withAggregatedDiscovery(
  inner: NonResourceHandler,
  catalog: () => DiscoveryCatalog,
  index: APIServiceIndex,
  remote: RemoteDiscovery,
  generation: () => string,
): NonResourceHandler {
  let cached: { key: string; answer: RawResponse } | undefined;
  return (req) => {
    if ((req.method === 'GET' || req.method === 'HEAD') && req.path.replace(/\/+$/, '') === '/apis' && index.remotes().length > 0) {
      const accept = Array.isArray(req.headers.accept) ? req.headers.accept.join(',') : req.headers.accept;
      const form = negotiateDiscovery(accept);
      if (form !== 'legacy') {
        const key = `${form} ${generation()}`;
        if (cached?.key !== key) cached = { key, answer: aggregatedApis(catalog(), index, remote, form) };
        return cached.answer;
      }
    }
    return inner(req);
  };
}
