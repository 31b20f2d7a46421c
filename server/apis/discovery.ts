// Discovery documents, byte for byte as kube-apiserver 1.33 writes them: field order of the Go
// structs, `apiVersion` stripped for the core group, a trailing newline (Go's json.Encoder),
// and the aggregated apidiscovery.k8s.io documents with their ETag.

import { createHash } from 'node:crypto';
import type { APIGroupEntry, Catalog } from './catalog.js';
import type { ResourceInfo } from './types.js';

/** What the HTTP layer writes: the body, its content type and, where kube-apiserver sends one,
 *  the ETag (already quoted) and headers to send with it. */
export interface DiscoveryResponse {
  /** shared between requests: write it, do not modify it */
  readonly body: Buffer;
  readonly contentType: string;
  readonly etag?: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** The part of the catalog discovery reads; a CRD-aware catalog can stand in for it. */
export type DiscoveryCatalog = Pick<Catalog, 'groups' | 'resourcesFor' | 'isServed'>;

// ---------------------------------------------------------------------------------------------
// Objects. Property order matters: it is the order of the fields of kube's Go structs.

export interface GroupVersionForDiscovery {
  groupVersion: string;
  version: string;
}

export interface APIGroupObject {
  kind?: 'APIGroup';
  apiVersion?: 'v1';
  name: string;
  versions: GroupVersionForDiscovery[];
  preferredVersion: GroupVersionForDiscovery;
}

export interface APIResourceObject {
  name: string;
  singularName: string;
  namespaced: boolean;
  group?: string;
  version?: string;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  storageVersionHash?: string;
}

export interface APIResourceListObject {
  kind: 'APIResourceList';
  apiVersion?: 'v1';
  groupVersion: string;
  resources: APIResourceObject[];
}

const JSON_TYPE = 'application/json';

function jsonBody(value: unknown): Buffer {
  // Go's json.Encoder ends every document with a newline
  return Buffer.from(`${JSON.stringify(value)}\n`);
}

function plain(value: unknown): DiscoveryResponse {
  return { body: jsonBody(value), contentType: JSON_TYPE, headers: {} };
}

const groupVersionString = (group: string, version: string): string => (group ? `${group}/${version}` : version);

export interface ServerAddressByClientCIDR {
  clientCIDR: string;
  serverAddress: string;
}

/** `/api`: kube-apiserver strips apiVersion from core discovery objects. `serverAddress` is the
 *  advertised host:port; kube-apiserver adds a second entry (service CIDR -> service IP:port)
 *  for clients inside the service network, which callers pass as `extra`. */
export function apiVersionsObject(serverAddress: string, extra: ServerAddressByClientCIDR[] = []): Record<string, unknown> {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [
      { clientCIDR: '0.0.0.0/0', serverAddress },
      ...extra.map((e) => ({ clientCIDR: e.clientCIDR, serverAddress: e.serverAddress })),
    ],
  };
}

function toAPIGroupObject(g: APIGroupEntry, withTypeMeta: boolean): APIGroupObject {
  const versions = g.versions.map((v) => ({ groupVersion: `${g.name}/${v}`, version: v }));
  const preferredVersion = { groupVersion: `${g.name}/${g.preferredVersion}`, version: g.preferredVersion };
  return withTypeMeta
    ? { kind: 'APIGroup', apiVersion: 'v1', name: g.name, versions, preferredVersion }
    : { name: g.name, versions, preferredVersion };
}

/** `/apis` as the aggregator serves it (no serverAddressByClientCIDRs). */
export function apiGroupListObject(catalog: DiscoveryCatalog): Record<string, unknown> {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: catalog.groups().map((g) => toAPIGroupObject(g, false)) };
}

/** `/apis/<group>`; undefined when nothing of the group is served. */
export function apiGroupObject(catalog: DiscoveryCatalog, group: string): APIGroupObject | undefined {
  const g = catalog.groups().find((e) => e.name === group);
  return g && toAPIGroupObject(g, true);
}

function toAPIResources(r: ResourceInfo): APIResourceObject[] {
  const main: APIResourceObject = {
    name: r.resource,
    singularName: r.singularName,
    namespaced: r.namespaced,
    kind: r.kind,
    verbs: [...r.verbs],
  };
  if (r.shortNames.length > 0) main.shortNames = [...r.shortNames];
  if (r.categories.length > 0) main.categories = [...r.categories];
  if (r.storageVersionHash) main.storageVersionHash = r.storageVersionHash;
  const subs = r.subresources.map((s): APIResourceObject => {
    // group and version appear only when the subresource speaks another group version's kind
    // (scale, eviction, token), as kube's GroupVersionKindProvider storages do
    const foreign = s.kind.group !== r.group || s.kind.version !== r.version;
    return foreign
      ? {
          name: `${r.resource}/${s.name}`,
          singularName: '',
          namespaced: r.namespaced,
          group: s.kind.group,
          version: s.kind.version,
          kind: s.kind.kind,
          verbs: [...s.verbs],
        }
      : { name: `${r.resource}/${s.name}`, singularName: '', namespaced: r.namespaced, kind: s.kind.kind, verbs: [...s.verbs] };
  });
  return [main, ...subs];
}

/** `/api/v1` and `/apis/<group>/<version>`; undefined when the group version is not served. */
export function apiResourceListObject(catalog: DiscoveryCatalog, group: string, version: string): APIResourceListObject | undefined {
  if (!catalog.isServed(group, version)) return undefined;
  // kube registers paths in sorted order, so `pods/status` sorts before `podtemplates`
  const resources = catalog.resourcesFor(group, version).flatMap(toAPIResources);
  resources.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const groupVersion = groupVersionString(group, version);
  return group === ''
    ? { kind: 'APIResourceList', groupVersion, resources }
    : { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources };
}

export function apiVersions(serverAddress: string, extra: ServerAddressByClientCIDR[] = []): DiscoveryResponse {
  return plain(apiVersionsObject(serverAddress, extra));
}

export function apiGroupList(catalog: DiscoveryCatalog): DiscoveryResponse {
  return plain(apiGroupListObject(catalog));
}

export function apiGroup(catalog: DiscoveryCatalog, group: string): DiscoveryResponse | undefined {
  const obj = apiGroupObject(catalog, group);
  return obj && plain(obj);
}

export function apiResourceList(catalog: DiscoveryCatalog, group: string, version: string): DiscoveryResponse | undefined {
  const obj = apiResourceListObject(catalog, group, version);
  return obj && plain(obj);
}

// ---------------------------------------------------------------------------------------------
// Aggregated discovery (apidiscovery.k8s.io/v2, and v2beta1 when allowed).

export type AggregatedVersion = 'v2' | 'v2beta1';
export const AGGREGATED_GROUP = 'apidiscovery.k8s.io';
export const AGGREGATED_KIND = 'APIGroupDiscoveryList';

interface GVK {
  group: string;
  version: string;
  kind: string;
}

interface APISubresourceDiscovery {
  subresource: string;
  responseKind: GVK;
  verbs: string[];
}

interface APIResourceDiscovery {
  resource: string;
  responseKind: GVK;
  scope: 'Cluster' | 'Namespaced';
  singularResource: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  subresources?: APISubresourceDiscovery[];
}

/** one version of a group in the aggregated document; `Stale` when an aggregated server's
 *  last answer is all there is */
export interface APIVersionDiscovery {
  version: string;
  resources?: unknown[];
  freshness: 'Current' | 'Stale';
}

export interface APIGroupDiscovery {
  metadata: { name?: string; creationTimestamp: null };
  versions: APIVersionDiscovery[];
}

/** kube's installer fills responseKind's group and version only for storages that name a
 *  foreign kind (scale, eviction, token); everything else carries empty strings. */
function responseKind(owner: ResourceInfo, kind: GVK): GVK {
  const foreign = kind.group !== owner.group || kind.version !== owner.version;
  return foreign ? { group: kind.group, version: kind.version, kind: kind.kind } : { group: '', version: '', kind: kind.kind };
}

function toResourceDiscovery(r: ResourceInfo): APIResourceDiscovery {
  const out: APIResourceDiscovery = {
    resource: r.resource,
    responseKind: { group: '', version: '', kind: r.kind },
    scope: r.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: r.singularName,
    verbs: [...r.verbs],
  };
  if (r.shortNames.length > 0) out.shortNames = [...r.shortNames];
  if (r.categories.length > 0) out.categories = [...r.categories];
  if (r.subresources.length > 0) {
    out.subresources = r.subresources.map((s) => ({ subresource: s.name, responseKind: responseKind(r, s.kind), verbs: [...s.verbs] }));
  }
  return out;
}

function groupDiscovery(catalog: DiscoveryCatalog, name: string, versions: string[]): APIGroupDiscovery {
  return {
    metadata: name ? { name, creationTimestamp: null } : { creationTimestamp: null },
    versions: versions.map((version) => {
      const resources = catalog.resourcesFor(name, version).map(toResourceDiscovery);
      return resources.length > 0 ? { version, resources, freshness: 'Current' as const } : { version, freshness: 'Current' as const };
    }),
  };
}

/** The items of the aggregated document for `/api` (core) or `/apis` (named groups). */
export function aggregatedItems(catalog: DiscoveryCatalog, root: 'api' | 'apis'): APIGroupDiscovery[] {
  if (root === 'api') return catalog.isServed('', 'v1') ? [groupDiscovery(catalog, '', ['v1'])] : [];
  // aggregated discovery orders groups by priority, then by name
  const groups = catalog
    .groups()
    .slice()
    .sort((a, b) =>
      a.groupPriority !== b.groupPriority ? b.groupPriority - a.groupPriority : a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
  return groups.map((g) => groupDiscovery(catalog, g.name, g.versions));
}

export function aggregatedContentType(version: AggregatedVersion): string {
  return `${JSON_TYPE};g=${AGGREGATED_GROUP};v=${version};as=${AGGREGATED_KIND}`;
}

// catalogs are immutable, so their documents can be kept as long as the catalog lives
const aggregatedCache = new WeakMap<DiscoveryCatalog, Map<string, DiscoveryResponse>>();

/** `/api` or `/apis` as an APIGroupDiscoveryList. The ETag is kube's: the upper-case hex
 *  SHA-512 of the list marshalled without its type meta, the same for v2 and v2beta1.
 *  Built once per catalog. */
export function aggregatedDiscovery(catalog: DiscoveryCatalog, root: 'api' | 'apis', version: AggregatedVersion = 'v2'): DiscoveryResponse {
  let perCatalog = aggregatedCache.get(catalog);
  if (!perCatalog) {
    perCatalog = new Map();
    aggregatedCache.set(catalog, perCatalog);
  }
  const key = `${root} ${version}`;
  let doc = perCatalog.get(key);
  if (!doc) {
    doc = buildAggregatedDiscovery(catalog, root, version);
    perCatalog.set(key, doc);
  }
  return doc;
}

function buildAggregatedDiscovery(catalog: DiscoveryCatalog, root: 'api' | 'apis', version: AggregatedVersion): DiscoveryResponse {
  return aggregatedDiscoveryOf(aggregatedItems(catalog, root), version);
}

/** the aggregated document of these items, with kube's ETag */
export function aggregatedDiscoveryOf(items: APIGroupDiscovery[], version: AggregatedVersion): DiscoveryResponse {
  const hash = createHash('sha512')
    .update(JSON.stringify({ metadata: {}, items }))
    .digest('hex')
    .toUpperCase();
  const body = jsonBody({ kind: AGGREGATED_KIND, apiVersion: `${AGGREGATED_GROUP}/${version}`, metadata: {}, items });
  return Object.freeze({
    body,
    contentType: aggregatedContentType(version),
    etag: JSON.stringify(hash),
    headers: Object.freeze({ Vary: 'Accept', 'Cache-Control': 'public' }),
  });
}

/** True when the client's If-None-Match names this document: answer 304 with the same ETag,
 *  Vary and Cache-Control headers and no body. */
export function discoveryNotModified(doc: DiscoveryResponse, ifNoneMatch: string | undefined): boolean {
  // kube compares the header verbatim with the quoted hash
  return doc.etag !== undefined && ifNoneMatch === doc.etag;
}

// ---------------------------------------------------------------------------------------------
// Negotiation: which form of `/api` and `/apis` the Accept header asks for.

interface AcceptClause {
  type: string;
  subtype: string;
  params: Map<string, string>;
  q: number;
}

/** Parses an Accept header like goautoneg: clauses ordered by descending q, order kept on ties. */
export function parseAccept(header: string): AcceptClause[] {
  const clauses: AcceptClause[] = [];
  for (const part of header.split(',')) {
    const [mediaRange = '', ...rawParams] = part.split(';').map((s) => s.trim());
    if (!mediaRange) continue;
    const [type = '', subtype = '*'] = mediaRange.split('/');
    const params = new Map<string, string>();
    let q = 1;
    for (const p of rawParams) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const key = p.slice(0, eq).trim();
      const value = p.slice(eq + 1).trim();
      if (key === 'q') q = Number.parseFloat(value);
      else params.set(key, value);
    }
    clauses.push({ type: type.toLowerCase(), subtype: subtype.toLowerCase(), params, q: Number.isNaN(q) ? 0 : q });
  }
  return clauses
    .map((c, i) => ({ c, i }))
    .sort((a, b) => (b.c.q !== a.c.q ? b.c.q - a.c.q : a.i - b.i))
    .map(({ c }) => c)
    .filter((c) => c.q > 0);
}

export interface DiscoveryNegotiationOptions {
  /** serve apidiscovery.k8s.io/v2beta1 too; kube-apiserver 1.33 does not (AggregatedDiscoveryRemoveBetaType) */
  allowV2beta1?: boolean;
}

/** 'v2' / 'v2beta1' when some clause of the Accept header asks for the aggregated JSON form
 *  (kube-apiserver skips clauses without the g/v/as parameters, so that form wins wherever it
 *  appears); 'legacy' otherwise. */
export function negotiateDiscovery(accept: string | undefined, opts: DiscoveryNegotiationOptions = {}): AggregatedVersion | 'legacy' {
  if (!accept) return 'legacy';
  for (const c of parseAccept(accept)) {
    const jsonCompatible = (c.type === 'application' || c.type === '*') && (c.subtype === 'json' || c.subtype === '*');
    if (!jsonCompatible) continue;
    if (c.params.get('g') !== AGGREGATED_GROUP || c.params.get('as') !== AGGREGATED_KIND) continue;
    const v = c.params.get('v');
    if (v === 'v2') return 'v2';
    if (v === 'v2beta1' && opts.allowV2beta1) return 'v2beta1';
  }
  return 'legacy';
}
