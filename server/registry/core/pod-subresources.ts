// `pods/ephemeralcontainers` and `pods/resize` (kube 1.33, InPlacePodVerticalScaling on):
// each is an update of the whole Pod of which only its own part is kept. Ephemeral
// containers may be added, never changed or removed; a resize changes the cpu and memory
// requests and limits (and the resize policy) of containers and sidecar init containers,
// keeping their order and the pod's QoS class. Everything else the client sent is replaced
// by what is stored, before validation, as kube's strategies do.

import type { KubeObject } from '../../../storage/interface.js';
import { asArray, asObject, clone, isObject, semanticEqual, type JsonObject } from '../object.js';
import type { ResourceStrategy } from '../strategy.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { validateObjectMetaUpdate } from '../validation/object-meta.js';
import { podQOSClass } from './pod-spec.js';
import { validatePodOnly, validatePodSpecFull } from './pod-validation.js';

const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

function replaceContents(obj: KubeObject, next: KubeObject): void {
  for (const k of Object.keys(obj)) delete obj[k];
  Object.assign(obj, next);
}

function isMirrorPod(pod: KubeObject): boolean {
  return pod.metadata.annotations?.[MIRROR_POD_ANNOTATION] !== undefined;
}

function validatePod(obj: KubeObject, old: KubeObject): FieldError[] {
  return [
    ...validateObjectMetaUpdate(obj.metadata, old.metadata),
    ...validatePodSpecFull(obj.spec, 'spec', { resourceIsPod: true, podName: obj.metadata.name }),
    ...validatePodOnly(obj.spec, 'spec'),
  ];
}

/** metadata a status-like write may not change (kube's ResetObjectMetaForStatus) */
function resetMetadataForStatus(obj: KubeObject, old: KubeObject): void {
  const meta = obj.metadata as JsonObject;
  const oldMeta = old.metadata as JsonObject;
  for (const key of ['deletionTimestamp', 'generation', 'labels', 'annotations', 'finalizers', 'ownerReferences']) {
    if (oldMeta[key] === undefined) delete meta[key];
    else meta[key] = clone(oldMeta[key]);
  }
}

export function podEphemeralContainersStrategy(base: ResourceStrategy): ResourceStrategy {
  return {
    ...base,
    allowCreateOnUpdate: false,
    prepareForUpdate(obj, old) {
      const ephemeral = asObject(obj.spec).ephemeralContainers;
      const spec = clone(asObject(old.spec));
      if (ephemeral === undefined) delete spec.ephemeralContainers;
      else spec.ephemeralContainers = ephemeral;
      obj.spec = spec;
      if (old.status === undefined) delete obj.status;
      else obj.status = clone(old.status);
      resetMetadataForStatus(obj, old);
    },
    validateUpdate(obj, old) {
      const errs = validatePod(obj, old);
      if (isMirrorPod(old)) return [fieldErrors.forbidden('', 'static pods do not support ephemeral containers')];
      const byName = new Map(asArray(asObject(obj.spec).ephemeralContainers).map((c) => [asObject(c).name, c]));
      for (const before of asArray(asObject(old.spec).ephemeralContainers)) {
        const name = String(asObject(before).name);
        const now = byName.get(name);
        // kube appends a go-cmp diff of the two containers after the newline
        if (now === undefined)
          errs.push(fieldErrors.forbidden('spec.ephemeralContainers', `existing ephemeral containers "${name}" may not be removed\n`));
        else if (!semanticEqual(before, now))
          errs.push(
            fieldErrors.forbidden(`spec.ephemeralContainers[${name}]`, `existing ephemeral containers "${name}" may not be changed\n`),
          );
      }
      return errs;
    },
  };
}

const RESIZABLE = ['cpu', 'memory'];

function isSidecar(container: unknown): boolean {
  return asObject(container).restartPolicy === 'Always';
}

/** kube's dropNonResizeUpdates: the stored pod with the new resources and resize policies of
 *  containers (matched by name) and sidecar init containers */
function keepOnlyResize(obj: KubeObject, old: KubeObject): KubeObject {
  const next = clone(old);
  next.metadata = {
    ...next.metadata,
    name: obj.metadata.name,
    namespace: obj.metadata.namespace,
    resourceVersion: obj.metadata.resourceVersion,
    uid: obj.metadata.uid,
  };
  const spec = asObject(next.spec);
  const newSpec = asObject(obj.spec);
  for (const key of ['containers', 'initContainers']) {
    const stored = asArray(spec[key]).map(asObject);
    const index = new Map(stored.map((c, i) => [c.name, i]));
    for (const raw of asArray(newSpec[key])) {
      const c = asObject(raw);
      const at = index.get(c.name);
      if (at === undefined || (key === 'initContainers' && !isSidecar(stored[at]))) continue;
      for (const field of ['resources', 'resizePolicy']) {
        if (c[field] === undefined) delete stored[at][field];
        else stored[at][field] = c[field];
      }
    }
  }
  return next;
}

function hasPodLevelResources(pod: KubeObject): boolean {
  const r = asObject(asObject(pod.spec).resources);
  return Object.keys(asObject(r.requests)).length + Object.keys(asObject(r.limits)).length > 0;
}

/** kube's isPodResizeRequestSupported: a running container whose status reports no resources
 *  is on a kubelet that cannot resize */
function resizeSupported(pod: KubeObject): boolean {
  for (const s of asArray(asObject(pod.status).containerStatuses).map(asObject)) {
    if (isObject(asObject(s.state).running)) return s.resources !== undefined && s.resources !== null;
  }
  return true;
}

function orderingErrors(obj: KubeObject, old: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of ['initContainers', 'containers']) {
    const now = asArray(asObject(obj.spec)[key]);
    const before = asArray(asObject(old.spec)[key]);
    if (now.length !== before.length) {
      errs.push(fieldErrors.forbidden(`spec.${key}`, 'containers may not be added or removed on resize'));
      continue;
    }
    before.forEach((c, i) => {
      if (asObject(now[i]).name !== asObject(c).name)
        errs.push(fieldErrors.forbidden(`spec.${key}[${i}].name`, 'containers may not be renamed or reordered on resize'));
    });
  }
  return errs;
}

function removalErrors(now: unknown, before: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [part, what] of [
    ['requests', 'resource requests'],
    ['limits', 'resource limits'],
  ]) {
    const kept = asObject(asObject(now)[part]);
    for (const name of Object.keys(asObject(asObject(before)[part]))) {
      if (RESIZABLE.includes(name) && kept[name] === undefined)
        errs.push(fieldErrors.forbidden(`${path}.${part}[${name}]`, `${what} cannot be removed`));
    }
  }
  return errs;
}

/** the container with its cpu and memory quantities and resize policy taken from `before` */
function withoutResizableParts(container: unknown, before: unknown): JsonObject {
  const c = clone(asObject(container));
  const b = asObject(before);
  const resources = asObject(c.resources);
  for (const part of ['requests', 'limits']) {
    const list = { ...asObject(resources[part]) };
    const old = asObject(asObject(b.resources)[part]);
    for (const name of RESIZABLE) {
      if (old[name] === undefined) delete list[name];
      else list[name] = old[name];
    }
    if (Object.keys(list).length > 0) resources[part] = list;
    else delete resources[part];
  }
  if (Object.keys(resources).length > 0) c.resources = resources;
  else delete c.resources;
  if (b.resizePolicy === undefined) delete c.resizePolicy;
  else c.resizePolicy = b.resizePolicy;
  return c;
}

/** kube 1.33's ValidatePodResize */
function validatePodResize(obj: KubeObject, old: KubeObject): FieldError[] {
  const errs = validatePod(obj, old);
  if (hasPodLevelResources(old) || hasPodLevelResources(obj))
    return [fieldErrors.forbidden('', 'pods with pod-level resources cannot be resized')];
  if (isMirrorPod(old)) return [fieldErrors.forbidden('', 'static pods cannot be resized')];
  if (asObject(asObject(old.spec).os).name === 'windows') return [fieldErrors.forbidden('', 'windows pods cannot be resized')];
  const oldQOS =
    typeof asObject(old.status).qosClass === 'string' && asObject(old.status).qosClass !== ''
      ? asObject(old.status).qosClass
      : podQOSClass(old.spec);
  if (oldQOS !== podQOSClass(obj.spec))
    errs.push(
      fieldErrors.invalid('spec', String(asObject(obj.status).qosClass ?? ''), 'Pod QOS Class may not change as a result of resizing'),
    );
  if (!resizeSupported(old)) errs.push(fieldErrors.forbidden('spec', 'Pod running on node without support for resize'));
  const ordering = orderingErrors(obj, old);
  if (ordering.length > 0) return [...errs, ...ordering];
  const spec = asObject(obj.spec);
  const oldSpec = asObject(old.spec);
  asArray(oldSpec.initContainers).forEach((c, i) => {
    if (isSidecar(c))
      errs.push(
        ...removalErrors(asObject(asArray(spec.initContainers)[i]).resources, asObject(c).resources, `spec.initContainers[${i}].resources`),
      );
  });
  asArray(oldSpec.containers).forEach((c, i) =>
    errs.push(...removalErrors(asObject(asArray(spec.containers)[i]).resources, asObject(c).resources, `spec.containers[${i}].resources`)),
  );
  const munged = clone(spec);
  munged.containers = asArray(spec.containers).map((c, i) => {
    const back = withoutResizableParts(c, asArray(oldSpec.containers)[i]);
    if (!semanticEqual(back, asArray(oldSpec.containers)[i]))
      errs.push(fieldErrors.forbidden('spec', 'only cpu and memory resources are mutable'));
    return back;
  });
  if (spec.initContainers !== undefined) {
    munged.initContainers = asArray(spec.initContainers).map((c, i) => {
      const before = asArray(oldSpec.initContainers)[i];
      if (!isSidecar(before)) return c;
      const back = withoutResizableParts(c, before);
      if (!semanticEqual(back, before))
        errs.push(fieldErrors.forbidden('spec', 'only cpu and memory resources for sidecar containers are mutable'));
      return back;
    });
  }
  if (errs.length > 0) return errs;
  if (!semanticEqual(munged, oldSpec)) errs.push(fieldErrors.forbidden('spec', 'only cpu and memory resources are mutable'));
  return errs;
}

export function podResizeStrategy(base: ResourceStrategy): ResourceStrategy {
  return {
    ...base,
    allowCreateOnUpdate: false,
    prepareForUpdate(obj, old) {
      replaceContents(obj, keepOnlyResize(obj, old));
    },
    validateUpdate: validatePodResize,
  };
}
