// Pods: defaulting, an initial Pending status with the computed QoS class, the PodSpec
// mutability rule of updates, and graceful deletion (a pod bound to a node keeps running for
// its grace period; an unbound or finished pod is deleted at once — there is no kubelet to
// finish the job otherwise).

import type { KubeObject } from '../../../storage/interface.js';
import { asArray, asObject, clone, isObject, semanticEqual, type JsonObject } from '../object.js';
import { defineStrategy, statusStrategy, stringAt, type ResourceStrategy } from '../strategy.js';
import { fieldErrors, type FieldError } from '../validation/field-error.js';
import { defaultPodOnly, defaultPodSpec, podQOSClass } from './pod-spec.js';
import { validatePodOnly, validatePodSpecFull } from './pod-validation.js';
import { workloadNameWarnings } from '../validation/values.js';

const podMutableHint =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/** the part of a pod spec an update may not change */
function immutablePart(spec: unknown): JsonObject {
  const s = clone(asObject(spec));
  for (const key of ['containers', 'initContainers']) {
    s[key] = asArray(s[key]).map((c) => {
      const copy = { ...asObject(c) };
      delete copy.image;
      return copy;
    });
  }
  delete s.activeDeadlineSeconds;
  delete s.tolerations;
  delete s.terminationGracePeriodSeconds;
  delete s.schedulingGates;
  return s;
}

function tolerationsOnlyAdded(spec: unknown, old: unknown): boolean {
  const now = asArray(asObject(spec).tolerations);
  const before = asArray(asObject(old).tolerations);
  return before.every((t) => now.some((n) => semanticEqual(n, t)));
}

function validatePodUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  if (semanticEqual(immutablePart(obj.spec), immutablePart(old.spec)) && tolerationsOnlyAdded(obj.spec, old.spec)) return [];
  return [fieldErrors.forbidden('spec', podMutableHint)];
}

/** kube's CheckGracefulDelete for pods */
function podGracePeriod(obj: KubeObject, requested: number | undefined): number {
  let period = requested ?? (typeof asObject(obj.spec).terminationGracePeriodSeconds === 'number' ? (asObject(obj.spec).terminationGracePeriodSeconds as number) : 0);
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
