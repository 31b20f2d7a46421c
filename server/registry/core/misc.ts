// Validation and defaults of the smaller core kinds: Endpoints (port protocol TCP; addresses,
// ports), ServiceAccounts, PodTemplates (the pod template defaults and rules), LimitRanges,
// ResourceQuotas, and Node taints and pod CIDRs.

import type { KubeObject } from '../../../storage/interface.js';
import { asArray, asObject, isObject } from '../object.js';
import { compareQuantities, formatQuantity } from '../../machinery/quantity.js';
import { defineStrategy, type ResourceStrategy } from '../strategy.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { isValidLabelValue } from '../../machinery/validation/names.js';
import { dnsLabel, dnsSubdomain, isValidPortNum, num, qualifiedName, str, validIP } from '../validation/values.js';
import { defaultPodTemplate } from './pod-spec.js';
import { validatePodTemplateSpec } from './pod-validation.js';
import { quantityOf, validateResourceName, validateResourceQuantityValue } from './resources-validation.js';
import { cidrError } from '../networking/cidr.js';

const protocols = ['SCTP', 'TCP', 'UDP'];

// ---- Endpoints ----

export function defaultEndpoints(obj: KubeObject): void {
  for (const ss of asArray(obj.subsets)) {
    for (const p of asArray(asObject(ss).ports)) {
      if (isObject(p) && !p.protocol) p.protocol = 'TCP';
    }
  }
}

function validateEndpointAddress(a: unknown, path: string): FieldError[] {
  const addr = asObject(a);
  const errs = validIP(str(addr.ip), `${path}.ip`);
  if (str(addr.hostname)) errs.push(...dnsLabel(str(addr.hostname), `${path}.hostname`));
  if (typeof addr.nodeName === 'string') errs.push(...dnsSubdomain(addr.nodeName, `${path}.nodeName`));
  return errs;
}

export function validateEndpoints(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  asArray(obj.subsets).forEach((raw, i) => {
    const ss = asObject(raw);
    const p = `subsets[${i}]`;
    const addresses = asArray(ss.addresses);
    const notReady = asArray(ss.notReadyAddresses);
    if (addresses.length === 0 && notReady.length === 0)
      errs.push(fieldErrors.required(p, 'must specify `addresses` or `notReadyAddresses`'));
    addresses.forEach((a, j) => errs.push(...validateEndpointAddress(a, `${p}.addresses[${j}]`)));
    notReady.forEach((a, j) => errs.push(...validateEndpointAddress(a, `${p}.notReadyAddresses[${j}]`)));
    const ports = asArray(ss.ports);
    ports.forEach((raw2, j) => {
      const port = asObject(raw2);
      const pp = `${p}.ports[${j}]`;
      const name = str(port.name);
      if (ports.length > 1 && !name) errs.push(fieldErrors.required(`${pp}.name`));
      else if (name) errs.push(...dnsLabel(name, `${pp}.name`));
      for (const m of isValidPortNum(num(port.port))) errs.push(fieldErrors.invalid(`${pp}.port`, num(port.port), m));
      const proto = str(port.protocol);
      if (!proto) errs.push(fieldErrors.required(`${pp}.protocol`));
      else if (!protocols.includes(proto)) errs.push(fieldErrors.notSupported(`${pp}.protocol`, proto, protocols));
      if (typeof port.appProtocol === 'string') errs.push(...qualifiedName(port.appProtocol, `${pp}.appProtocol`));
    });
  });
  return errs;
}

export function endpointsStrategy(): ResourceStrategy {
  return defineStrategy({ namespaced: true, allowCreateOnUpdate: true, applyDefaults: defaultEndpoints, validateSpec: validateEndpoints });
}

// ---- ServiceAccounts ----

export function serviceAccountStrategy(): ResourceStrategy {
  return defineStrategy({ namespaced: true, allowCreateOnUpdate: true });
}

// ---- PodTemplates ----

export function podTemplateStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    tracksGeneration: true,
    applyDefaults(obj) {
      const template = isObject(obj.template) ? obj.template : (obj.template = {});
      defaultPodTemplate(template);
    },
    validateSpec: (obj) => validatePodTemplateSpec(obj.template, 'template'),
  });
}

// ---- LimitRanges ----

export function defaultLimitRange(obj: KubeObject): void {
  for (const raw of asArray(asObject(obj.spec).limits)) {
    if (!isObject(raw) || raw.type !== 'Container') continue;
    const item = raw;
    const def = isObject(item.default) ? item.default : {};
    const defReq = isObject(item.defaultRequest) ? item.defaultRequest : {};
    for (const [k, v] of Object.entries(asObject(item.max))) if (def[k] === undefined) def[k] = v;
    for (const [k, v] of Object.entries(def)) if (defReq[k] === undefined) defReq[k] = v;
    for (const [k, v] of Object.entries(asObject(item.min))) if (defReq[k] === undefined) defReq[k] = v;
    // Go omits the empty maps
    if (Object.keys(def).length) item.default = def;
    if (Object.keys(defReq).length) item.defaultRequest = defReq;
  }
}

export function validateLimitRange(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  asArray(asObject(obj.spec).limits).forEach((raw, i) => {
    const item = asObject(raw);
    const p = `spec.limits[${i}]`;
    const type = str(item.type);
    if (seen.has(type)) errs.push(fieldErrors.duplicate(`${p}.type`, type));
    seen.add(type);
    if (!type) errs.push(fieldErrors.required(`${p}.type`));
    for (const f of ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio']) {
      for (const [k, v] of Object.entries(asObject(item[f]))) {
        errs.push(...validateResourceName(k, `${p}.${f}[${k}]`));
        const q = quantityOf(v);
        if (q) errs.push(...validateResourceQuantityValue(k, q, `${p}.${f}[${k}]`));
      }
    }
    if (type === 'Pod' && (isObject(item.default) || isObject(item.defaultRequest))) {
      if (isObject(item.default)) errs.push(fieldErrors.forbidden(`${p}.default`, "may not be specified when `type` is 'Pod'"));
      if (isObject(item.defaultRequest))
        errs.push(fieldErrors.forbidden(`${p}.defaultRequest`, "may not be specified when `type` is 'Pod'"));
    }
    for (const [k, minRaw] of Object.entries(asObject(item.min))) {
      const min = quantityOf(minRaw);
      const max = quantityOf(asObject(item.max)[k]);
      if (min && max && compareQuantities(min, max) > 0) {
        errs.push(
          fieldErrors.invalid(
            `${p}.min[${k}]`,
            { rendered: formatQuantity(min) },
            `min value ${formatQuantity(min)} is greater than max value ${formatQuantity(max)}`,
          ),
        );
      }
    }
  });
  return errs;
}

export function limitRangeStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    allowCreateOnUpdate: true,
    applyDefaults: defaultLimitRange,
    validateSpec: validateLimitRange,
  });
}

// ---- ResourceQuotas ----

const quotaScopes = [
  'BestEffort',
  'CrossNamespacePodAffinity',
  'NotBestEffort',
  'NotTerminating',
  'PriorityClass',
  'Terminating',
  'VolumeAttributesClass',
];

export function validateResourceQuota(obj: KubeObject): FieldError[] {
  const spec = asObject(obj.spec);
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(asObject(spec.hard))) {
    const p = `spec.hard[${k}]`;
    errs.push(...qualifiedName(k, p));
    const q = quantityOf(v);
    if (q) errs.push(...validateResourceQuantityValue(k, q, p));
  }
  asArray(spec.scopes).forEach((s) => {
    const scope = str(s);
    if (!quotaScopes.includes(scope)) errs.push(fieldErrors.invalid('spec.scopes', scope, 'unsupported scope'));
  });
  return errs;
}

export function resourceQuotaStrategy(): ResourceStrategy {
  return defineStrategy({ namespaced: true, hasStatusSubresource: true, validateSpec: validateResourceQuota });
}

// ---- Nodes ----

const taintEffects = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

export function validateNodeSpec(obj: KubeObject): FieldError[] {
  const spec = asObject(obj.spec);
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  asArray(spec.taints).forEach((raw, i) => {
    const t = asObject(raw);
    const p = `spec.taints[${i}]`;
    const key = str(t.key);
    errs.push(...qualifiedName(key, `${p}.key`));
    const valueMsgs = isValidLabelValue(str(t.value));
    if (valueMsgs.length) errs.push(fieldErrors.invalid(`${p}.value`, str(t.value), valueMsgs.join(';')));
    const effect = str(t.effect);
    if (!effect) errs.push(fieldErrors.required(`${p}.effect`));
    else if (!taintEffects.includes(effect)) errs.push(fieldErrors.notSupported(`${p}.effect`, effect, taintEffects));
    const pair = `${key}:${effect}`;
    if (seen.has(pair))
      errs.push(
        fieldErrors.duplicate(p, { rendered: `core.Taint{Key:"${key}", Value:"${str(t.value)}", Effect:"${effect}", TimeAdded:<nil>}` }),
      );
    seen.add(pair);
  });
  if (str(spec.podCIDR)) {
    const err = cidrError(str(spec.podCIDR));
    if (err) errs.push(fieldErrors.invalid('spec.podCIDR', str(spec.podCIDR), err));
  }
  asArray(spec.podCIDRs).forEach((c, i) => {
    const err = cidrError(str(c));
    if (err) errs.push(fieldErrors.invalid(`spec.podCIDRs[${i}]`, str(c), err));
  });
  return errs;
}

/** v1 SetDefaults_NodeStatus: allocatable defaults to capacity */
export function defaultNodeStatus(obj: KubeObject): void {
  const status = obj.status;
  if (!isObject(status)) return;
  if (status.allocatable === undefined && isObject(status.capacity)) status.allocatable = { ...status.capacity };
}
