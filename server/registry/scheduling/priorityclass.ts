// scheduling.k8s.io PriorityClasses: preemptionPolicy defaults to PreemptLowerPriority, user
// classes stay below the system range, `system-` names are reserved, value and
// preemptionPolicy are immutable.

import type { KubeObject } from '../../../storage/interface.js';
import { defineStrategy, type ResourceStrategy } from '../strategy.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { validateObjectMetaUpdate } from '../validation/object-meta.js';
import { fieldImmutableErrorMsg, num } from '../validation/values.js';

export const highestUserDefinablePriority = 1000000000;
const systemPrefix = 'system-';
const systemClasses: Record<string, number> = { 'system-node-critical': 2000001000, 'system-cluster-critical': 2000000000 };
const preemptionPolicies = ['PreemptLowerPriority', 'Never'];

function knownSystemClassError(name: string, value: number, globalDefault: boolean): string | undefined {
  const want = systemClasses[name];
  if (want === undefined) return `${name} is not a known system priority class`;
  if (value !== want) return `value of ${name} PriorityClass must be ${want}`;
  if (globalDefault) return `globalDefault of ${name} must be false`;
  return undefined;
}

export function validatePriorityClass(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const name = obj.metadata.name ?? '';
  const value = num(obj.value);
  if (name.startsWith(systemPrefix)) {
    const err = knownSystemClassError(name, value, obj.globalDefault === true);
    if (err)
      errs.push(
        fieldErrors.forbidden(
          'metadata.name',
          `priority class names with '${systemPrefix}' prefix are reserved for system use only. error: ${err}`,
        ),
      );
  } else if (value > highestUserDefinablePriority) {
    errs.push(fieldErrors.forbidden('value', `maximum allowed value of a user defined priority is ${highestUserDefinablePriority}`));
  }
  if (typeof obj.preemptionPolicy === 'string') {
    const p = obj.preemptionPolicy;
    if (!p) errs.push(fieldErrors.required('preemptionPolicy'));
    else if (!preemptionPolicies.includes(p)) errs.push(fieldErrors.notSupported('preemptionPolicy', p, preemptionPolicies));
  }
  return errs;
}

export function validatePriorityClassUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateObjectMetaUpdate(obj.metadata, old.metadata);
  if (num(obj.value) !== num(old.value)) errs.push(fieldErrors.forbidden('value', 'may not be changed in an update.'));
  if ((obj.preemptionPolicy ?? null) !== (old.preemptionPolicy ?? null)) {
    errs.push(
      fieldErrors.invalid(
        'preemptionPolicy',
        typeof obj.preemptionPolicy === 'string' ? obj.preemptionPolicy : null,
        fieldImmutableErrorMsg,
      ),
    );
  }
  return errs;
}

export function priorityClassStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: false,
    applyDefaults(obj) {
      obj.preemptionPolicy ??= 'PreemptLowerPriority';
    },
    validateSpec: validatePriorityClass,
    // kube's update validation checks only the metadata and the immutable fields
    validateUpdate: validatePriorityClassUpdate,
  });
}
