// networking.k8s.io/v1 NetworkPolicies: defaults (port protocol TCP, policyTypes from the
// rules) and validation of selectors, ports, peers, IP blocks and policy types.

import type { KubeObject } from '../../../storage/interface.js';
import { validateLabelSelector } from '../core/workload-validation.js';
import { asArray, asObject, isObject, type JsonObject } from '../object.js';
import { defineStrategy, type ResourceStrategy } from '../strategy.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { isValidPortName, isValidPortNum, optNum, str } from '../validation/values.js';
import { cidrError, parseCIDR } from './cidr.js';

const protocols = ['TCP', 'UDP', 'SCTP'];
const policyTypes = ['Ingress', 'Egress'];

export function defaultNetworkPolicy(obj: KubeObject): void {
  if (!isObject(obj.spec)) obj.spec = {};
  const spec = obj.spec as JsonObject;
  if (!isObject(spec.podSelector)) spec.podSelector = {};
  for (const rule of [...asArray(spec.ingress), ...asArray(spec.egress)]) {
    for (const p of asArray(asObject(rule).ports)) {
      if (isObject(p) && (p.protocol === undefined || p.protocol === null)) p.protocol = 'TCP';
    }
  }
  if (asArray(spec.policyTypes).length === 0) {
    spec.policyTypes = asArray(spec.egress).length ? ['Ingress', 'Egress'] : ['Ingress'];
  }
}

function validatePort(port: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (typeof port.protocol === 'string' && !protocols.includes(port.protocol)) {
    errs.push(fieldErrors.notSupported(`${path}.protocol`, port.protocol, protocols));
  }
  const endPort = optNum(port.endPort);
  if (port.port !== undefined && port.port !== null) {
    if (typeof port.port === 'number') {
      for (const m of isValidPortNum(port.port)) errs.push(fieldErrors.invalid(`${path}.port`, port.port, m));
      if (endPort !== undefined) {
        if (endPort < port.port) errs.push(fieldErrors.invalid(`${path}.endPort`, port.port, 'must be greater than or equal to `port`'));
        for (const m of isValidPortNum(endPort)) errs.push(fieldErrors.invalid(`${path}.endPort`, endPort, m));
      }
    } else {
      if (endPort !== undefined)
        errs.push(fieldErrors.invalid(`${path}.endPort`, endPort, 'may not be specified when `port` is non-numeric'));
      const name = str(port.port);
      for (const m of isValidPortName(name)) errs.push(fieldErrors.invalid(`${path}.port`, name, m));
    }
  } else if (endPort !== undefined) {
    errs.push(fieldErrors.invalid(`${path}.endPort`, endPort, 'may not be specified when `port` is not specified'));
  }
  return errs;
}

function validateIPBlock(ipb: JsonObject, path: string): FieldError[] {
  const cidr = str(ipb.cidr);
  if (!cidr) return [fieldErrors.required(`${path}.cidr`)];
  const errs: FieldError[] = [];
  const err = cidrError(cidr);
  if (err) errs.push(fieldErrors.invalid(`${path}.cidr`, cidr, err));
  const net = parseCIDR(cidr);
  if (!net) return errs;
  asArray(ipb.except).forEach((raw, i) => {
    const e = str(raw);
    const p = `${path}.except[${i}]`;
    const eErr = cidrError(e);
    if (eErr) errs.push(fieldErrors.invalid(p, e, eErr));
    const ex = parseCIDR(e);
    if (!ex) return;
    if (!net.contains(ex.address) || net.prefix >= ex.prefix || net.family !== ex.family) {
      errs.push(fieldErrors.invalid(p, e, 'must be a strict subset of `cidr`'));
    }
  });
  return errs;
}

function validatePeer(peer: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  let n = 0;
  if (isObject(peer.podSelector)) {
    n++;
    errs.push(...validateLabelSelector(peer.podSelector, `${path}.podSelector`));
  }
  if (isObject(peer.namespaceSelector)) {
    n++;
    errs.push(...validateLabelSelector(peer.namespaceSelector, `${path}.namespaceSelector`));
  }
  if (isObject(peer.ipBlock)) {
    n++;
    errs.push(...validateIPBlock(peer.ipBlock, `${path}.ipBlock`));
  }
  if (n === 0) errs.push(fieldErrors.required(path, 'must specify a peer'));
  else if (n > 1 && isObject(peer.ipBlock)) errs.push(fieldErrors.forbidden(path, 'may not specify both ipBlock and another peer'));
  return errs;
}

export function validateNetworkPolicy(obj: KubeObject): FieldError[] {
  const spec = asObject(obj.spec);
  const errs = validateLabelSelector(spec.podSelector, 'spec.podSelector');
  for (const [kind, peers] of [
    ['ingress', 'from'],
    ['egress', 'to'],
  ] as const) {
    asArray(spec[kind]).forEach((raw, i) => {
      const rule = asObject(raw);
      const rp = `spec.${kind}[${i}]`;
      asArray(rule.ports).forEach((p, j) => errs.push(...validatePort(asObject(p), `${rp}.ports[${j}]`)));
      asArray(rule[peers]).forEach((p, j) => errs.push(...validatePeer(asObject(p), `${rp}.${peers}[${j}]`)));
    });
  }
  const types = asArray(spec.policyTypes).map(str);
  if (types.length > 2) {
    errs.push(
      fieldErrors.invalid(
        'spec.policyTypes',
        { rendered: `&[]networking.PolicyType{${types.map((t) => JSON.stringify(t)).join(', ')}}` },
        'may not specify more than two policyTypes',
      ),
    );
    return errs;
  }
  types.forEach((t, i) => {
    if (!policyTypes.includes(t)) errs.push(fieldErrors.notSupported(`spec.policyTypes[${i}]`, t, policyTypes));
  });
  return errs;
}

export function networkPolicyStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    tracksGeneration: true,
    applyDefaults: defaultNetworkPolicy,
    validateSpec: validateNetworkPolicy,
  });
}
