// discovery.k8s.io/v1 EndpointSlices: port defaults (name "", protocol TCP) and validation of
// endpoints (addresses per address type, node names, host names, topology), ports and the
// address type, which cannot change.

import type { KubeObject } from '../../../storage/interface.js';
import { asArray, asObject, isObject, semanticEqual, specPart } from '../object.js';
import { defineStrategy, type ResourceStrategy } from '../strategy.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../../machinery/validation/names.js';
import { validateLabels } from '../validation/object-meta.js';
import { dnsLabel, dnsSubdomain, fieldImmutableErrorMsg, isIP, qualifiedName, str } from '../validation/values.js';

const addressTypes = ['FQDN', 'IPv4', 'IPv6'];
const protocols = ['SCTP', 'TCP', 'UDP'];
const maxEndpoints = 1000;
const maxAddresses = 100;
const maxPorts = 20000;
const maxTopologyLabels = 16;

export function defaultEndpointSlice(obj: KubeObject): void {
  for (const p of asArray(obj.ports)) {
    if (!isObject(p)) continue;
    p.name ??= '';
    p.protocol ??= 'TCP';
  }
}

function fqdnErrors(value: string, path: string): FieldError[] {
  if (!value) return [fieldErrors.required(path)];
  const name = value.endsWith('.') ? value.slice(0, -1) : value;
  const sub = isDNS1123Subdomain(name);
  if (sub.length) return [fieldErrors.invalid(path, name, sub.join(','))];
  const labels = name.split('.');
  if (labels.length < 2) return [fieldErrors.invalid(path, name, 'should be a domain with at least two segments separated by dots')];
  for (const l of labels) {
    const msgs = isDNS1123Label(l);
    if (msgs.length) return [fieldErrors.invalid(path, l, msgs.join(','))];
  }
  return [];
}

export function validateEndpointSlice(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const addressType = str(obj.addressType);
  const endpoints = asArray(obj.endpoints);
  if (endpoints.length > maxEndpoints) errs.push(fieldErrors.tooMany('endpoints', endpoints.length, maxEndpoints));
  endpoints.forEach((raw, i) => {
    const ep = asObject(raw);
    const p = `endpoints[${i}]`;
    const addresses = asArray(ep.addresses).map(str);
    if (addresses.length === 0) errs.push(fieldErrors.required(`${p}.addresses`, 'must contain at least 1 address'));
    else if (addresses.length > maxAddresses) errs.push(fieldErrors.tooMany(`${p}.addresses`, addresses.length, maxAddresses));
    addresses.forEach((a, j) => {
      const ap = `${p}.addresses[${j}]`;
      if (addressType === 'IPv4' && !(isIP(a) && !a.includes(':'))) errs.push(fieldErrors.invalid(ap, a, 'must be a valid IPv4 address'));
      if (addressType === 'IPv6' && !(isIP(a) && a.includes(':'))) errs.push(fieldErrors.invalid(ap, a, 'must be a valid IPv6 address'));
      if (addressType === 'FQDN') errs.push(...fqdnErrors(a, ap));
    });
    if (typeof ep.nodeName === 'string') errs.push(...dnsSubdomain(ep.nodeName, `${p}.nodeName`));
    const topology = asObject(ep.deprecatedTopology);
    if (Object.keys(topology).length > maxTopologyLabels)
      errs.push(fieldErrors.tooMany(`${p}.deprecatedTopology`, Object.keys(topology).length, maxTopologyLabels));
    errs.push(...validateLabels(ep.deprecatedTopology as Record<string, string> | undefined, `${p}.deprecatedTopology`));
    if (typeof ep.hostname === 'string') errs.push(...dnsLabel(ep.hostname, `${p}.hostname`));
  });
  const ports = asArray(obj.ports);
  if (ports.length > maxPorts) errs.push(fieldErrors.tooMany('ports', ports.length, maxPorts));
  const names = new Set<string>();
  ports.forEach((raw, i) => {
    const port = asObject(raw);
    const p = `ports[${i}]`;
    const name = str(port.name);
    if (name) errs.push(...dnsLabel(name, `${p}.name`));
    if (names.has(name)) errs.push(fieldErrors.duplicate(`${p}.name`, name));
    else names.add(name);
    if (typeof port.protocol !== 'string') errs.push(fieldErrors.required(`${p}.protocol`));
    else if (!protocols.includes(port.protocol)) errs.push(fieldErrors.notSupported(`${p}.protocol`, port.protocol, protocols));
    if (typeof port.appProtocol === 'string') errs.push(...qualifiedName(port.appProtocol, `${p}.appProtocol`));
  });
  if (!addressType) errs.push(fieldErrors.required('addressType'));
  else if (!addressTypes.includes(addressType)) errs.push(fieldErrors.notSupported('addressType', addressType, addressTypes));
  return errs;
}

export function endpointSliceStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    tracksGeneration: true,
    // kube counts label changes too
    generationChanged: (obj, old) =>
      !semanticEqual(specPart(obj), specPart(old)) || !semanticEqual(obj.metadata.labels, old.metadata.labels),
    applyDefaults: defaultEndpointSlice,
    validateSpec: validateEndpointSlice,
    validateSpecUpdate: (obj, old) =>
      str(obj.addressType) === str(old.addressType)
        ? []
        : [fieldErrors.invalid('addressType', str(obj.addressType), fieldImmutableErrorMsg)],
  });
}
