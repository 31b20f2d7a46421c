// storage.k8s.io StorageClasses: reclaimPolicy defaults to Delete and volumeBindingMode to
// Immediate; the provisioner is required; parameters, provisioner, reclaimPolicy and
// volumeBindingMode cannot change.

import type { KubeObject } from '../../../storage/interface.js';
import { asArray, asObject, semanticEqual } from '../object.js';
import { defineStrategy, type ResourceStrategy } from '../strategy.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { isQualifiedName } from '../../machinery/validation/names.js';
import { validateObjectMetaUpdate } from '../validation/object-meta.js';
import { fieldImmutableErrorMsg, str } from '../validation/values.js';

const reclaimPolicies = ['Delete', 'Retain'];
const bindingModes = ['Immediate', 'WaitForFirstConsumer'];
const maxParameters = 512;
const maxTotalParameterSize = 256 * 1024;

export function validateStorageClass(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const provisioner = str(obj.provisioner);
  if (!provisioner) errs.push(fieldErrors.required('provisioner'));
  else
    for (const m of isQualifiedName(provisioner.toLowerCase())) errs.push(fieldErrors.invalid('provisioner', provisioner.toLowerCase(), m));
  const params = Object.entries(asObject(obj.parameters));
  if (params.length > maxParameters) errs.push(fieldErrors.tooLong('parameters', maxParameters));
  let total = 0;
  for (const [k, v] of params) {
    if (!k) errs.push(fieldErrors.invalid('parameters', k, 'field can not be empty.'));
    total += k.length + str(v).length;
  }
  if (total > maxTotalParameterSize) errs.push(fieldErrors.tooLong('parameters', maxTotalParameterSize));
  const reclaim = str(obj.reclaimPolicy);
  if (reclaim && !reclaimPolicies.includes(reclaim)) errs.push(fieldErrors.notSupported('reclaimPolicy', reclaim, reclaimPolicies));
  if (typeof obj.volumeBindingMode !== 'string') errs.push(fieldErrors.required('volumeBindingMode'));
  else if (!bindingModes.includes(obj.volumeBindingMode))
    errs.push(fieldErrors.notSupported('volumeBindingMode', obj.volumeBindingMode, bindingModes));
  asArray(obj.allowedTopologies).forEach((t, i) => {
    const exprs = asArray(asObject(t).matchLabelExpressions);
    if (exprs.length === 0)
      errs.push(fieldErrors.required(`allowedTopologies[${i}].matchLabelExpressions`, 'must have at least one label value requirement'));
  });
  return errs;
}

export function validateStorageClassUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateObjectMetaUpdate(obj.metadata, old.metadata);
  if (!semanticEqual(obj.parameters ?? null, old.parameters ?? null))
    errs.push(fieldErrors.forbidden('parameters', 'updates to parameters are forbidden.'));
  if (str(obj.provisioner) !== str(old.provisioner))
    errs.push(fieldErrors.forbidden('provisioner', 'updates to provisioner are forbidden.'));
  if (str(obj.reclaimPolicy) !== str(old.reclaimPolicy))
    errs.push(fieldErrors.forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
  if (str(obj.volumeBindingMode) !== str(old.volumeBindingMode))
    errs.push(fieldErrors.invalid('volumeBindingMode', str(obj.volumeBindingMode), fieldImmutableErrorMsg));
  return errs;
}

export function storageClassStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: false,
    applyDefaults(obj) {
      if (!obj.reclaimPolicy) obj.reclaimPolicy = 'Delete';
      if (!obj.volumeBindingMode) obj.volumeBindingMode = 'Immediate';
    },
    validateSpec: validateStorageClass,
    validateUpdate: (obj, old) => [...validateStorageClass(obj), ...validateStorageClassUpdate(obj, old)],
  });
}
