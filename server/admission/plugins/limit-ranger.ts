// LimitRanger (kube-apiserver 1.33's plugin/pkg/admission/limitranger): the LimitRanges of the
// namespace apply to pods created there and to PersistentVolumeClaims created or updated there.
// - mutate: containers and init containers without a request or limit for a resource get the
//   Container item's defaultRequest / default, and the pod is annotated with what was set
//   (`kubernetes.io/limit-ranger: LimitRanger plugin set: cpu request for container app; ...`);
// - validate: min, max and maxLimitRequestRatio of Container items per container, of Pod items
//   over the pod's effective requests and limits, min and max of PersistentVolumeClaim items
//   over the claim's storage request. Every violation is listed in one denial.
// Objects being deleted (deletionTimestamp on the stored object) are not checked.

import type { ReadFence } from '../../../storage/read-fence.js';
import type { KubeObject } from '../../../storage/interface.js';
import { asArray, asObject, isObject, type JsonObject } from '../../registry/object.js';
import { compareQuantities, formatQuantity, quantityValue, type Quantity } from '../../machinery/quantity.js';
import type { AdmissionAttributes } from '../../registry/rest.js';
import { quantityOf } from '../../registry/core/resources-validation.js';
import type { AdmissionDeps, AdmissionPlugin, AdmissionPluginFactory } from '../plugin.js';
import { forbidden, listSharedObjects, sortedMap } from './pod-plugins-common.js';

export const limitRangerAnnotation = 'kubernetes.io/limit-ranger';
const limitRanges = { group: '', version: 'v1', resource: 'limitranges' };

type ResourceList = Map<string, Quantity>;

function resourceList(v: unknown): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, raw] of Object.entries(asObject(v))) {
    const q = quantityOf(raw);
    if (q) out.set(k, q);
  }
  return out;
}

// ---- quantities as kube compares them ----

const maxMilliValue = (1n << 63n) / 1000n;

/** MilliValue(): rounded up to a thousandth */
function milliValue(q: Quantity): bigint {
  return quantityValue({ unscaled: q.unscaled, exp10: q.exp10 + 3, format: q.format });
}

/** the three values at a common precision: milli-units unless one would overflow */
function comparable(request: Quantity | undefined, limit: Quantity | undefined, enforced: Quantity): [bigint, bigint, bigint] {
  const zero: Quantity = { unscaled: 0n, exp10: 0, format: 'DecimalSI' };
  const r = request ?? zero;
  const l = limit ?? zero;
  const values: [bigint, bigint, bigint] = [quantityValue(r), quantityValue(l), quantityValue(enforced)];
  if (values.every((v) => v <= maxMilliValue)) return [milliValue(r), milliValue(l), milliValue(enforced)];
  return values;
}

function addQuantities(a: Quantity, b: Quantity): Quantity {
  const exp = Math.min(a.exp10, b.exp10);
  const scale = (q: Quantity) => q.unscaled * 10n ** BigInt(q.exp10 - exp);
  return { unscaled: scale(a) + scale(b), exp10: exp, format: a.format };
}

function addInto(list: ResourceList, more: ResourceList): void {
  for (const [k, q] of more) {
    const have = list.get(k);
    list.set(k, have ? addQuantities(have, q) : q);
  }
}

function maxInto(list: ResourceList, more: ResourceList): void {
  for (const [k, q] of more) {
    const have = list.get(k);
    if (!have || compareQuantities(q, have) > 0) list.set(k, q);
  }
}

// ---- constraints (kube's messages, two spaces after the period included) ----

function minConstraint(type: string, name: string, enforced: Quantity, requests: ResourceList, limits: ResourceList): string | undefined {
  const req = requests.get(name);
  const lim = limits.get(name);
  const [r, l, e] = comparable(req, lim, enforced);
  const min = formatQuantity(enforced);
  if (!req) return `minimum ${name} usage per ${type} is ${min}.  No request is specified`;
  if (r < e) return `minimum ${name} usage per ${type} is ${min}, but request is ${formatQuantity(req)}`;
  if (lim && l < e) return `minimum ${name} usage per ${type} is ${min}, but limit is ${formatQuantity(lim)}`;
  return undefined;
}

function maxRequestConstraint(type: string, name: string, enforced: Quantity, requests: ResourceList): string | undefined {
  const req = requests.get(name);
  const [r, , e] = comparable(req, undefined, enforced);
  const max = formatQuantity(enforced);
  if (!req) return `maximum ${name} usage per ${type} is ${max}.  No request is specified`;
  if (r > e) return `maximum ${name} usage per ${type} is ${max}, but request is ${formatQuantity(req)}`;
  return undefined;
}

function maxConstraint(type: string, name: string, enforced: Quantity, requests: ResourceList, limits: ResourceList): string | undefined {
  const req = requests.get(name);
  const lim = limits.get(name);
  const [r, l, e] = comparable(req, lim, enforced);
  const max = formatQuantity(enforced);
  if (!lim) return `maximum ${name} usage per ${type} is ${max}.  No limit is specified`;
  if (l > e) return `maximum ${name} usage per ${type} is ${max}, but limit is ${formatQuantity(lim)}`;
  if (req && r > e) return `maximum ${name} usage per ${type} is ${max}, but request is ${formatQuantity(req)}`;
  return undefined;
}

function ratioConstraint(type: string, name: string, enforced: Quantity, requests: ResourceList, limits: ResourceList): string | undefined {
  const req = requests.get(name);
  const lim = limits.get(name);
  const [r, l] = comparable(req, lim, enforced);
  const max = formatQuantity(enforced);
  if (!req || r === 0n) return `${name} max limit to request ratio per ${type} is ${max}, but no request is specified or request is 0`;
  if (!lim || l === 0n) return `${name} max limit to request ratio per ${type} is ${max}, but no limit is specified or limit is 0`;
  const observed = Number(l) / Number(r);
  let scaledObserved = observed;
  let allowed = Number(quantityValue(enforced));
  if (quantityValue(enforced) <= maxMilliValue) {
    scaledObserved = observed * 1000;
    allowed = Number(milliValue(enforced));
  }
  if (scaledObserved > allowed)
    return `${name} max limit to request ratio per ${type} is ${max}, but provided ratio is ${observed.toFixed(6)}`;
  return undefined;
}

function checkItem(item: JsonObject, type: string, requests: ResourceList, limits: ResourceList, out: string[]): void {
  for (const [k, q] of resourceList(item.min)) push(out, minConstraint(type, k, q, requests, limits));
  for (const [k, q] of resourceList(item.max)) push(out, maxConstraint(type, k, q, requests, limits));
  for (const [k, q] of resourceList(item.maxLimitRequestRatio)) push(out, ratioConstraint(type, k, q, requests, limits));
}

function push(out: string[], msg: string | undefined): void {
  if (msg) out.push(msg);
}

/** apimachinery's aggregate error text: one message as it is, several deduplicated in brackets */
export function aggregate(messages: string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}

// ---- pods ----

function containers(spec: JsonObject, key: string): JsonObject[] {
  return asArray(spec[key]).filter(isObject);
}

function isSidecar(c: JsonObject): boolean {
  return c.restartPolicy === 'Always';
}

/** the pod's effective requests or limits: containers and sidecars summed, the largest init
 *  container (plus the sidecars started before it) as a floor */
function podTotals(spec: JsonObject, field: 'requests' | 'limits'): ResourceList {
  const total: ResourceList = new Map();
  for (const c of containers(spec, 'containers')) addInto(total, resourceList(asObject(c.resources)[field]));
  const sidecars: ResourceList = new Map();
  const initFloor: ResourceList = new Map();
  for (const c of containers(spec, 'initContainers')) {
    const own = resourceList(asObject(c.resources)[field]);
    let effective: ResourceList;
    if (isSidecar(c)) {
      addInto(total, own);
      addInto(sidecars, own);
      effective = sidecars;
    } else {
      effective = new Map();
      addInto(effective, own);
      addInto(effective, sidecars);
    }
    maxInto(initFloor, effective);
  }
  maxInto(total, initFloor);
  return total;
}

function validatePod(limitRange: KubeObject, pod: KubeObject): string[] {
  const out: string[] = [];
  const spec = asObject(pod.spec);
  for (const raw of asArray(asObject(limitRange.spec).limits)) {
    const item = asObject(raw);
    if (item.type === 'Container') {
      for (const key of ['containers', 'initContainers']) {
        for (const c of containers(spec, key)) {
          const res = asObject(c.resources);
          checkItem(item, 'Container', resourceList(res.requests), resourceList(res.limits), out);
        }
      }
    } else if (item.type === 'Pod') {
      checkItem(item, 'Pod', podTotals(spec, 'requests'), podTotals(spec, 'limits'), out);
    }
  }
  return out;
}

function validateClaim(limitRange: KubeObject, pvc: KubeObject): string[] {
  const out: string[] = [];
  const requests = resourceList(asObject(asObject(pvc.spec).resources).requests);
  for (const raw of asArray(asObject(limitRange.spec).limits)) {
    const item = asObject(raw);
    if (item.type !== 'PersistentVolumeClaim') continue;
    // a claim's limits are not what it asks for: only its requests count
    for (const [k, q] of resourceList(item.min)) push(out, minConstraint('PersistentVolumeClaim', k, q, requests, new Map()));
    for (const [k, q] of resourceList(item.max)) push(out, maxRequestConstraint('PersistentVolumeClaim', k, q, requests));
  }
  return out;
}

/** the Container items' defaults of one LimitRange (later items win, as kube's map writes do) */
function containerDefaults(limitRange: KubeObject): { requests: Map<string, unknown>; limits: Map<string, unknown> } {
  const requests = new Map<string, unknown>();
  const limits = new Map<string, unknown>();
  for (const raw of asArray(asObject(limitRange.spec).limits)) {
    const item = asObject(raw);
    if (item.type !== 'Container') continue;
    for (const [k, v] of Object.entries(asObject(item.defaultRequest))) requests.set(k, v);
    for (const [k, v] of Object.entries(asObject(item.default))) limits.set(k, v);
  }
  return { requests, limits };
}

function defaultContainer(c: JsonObject, defaults: ReturnType<typeof containerDefaults>, what: string, notes: string[]): void {
  const resources = isObject(c.resources) ? c.resources : (c.resources = {});
  const limits = isObject(resources.limits) ? resources.limits : {};
  const requests = isObject(resources.requests) ? resources.requests : {};
  const setLimits: string[] = [];
  const setRequests: string[] = [];
  for (const [k, v] of defaults.limits) {
    if (limits[k] === undefined) {
      limits[k] = v;
      setLimits.push(k);
    }
  }
  for (const [k, v] of defaults.requests) {
    if (requests[k] === undefined) {
      requests[k] = v;
      setRequests.push(k);
    }
  }
  // Go omits empty maps; limits come before requests in ResourceRequirements
  const ordered: JsonObject = {};
  if (Object.keys(limits).length) ordered.limits = sortedMap(limits);
  if (Object.keys(requests).length) ordered.requests = sortedMap(requests);
  for (const [k, v] of Object.entries(resources)) if (k !== 'limits' && k !== 'requests') ordered[k] = v;
  c.resources = ordered;
  const name = String(c.name ?? '');
  if (setRequests.length) notes.push(`${setRequests.sort().join(', ')} request for ${what} ${name}`);
  if (setLimits.length) notes.push(`${setLimits.sort().join(', ')} limit for ${what} ${name}`);
}

function defaultPod(limitRange: KubeObject, pod: KubeObject): void {
  const defaults = containerDefaults(limitRange);
  const spec = isObject(pod.spec) ? pod.spec : (pod.spec = {});
  const notes: string[] = [];
  for (const c of containers(spec, 'containers')) defaultContainer(c, defaults, 'container', notes);
  for (const c of containers(spec, 'initContainers')) defaultContainer(c, defaults, 'init container', notes);
  if (notes.length) {
    pod.metadata.annotations = sortedMap({
      ...(pod.metadata.annotations ?? {}),
      [limitRangerAnnotation]: `LimitRanger plugin set: ${notes.join('; ')}`,
    }) as Record<string, string>;
  }
}

// ---- the plugin ----

function kindOf(attrs: AdmissionAttributes): 'pod' | 'claim' | undefined {
  if (attrs.resource.group !== '' || attrs.subresource || !attrs.object) return undefined;
  // a pod's containers cannot change after create, so only creates are checked
  if (attrs.resource.resource === 'pods') return attrs.operation === 'CREATE' ? 'pod' : undefined;
  if (attrs.resource.resource === 'persistentvolumeclaims')
    return attrs.operation === 'CREATE' || attrs.operation === 'UPDATE' ? 'claim' : undefined;
  return undefined;
}

export function limitRangerPlugin(deps: Pick<AdmissionDeps, 'resolver'>): AdmissionPlugin {
  async function rangesFor(attrs: AdmissionAttributes, fence: ReadFence | undefined): Promise<readonly KubeObject[]> {
    if (attrs.oldObject?.metadata.deletionTimestamp) return [];
    try {
      // only read: defaults are copied into the pod as the quantity strings they are
      return await listSharedObjects(deps.resolver, limitRanges, attrs.namespace, fence);
    } catch {
      throw forbidden(
        attrs,
        `unable to ${attrs.operation} ${attrs.resource.group}/${attrs.resource.version}, Resource=${attrs.resource.resource} at this time because there was an error enforcing limit ranges`,
      );
    }
  }

  return {
    name: 'LimitRanger',
    handles: (attrs) => kindOf(attrs) !== undefined,
    async mutate(attrs, ctx) {
      const obj = attrs.object as KubeObject;
      if (kindOf(attrs) !== 'pod') return obj;
      for (const lr of await rangesFor(attrs, ctx.readFence)) defaultPod(lr, obj);
      return obj;
    },
    async validate(attrs, ctx) {
      const kind = kindOf(attrs);
      if (!kind) return;
      const obj = attrs.object as KubeObject;
      for (const lr of await rangesFor(attrs, ctx.readFence)) {
        const problems = kind === 'pod' ? validatePod(lr, obj) : validateClaim(lr, obj);
        if (problems.length) throw forbidden(attrs, aggregate(problems));
      }
    },
  };
}

export const limitRangerFactory: AdmissionPluginFactory = {
  name: 'LimitRanger',
  create: (deps) => limitRangerPlugin(deps),
};
