// The Service fields that hang together: clusterIP / clusterIPs / ipFamilies /
// ipFamilyPolicy, node ports and the health check node port. kube-apiserver infers what a
// client meant when it leaves allocated values out or changes the type; these helpers do the
// same, on Services in their stored (v1) JSON form. Used by the Service strategy and by the
// allocators (server/allocators).

import type { KubeObject } from '../../../storage/interface.js';
import { asArray, asObject, isObject, type JsonObject } from '../object.js';

export const ClusterIPNone = 'None';

export function specOf(svc: KubeObject): JsonObject {
  if (!isObject(svc.spec)) svc.spec = {};
  return svc.spec as JsonObject;
}

export function typeOf(spec: JsonObject): string {
  return typeof spec.type === 'string' ? spec.type : '';
}

export function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : String(x))) : [];
}

export function clusterIPOf(spec: JsonObject): string {
  return typeof spec.clusterIP === 'string' ? spec.clusterIP : '';
}

export function clusterIPsOf(spec: JsonObject): string[] {
  return stringList(spec.clusterIPs);
}

export function ipFamiliesOf(spec: JsonObject): string[] {
  return stringList(spec.ipFamilies);
}

export function ipFamilyPolicyOf(spec: JsonObject): string {
  return typeof spec.ipFamilyPolicy === 'string' ? spec.ipFamilyPolicy : '';
}

export function nodePortOf(port: unknown): number {
  const n = asObject(port).nodePort;
  return typeof n === 'number' ? n : 0;
}

export function healthCheckNodePortOf(spec: JsonObject): number {
  return typeof spec.healthCheckNodePort === 'number' ? spec.healthCheckNodePort : 0;
}

export function portsOf(spec: JsonObject): JsonObject[] {
  return asArray(spec.ports).filter(isObject);
}

export function needsClusterIP(spec: JsonObject): boolean {
  return typeOf(spec) !== 'ExternalName';
}

export function needsNodePort(spec: JsonObject): boolean {
  const t = typeOf(spec);
  return t === 'NodePort' || t === 'LoadBalancer';
}

/** a LoadBalancer that keeps client source IPs gets a health check node port */
export function needsHealthCheckNodePort(spec: JsonObject): boolean {
  return typeOf(spec) === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local';
}

/** NodePort always; LoadBalancer unless allocateLoadBalancerNodePorts is false */
export function shouldAllocateNodePorts(spec: JsonObject): boolean {
  const t = typeOf(spec);
  if (t === 'NodePort') return true;
  if (t === 'LoadBalancer') return spec.allocateLoadBalancerNodePorts !== false;
  return false;
}

export function isHeadless(spec: JsonObject): boolean {
  const ips = clusterIPsOf(spec);
  return ips.length === 1 && ips[0] === ClusterIPNone;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

export function sameClusterIPs(a: JsonObject, b: JsonObject): boolean {
  return sameList(clusterIPsOf(a), clusterIPsOf(b));
}

export function sameIPFamilies(a: JsonObject, b: JsonObject): boolean {
  return sameList(ipFamiliesOf(a), ipFamiliesOf(b));
}

/** every node port in use by the Service's ports (not the health check one) */
export function nodePortsOf(spec: JsonObject): number[] {
  return portsOf(spec)
    .map(nodePortOf)
    .filter((n) => n !== 0);
}

function setClusterIPs(spec: JsonObject, ips: string[] | undefined): void {
  if (ips === undefined || ips.length === 0) delete spec.clusterIPs;
  else spec.clusterIPs = ips;
}

/**
 * Keeps clusterIP and clusterIPs in step: an old client sets only the singular field, a new
 * one both (kube's normalizeClusterIPs). `old` is undefined on create.
 */
export function normalizeClusterIPs(spec: JsonObject, old?: JsonObject): void {
  const ip = clusterIPOf(spec);
  if (!old) {
    if (ip && clusterIPsOf(spec).length === 0) spec.clusterIPs = [ip];
    return;
  }
  const oldIP = clusterIPOf(old);
  // an old client patched something else and dropped the plural field
  if (clusterIPsOf(old).length > 0 && clusterIPsOf(spec).length === 0 && oldIP === ip) setClusterIPs(spec, [...clusterIPsOf(old)]);
  if (oldIP !== ip) {
    if (oldIP && !ip) {
      // clearing the singular field clears the plural one when that was left alone
      if (sameClusterIPs(old, spec)) setClusterIPs(spec, undefined);
    } else if (sameClusterIPs(old, spec)) {
      setClusterIPs(spec, [ip]);
    }
  }
}

/**
 * Fills in what was allocated when an update leaves it out, so that re-submitting the same
 * manifest (`kubectl replace`, client-side apply) succeeds (kube's patchAllocatedValues).
 */
export function patchAllocatedValues(spec: JsonObject, old: JsonObject): void {
  if (needsClusterIP(old) && needsClusterIP(spec)) {
    if (!clusterIPOf(spec) && clusterIPOf(old)) spec.clusterIP = clusterIPOf(old);
    if (clusterIPsOf(spec).length === 0 && clusterIPsOf(old).length > 0) spec.clusterIPs = [...clusterIPsOf(old)];
  }
  if (needsNodePort(old) && needsNodePort(spec)) {
    // node ports the new spec names itself cannot be given to another port
    const inNew = new Set(nodePortsOf(spec));
    const used = new Set(nodePortsOf(old).filter((n) => inNew.has(n)));
    const byName = new Map<string, number>();
    for (const p of portsOf(old)) byName.set(typeof p.name === 'string' ? p.name : '', nodePortOf(p));
    for (const p of portsOf(spec)) {
      if (nodePortOf(p) !== 0) continue;
      const oldValue = byName.get(typeof p.name === 'string' ? p.name : '') ?? 0;
      if (oldValue !== 0 && !used.has(oldValue)) p.nodePort = oldValue;
    }
  }
  if (needsHealthCheckNodePort(old) && needsHealthCheckNodePort(spec)) {
    if (healthCheckNodePortOf(spec) === 0 && healthCheckNodePortOf(old) !== 0) spec.healthCheckNodePort = healthCheckNodePortOf(old);
  }
}

/**
 * Clears allocated fields a type change makes meaningless, when the client left them as they
 * were (kube's dropTypeDependentFields); the allocators release what they held. A client
 * that changed them as well gets a validation error instead.
 */
export function dropTypeDependentFields(spec: JsonObject, old: JsonObject): void {
  if (needsClusterIP(old) && !needsClusterIP(spec)) {
    if (clusterIPOf(old) === clusterIPOf(spec) && sameClusterIPs(old, spec)) {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    }
    if (sameIPFamilies(old, spec)) delete spec.ipFamilies;
    if (ipFamilyPolicyOf(old) === ipFamilyPolicyOf(spec)) delete spec.ipFamilyPolicy;
  }
  if (needsNodePort(old) && !needsNodePort(spec)) {
    const oldPorts = new Set(nodePortsOf(old));
    if (nodePortsOf(spec).every((n) => oldPorts.has(n))) {
      for (const p of portsOf(spec)) delete p.nodePort;
    }
  }
  if (needsHealthCheckNodePort(old) && !needsHealthCheckNodePort(spec)) {
    if (healthCheckNodePortOf(old) === healthCheckNodePortOf(spec)) delete spec.healthCheckNodePort;
  }
}

/**
 * What a Service stored without ipFamilies (written before they existed, or without an
 * allocator) looks like to the allocators (kube's defaultOnReadService).
 */
export function defaultOnRead(spec: JsonObject, primaryFamily: string): void {
  normalizeClusterIPs(spec);
  if (!needsClusterIP(spec) || ipFamiliesOf(spec).length > 0) return;
  const other = primaryFamily === 'IPv4' ? 'IPv6' : 'IPv4';
  if (clusterIPOf(spec) === ClusterIPNone) {
    const selectorless = Object.keys(asObject(spec.selector)).length === 0;
    spec.ipFamilyPolicy = selectorless ? 'RequireDualStack' : 'SingleStack';
    spec.ipFamilies = selectorless ? [primaryFamily, other] : [primaryFamily];
    return;
  }
  const families = clusterIPsOf(spec).map((ip) => (ip.includes(':') ? 'IPv6' : 'IPv4'));
  if (families.length === 0) return;
  spec.ipFamilies = families;
  spec.ipFamilyPolicy = families.length === 1 ? 'SingleStack' : 'RequireDualStack';
}
