// Validation of resource names and quantities (container resources, overhead, quota-like
// lists): kube's validateResourceRequirements with its resource-name classes.

import { asObject } from '../object.js';
import {
  compareQuantities,
  formatQuantity,
  isWholeQuantity,
  parseQuantity,
  quantitySign,
  QuantityError,
  type Quantity,
} from '../../machinery/quantity.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { isNegativeErrorMsg, qualifiedName } from '../validation/values.js';

const standardContainerResources = new Set(['cpu', 'memory', 'ephemeral-storage']);
const standardResources = new Set([
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
  'services',
  'replicationcontrollers',
  'resourcequotas',
  'secrets',
  'persistentvolumeclaims',
  'configmaps',
  'services.nodeports',
  'services.loadbalancers',
  'storage',
  'requests.storage',
]);
const hugePagesPrefix = 'hugepages-';
const defaultNamespacePrefix = 'kubernetes.io/';

export function isHugePageResourceName(name: string): boolean {
  return name.startsWith(hugePagesPrefix);
}

/** unprefixed or kubernetes.io/-prefixed */
export function isNativeResource(name: string): boolean {
  return !name.includes('/') || name.includes(defaultNamespacePrefix);
}

export function isExtendedResourceName(name: string): boolean {
  if (isNativeResource(name) || name.startsWith('requests.')) return false;
  return qualifiedName('requests.' + name, '').length === 0;
}

export function isOvercommitAllowed(name: string): boolean {
  return isNativeResource(name) && !isHugePageResourceName(name);
}

function isIntegerResourceName(name: string): boolean {
  return (
    isExtendedResourceName(name) ||
    [
      'pods',
      'services',
      'replicationcontrollers',
      'resourcequotas',
      'secrets',
      'configmaps',
      'persistentvolumeclaims',
      'services.nodeports',
      'services.loadbalancers',
    ].includes(name)
  );
}

export function validateResourceName(name: string, path: string): FieldError[] {
  const errs = qualifiedName(name, path);
  if (errs.length) return errs;
  if (!name.includes('/') && !standardResources.has(name) && !isHugePageResourceName(name)) {
    errs.push(fieldErrors.invalid(path, name, 'must be a standard resource type or fully qualified'));
  }
  return errs;
}

export function validateContainerResourceName(name: string, path: string): FieldError[] {
  const errs = validateResourceName(name, path);
  if (!name.includes('/')) {
    if (!standardContainerResources.has(name) && !isHugePageResourceName(name)) {
      errs.push(fieldErrors.invalid(path, name, 'must be a standard resource for containers'));
    }
  } else if (!isNativeResource(name) && !isExtendedResourceName(name)) {
    errs.push(fieldErrors.invalid(path, name, "doesn't follow extended resource name standard"));
  }
  return errs;
}

/** a quantity that already passed decoding; undefined when it does not parse */
export function quantityOf(v: unknown): Quantity | undefined {
  if (typeof v !== 'string' && typeof v !== 'number') return undefined;
  try {
    return parseQuantity(v);
  } catch (e) {
    if (e instanceof QuantityError) return undefined;
    throw e;
  }
}

export function validateResourceQuantityValue(name: string, q: Quantity, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (quantitySign(q) < 0) errs.push(fieldErrors.invalid(path, formatQuantity(q), isNegativeErrorMsg));
  if (isIntegerResourceName(name) && !isWholeQuantity(q))
    errs.push(fieldErrors.invalid(path, { rendered: formatQuantity(q) }, 'must be an integer'));
  return errs;
}

/** kube's validateResourceRequirements for a container (`resources`) */
export function validateResourceRequirements(
  requirements: unknown,
  path: string,
  nameFn: (name: string, path: string) => FieldError[] = validateContainerResourceName,
): FieldError[] {
  const errs: FieldError[] = [];
  const r = asObject(requirements);
  const limits = asObject(r.limits);
  const requests = asObject(r.requests);
  const limPath = `${path}.limits`;
  const reqPath = `${path}.requests`;
  let limCpuMem = false;
  let reqCpuMem = false;
  let hugePages = false;
  for (const [name, raw] of Object.entries(limits)) {
    const p = `${limPath}[${name}]`;
    errs.push(...nameFn(name, p));
    const q = quantityOf(raw);
    if (q) errs.push(...validateResourceQuantityValue(name, q, p));
    if (isHugePageResourceName(name)) hugePages = true;
    if (name === 'cpu' || name === 'memory') limCpuMem = true;
  }
  for (const [name, raw] of Object.entries(requests)) {
    const p = `${reqPath}[${name}]`;
    errs.push(...nameFn(name, p));
    const q = quantityOf(raw);
    if (q) errs.push(...validateResourceQuantityValue(name, q, p));
    const limit = quantityOf(limits[name]);
    if (q && limit) {
      const cmp = compareQuantities(q, limit);
      if (cmp !== 0 && !isOvercommitAllowed(name)) {
        errs.push(fieldErrors.invalid(reqPath, formatQuantity(q), `must be equal to ${name} limit of ${formatQuantity(limit)}`));
      } else if (cmp > 0) {
        errs.push(
          fieldErrors.invalid(reqPath, formatQuantity(q), `must be less than or equal to ${name} limit of ${formatQuantity(limit)}`),
        );
      }
    } else if (!Object.hasOwn(limits, name) && !isOvercommitAllowed(name)) {
      errs.push(fieldErrors.required(limPath, 'Limit must be set for non overcommitable resources'));
    }
    if (isHugePageResourceName(name)) hugePages = true;
    if (name === 'cpu' || name === 'memory') reqCpuMem = true;
  }
  if (!limCpuMem && !reqCpuMem && hugePages) errs.push(fieldErrors.forbidden(path, 'HugePages require cpu or memory'));
  return errs;
}
