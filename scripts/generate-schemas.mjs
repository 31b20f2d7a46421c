#!/usr/bin/env node
// Reads the upstream Kubernetes 1.33 OpenAPI v2 document and writes kapi's own compact
// artifacts into server/apis/generated/:
//   schemas.json   - every definition's structure and x-kubernetes-* markers, no prose
//   resources.json - the resource catalog (group versions, resources, verbs, kinds, scope,
//                    subresources) derived from the document's paths, plus the facts that
//                    OpenAPI does not carry (short names, categories, storage versions,
//                    discovery priorities, which group versions are on by default)
//
// Usage: node scripts/generate-schemas.mjs [path/to/openapi-v2.json]
// Plain Node ESM on purpose: it runs before anything is compiled.

import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const inputPath = process.argv[2] ?? join(repoRoot, '..', 'shared', 'k8s', 'openapi-v2-1.33.json');
const outDir = join(repoRoot, 'server/apis/generated');

// ---------------------------------------------------------------------------------------------
// Facts about kube-apiserver 1.33 that the OpenAPI document does not carry.

/** Group versions kube-apiserver 1.33 serves without --runtime-config (DefaultAPIResourceConfigSource
 *  of kube-apiserver, plus the apiextensions and aggregator servers it chains). Every alpha and
 *  beta version is off by default in 1.33. */
const DEFAULT_ENABLED = new Set([
  'v1',
  'admissionregistration.k8s.io/v1',
  'apiextensions.k8s.io/v1',
  'apiregistration.k8s.io/v1',
  'apps/v1',
  'authentication.k8s.io/v1',
  'authorization.k8s.io/v1',
  'autoscaling/v1',
  'autoscaling/v2',
  'batch/v1',
  'certificates.k8s.io/v1',
  'coordination.k8s.io/v1',
  'discovery.k8s.io/v1',
  'events.k8s.io/v1',
  'flowcontrol.apiserver.k8s.io/v1',
  'networking.k8s.io/v1',
  'node.k8s.io/v1',
  'policy/v1',
  'rbac.authorization.k8s.io/v1',
  'scheduling.k8s.io/v1',
  'storage.k8s.io/v1',
]);

/** APIService priorities kube-apiserver 1.33 registers (group priority minimum, version priority).
 *  Discovery lists groups by descending group priority, then by name, and versions inside a group
 *  by descending version priority. The aggregator puts its own group first (20001). */
const PRIORITIES = {
  '': { group: 18000, versions: { v1: 1 } },
  'apiregistration.k8s.io': { group: 20001, versions: { v1: 15 } },
  apps: { group: 17800, versions: { v1: 15 } },
  'events.k8s.io': { group: 17750, versions: { v1: 15 } },
  'authentication.k8s.io': { group: 17700, versions: { v1: 15, v1beta1: 9, v1alpha1: 1 } },
  'authorization.k8s.io': { group: 17600, versions: { v1: 15 } },
  autoscaling: { group: 17500, versions: { v2: 30, v1: 15 } },
  batch: { group: 17400, versions: { v1: 15 } },
  'certificates.k8s.io': { group: 17300, versions: { v1: 15, v1beta1: 9, v1alpha1: 1 } },
  'networking.k8s.io': { group: 17200, versions: { v1: 15, v1beta1: 9 } },
  policy: { group: 17100, versions: { v1: 15 } },
  'rbac.authorization.k8s.io': { group: 17000, versions: { v1: 15 } },
  'storage.k8s.io': { group: 16800, versions: { v1: 15, v1beta1: 9, v1alpha1: 1 } },
  'admissionregistration.k8s.io': { group: 16700, versions: { v1: 15, v1beta1: 12, v1alpha1: 9 } },
  'apiextensions.k8s.io': { group: 16700, versions: { v1: 15 } },
  'scheduling.k8s.io': { group: 16600, versions: { v1: 15 } },
  'coordination.k8s.io': { group: 16500, versions: { v1: 15, v1beta1: 13, v1alpha2: 12 } },
  'node.k8s.io': { group: 16300, versions: { v1: 15 } },
  'discovery.k8s.io': { group: 16200, versions: { v1: 15 } },
  'resource.k8s.io': { group: 16200, versions: { v1beta2: 15, v1beta1: 9, v1alpha3: 1 } },
  'flowcontrol.apiserver.k8s.io': { group: 16100, versions: { v1: 21 } },
  'internal.apiserver.k8s.io': { group: 16000, versions: { v1alpha1: 9 } },
  'storagemigration.k8s.io': { group: 15800, versions: { v1alpha1: 9 } },
};

/** Short names (kubectl's `SHORTNAMES`), keyed by group/resource; the same in every version. */
const SHORT_NAMES = {
  '/componentstatuses': ['cs'],
  '/configmaps': ['cm'],
  '/endpoints': ['ep'],
  '/events': ['ev'],
  '/limitranges': ['limits'],
  '/namespaces': ['ns'],
  '/nodes': ['no'],
  '/persistentvolumeclaims': ['pvc'],
  '/persistentvolumes': ['pv'],
  '/pods': ['po'],
  '/replicationcontrollers': ['rc'],
  '/resourcequotas': ['quota'],
  '/serviceaccounts': ['sa'],
  '/services': ['svc'],
  'apiextensions.k8s.io/customresourcedefinitions': ['crd', 'crds'],
  'apps/daemonsets': ['ds'],
  'apps/deployments': ['deploy'],
  'apps/replicasets': ['rs'],
  'apps/statefulsets': ['sts'],
  'autoscaling/horizontalpodautoscalers': ['hpa'],
  'batch/cronjobs': ['cj'],
  'certificates.k8s.io/certificatesigningrequests': ['csr'],
  'events.k8s.io/events': ['ev'],
  'networking.k8s.io/ingresses': ['ing'],
  'networking.k8s.io/ipaddresses': ['ip'],
  'networking.k8s.io/networkpolicies': ['netpol'],
  'policy/poddisruptionbudgets': ['pdb'],
  'scheduling.k8s.io/priorityclasses': ['pc'],
  'storage.k8s.io/storageclasses': ['sc'],
  'storage.k8s.io/volumeattributesclasses': ['vac'],
};

/** Categories (`kubectl get all`, `kubectl get api-extensions`), keyed by group/resource. */
const CATEGORIES = {
  '/pods': ['all'],
  '/replicationcontrollers': ['all'],
  '/services': ['all'],
  'apps/daemonsets': ['all'],
  'apps/deployments': ['all'],
  'apps/replicasets': ['all'],
  'apps/statefulsets': ['all'],
  'autoscaling/horizontalpodautoscalers': ['all'],
  'batch/cronjobs': ['all'],
  'batch/jobs': ['all'],
  'admissionregistration.k8s.io/mutatingadmissionpolicies': ['api-extensions'],
  'admissionregistration.k8s.io/mutatingadmissionpolicybindings': ['api-extensions'],
  'admissionregistration.k8s.io/mutatingwebhookconfigurations': ['api-extensions'],
  'admissionregistration.k8s.io/validatingadmissionpolicies': ['api-extensions'],
  'admissionregistration.k8s.io/validatingadmissionpolicybindings': ['api-extensions'],
  'admissionregistration.k8s.io/validatingwebhookconfigurations': ['api-extensions'],
  'apiextensions.k8s.io/customresourcedefinitions': ['api-extensions'],
  'apiregistration.k8s.io/apiservices': ['api-extensions'],
};

/** Where kapi stores a resource when that is not simply the version it is served in:
 *  HorizontalPodAutoscalers of autoscaling/v1 and v2 are one object stored as autoscaling/v2;
 *  events.k8s.io Events cohabit with core Events (same etcd keys, core v1 encoding). For the
 *  alpha/beta-only resources: the newest version that a 1.32 server already knew, as 1.33 does. */
const STORAGE_OVERRIDES = {
  'autoscaling/horizontalpodautoscalers': { group: 'autoscaling', version: 'v2' },
  'events.k8s.io/events': { group: '', version: 'v1' },
  'coordination.k8s.io/leasecandidates': { group: 'coordination.k8s.io', version: 'v1alpha2' },
  'certificates.k8s.io/clustertrustbundles': { group: 'certificates.k8s.io', version: 'v1alpha1' },
  'resource.k8s.io/deviceclasses': { group: 'resource.k8s.io', version: 'v1beta1' },
  'resource.k8s.io/resourceclaims': { group: 'resource.k8s.io', version: 'v1beta1' },
  'resource.k8s.io/resourceclaimtemplates': { group: 'resource.k8s.io', version: 'v1beta1' },
  'resource.k8s.io/resourceslices': { group: 'resource.k8s.io', version: 'v1beta1' },
};

/** Resources whose storage version kube-apiserver 1.33 advertises (storageVersionHash) differs
 *  from kapi's storage version: kube still encodes CRDs as v1beta1, and keeps the freshly-GA
 *  IPAddress/ServiceCIDR in v1beta1 so that a 1.32 server can read them back. Clients only see
 *  the hash, so kapi advertises kube's value and stores the served version. */
const ADVERTISED_STORAGE_VERSION = {
  'apiextensions.k8s.io/customresourcedefinitions': 'v1beta1',
  'networking.k8s.io/ipaddresses': 'v1beta1',
  'networking.k8s.io/servicecidrs': 'v1beta1',
};

/** Served resources that kube 1.33 deprecates: the API lifecycle of their kinds in k8s.io/api
 *  v0.33 (`+k8s:prerelease-lifecycle-gen` markers, and core/v1's lifecycle.go), limited to
 *  those deprecated in 1.33 or before. kube-apiserver's warning names the kind, the release
 *  that deprecated it, the release that removes it and the replacement, in that order. */
const DEPRECATIONS = {
  '/v1/componentstatuses': { kind: 'ComponentStatus', deprecated: '1.19' },
  '/v1/endpoints': { kind: 'Endpoints', deprecated: '1.33', replacement: 'discovery.k8s.io/v1 EndpointSlice' },
  'admissionregistration.k8s.io/v1beta1/validatingadmissionpolicies': {
    kind: 'ValidatingAdmissionPolicy',
    deprecated: '1.31',
    removed: '1.34',
  },
  'admissionregistration.k8s.io/v1beta1/validatingadmissionpolicybindings': {
    kind: 'ValidatingAdmissionPolicyBinding',
    deprecated: '1.31',
    removed: '1.34',
  },
  'storage.k8s.io/v1alpha1/volumeattributesclasses': { kind: 'VolumeAttributesClass', deprecated: '1.32', removed: '1.35' },
  'storagemigration.k8s.io/v1alpha1/storageversionmigrations': { kind: 'StorageVersionMigration', deprecated: '1.33', removed: '1.36' },
};

function deprecationWarning(group, version, d) {
  const groupVersion = group === '' ? version : `${group}/${version}`;
  let text = `${groupVersion} ${d.kind} is deprecated in v${d.deprecated}+`;
  if (d.removed) text += `, unavailable in v${d.removed}+`;
  if (d.replacement) text += `; use ${d.replacement}`;
  return text;
}

/** Resources that are not persisted: discovery shows no storageVersionHash for them. */
const NOT_STORED = new Set([
  '/bindings',
  '/componentstatuses',
  'authentication.k8s.io/selfsubjectreviews',
  'authentication.k8s.io/tokenreviews',
  'authorization.k8s.io/localsubjectaccessreviews',
  'authorization.k8s.io/selfsubjectaccessreviews',
  'authorization.k8s.io/selfsubjectrulesreviews',
  'authorization.k8s.io/subjectaccessreviews',
]);

// ---------------------------------------------------------------------------------------------

const doc = JSON.parse(readFileSync(inputPath, 'utf8'));

const DEF_PREFIX = '#/definitions/';
const refTarget = (ref) => {
  if (!ref.startsWith(DEF_PREFIX)) throw new Error(`unexpected $ref ${ref}`);
  return ref.slice(DEF_PREFIX.length);
};

/** One schema node in compact form. Keys: t type, f format, ref, p properties, r required,
 *  i items, ap additionalProperties, gvk, lt list-type, lk list-map-keys, mt map-type,
 *  pmk patch-merge-key, ps patch-strategy, ios int-or-string, puf preserve-unknown-fields,
 *  er embedded-resource, un unions. Descriptions are dropped on purpose. */
function compact(node) {
  const out = {};
  if (node.$ref) out.ref = refTarget(node.$ref);
  if (node.type !== undefined) out.t = node.type;
  if (node.format !== undefined) out.f = node.format;
  if (node.properties) {
    out.p = {};
    for (const name of Object.keys(node.properties).sort()) out.p[name] = compact(node.properties[name]);
  }
  if (node.required) out.r = [...node.required];
  if (node.items) out.i = compact(node.items);
  if (node.additionalProperties !== undefined) {
    out.ap = typeof node.additionalProperties === 'boolean' ? node.additionalProperties : compact(node.additionalProperties);
  }
  const x = (key, short) => {
    if (node[key] !== undefined) out[short] = node[key];
  };
  x('x-kubernetes-group-version-kind', 'gvk');
  x('x-kubernetes-list-type', 'lt');
  x('x-kubernetes-list-map-keys', 'lk');
  x('x-kubernetes-map-type', 'mt');
  x('x-kubernetes-patch-merge-key', 'pmk');
  x('x-kubernetes-patch-strategy', 'ps');
  x('x-kubernetes-int-or-string', 'ios');
  x('x-kubernetes-preserve-unknown-fields', 'puf');
  x('x-kubernetes-embedded-resource', 'er');
  if (node['x-kubernetes-unions']) out.un = node['x-kubernetes-unions'];
  const known = new Set([
    '$ref',
    'type',
    'format',
    'properties',
    'required',
    'items',
    'additionalProperties',
    'description',
    'x-kubernetes-group-version-kind',
    'x-kubernetes-list-type',
    'x-kubernetes-list-map-keys',
    'x-kubernetes-map-type',
    'x-kubernetes-patch-merge-key',
    'x-kubernetes-patch-strategy',
    'x-kubernetes-int-or-string',
    'x-kubernetes-preserve-unknown-fields',
    'x-kubernetes-embedded-resource',
    'x-kubernetes-unions',
  ]);
  for (const key of Object.keys(node)) {
    if (!known.has(key)) throw new Error(`schema key ${key} is not handled; extend compact()`);
  }
  return out;
}

function buildSchemas() {
  const schemas = {};
  for (const name of Object.keys(doc.definitions).sort()) {
    const node = compact(doc.definitions[name]);
    // IntOrString is a string with format int-or-string in v2; say so explicitly for validators.
    if (node.f === 'int-or-string') node.ios = true;
    schemas[name] = node;
  }
  return schemas;
}

// ---------------------------------------------------------------------------------------------
// The catalog, read off the paths.

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
const ACTION_VERB = {
  get: 'get',
  list: 'list',
  post: 'create',
  put: 'update',
  patch: 'patch',
  delete: 'delete',
  deletecollection: 'deletecollection',
  watch: 'watch',
  watchlist: 'watch',
};
const CONNECT_VERB = { get: 'get', post: 'create', put: 'update', patch: 'patch', delete: 'delete' };

/** Splits a path into group, version and the segments after them; null for non-resource paths. */
function splitPath(path) {
  let m = /^\/api\/(v1)\/(.*)$/.exec(path);
  if (m) return { group: '', version: m[1], rest: m[2] };
  m = /^\/apis\/([^/]+)\/([^/]+)\/(.*)$/.exec(path);
  if (m) return { group: m[1], version: m[2], rest: m[3] };
  return null;
}

/** Reads one path's shape: resource, subresource, whether it is namespaced. */
function parseRest(rest) {
  let segs = rest.split('/').filter(Boolean);
  if (segs.length === 0) return null;
  let isWatchPath = false;
  if (segs[0] === 'watch') {
    isWatchPath = true;
    segs = segs.slice(1);
  }
  let namespaced = false;
  if (segs[0] === 'namespaces' && segs[1] === '{namespace}' && segs.length >= 3) {
    namespaced = true;
    segs = segs.slice(2);
  }
  const [resource, name, subresource, ...tail] = segs;
  if (!resource) return null;
  if (name !== undefined && name !== '{name}') throw new Error(`unexpected path shape ${rest}`);
  if (tail.length > 0 && !(tail.length === 1 && tail[0] === '{path}')) throw new Error(`unexpected path tail ${rest}`);
  return { resource, hasName: name !== undefined, subresource, namespaced, isWatchPath };
}

function gvkKey(gvk) {
  return `${gvk.group}/${gvk.version}/${gvk.kind}`;
}

function buildCatalog() {
  // GVK -> definition name, from the definitions' own markers.
  const defByGVK = new Map();
  for (const [name, def] of Object.entries(doc.definitions)) {
    const gvks = def['x-kubernetes-group-version-kind'] ?? [];
    if (gvks.length !== 1) continue;
    defByGVK.set(gvkKey(gvks[0]), name);
  }

  /** key group/version/resource -> accumulating info */
  const found = new Map();
  const entry = (group, version, resource) => {
    const key = `${group}/${version}/${resource}`;
    let e = found.get(key);
    if (!e) {
      e = {
        group,
        version,
        resource,
        namespacedPaths: false,
        clusterPaths: false,
        verbs: new Set(),
        kind: null,
        listDef: null,
        subresources: new Map(),
      };
      found.set(key, e);
    }
    return e;
  };

  for (const [path, item] of Object.entries(doc.paths)) {
    const split = splitPath(path);
    if (!split) continue;
    const shape = parseRest(split.rest);
    if (!shape) continue;
    const e = entry(split.group, split.version, shape.resource);
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!op) continue;
      const action = op['x-kubernetes-action'];
      const gvk = op['x-kubernetes-group-version-kind'];
      if (!action || !gvk) throw new Error(`operation without action or gvk: ${method} ${path}`);
      if (shape.subresource) {
        let sub = e.subresources.get(shape.subresource);
        if (!sub) {
          sub = { name: shape.subresource, kind: gvk, verbs: new Set() };
          e.subresources.set(shape.subresource, sub);
        }
        if (gvkKey(sub.kind) !== gvkKey(gvk)) throw new Error(`subresource kinds disagree at ${path}`);
        const verb = action === 'connect' ? CONNECT_VERB[method] : ACTION_VERB[action];
        if (verb) sub.verbs.add(verb);
        if (shape.namespaced) e.namespacedPaths = true;
        else e.clusterPaths = true;
        continue;
      }
      const verb = ACTION_VERB[action];
      if (!verb) throw new Error(`unexpected action ${action} at ${method} ${path}`);
      e.verbs.add(verb);
      if (e.kind && gvkKey(e.kind) !== gvkKey(gvk)) throw new Error(`resource kinds disagree at ${path}`);
      e.kind = gvk;
      if (action === 'list') {
        const ref = op.responses?.['200']?.schema?.$ref;
        if (ref) e.listDef = refTarget(ref);
      }
      // A namespaced resource also has all-namespace list/watch paths without the namespace
      // segment; only item and create paths decide the scope.
      const listOnly = action === 'list' || action === 'watchlist';
      if (shape.namespaced) e.namespacedPaths = true;
      else if (!(listOnly && !shape.hasName)) e.clusterPaths = true;
    }
  }

  const resources = [];
  for (const e of found.values()) {
    const gr = `${e.group}/${e.resource}`;
    if (!e.kind) throw new Error(`no kind for ${gr} ${e.version}`);
    const namespaced = e.namespacedPaths;
    if (e.namespacedPaths && e.clusterPaths) {
      throw new Error(`${gr} has namespaced and cluster-scoped item paths`);
    }
    if (e.kind.group !== e.group || e.kind.version !== e.version) {
      throw new Error(`${gr} ${e.version} serves a foreign kind ${gvkKey(e.kind)}`);
    }
    const definition = defByGVK.get(gvkKey(e.kind));
    if (!definition) throw new Error(`no definition for ${gvkKey(e.kind)}`);
    let listKind = '';
    if (e.listDef) {
      const listGVK = doc.definitions[e.listDef]['x-kubernetes-group-version-kind']?.[0];
      listKind = listGVK ? listGVK.kind : e.listDef.split('.').pop();
    }
    resources.push({
      group: e.group,
      version: e.version,
      resource: e.resource,
      singularName: e.kind.kind.toLowerCase(),
      kind: e.kind.kind,
      listKind,
      namespaced,
      verbs: [...e.verbs].sort(),
      shortNames: SHORT_NAMES[gr] ?? [],
      categories: CATEGORIES[gr] ?? [],
      subresources: [...e.subresources.values()]
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        .map((s) => ({
          name: s.name,
          kind: { group: s.kind.group, version: s.kind.version, kind: s.kind.kind },
          verbs: [...s.verbs].sort(),
        })),
      storageVersion: '', // filled below, once every version of the group is known
      preferredVersion: '',
      storageVersionHash: '',
      definition,
    });
  }

  // Group versions and their default enablement.
  const gvs = new Map();
  for (const r of resources) {
    const gv = r.group ? `${r.group}/${r.version}` : r.version;
    if (!gvs.has(gv)) {
      const prio = PRIORITIES[r.group];
      const versionPriority = prio?.versions[r.version];
      if (!prio || versionPriority === undefined) throw new Error(`no discovery priority for ${gv}; add it to PRIORITIES`);
      gvs.set(gv, {
        group: r.group,
        version: r.version,
        groupPriority: prio.group,
        versionPriority,
        enabledByDefault: DEFAULT_ENABLED.has(gv),
      });
    }
  }
  for (const gv of DEFAULT_ENABLED) {
    if (!gvs.has(gv)) throw new Error(`default group version ${gv} has no paths in the document`);
  }

  // Storage version and its hash; preferred version as served by default.
  const byGroup = new Map();
  for (const r of resources) {
    if (!byGroup.has(r.group)) byGroup.set(r.group, []);
    byGroup.get(r.group).push(r);
  }
  for (const r of resources) {
    const gr = `${r.group}/${r.resource}`;
    const siblings = byGroup.get(r.group).filter((s) => s.resource === r.resource);
    const defaultServed = siblings.filter((s) => gvs.get(s.group ? `${s.group}/${s.version}` : s.version).enabledByDefault);
    let storage = STORAGE_OVERRIDES[gr];
    if (!storage) {
      const pool = defaultServed.length > 0 ? defaultServed : siblings;
      const best = pool.slice().sort((a, b) => PRIORITIES[r.group].versions[b.version] - PRIORITIES[r.group].versions[a.version])[0];
      storage = { group: r.group, version: best.version };
    }
    r.storageVersion = storage.version;
    if (storage.group !== r.group) r.storageGroup = storage.group;
    const storedKind = r.kind;
    const advertised = ADVERTISED_STORAGE_VERSION[gr] ?? storage.version;
    r.storageVersionHash = NOT_STORED.has(gr) ? '' : storageVersionHash(storage.group, advertised, storedKind);
    const defaultVersions = [...gvs.values()].filter((g) => g.group === r.group && g.enabledByDefault);
    const preferredPool = defaultVersions.length > 0 ? defaultVersions : [...gvs.values()].filter((g) => g.group === r.group);
    r.preferredVersion = preferredPool.sort((a, b) => b.versionPriority - a.versionPriority)[0].version;
    const deprecation = DEPRECATIONS[`${r.group}/${r.version}/${r.resource}`];
    if (deprecation) {
      r.deprecated = true;
      r.deprecationWarning = deprecationWarning(r.group, r.version, deprecation);
      if (deprecation.removed) r.removedRelease = deprecation.removed;
    }
  }

  resources.sort((a, b) => {
    const ka = `${a.group}\u0000${a.version}\u0000${a.resource}`;
    const kb = `${b.group}\u0000${b.version}\u0000${b.resource}`;
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
  const groupVersions = [...gvs.values()].sort((a, b) => {
    const ka = `${a.group}\u0000${a.version}`;
    const kb = `${b.group}\u0000${b.version}`;
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
  return { groupVersions, resources };
}

/** kube-apiserver's storage version hash: base64 of the first 8 bytes of sha256("g/v/Kind"). */
function storageVersionHash(group, version, kind) {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

// ---------------------------------------------------------------------------------------------

mkdirSync(outDir, { recursive: true });
const schemas = buildSchemas();
const catalog = buildCatalog();
// One definition per line keeps diffs readable while staying compact.
const schemaLines = Object.entries(schemas).map(([name, node]) => `${JSON.stringify(name)}:${JSON.stringify(node)}`);
writeFileSync(join(outDir, 'schemas.json'), `{\n${schemaLines.join(',\n')}\n}\n`);
writeFileSync(
  join(outDir, 'resources.json'),
  `{\n"source": ${JSON.stringify({ kubernetes: '1.33', info: doc.info })},\n` +
    `"groupVersions": [\n${catalog.groupVersions.map((g) => JSON.stringify(g)).join(',\n')}\n],\n` +
    `"resources": [\n${catalog.resources.map((r) => JSON.stringify(r)).join(',\n')}\n]\n}\n`,
);
// The catalog's keys as types, so that a table keyed by resource or kind does not compile
// with a key the catalog lacks.
const union = (keys) =>
  [...new Set(keys)]
    .sort()
    .map((k) => `  | ${JSON.stringify(k)}`)
    .join('\n');
writeFileSync(
  join(outDir, 'resource-keys.ts'),
  '// Generated by scripts/generate-schemas.mjs from the Kubernetes 1.33 OpenAPI document; do not edit.\n\n' +
    '/** `<group>/<resource>` of every built-in resource (`/pods` for the core group) */\n' +
    `export type ResourceKey =\n${union(catalog.resources.map((r) => `${r.group}/${r.resource}`))};\n\n` +
    '/** `<group>/<version>/<Kind>` of every built-in kind (`/v1/Pod` for the core group) */\n' +
    `export type KindKey =\n${union(catalog.resources.filter((r) => r.kind).map((r) => `${r.group}/${r.version}/${r.kind}`))};\n`,
);
// A digest of every definition as kube serves it but for descriptions, so that a checkout
// without the reference document can still prove /openapi/v2 serves the same definitions.
const withoutDescriptions = (schema) => {
  if (Array.isArray(schema)) return schema.map(withoutDescriptions);
  if (!schema || typeof schema !== 'object') return schema;
  const out = {};
  for (const k of Object.keys(schema).sort()) {
    if (k === 'description') continue;
    const v = schema[k];
    out[k] =
      k === 'properties' && v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((name) => [name, withoutDescriptions(v[name])]),
          )
        : withoutDescriptions(v);
  }
  return out;
};
const digests = Object.fromEntries(
  Object.keys(doc.definitions)
    .sort()
    .map((name) => [
      name,
      createHash('sha256')
        .update(JSON.stringify(withoutDescriptions(doc.definitions[name])))
        .digest('hex')
        .slice(0, 16),
    ]),
);
writeFileSync(join(outDir, 'definition-digests.json'), `${JSON.stringify(digests, null, 0).replace(/,"/g, ',\n"')}\n`);
const enabled = catalog.resources.filter((r) => DEFAULT_ENABLED.has(r.group ? `${r.group}/${r.version}` : r.version));
console.log(
  `schemas.json: ${Object.keys(schemas).length} definitions; resources.json: ${catalog.resources.length} resources ` +
    `in ${catalog.groupVersions.length} group versions (${enabled.length} served by default)`,
);
