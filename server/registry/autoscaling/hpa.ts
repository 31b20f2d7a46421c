// HorizontalPodAutoscalers, stored as autoscaling/v2: minReplicas 1, a CPU utilization
// target of 80% when no metric is given, and the scaling behaviour's defaults when one is.

import { asObject, isObject, reorder, type JsonObject } from '../object.js';
import { defineStrategy, type ResourceStrategy } from '../strategy.js';
import { validateHorizontalPodAutoscaler } from './validation.js';

export const defaultCPUUtilization = 80;

function scaleUpDefaults(): JsonObject {
  return {
    stabilizationWindowSeconds: 0,
    selectPolicy: 'Max',
    policies: [
      { type: 'Pods', value: 4, periodSeconds: 15 },
      { type: 'Percent', value: 100, periodSeconds: 15 },
    ],
  };
}

function scaleDownDefaults(): JsonObject {
  return { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] };
}

/** given rules override the defaults field by field */
function rules(given: unknown, defaults: JsonObject): JsonObject {
  if (!isObject(given)) return defaults;
  const out = { ...defaults };
  for (const k of ['selectPolicy', 'stabilizationWindowSeconds', 'policies', 'tolerance']) {
    if (given[k] !== undefined) out[k] = given[k];
  }
  return reorder(out, ['stabilizationWindowSeconds', 'selectPolicy', 'policies', 'tolerance']);
}

export function hpaStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    hasStatusSubresource: true,
    tracksGeneration: true,
    initialStatus: () => ({ desiredReplicas: 0 }),
    applyDefaults(obj) {
      if (!isObject(obj.spec)) return;
      const spec = obj.spec;
      spec.minReplicas ??= 1;
      if (!Array.isArray(spec.metrics) || spec.metrics.length === 0) {
        spec.metrics = [
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: defaultCPUUtilization } } },
        ];
      }
      if (isObject(spec.behavior)) {
        const b = asObject(spec.behavior);
        spec.behavior = { scaleUp: rules(b.scaleUp, scaleUpDefaults()), scaleDown: rules(b.scaleDown, scaleDownDefaults()) };
      }
      obj.spec = reorder(spec, ['scaleTargetRef', 'minReplicas', 'maxReplicas', 'metrics', 'behavior']);
    },
    validateSpec: validateHorizontalPodAutoscaler,
  });
}
