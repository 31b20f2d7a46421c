// coordination.k8s.io Leases: positive durations, non-negative transitions, the coordinated
// leader election strategy, and a preferred holder only with a strategy.

import type { KubeObject } from '../../../storage/interface.js';
import { asObject } from '../object.js';
import { defineStrategy, type ResourceStrategy } from '../strategy.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { isQualifiedName } from '../../machinery/validation/names.js';
import { optNum } from '../validation/values.js';

const builtinStrategies = ['OldestEmulationVersion'];

export function validateLease(obj: KubeObject): FieldError[] {
  const spec = asObject(obj.spec);
  const errs: FieldError[] = [];
  const duration = optNum(spec.leaseDurationSeconds);
  if (duration !== undefined && duration <= 0)
    errs.push(fieldErrors.invalid('spec.leaseDurationSeconds', duration, 'must be greater than 0'));
  const transitions = optNum(spec.leaseTransitions);
  if (transitions !== undefined && transitions < 0)
    errs.push(fieldErrors.invalid('spec.leaseTransitions', transitions, 'must be greater than or equal to 0'));
  if (typeof spec.strategy === 'string') {
    const s = spec.strategy;
    // a strategy is a built-in one or a domain-qualified custom one
    if (!builtinStrategies.includes(s)) {
      const parts = s.split('/');
      if (parts.length !== 2) {
        errs.push(fieldErrors.invalid('spec.strategy', s, 'Must be a valid strategy name'));
      } else {
        for (const m of isQualifiedName(s)) errs.push(fieldErrors.invalid('spec.strategy', s, m));
      }
    }
  }
  if (typeof spec.preferredHolder === 'string' && spec.preferredHolder !== '' && !spec.strategy) {
    errs.push(fieldErrors.forbidden('spec.preferredHolder', 'may only be specified if `strategy` is defined'));
  }
  return errs;
}

export function leaseStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    allowCreateOnUpdate: true,
    validateSpec: validateLease,
  });
}
