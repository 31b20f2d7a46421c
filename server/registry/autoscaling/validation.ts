// autoscaling/v2 HorizontalPodAutoscaler validation (kube's pkg/apis/autoscaling/validation):
// replica bounds, the scale target, metric sources and targets, scaling behaviour.

import type { KubeObject } from '../../../storage/interface.js';
import { asArray, asObject, isObject, type JsonObject } from '../object.js';
import { formatQuantity, quantitySign } from '../../machinery/quantity.js';
import { quantityOf } from '../core/resources-validation.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { isValidPathSegmentName } from '../../machinery/validation/names.js';
import { validateLabelSelector } from '../core/workload-validation.js';
import { optNum, num, str } from '../validation/values.js';

const metricSourceTypes = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'];
const sourceField: Record<string, string> = {
  Object: 'object',
  Pods: 'pods',
  Resource: 'resource',
  External: 'external',
  ContainerResource: 'containerResource',
};
const selectPolicies = ['Disabled', 'Max', 'Min'];
const policyTypes = ['Percent', 'Pods'];
const maxStabilizationWindowSeconds = 3600;
const maxPeriodSeconds = 1800;

function crossVersionObjectReference(ref: unknown, path: string): FieldError[] {
  const r = asObject(ref);
  const errs: FieldError[] = [];
  for (const f of ['kind', 'name']) {
    const v = str(r[f]);
    if (!v) errs.push(fieldErrors.required(`${path}.${f}`));
    else for (const m of isValidPathSegmentName(v)) errs.push(fieldErrors.invalid(`${path}.${f}`, v, m));
  }
  return errs;
}

function metricIdentifier(id: unknown, path: string): FieldError[] {
  const m = asObject(id);
  const name = str(m.name);
  const errs: FieldError[] = [];
  if (!name) errs.push(fieldErrors.required(`${path}.name`, 'must specify a metric name'));
  else for (const msg of isValidPathSegmentName(name)) errs.push(fieldErrors.invalid(`${path}.name`, name, msg));
  if (isObject(m.selector)) errs.push(...validateLabelSelector(m.selector, `${path}.selector`));
  return errs;
}

function quantityShown(v: unknown): string {
  const q = quantityOf(v);
  return q ? formatQuantity(q) : String(v);
}

function metricTarget(t: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const type = str(t.type);
  if (!type) errs.push(fieldErrors.required(`${path}.type`, 'must specify a metric target type'));
  if (type !== 'Utilization' && type !== 'Value' && type !== 'AverageValue') {
    errs.push(fieldErrors.invalid(`${path}.type`, type, 'must be either Utilization, Value, or AverageValue'));
  }
  for (const f of ['value', 'averageValue']) {
    if (t[f] === undefined || t[f] === null) continue;
    const q = quantityOf(t[f]);
    if (q && quantitySign(q) !== 1) errs.push(fieldErrors.invalid(`${path}.${f}`, { rendered: quantityShown(t[f]) }, 'must be positive'));
  }
  const util = optNum(t.averageUtilization);
  if (util !== undefined && util < 1) errs.push(fieldErrors.invalid(`${path}.averageUtilization`, util, 'must be greater than 0'));
  return errs;
}

const isSet = (v: unknown) => v !== undefined && v !== null;

function validateSource(kind: string, src: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const target = asObject(src.target);
  const tp = `${path}.target`;
  switch (kind) {
    case 'object':
      errs.push(...crossVersionObjectReference(src.describedObject, `${path}.describedObject`));
      errs.push(...metricIdentifier(src.metric, `${path}.metric`));
      errs.push(...metricTarget(target, tp));
      if (!isSet(target.value) && !isSet(target.averageValue))
        errs.push(fieldErrors.required(`${tp}.averageValue`, 'must set either a target value or averageValue'));
      break;
    case 'external':
      errs.push(...metricIdentifier(src.metric, `${path}.metric`));
      errs.push(...metricTarget(target, tp));
      if (!isSet(target.value) && !isSet(target.averageValue)) {
        errs.push(fieldErrors.required(`${tp}.averageValue`, 'must set either a target value for metric or a per-pod target'));
      }
      if (isSet(target.value) && isSet(target.averageValue)) {
        errs.push(fieldErrors.forbidden(`${tp}.value`, 'may not set both a target value for metric and a per-pod target'));
      }
      break;
    case 'pods':
      errs.push(...metricIdentifier(src.metric, `${path}.metric`));
      errs.push(...metricTarget(target, tp));
      if (!isSet(target.averageValue)) errs.push(fieldErrors.required(`${tp}.averageValue`, 'must specify a positive target averageValue'));
      break;
    case 'resource':
    case 'containerResource':
      if (!str(src.name)) errs.push(fieldErrors.required(`${path}.name`, 'must specify a resource name'));
      if (kind === 'containerResource' && !str(src.container))
        errs.push(fieldErrors.required(`${path}.container`, 'must specify a container'));
      errs.push(...metricTarget(target, tp));
      if (!isSet(target.averageUtilization) && !isSet(target.averageValue)) {
        errs.push(fieldErrors.required(`${tp}.averageUtilization`, 'must set either a target raw value or a target utilization'));
      }
      if (isSet(target.averageUtilization) && isSet(target.averageValue)) {
        errs.push(fieldErrors.forbidden(`${tp}.averageValue`, 'may not set both a target raw value and a target utilization'));
      }
      break;
  }
  return errs;
}

function validateMetricSpec(spec: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const type = str(spec.type);
  if (!type) errs.push(fieldErrors.required(`${path}.type`, 'must specify a metric source type'));
  if (!metricSourceTypes.includes(type)) errs.push(fieldErrors.notSupported(`${path}.type`, type, metricSourceTypes));
  const present: string[] = [];
  for (const f of ['object', 'external', 'pods', 'resource', 'containerResource']) {
    if (!isObject(spec[f])) continue;
    present.push(f);
    if (present.length === 1) errs.push(...validateSource(f, spec[f] as JsonObject, `${path}.${f}`));
  }
  const expected = sourceField[type];
  if (expected) {
    if (!isObject(spec[expected]))
      errs.push(fieldErrors.required(`${path}.${expected}`, 'must populate information for the given metric source'));
  } else {
    errs.push(fieldErrors.notSupported(`${path}.type`, type, metricSourceTypes));
  }
  if (present.length !== 1) {
    for (const f of present)
      if (f !== expected) errs.push(fieldErrors.forbidden(`${path}.${f}`, 'must populate the given metric source only'));
  }
  return errs;
}

function validateScalingRules(rules: unknown, path: string): FieldError[] {
  if (!isObject(rules)) return [];
  const errs: FieldError[] = [];
  const sws = optNum(rules.stabilizationWindowSeconds);
  if (sws !== undefined && sws < 0)
    errs.push(fieldErrors.invalid(`${path}.stabilizationWindowSeconds`, sws, 'must be greater than or equal to zero'));
  if (sws !== undefined && sws > maxStabilizationWindowSeconds) {
    errs.push(
      fieldErrors.invalid(`${path}.stabilizationWindowSeconds`, sws, `must be less than or equal to ${maxStabilizationWindowSeconds}`),
    );
  }
  if (typeof rules.selectPolicy === 'string' && !selectPolicies.includes(rules.selectPolicy)) {
    errs.push(fieldErrors.notSupported(`${path}.selectPolicy`, rules.selectPolicy, selectPolicies));
  }
  const policies = asArray(rules.policies);
  if (policies.length === 0) errs.push(fieldErrors.required(`${path}.policies`, 'must specify at least one Policy'));
  policies.forEach((raw, i) => {
    const p = asObject(raw);
    const pp = `${path}.policies[${i}]`;
    const type = str(p.type);
    if (!policyTypes.includes(type)) errs.push(fieldErrors.notSupported(`${pp}.type`, type, policyTypes));
    if (num(p.value) <= 0) errs.push(fieldErrors.invalid(`${pp}.value`, num(p.value), 'must be greater than zero'));
    const period = num(p.periodSeconds);
    if (period <= 0) errs.push(fieldErrors.invalid(`${pp}.periodSeconds`, period, 'must be greater than zero'));
    if (period > maxPeriodSeconds)
      errs.push(fieldErrors.invalid(`${pp}.periodSeconds`, period, `must be less than or equal to ${maxPeriodSeconds}`));
  });
  return errs;
}

export function validateHorizontalPodAutoscaler(obj: KubeObject): FieldError[] {
  const spec = asObject(obj.spec);
  const errs: FieldError[] = [];
  const min = optNum(spec.minReplicas);
  const max = num(spec.maxReplicas);
  if (min !== undefined && min < 1) errs.push(fieldErrors.invalid('spec.minReplicas', min, 'must be greater than or equal to 1'));
  if (max < 1) errs.push(fieldErrors.invalid('spec.maxReplicas', max, 'must be greater than 0'));
  if (min !== undefined && max < min)
    errs.push(fieldErrors.invalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
  const refErrs = crossVersionObjectReference(spec.scaleTargetRef, 'spec.scaleTargetRef');
  if (refErrs.length) return [...errs, ...refErrs];
  const metricErrs: FieldError[] = [];
  asArray(spec.metrics).forEach((m, i) => metricErrs.push(...validateMetricSpec(asObject(m), `spec.metrics[${i}]`)));
  if (metricErrs.length) return [...errs, ...metricErrs];
  if (isObject(spec.behavior)) {
    errs.push(...validateScalingRules(spec.behavior.scaleUp, 'spec.behavior.scaleUp'));
    errs.push(...validateScalingRules(spec.behavior.scaleDown, 'spec.behavior.scaleDown'));
  }
  return errs;
}
