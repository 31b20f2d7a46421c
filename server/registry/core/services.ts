// Services: defaulting (type ClusterIP, sessionAffinity None, port protocol TCP, targetPort
// = port, traffic policies), the basic port checks, and cluster IP / node port allocation
// through an injected ServiceIPAllocator. An update that omits allocated values keeps them
// (as kube-apiserver does, so `kubectl replace` works); a type change drops the allocated
// values the new type has no use for (service-fields.ts).

import type { KubeObject } from '../../../storage/interface.js';
import { asArray, asObject, clone, ensureObject, isObject, reorder, type JsonObject } from '../object.js';
import { defineStrategy, statusStrategy, type FinishFunc, type ResourceStrategy, type StrategyContext } from '../strategy.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { isDNS1123Label, nameIsDNS1035Label } from '../../machinery/validation/names.js';
import { dropTypeDependentFields, nodePortOf } from './service-fields.js';

/** Allocates cluster IPs and node ports. Implementations mutate the Service in place. */
export interface ServiceIPAllocator {
  /** assigns spec.clusterIP(s), ipFamilies, ipFamilyPolicy and node ports of a new Service;
   *  the returned function releases them if the create does not go through */
  allocate(service: KubeObject, opts: { dryRun: boolean }): Promise<FinishFunc>;
  /** adjusts allocations on update (e.g. a type change), before the update is prepared and
   *  validated: it also fills in allocated values the update left out. The returned function
   *  frees what the Service stopped using once written, or gives back what was taken. */
  reallocate?(service: KubeObject, old: KubeObject, opts: { dryRun: boolean }): Promise<FinishFunc>;
  /** frees what a deleted Service held */
  release(service: KubeObject): Promise<void>;
}

const serviceSpecOrder = [
  'ports',
  'selector',
  'clusterIP',
  'clusterIPs',
  'type',
  'externalIPs',
  'sessionAffinity',
  'loadBalancerIP',
  'loadBalancerSourceRanges',
  'externalName',
  'externalTrafficPolicy',
  'healthCheckNodePort',
  'publishNotReadyAddresses',
  'sessionAffinityConfig',
  'ipFamilies',
  'ipFamilyPolicy',
  'allocateLoadBalancerNodePorts',
  'loadBalancerClass',
  'internalTrafficPolicy',
  'trafficDistribution',
];

const servicePortOrder = ['name', 'protocol', 'appProtocol', 'port', 'targetPort', 'nodePort'];
const serviceTypes = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];

function externallyAccessible(spec: JsonObject): boolean {
  return spec.type === 'LoadBalancer' || spec.type === 'NodePort' || (spec.type === 'ClusterIP' && asArray(spec.externalIPs).length > 0);
}

function defaultService(obj: KubeObject): void {
  if (!isObject(obj.spec)) return;
  const spec = obj.spec;
  spec.sessionAffinity ??= 'None';
  if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
  if (spec.sessionAffinity === 'ClientIP') {
    const cfg = ensureObject(spec, 'sessionAffinityConfig');
    const ip = ensureObject(cfg, 'clientIP');
    ip.timeoutSeconds ??= 10800;
  }
  spec.type ??= 'ClusterIP';
  if (Array.isArray(spec.ports)) {
    spec.ports = spec.ports.map((raw) => {
      if (!isObject(raw)) return raw;
      raw.protocol ??= 'TCP';
      if (raw.targetPort === undefined || raw.targetPort === 0 || raw.targetPort === '') raw.targetPort = raw.port;
      return reorder(raw, servicePortOrder);
    });
  }
  if (externallyAccessible(spec) && !spec.externalTrafficPolicy) spec.externalTrafficPolicy = 'Cluster';
  if (spec.internalTrafficPolicy === undefined && ['NodePort', 'LoadBalancer', 'ClusterIP'].includes(spec.type as string)) {
    spec.internalTrafficPolicy = 'Cluster';
  }
  if (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts === undefined) spec.allocateLoadBalancerNodePorts = true;
  obj.spec = reorder(spec, serviceSpecOrder);
}

function validateService(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = asObject(obj.spec);
  const type = typeof spec.type === 'string' ? spec.type : '';
  if (!serviceTypes.includes(type)) errs.push(fieldErrors.notSupported('spec.type', type, serviceTypes));
  const ports = asArray(spec.ports);
  const headless = spec.clusterIP === 'None';
  if (type !== 'ExternalName' && !headless && ports.length === 0) errs.push(fieldErrors.required('spec.ports'));
  if (type === 'ExternalName' && !spec.externalName) errs.push(fieldErrors.required('spec.externalName'));
  if (type === 'ExternalName') {
    // allocated fields have no meaning here (an update to ExternalName drops them if unchanged)
    if (asArray(spec.clusterIPs).length > 0)
      errs.push(fieldErrors.forbidden('spec.clusterIPs', 'may not be set for ExternalName services'));
    if (asArray(spec.ipFamilies).length > 0)
      errs.push(fieldErrors.forbidden('spec.ipFamilies', 'may not be set for ExternalName services'));
    if (spec.ipFamilyPolicy !== undefined && spec.ipFamilyPolicy !== null) {
      errs.push(fieldErrors.forbidden('spec.ipFamilyPolicy', 'may not be set for ExternalName services'));
    }
  }
  const names = new Set<string>();
  ports.forEach((raw, i) => {
    const p = asObject(raw);
    const path = `spec.ports[${i}]`;
    const name = typeof p.name === 'string' ? p.name : '';
    if (ports.length > 1 && !name) errs.push(fieldErrors.required(`${path}.name`));
    if (name) {
      for (const m of isDNS1123Label(name)) errs.push(fieldErrors.invalid(`${path}.name`, name, m));
      if (names.has(name)) errs.push(fieldErrors.duplicate(`${path}.name`, name));
      names.add(name);
    }
    const port = p.port;
    if (typeof port !== 'number' || port < 1 || port > 65535 || !Number.isInteger(port)) {
      errs.push(fieldErrors.invalid(`${path}.port`, typeof port === 'number' ? port : 0, 'must be between 1 and 65535, inclusive'));
    }
    const proto = p.protocol;
    if (typeof proto === 'string' && !['TCP', 'UDP', 'SCTP'].includes(proto)) {
      errs.push(fieldErrors.notSupported(`${path}.protocol`, proto, ['SCTP', 'TCP', 'UDP']));
    }
    if (type === 'ClusterIP' && nodePortOf(p) !== 0) {
      errs.push(fieldErrors.forbidden(`${path}.nodePort`, "may not be used when `type` is 'ClusterIP'"));
    }
  });
  return errs;
}

/** keeps what was allocated when an update leaves it out */
function keepAllocatedValues(obj: KubeObject, old: KubeObject): void {
  const spec = asObject(obj.spec);
  const oldSpec = asObject(old.spec);
  if (!isObject(obj.spec)) return;
  const sameFamilyKind = (oldSpec.type === 'ExternalName') === (spec.type === 'ExternalName');
  if (sameFamilyKind && spec.type !== 'ExternalName') {
    if (!spec.clusterIP && oldSpec.clusterIP) spec.clusterIP = oldSpec.clusterIP;
    if (asArray(spec.clusterIPs).length === 0 && oldSpec.clusterIPs !== undefined && spec.clusterIP === oldSpec.clusterIP) {
      spec.clusterIPs = clone(oldSpec.clusterIPs);
    }
    if (spec.ipFamilies === undefined && oldSpec.ipFamilies !== undefined) spec.ipFamilies = clone(oldSpec.ipFamilies);
    if (spec.ipFamilyPolicy === undefined && oldSpec.ipFamilyPolicy !== undefined) spec.ipFamilyPolicy = oldSpec.ipFamilyPolicy;
  }
  if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') {
    const oldPorts = asArray(oldSpec.ports).map(asObject);
    for (const raw of asArray(spec.ports)) {
      if (!isObject(raw) || raw.nodePort !== undefined) continue;
      const match = oldPorts.find((o) => o.port === raw.port && (o.protocol ?? 'TCP') === (raw.protocol ?? 'TCP'));
      if (match?.nodePort !== undefined) raw.nodePort = match.nodePort;
    }
    if (spec.healthCheckNodePort === undefined && oldSpec.healthCheckNodePort !== undefined)
      spec.healthCheckNodePort = oldSpec.healthCheckNodePort;
  }
  obj.spec = reorder(spec, serviceSpecOrder);
}

function validateServiceUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = asObject(obj.spec);
  const oldSpec = asObject(old.spec);
  if (oldSpec.type !== 'ExternalName' && spec.type !== 'ExternalName') {
    const oldIPs = asArray(oldSpec.clusterIPs);
    const newIPs = asArray(spec.clusterIPs);
    if (oldIPs.length && newIPs.length && oldIPs[0] !== newIPs[0]) {
      errs.push(fieldErrors.invalid('spec.clusterIPs[0]', newIPs as string[], 'may not change once set'));
    } else if (oldSpec.clusterIP && spec.clusterIP && oldSpec.clusterIP !== spec.clusterIP) {
      errs.push(fieldErrors.invalid('spec.clusterIPs[0]', [spec.clusterIP as string], 'may not change once set'));
    }
  }
  return errs;
}

/** allocation adds fields (clusterIPs, ipFamilies, nodePort, ...): put them in kube's order */
function reorderSpec(obj: KubeObject): void {
  if (!isObject(obj.spec)) return;
  const spec = obj.spec;
  if (Array.isArray(spec.ports)) spec.ports = spec.ports.map((p) => (isObject(p) ? reorder(p, servicePortOrder) : p));
  obj.spec = reorder(spec, serviceSpecOrder);
}

async function thenReorder(obj: KubeObject, begin: Promise<FinishFunc>): Promise<FinishFunc> {
  const finish = await begin;
  reorderSpec(obj);
  return finish;
}

export function serviceStrategy(allocator?: ServiceIPAllocator): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    validateName: nameIsDNS1035Label,
    hasStatusSubresource: true,
    allowCreateOnUpdate: true,
    returnDeletedObject: true,
    initialStatus: () => ({ loadBalancer: {} }),
    applyDefaults: (obj) => defaultService(obj),
    prepareUpdate: (obj, old) => {
      keepAllocatedValues(obj, old);
      if (isObject(obj.spec)) dropTypeDependentFields(obj.spec, asObject(old.spec));
    },
    validateSpec: (obj) => validateService(obj),
    validateSpecUpdate: validateServiceUpdate,
    beginCreate: allocator
      ? (obj: KubeObject, c: StrategyContext) => thenReorder(obj, allocator.allocate(obj, { dryRun: c.request.dryRun }))
      : undefined,
    beginUpdate:
      allocator?.reallocate !== undefined
        ? (obj: KubeObject, old: KubeObject, c: StrategyContext) =>
            thenReorder(obj, allocator.reallocate!(obj, old, { dryRun: c.request.dryRun }))
        : undefined,
    afterDelete: allocator
      ? async (obj: KubeObject, c: StrategyContext) => {
          if (!c.request.dryRun) await allocator.release(obj);
        }
      : undefined,
  });
}

export function serviceStatusStrategy(base: ResourceStrategy): ResourceStrategy {
  // a status write changes no allocation (its spec is the stored one)
  return { ...statusStrategy(base), beginCreate: undefined, beginUpdate: undefined, afterDelete: undefined };
}
