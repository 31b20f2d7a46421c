// policy/v1 PodDisruptionBudgets: the zero status a new budget shows, and validation
// (minAvailable and maxUnavailable exclusive, each an int or a percent up to 100%, the
// selector, the unhealthy-pod eviction policy).

import type { KubeObject } from '../../../storage/interface.js';
import { validateLabelSelector } from '../core/workload-validation.js';
import { asObject } from '../object.js';
import { defineStrategy, statusStrategy, type ResourceStrategy } from '../strategy.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { isNotMoreThan100Percent, validatePositiveIntOrPercent } from '../validation/values.js';

const unhealthyPodEvictionPolicies = ['AlwaysAllow', 'IfHealthyBudget'];
const isSet = (v: unknown) => v !== undefined && v !== null;

export function validatePodDisruptionBudget(obj: KubeObject): FieldError[] {
  const spec = asObject(obj.spec);
  const errs: FieldError[] = [];
  if (isSet(spec.minAvailable) && isSet(spec.maxUnavailable)) {
    errs.push(
      fieldErrors.invalid(
        'spec',
        { rendered: 'policy.PodDisruptionBudgetSpec{...}' },
        'minAvailable and maxUnavailable cannot be both set',
      ),
    );
  }
  for (const f of ['minAvailable', 'maxUnavailable']) {
    if (!isSet(spec[f])) continue;
    errs.push(...validatePositiveIntOrPercent(spec[f], `spec.${f}`));
    errs.push(...isNotMoreThan100Percent(spec[f], `spec.${f}`));
  }
  errs.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  const policy = spec.unhealthyPodEvictionPolicy;
  if (typeof policy === 'string' && !unhealthyPodEvictionPolicies.includes(policy)) {
    errs.push(fieldErrors.notSupported('spec.unhealthyPodEvictionPolicy', policy, unhealthyPodEvictionPolicies));
  }
  return errs;
}

export function podDisruptionBudgetStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    hasStatusSubresource: true,
    tracksGeneration: true,
    // PodDisruptionBudgetStatus's counters are not omitempty
    initialStatus: () => ({ disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 }),
    validateSpec: validatePodDisruptionBudget,
  });
}

export function podDisruptionBudgetStatusStrategy(base: ResourceStrategy): ResourceStrategy {
  return statusStrategy(base);
}
