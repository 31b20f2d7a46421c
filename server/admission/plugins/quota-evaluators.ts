// What ResourceQuota counts, shared by the admission plugin (./resource-quota.ts) and the
// quota controller (server/controllers/resource-quota.ts), after kube's quota evaluators
// (k8s.io/apiserver pkg/quota/v1 and kubernetes pkg/quota/v1/evaluator/core):
// - pods: `pods`, `count/pods`, cpu/memory/ephemeral-storage requests (also bare `cpu`,
//   `memory`) and limits, hugepages and extended resources as `requests.<name>`; scopes
//   (Terminating, NotTerminating, BestEffort, NotBestEffort, PriorityClass,
//   CrossNamespacePodAffinity); a pod in a terminal phase counts only for `count/pods`;
// - services: `services`, `count/services`, `services.nodeports`, `services.loadbalancers`;
// - persistentvolumeclaims: `persistentvolumeclaims`, `count/...`, `requests.storage`, and
//   both per StorageClass (`<class>.storageclass.storage.k8s.io/<resource>`);
// - configmaps, secrets, replicationcontrollers, resourcequotas: their count under both names;
// - anything else: `count/<resource>[.<group>]`, counted on create.

import type { KubeObject } from '../../../storage/interface.js';
import { asArray, asObject, isObject, type JsonObject } from '../../registry/object.js';
import { formatQuantity, parseQuantity, quantitySign, compareQuantities, type Quantity } from '../../machinery/quantity.js';
import type { AdmissionAttributes } from '../../registry/rest.js';

export type ResourceList = Map<string, Quantity>;

// ---- resource lists (kube's quota/v1 resources.go) ----

const zero: Quantity = { unscaled: 0n, exp10: 0, format: 'DecimalSI' };
const one: Quantity = { unscaled: 1n, exp10: 0, format: 'DecimalSI' };
const count = (n: number): Quantity => ({ unscaled: BigInt(n), exp10: 0, format: 'DecimalSI' });

function align(a: Quantity, b: Quantity): [bigint, bigint, number] {
  const e = Math.min(a.exp10, b.exp10);
  return [a.unscaled * 10n ** BigInt(a.exp10 - e), b.unscaled * 10n ** BigInt(b.exp10 - e), e];
}

/** a + b; the sum keeps a's format unless a is zero (as Quantity.Add does) */
export function addQuantity(a: Quantity, b: Quantity): Quantity {
  const [x, y, e] = align(a, b);
  return { unscaled: x + y, exp10: e, format: a.unscaled === 0n ? b.format : a.format };
}

export function subQuantity(a: Quantity, b: Quantity): Quantity {
  const [x, y, e] = align(a, b);
  return { unscaled: x - y, exp10: e, format: a.format };
}

const maxQuantity = (a: Quantity, b: Quantity): Quantity => (compareQuantities(a, b) >= 0 ? a : b);

/** a ResourceList read from JSON (values that do not parse are left out) */
export function parseResourceList(v: unknown): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, q] of Object.entries(asObject(v))) {
    if (typeof q !== 'string' && typeof q !== 'number') continue;
    try {
      out.set(k, parseQuantity(q));
    } catch {
      // validation keeps such values out of storage
    }
  }
  return out;
}

export function resourceListJson(list: ResourceList): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of [...list.keys()].sort()) out[k] = formatQuantity(list.get(k) as Quantity);
  return out;
}

export function addLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, v] of a) out.set(k, b.has(k) ? addQuantity(v, b.get(k) as Quantity) : v);
  for (const [k, v] of b) if (!out.has(k)) out.set(k, v);
  return out;
}

export function subtractNonNegative(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, v] of a) {
    const d = b.has(k) ? subQuantity(v, b.get(k) as Quantity) : v;
    out.set(k, quantitySign(d) > 0 ? d : zero);
  }
  for (const k of b.keys()) if (!out.has(k)) out.set(k, zero);
  return out;
}

export function maskList(list: ResourceList, names: Iterable<string>): ResourceList {
  const keep = new Set(names);
  return new Map([...list].filter(([k]) => keep.has(k)));
}

export function removeZeros(list: ResourceList): ResourceList {
  return new Map([...list].filter(([, v]) => quantitySign(v) !== 0));
}

export function listsEqual(a: ResourceList, b: ResourceList): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) {
    const w = b.get(k);
    if (!w || compareQuantities(v, w) !== 0) return false;
  }
  return true;
}

/** the names whose value in `a` is above `b`'s (only names in both) */
export function exceeding(a: ResourceList, b: ResourceList): string[] {
  const out: string[] = [];
  for (const [k, limit] of b) {
    const v = a.get(k);
    if (v && compareQuantities(v, limit) > 0) out.push(k);
  }
  return out;
}

/** `a=1,b=2Gi`, sorted by name (kube's prettyPrint) */
export function prettyPrint(list: ResourceList): string {
  return [...list.keys()]
    .sort()
    .map((k) => `${k}=${formatQuantity(list.get(k) as Quantity)}`)
    .join(',');
}

// ---- quota objects ----

export interface ScopeRequirement {
  scopeName: string;
  operator: string;
  values: string[];
}

/** spec.scopes (as Exists) followed by spec.scopeSelector's expressions */
export function quotaScopeSelectors(quota: KubeObject): ScopeRequirement[] {
  const spec = asObject(quota.spec);
  const out: ScopeRequirement[] = asArray(spec.scopes).map((s) => ({ scopeName: String(s), operator: 'Exists', values: [] }));
  for (const e of asArray(asObject(spec.scopeSelector).matchExpressions)) {
    if (!isObject(e)) continue;
    out.push({ scopeName: String(e.scopeName ?? ''), operator: String(e.operator ?? ''), values: asArray(e.values).map(String) });
  }
  return out;
}

// ---- evaluators ----

export interface QuotaEvaluator {
  /** `<group>/<resource>` */
  readonly groupResource: string;
  handles(attrs: Pick<AdmissionAttributes, 'operation' | 'subresource' | 'object' | 'oldObject'>): boolean;
  /** the names among `names` this evaluator charges */
  matchingResources(names: Iterable<string>): string[];
  usage(obj: KubeObject, now: Date): ResourceList;
  /** a requirement the object misses, or undefined (kube's Constraints) */
  constraints(required: string[], obj: KubeObject): string | undefined;
  matchesScope(scope: ScopeRequirement, obj: KubeObject): boolean;
}

export function objectCountName(group: string, resource: string): string {
  return group ? `count/${resource}.${group}` : `count/${resource}`;
}

const noScope = (): boolean => false;

function countEvaluator(group: string, resource: string, alias?: string): QuotaEvaluator {
  const names = [objectCountName(group, resource), ...(alias ? [alias] : [])];
  return {
    groupResource: `${group}/${resource}`,
    handles: (attrs) => !attrs.subresource && attrs.operation === 'CREATE',
    matchingResources: (input) => [...new Set(input)].filter((n) => names.includes(n)).sort(),
    usage: () => new Map(names.map((n) => [n, one])),
    constraints: () => undefined,
    matchesScope: noScope,
  };
}

// pods

const podNames = [
  'count/pods',
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
];
/** quota forces every container to state these when a quota limits them (kube calls this a mistake it keeps) */
const mustSpecify = new Set(['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory']);

function isNativeResource(name: string): boolean {
  return !name.includes('/') || name.includes('kubernetes.io/');
}

function isExtendedResource(name: string): boolean {
  return !isNativeResource(name) && !name.startsWith('requests.');
}

function containerUsage(requests: ResourceList, limits: ResourceList): ResourceList {
  const out: ResourceList = new Map([['pods', one]]);
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    const req = requests.get(r);
    if (req) {
      out.set(r, req);
      out.set(`requests.${r}`, req);
    }
    const lim = limits.get(r);
    if (lim) out.set(`limits.${r}`, lim);
  }
  for (const [r, q] of requests) {
    if (r.startsWith('hugepages-')) {
      out.set(r, q);
      out.set(`requests.${r}`, q);
    }
    if (isExtendedResource(r)) out.set(`requests.${r}`, q);
  }
  return out;
}

function resourcesOf(c: JsonObject, which: 'requests' | 'limits'): ResourceList {
  return parseResourceList(asObject(asObject(c.resources)[which]));
}

/** kube's PodRequests/PodLimits: containers and sidecars summed, each init container's need
 *  (with the sidecars started before it) as a floor, plus the pod's overhead */
function podResources(pod: KubeObject, which: 'requests' | 'limits'): ResourceList {
  const spec = asObject(pod.spec);
  let total: ResourceList = new Map();
  for (const c of asArray(spec.containers).filter(isObject)) total = addLists(total, resourcesOf(c, which));
  let sidecars: ResourceList = new Map();
  let initFloor: ResourceList = new Map();
  for (const c of asArray(spec.initContainers).filter(isObject)) {
    const own = resourcesOf(c, which);
    if (c.restartPolicy === 'Always') {
      sidecars = addLists(sidecars, own);
      initFloor = maxLists(initFloor, sidecars);
    } else {
      initFloor = maxLists(initFloor, addLists(sidecars, own));
    }
  }
  total = maxLists(addLists(total, sidecars), initFloor);
  const overhead = parseResourceList(spec.overhead);
  if (which === 'requests') return addLists(total, overhead);
  // an overhead only adds to limits that are set
  for (const [k, v] of overhead) if (total.has(k)) total.set(k, addQuantity(total.get(k) as Quantity, v));
  return total;
}

function maxLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map(a);
  for (const [k, v] of b) out.set(k, out.has(k) ? maxQuantity(out.get(k) as Quantity, v) : v);
  return out;
}

/** still charged for compute: not terminal, not past its deletion grace period */
export function podCountsForCompute(pod: KubeObject, now: Date): boolean {
  const phase = asObject(pod.status).phase;
  if (phase === 'Failed' || phase === 'Succeeded') return false;
  const ts = pod.metadata.deletionTimestamp;
  const grace = pod.metadata.deletionGracePeriodSeconds;
  if (ts && typeof grace === 'number') {
    if (now.getTime() > Date.parse(String(ts)) + grace * 1000) return false;
  }
  return true;
}

function isBestEffort(pod: KubeObject): boolean {
  const spec = asObject(pod.spec);
  for (const c of [...asArray(spec.containers), ...asArray(spec.initContainers)].filter(isObject)) {
    for (const which of ['requests', 'limits'] as const) {
      const list = resourcesOf(c, which);
      for (const r of ['cpu', 'memory']) if (list.has(r)) return false;
    }
  }
  return true;
}

function usesCrossNamespaceAffinity(pod: KubeObject): boolean {
  const affinity = asObject(asObject(pod.spec).affinity);
  const crossNs = (t: unknown): boolean => {
    const term = asObject(t);
    return asArray(term.namespaces).length > 0 || isObject(term.namespaceSelector);
  };
  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    const a = asObject(affinity[kind]);
    if (asArray(a.requiredDuringSchedulingIgnoredDuringExecution).some(crossNs)) return true;
    if (asArray(a.preferredDuringSchedulingIgnoredDuringExecution).some((w) => crossNs(asObject(w).podAffinityTerm))) return true;
  }
  return false;
}

function selectorMatches(scope: ScopeRequirement, value: string | undefined): boolean {
  switch (scope.operator) {
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'In':
      return value !== undefined && scope.values.includes(value);
    case 'NotIn':
      return value === undefined || !scope.values.includes(value);
    default:
      return false;
  }
}

function podMatchesScope(scope: ScopeRequirement, pod: KubeObject): boolean {
  const spec = asObject(pod.spec);
  switch (scope.scopeName) {
    case 'Terminating':
      return typeof spec.activeDeadlineSeconds === 'number' && spec.activeDeadlineSeconds >= 0;
    case 'NotTerminating':
      return !(typeof spec.activeDeadlineSeconds === 'number' && spec.activeDeadlineSeconds >= 0);
    case 'BestEffort':
      return isBestEffort(pod);
    case 'NotBestEffort':
      return !isBestEffort(pod);
    case 'PriorityClass': {
      const pc = typeof spec.priorityClassName === 'string' && spec.priorityClassName ? spec.priorityClassName : undefined;
      return selectorMatches(scope, pc);
    }
    case 'CrossNamespacePodAffinity':
      return usesCrossNamespaceAffinity(pod);
    default:
      return false;
  }
}

const podEvaluator: QuotaEvaluator = {
  groupResource: '/pods',
  handles: (attrs) => {
    if (attrs.subresource && attrs.subresource !== 'resize') return false;
    return attrs.operation === 'CREATE' || (attrs.subresource === 'resize' && attrs.operation === 'UPDATE');
  },
  matchingResources(input) {
    const names = [...new Set(input)];
    const out = names.filter((n) => podNames.includes(n)).sort();
    for (const n of names) {
      if (n.startsWith('hugepages-') || n.startsWith('requests.hugepages-')) out.push(n);
      else if (!isNativeResource(n) && n.startsWith('requests.')) out.push(n);
    }
    return out;
  },
  usage(pod, now) {
    const out: ResourceList = new Map([['count/pods', one]]);
    if (!podCountsForCompute(pod, now)) return out;
    return addLists(out, containerUsage(podResources(pod, 'requests'), podResources(pod, 'limits')));
  },
  constraints(required, pod) {
    const needed = required.filter((r) => mustSpecify.has(r));
    if (needed.length === 0) return undefined;
    const missing = new Map<string, Set<string>>();
    const spec = asObject(pod.spec);
    for (const c of [...asArray(spec.containers), ...asArray(spec.initContainers)].filter(isObject)) {
      const has = containerUsage(resourcesOf(c, 'requests'), resourcesOf(c, 'limits'));
      for (const r of needed) {
        if (has.has(r)) continue;
        if (!missing.has(r)) missing.set(r, new Set());
        missing.get(r)?.add(String(c.name ?? ''));
      }
    }
    if (missing.size === 0) return undefined;
    const parts = [...missing.keys()].sort().map((r) => `${r} for: ${[...(missing.get(r) as Set<string>)].sort().join(',')}`);
    return `must specify ${parts.join('; ')}`;
  },
  matchesScope: podMatchesScope,
};

// services

const serviceNames = ['count/services', 'services', 'services.nodeports', 'services.loadbalancers'];

const serviceEvaluator: QuotaEvaluator = {
  groupResource: '/services',
  handles: (attrs) => attrs.operation === 'CREATE' || attrs.operation === 'UPDATE',
  matchingResources: (input) => [...new Set(input)].filter((n) => serviceNames.includes(n)).sort(),
  usage(svc) {
    const spec = asObject(svc.spec);
    const ports = asArray(spec.ports);
    const out: ResourceList = new Map([
      ['count/services', one],
      ['services', one],
      ['services.loadbalancers', zero],
      ['services.nodeports', zero],
    ]);
    if (spec.type === 'NodePort') out.set('services.nodeports', count(ports.length));
    else if (spec.type === 'LoadBalancer') {
      const nodePorts =
        spec.allocateLoadBalancerNodePorts === false ? ports.filter((p) => Boolean(asObject(p).nodePort)).length : ports.length;
      out.set('services.nodeports', count(nodePorts));
      out.set('services.loadbalancers', one);
    }
    return out;
  },
  constraints: () => undefined,
  matchesScope: noScope,
};

/** the service type quota cares about ('' for the others) */
export function quotaServiceType(svc: KubeObject): string {
  const t = asObject(svc.spec).type;
  return t === 'NodePort' || t === 'LoadBalancer' ? t : '';
}

// persistent volume claims

const storageClassSuffix = '.storageclass.storage.k8s.io/';
const pvcNames = ['persistentvolumeclaims', 'requests.storage'];

function claimClassName(pvc: KubeObject): string {
  const beta = (pvc.metadata.annotations as Record<string, string> | undefined)?.['volume.beta.kubernetes.io/storage-class'];
  if (beta !== undefined) return beta;
  const n = asObject(pvc.spec).storageClassName;
  return typeof n === 'string' ? n : '';
}

/** the claim's storage, rounded up to whole bytes; the allocated size when that is larger */
function claimStorage(pvc: KubeObject): Quantity | undefined {
  const roundUp = (q: Quantity): Quantity => {
    if (q.exp10 >= 0) return q;
    const div = 10n ** BigInt(-q.exp10);
    const v = q.unscaled / div + (q.unscaled % div === 0n ? 0n : 1n);
    return { unscaled: v, exp10: 0, format: q.format };
  };
  const requested = parseResourceList(asObject(asObject(pvc.spec).resources).requests).get('storage');
  if (!requested) return undefined;
  let out = roundUp(requested);
  const allocated = parseResourceList(asObject(pvc.status).allocatedResources).get('storage');
  if (allocated && compareQuantities(allocated, out) > 0) out = roundUp(allocated);
  return out;
}

const pvcEvaluator: QuotaEvaluator = {
  groupResource: '/persistentvolumeclaims',
  handles(attrs) {
    if (!attrs.subresource) return attrs.operation === 'CREATE' || attrs.operation === 'UPDATE';
    if (attrs.subresource === 'status' && attrs.object && attrs.oldObject) {
      const a = parseResourceList(asObject(attrs.object.status).allocatedResources).get('storage');
      const b = parseResourceList(asObject(attrs.oldObject.status).allocatedResources).get('storage');
      return (a === undefined) !== (b === undefined) || (a !== undefined && b !== undefined && compareQuantities(a, b) !== 0);
    }
    return false;
  },
  matchingResources(input) {
    const out: string[] = [];
    for (const n of input) {
      if (n === 'count/persistentvolumeclaims' || pvcNames.includes(n)) out.push(n);
      else if (pvcNames.some((r) => n.endsWith(storageClassSuffix + r))) out.push(n);
    }
    return out;
  },
  usage(pvc) {
    const out: ResourceList = new Map([
      ['persistentvolumeclaims', one],
      ['count/persistentvolumeclaims', one],
    ]);
    const cls = claimClassName(pvc);
    if (cls) out.set(`${cls}${storageClassSuffix}persistentvolumeclaims`, one);
    const storage = claimStorage(pvc);
    if (storage) {
      out.set('requests.storage', storage);
      if (cls) out.set(`${cls}${storageClassSuffix}requests.storage`, storage);
    }
    return out;
  },
  constraints: () => undefined,
  matchesScope: noScope,
};

// the registry of evaluators

const legacyAliases: Record<string, string> = {
  configmaps: 'configmaps',
  resourcequotas: 'resourcequotas',
  replicationcontrollers: 'replicationcontrollers',
  secrets: 'secrets',
};

/** not counted by quota: virtual resources and Events */
const ignored = new Set([
  '/bindings',
  '/componentstatuses',
  'authentication.k8s.io/tokenreviews',
  'authentication.k8s.io/selfsubjectreviews',
  'authorization.k8s.io/subjectaccessreviews',
  'authorization.k8s.io/selfsubjectaccessreviews',
  'authorization.k8s.io/localsubjectaccessreviews',
  'authorization.k8s.io/selfsubjectrulesreviews',
  '/events',
  'events.k8s.io/events',
]);

export function isIgnoredByQuota(group: string, resource: string): boolean {
  return ignored.has(`${group}/${resource}`);
}

/** the evaluator of one group/resource (a plain counter for those without their own) */
export function evaluatorFor(group: string, resource: string): QuotaEvaluator {
  if (group === '') {
    if (resource === 'pods') return podEvaluator;
    if (resource === 'services') return serviceEvaluator;
    if (resource === 'persistentvolumeclaims') return pvcEvaluator;
    const alias = legacyAliases[resource];
    if (alias) return countEvaluator('', resource, alias);
  }
  return countEvaluator(group, resource);
}

/** the evaluators with names of their own (besides `count/...`), for the controller */
export const specialEvaluators: readonly QuotaEvaluator[] = [
  podEvaluator,
  serviceEvaluator,
  pvcEvaluator,
  ...Object.entries(legacyAliases).map(([r, alias]) => countEvaluator('', r, alias)),
];

/** the group/resource a `count/<resource>[.<group>]` name counts */
export function countedResource(name: string): { group: string; resource: string } | undefined {
  if (!name.startsWith('count/')) return undefined;
  const rest = name.slice('count/'.length);
  const dot = rest.indexOf('.');
  if (dot < 0) return { group: '', resource: rest };
  return { group: rest.slice(dot + 1), resource: rest.slice(0, dot) };
}

/** a quota applies to an object: it limits something the evaluator charges and every one
 *  of its scopes matches (kube's generic Matches, over status.hard) */
export function quotaMatches(evaluator: QuotaEvaluator, quota: KubeObject, obj: KubeObject): boolean {
  const hard = Object.keys(asObject(asObject(quota.status).hard));
  if (evaluator.matchingResources(hard).length === 0) return false;
  return quotaScopeSelectors(quota).every((s) => evaluator.matchesScope(s, obj));
}
