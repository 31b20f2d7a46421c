// Pods: defaulting, an initial Pending status with the computed QoS class, the PodSpec
// mutability rule of updates, and graceful deletion (a pod bound to a node keeps running for
// its grace period; an unbound or finished pod is deleted at once — there is no kubelet to
// finish the job otherwise).

import type { KubeObject } from '../../../storage/interface.js';
import { asArray, asObject, clone, isObject, semanticEqual } from '../object.js';
import { defineStrategy, statusStrategy, stringAt, type ResourceStrategy } from '../strategy.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { defaultPodOnly, defaultPodSpec, podQOSClass } from './pod-spec.js';
import { validatePodOnly, validatePodSpecFull, validateTolerations } from './pod-validation.js';
import { workloadNameWarnings } from '../validation/values.js';

const updatablePodSpecFields = [
  '`spec.containers[*].image`',
  '`spec.initContainers[*].image`',
  '`spec.activeDeadlineSeconds`',
  '`spec.tolerations` (only additions to existing tolerations)',
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
];

function containerUpdates(now: unknown[], before: unknown[], path: string): { errs: FieldError[]; stop: boolean } {
  if (now.length !== before.length)
    return { errs: [fieldErrors.forbidden(path, 'pod updates may not add or remove containers')], stop: true };
  const errs: FieldError[] = [];
  now.forEach((c, i) => {
    const image = typeof asObject(c).image === 'string' ? (asObject(c).image as string) : '';
    if (!image) errs.push(fieldErrors.required(`${path}[${i}].image`));
    if (image.trim() !== image)
      errs.push(fieldErrors.invalid(`${path}[${i}].image`, image, 'must not have leading or trailing whitespace'));
  });
  return { errs, stop: false };
}

/** existing tolerations stay (only their tolerationSeconds may change); new ones may be added */
function onlyAddedTolerations(now: unknown[], before: unknown[], path: string): FieldError[] {
  for (const old of before) {
    const found = now.some((n) => semanticEqual({ ...asObject(old), tolerationSeconds: asObject(n).tolerationSeconds }, n));
    if (!found) return [fieldErrors.forbidden(path, 'existing toleration can not be modified except its tolerationSeconds')];
  }
  return validateTolerations(now, path);
}

/** kube's ValidatePodUpdate (beyond the spec validation every update runs) */
function validatePodUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const spec = asObject(obj.spec);
  const oldSpec = asObject(old.spec);
  const errs: FieldError[] = [];
  for (const key of ['containers', 'initContainers']) {
    const r = containerUpdates(asArray(spec[key]), asArray(oldSpec[key]), `spec.${key}`);
    errs.push(...r.errs);
    if (r.stop) return errs;
  }
  const ads = spec.activeDeadlineSeconds;
  const oldAds = oldSpec.activeDeadlineSeconds;
  if (typeof ads === 'number') {
    if (ads < 0 || ads > 2147483647)
      return [...errs, fieldErrors.invalid('spec.activeDeadlineSeconds', ads, 'must be between 0 and 2147483647, inclusive')];
    if (typeof oldAds === 'number' && oldAds < ads) {
      return [...errs, fieldErrors.invalid('spec.activeDeadlineSeconds', ads, 'must be less than or equal to previous value')];
    }
  } else if (typeof oldAds === 'number') {
    errs.push(fieldErrors.invalid('spec.activeDeadlineSeconds', null, 'must not update from a positive integer to nil value'));
  }
  errs.push(...onlyAddedTolerations(asArray(spec.tolerations), asArray(oldSpec.tolerations), 'spec.tolerations'));
  const oldGates = new Set(asArray(oldSpec.schedulingGates).map((g) => asObject(g).name));
  asArray(spec.schedulingGates).forEach((g, i) => {
    const name = asObject(g).name;
    if (!oldGates.has(name))
      errs.push(
        fieldErrors.forbidden(
          `spec.schedulingGates[${i}].name`,
          `only deletion is allowed, but found new scheduling gate '${String(name)}'`,
        ),
      );
  });
  // what may change, taken from the old spec; the rest must be equal
  const munged = clone(spec);
  for (const key of ['containers', 'initContainers']) {
    munged[key] = asArray(munged[key]).map((c, i) => ({ ...asObject(c), image: asObject(asArray(oldSpec[key])[i]).image }));
    if (!Array.isArray(spec[key])) delete munged[key];
  }
  munged.activeDeadlineSeconds = oldSpec.activeDeadlineSeconds;
  munged.schedulingGates = oldSpec.schedulingGates;
  munged.tolerations = oldSpec.tolerations;
  const oldGrace = oldSpec.terminationGracePeriodSeconds;
  if (typeof oldGrace === 'number' && oldGrace < 0 && munged.terminationGracePeriodSeconds === 1)
    munged.terminationGracePeriodSeconds = oldGrace;
  if (!semanticEqual(munged, oldSpec)) {
    // kube appends a go-cmp diff of the specs after the newline
    errs.push(fieldErrors.forbidden('spec', `pod updates may not change fields other than ${updatablePodSpecFields.join(',')}\n`));
  }
  return errs;
}

/** kube's CheckGracefulDelete for pods */
function podGracePeriod(obj: KubeObject, requested: number | undefined): number {
  let period =
    requested ??
    (typeof asObject(obj.spec).terminationGracePeriodSeconds === 'number'
      ? (asObject(obj.spec).terminationGracePeriodSeconds as number)
      : 0);
  if (!stringAt(obj, 'spec', 'nodeName')) period = 0;
  const phase = stringAt(obj, 'status', 'phase');
  if (phase === 'Failed' || phase === 'Succeeded') period = 0;
  return period;
}

export function podStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    hasStatusSubresource: true,
    tracksGeneration: true,
    returnDeletedObject: true,
    initialStatus: (obj) => ({ phase: 'Pending', qosClass: podQOSClass(obj.spec) }),
    applyDefaults(obj) {
      if (isObject(obj.spec)) obj.spec = defaultPodOnly(defaultPodSpec(obj.spec));
    },
    validateSpec: (obj) => [
      ...validatePodSpecFull(obj.spec, 'spec', { resourceIsPod: true, podName: obj.metadata.name }),
      ...validatePodOnly(obj.spec, 'spec'),
    ],
    validateSpecUpdate: validatePodUpdate,
    warningsOnCreate: (obj) => workloadNameWarnings(obj.metadata.name ?? '', "the Pod's hostname"),
    gracePeriodSeconds: (obj, opts) => podGracePeriod(obj, opts.gracePeriodSeconds),
  });
}

/** `pods/status`: the kubelet's view; owner references stay as they are */
export function podStatusStrategy(base: ResourceStrategy): ResourceStrategy {
  return statusStrategy(base, { keepOwnerReferences: true });
}
