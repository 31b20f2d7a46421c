// node.k8s.io RuntimeClasses: the handler is a DNS label and immutable; overhead is a
// resource list; scheduling tolerations and node selector follow the pod rules.

import type { KubeObject } from '../../../storage/interface.js';
import { validateTolerations } from '../core/pod-validation.js';
import { validateResourceRequirements } from '../core/resources-validation.js';
import { asObject, isObject } from '../object.js';
import { defineStrategy, type ResourceStrategy } from '../strategy.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { isDNS1123Label } from '../../machinery/validation/names.js';
import { validateLabels } from '../validation/object-meta.js';
import { fieldImmutableErrorMsg, str } from '../validation/values.js';

export function validateRuntimeClass(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const handler = str(obj.handler);
  for (const m of isDNS1123Label(handler)) errs.push(fieldErrors.invalid('handler', handler, m));
  if (isObject(obj.overhead)) errs.push(...validateResourceRequirements({ limits: asObject(obj.overhead).podFixed }, 'overhead.podFixed'));
  if (isObject(obj.scheduling)) {
    errs.push(...validateLabels(obj.scheduling.nodeSelector as Record<string, string> | undefined, 'scheduling.nodeSelector'));
    errs.push(...validateTolerations(obj.scheduling.tolerations, 'scheduling.tolerations'));
  }
  return errs;
}

export function runtimeClassStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: false,
    validateSpec: validateRuntimeClass,
    validateSpecUpdate: (obj, old) =>
      str(obj.handler) === str(old.handler) ? [] : [fieldErrors.invalid('handler', str(obj.handler), fieldImmutableErrorMsg)],
  });
}
