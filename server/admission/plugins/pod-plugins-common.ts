// What the built-in pod admission plugins share: kube's "is forbidden" denial (admission's
// NewForbidden, which names the object by its name, else its generateName, else "Unknown"),
// the resource tests each plugin starts with, and reads through the registry as kube-apiserver's
// own loopback client.

import type { ReadFence } from '../../../storage/read-fence.js';
import type { KubeObject } from '../../../storage/interface.js';
import { errors, type StatusError } from '../../machinery/status.js';
import { containerOrder, podSpecOrder } from '../../registry/core/pod-spec.js';
import { asArray, asObject, isObject, reorder, type JsonObject } from '../../registry/object.js';
import { internalContext, isNotFound } from '../../controllers/util.js';
import type { AdmissionAttributes, ResourceResolver } from '../../registry/rest.js';

/** 403 `<resource> "<name>" is forbidden: <why>` about the object of this request */
export function forbidden(attrs: AdmissionAttributes, why: string): StatusError {
  const meta = attrs.object?.metadata ?? attrs.oldObject?.metadata;
  const name = attrs.name || meta?.name || meta?.generateName || 'Unknown';
  return errors.forbidden({ group: attrs.resource.group, resource: attrs.resource.resource, name }, why);
}

/** true for the core resource itself (no subresource) */
export function isCoreResource(attrs: AdmissionAttributes, resource: string): boolean {
  return attrs.resource.group === '' && attrs.resource.resource === resource && !attrs.subresource;
}

const fieldManager = 'kube-apiserver';

/** one object by name, or null when it does not exist */
export async function getObject(
  resolver: ResourceResolver,
  gvr: { group: string; version: string; resource: string },
  namespace: string,
  name: string,
  fence?: ReadFence,
): Promise<KubeObject | null> {
  const rest = resolver.lookup(gvr.group, gvr.version, gvr.resource);
  if (!rest) throw new Error(`the registry serves no ${gvr.group || 'core'}/${gvr.version} ${gvr.resource}`);
  // as kube's plugins read their informers' caches and look live only on a miss: the watch
  // cache first (no etcd round trip on every pod create), then a consistent read
  for (const resourceVersion of ['0', undefined]) {
    try {
      return await rest.get(internalContext(fieldManager, namespace, undefined, fence), name, resourceVersion ? { resourceVersion } : {});
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return null;
}

/** every object of a resource (in one namespace, or all for cluster-scoped ones), for a reader
 *  that changes nothing in them: shared and frozen where the registry can (each decoded once
 *  per stored version rather than on every write it is asked for) */
export async function listSharedObjects(
  resolver: ResourceResolver,
  gvr: { group: string; version: string; resource: string },
  namespace: string,
  fence?: ReadFence,
): Promise<readonly KubeObject[]> {
  const rest = resolver.lookup(gvr.group, gvr.version, gvr.resource);
  if (!rest) throw new Error(`the registry serves no ${gvr.group || 'core'}/${gvr.version} ${gvr.resource}`);
  // consistent: unlike a single get (see getObject), a list cannot tell a miss from a stale
  // cache, and an object written just before the pod (a LimitRange, a PriorityClass) counts
  const ctx = internalContext(fieldManager, namespace, undefined, fence);
  return rest.listShared ? rest.listShared(ctx, {}) : (await rest.list(ctx, {})).items;
}

/** Go's fmt %v of an error chain as kube's plugins print it */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** a map field as Go writes it: keys sorted */
export function sortedMap(m: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const k of Object.keys(m).sort()) out[k] = m[k];
  return out;
}

/** puts what a plugin added to a pod spec (and its containers) where kube's field order has it */
export function reorderPodSpec(pod: KubeObject): void {
  if (!isObject(pod.spec)) return;
  const spec = pod.spec;
  for (const key of ['initContainers', 'containers', 'ephemeralContainers']) {
    if (Array.isArray(spec[key])) spec[key] = (spec[key] as unknown[]).map((c) => (isObject(c) ? reorder(c, containerOrder) : c));
  }
  pod.spec = reorder(spec, podSpecOrder);
}

/** whether a pod names any secret: volumes, projected sources, env, envFrom, pull secrets */
export function referencesSecrets(spec: JsonObject): boolean {
  if (asArray(spec.imagePullSecrets).length) return true;
  for (const v of asArray(spec.volumes).map(asObject)) {
    if (isObject(v.secret)) return true;
    for (const src of asArray(asObject(v.projected).sources)) if (isObject(asObject(src).secret)) return true;
    for (const kind of ['azureFile', 'cephfs', 'cinder', 'flexVolume', 'iscsi', 'rbd', 'scaleIO', 'storageos', 'csi']) {
      const src = asObject(v[kind]);
      if (isObject(src.secretRef) || typeof src.secretName === 'string' || isObject(src.nodePublishSecretRef)) return true;
    }
  }
  return podContainers(spec).some(
    (c) =>
      asArray(c.envFrom).some((e) => isObject(asObject(e).secretRef)) ||
      asArray(c.env).some((e) => isObject(asObject(asObject(e).valueFrom).secretKeyRef)),
  );
}

function podContainers(spec: JsonObject): JsonObject[] {
  return ['initContainers', 'containers', 'ephemeralContainers'].flatMap((k) => asArray(spec[k]).filter(isObject));
}
