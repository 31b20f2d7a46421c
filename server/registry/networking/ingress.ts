// networking.k8s.io/v1 Ingresses and IngressClasses: validation of rules, hosts (wildcards
// included), paths and their pathType, backends (service name and port, or a resource), TLS
// hosts, the class name; an IngressClass's controller is required and immutable, and its
// parameters' scope defaults to Cluster.

import type { KubeObject } from '../../../storage/interface.js';
import { asArray, asObject, isObject, type JsonObject } from '../object.js';
import { defineStrategy, statusStrategy, type ResourceStrategy } from '../strategy.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { isDNS1035Label, isDNS1123Subdomain, regexError } from '../../machinery/validation/names.js';
import { dnsLabel, dnsSubdomain, fieldImmutableErrorMsg, isIP, isValidPortName, isValidPortNum, num, str } from '../validation/values.js';

const pathTypes = ['Exact', 'ImplementationSpecific', 'Prefix'];
const invalidPathSequences = ['//', '/./', '/../', '%2f', '%2F'];
const invalidPathSuffixes = ['/..', '/.'];
const wildcardFmt = '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*';
const wildcardRe = new RegExp(`^${wildcardFmt}$`);
const wildcardMsg =
  "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character";

export function isWildcardDNS1123Subdomain(v: string): string[] {
  const errs: string[] = [];
  if (Buffer.byteLength(v) > 253) errs.push('must be no more than 253 characters');
  if (!wildcardRe.test(v)) errs.push(regexError(wildcardMsg, wildcardFmt, '*.example.com'));
  return errs;
}

function validateHost(host: string, path: string): FieldError[] {
  const msgs = host.includes('*') ? isWildcardDNS1123Subdomain(host) : isDNS1123Subdomain(host);
  return msgs.map((m) => fieldErrors.invalid(path, host, m));
}

function typedLocalObjectReference(ref: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const group = ref.apiGroup;
  if (typeof group === 'string' && group) errs.push(...dnsSubdomain(group, `${path}.apiGroup`));
  const kind = str(ref.kind);
  if (!kind) errs.push(fieldErrors.required(`${path}.kind`));
  const name = str(ref.name);
  if (!name) errs.push(fieldErrors.required(`${path}.name`));
  return errs;
}

function validateBackend(backend: JsonObject, path: string): FieldError[] {
  const hasResource = isObject(backend.resource);
  const hasService = isObject(backend.service);
  if (hasResource && hasService) return [fieldErrors.invalid(path, '', 'cannot set both resource and service backends')];
  if (hasResource) return typedLocalObjectReference(backend.resource as JsonObject, `${path}.resource`);
  if (!hasService) return [fieldErrors.invalid(path, '', 'resource or service backend is required')];
  const svc = backend.service as JsonObject;
  const errs: FieldError[] = [];
  const name = str(svc.name);
  if (!name) errs.push(fieldErrors.required(`${path}.service.name`));
  else for (const m of isDNS1035Label(name)) errs.push(fieldErrors.invalid(`${path}.service.name`, name, m));
  const port = asObject(svc.port);
  const portName = str(port.name);
  const portNumber = num(port.number);
  if (portName && portNumber) errs.push(fieldErrors.invalid(path, '', 'cannot set both port name & port number'));
  else if (portName) for (const m of isValidPortName(portName)) errs.push(fieldErrors.invalid(`${path}.service.port.name`, portName, m));
  else if (portNumber)
    for (const m of isValidPortNum(portNumber)) errs.push(fieldErrors.invalid(`${path}.service.port.number`, portNumber, m));
  else errs.push(fieldErrors.required(path, 'port name or number is required'));
  return errs;
}

function validatePath(p: JsonObject, path: string): FieldError[] {
  if (typeof p.pathType !== 'string') return [fieldErrors.required(`${path}.pathType`, 'pathType must be specified')];
  const errs: FieldError[] = [];
  const value = str(p.path);
  switch (p.pathType) {
    case 'Exact':
    case 'Prefix':
      if (!value.startsWith('/')) errs.push(fieldErrors.invalid(`${path}.path`, value, 'must be an absolute path'));
      if (value) {
        for (const seq of invalidPathSequences)
          if (value.includes(seq)) errs.push(fieldErrors.invalid(`${path}.path`, value, `must not contain '${seq}'`));
        for (const suf of invalidPathSuffixes)
          if (value.endsWith(suf)) errs.push(fieldErrors.invalid(`${path}.path`, value, `cannot end with '${suf}'`));
      }
      break;
    case 'ImplementationSpecific':
      if (value && !value.startsWith('/')) errs.push(fieldErrors.invalid(`${path}.path`, value, 'must be an absolute path'));
      break;
    default:
      errs.push(fieldErrors.notSupported(`${path}.pathType`, p.pathType, pathTypes));
  }
  errs.push(...validateBackend(asObject(p.backend), `${path}.backend`));
  return errs;
}

export function validateIngress(obj: KubeObject): FieldError[] {
  const spec = asObject(obj.spec);
  const errs: FieldError[] = [];
  const rules = asArray(spec.rules);
  if (rules.length === 0 && !isObject(spec.defaultBackend)) {
    errs.push(
      fieldErrors.invalid('spec', { rendered: '[]networking.IngressRule(nil)' }, 'either `defaultBackend` or `rules` must be specified'),
    );
  }
  if (isObject(spec.defaultBackend)) errs.push(...validateBackend(spec.defaultBackend, 'spec.defaultBackend'));
  rules.forEach((raw, i) => {
    const rule = asObject(raw);
    const rp = `spec.rules[${i}]`;
    const host = str(rule.host);
    if (host) {
      if (isIP(host)) errs.push(fieldErrors.invalid(`${rp}.host`, host, 'must be a DNS name, not an IP address'));
      errs.push(...validateHost(host, `${rp}.host`));
    }
    if (isObject(rule.http)) {
      const paths = asArray(rule.http.paths);
      if (paths.length === 0) errs.push(fieldErrors.required(`${rp}.http.paths`));
      paths.forEach((p, j) => errs.push(...validatePath(asObject(p), `${rp}.http.paths[${j}]`)));
    }
  });
  asArray(spec.tls).forEach((raw, i) => {
    const tls = asObject(raw);
    asArray(tls.hosts).forEach((h, j) => errs.push(...validateHost(str(h), `spec.tls[${i}].hosts[${j}]`)));
    const secret = str(tls.secretName);
    if (secret) errs.push(...dnsSubdomain(secret, `spec.tls[${i}].secretName`));
  });
  const className = spec.ingressClassName;
  if (typeof className === 'string' && className) errs.push(...dnsSubdomain(className, 'spec.ingressClassName'));
  return errs;
}

export function ingressStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    hasStatusSubresource: true,
    tracksGeneration: true,
    // IngressStatus.loadBalancer is a struct, always serialized
    initialStatus: () => ({ loadBalancer: {} }),
    validateSpec: validateIngress,
  });
}

export function ingressStatusStrategy(base: ResourceStrategy): ResourceStrategy {
  return statusStrategy(base);
}

// ---- IngressClasses ----

const maxControllerLength = 250;

export function validateIngressClass(obj: KubeObject): FieldError[] {
  const spec = asObject(obj.spec);
  const errs: FieldError[] = [];
  const controller = str(spec.controller);
  if (!controller) errs.push(fieldErrors.required('spec.controller'));
  else if (controller.length > maxControllerLength) errs.push(fieldErrors.tooLong('spec.controller', maxControllerLength));
  else {
    const slash = controller.indexOf('/');
    const domain = slash < 0 ? controller : controller.slice(0, slash);
    const rest = slash < 0 ? '' : controller.slice(slash + 1);
    if (slash < 0 || !rest)
      errs.push(fieldErrors.invalid('spec.controller', controller, 'must be a domain-prefixed path (such as "acme.io/foo")'));
    else {
      for (const m of isDNS1123Subdomain(domain)) errs.push(fieldErrors.invalid('spec.controller', domain, m));
      if (!/^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/.test(rest)) {
        errs.push(
          fieldErrors.invalid('spec.controller', rest, regexError('a valid HTTP path', "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+", '/foo')),
        );
      }
    }
  }
  if (isObject(spec.parameters)) {
    const p = spec.parameters;
    const pp = 'spec.parameters';
    errs.push(...typedLocalObjectReference(p, pp));
    const scope = p.scope;
    if (scope === 'Namespace') {
      if (typeof p.namespace !== 'string') errs.push(fieldErrors.required(`${pp}.namespace`, "`parameters.scope` is set to 'Namespace'"));
      else errs.push(...dnsLabel(p.namespace, `${pp}.namespace`));
    } else if (scope === 'Cluster') {
      if (typeof p.namespace === 'string') errs.push(fieldErrors.forbidden(`${pp}.namespace`, "`parameters.scope` is set to 'Cluster'"));
    } else if (typeof scope === 'string') {
      errs.push(fieldErrors.notSupported(`${pp}.scope`, scope, ['Cluster', 'Namespace']));
    }
  }
  return errs;
}

export function ingressClassStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: false,
    tracksGeneration: true,
    applyDefaults(obj) {
      const params = asObject(obj.spec).parameters;
      if (isObject(params)) params.scope ??= 'Cluster';
    },
    validateSpec: validateIngressClass,
    validateSpecUpdate: (obj, old) => {
      const now = str(asObject(obj.spec).controller);
      return now === str(asObject(old.spec).controller) ? [] : [fieldErrors.invalid('spec.controller', now, fieldImmutableErrorMsg)];
    },
  });
}
