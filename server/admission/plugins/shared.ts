// What the storage, networking, certificate and quota plugins share: kube's admission
// refusal (named after the object, its generateName, or "Unknown"), reading cluster objects
// through the registry as kube-apiserver's loopback client, and picking a default class.

import type { KubeObject } from '../../../storage/interface.js';
import { errors, type StatusError } from '../../machinery/status.js';
import { internalContext } from '../../controllers/util.js';
import type { AdmissionAttributes, ResourceResolver } from '../../registry/rest.js';

const fieldManager = 'kube-apiserver';

/** 403 `<resource>[.<group>] "<name>" is forbidden: <why>`; the name as kube's admission
 *  errors take it: the object's name, else its generateName, else "Unknown" */
export function forbidden(attrs: AdmissionAttributes, why: string): StatusError {
  const obj = attrs.object ?? attrs.oldObject;
  const name = obj?.metadata.name || obj?.metadata.generateName || attrs.name || 'Unknown';
  return errors.forbidden({ group: attrs.resource.group, resource: attrs.resource.resource, name }, why);
}

/** the group and resource of the attributes, e.g. `/persistentvolumeclaims` */
export function groupResource(attrs: AdmissionAttributes): string {
  return `${attrs.resource.group}/${attrs.resource.resource}`;
}

/** every object of a resource (all namespaces, or one), read consistently */
export async function listAll(
  resolver: ResourceResolver,
  group: string,
  version: string,
  resource: string,
  namespace = '',
  signal?: AbortSignal,
): Promise<KubeObject[]> {
  const rest = resolver.lookup(group, version, resource);
  if (!rest) return [];
  const list = await rest.list(internalContext(fieldManager, namespace, signal), {});
  return list.items;
}

export async function getObject(
  resolver: ResourceResolver,
  group: string,
  version: string,
  resource: string,
  name: string,
  namespace = '',
): Promise<KubeObject | undefined> {
  const rest = resolver.lookup(group, version, resource);
  if (!rest) return undefined;
  try {
    return await rest.get(internalContext(fieldManager, namespace), name, {});
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

/** Of the classes marked default, the newest (by creationTimestamp, then name): kube 1.33
 *  picks that one rather than refusing when several are marked. */
export function newestDefault(classes: readonly KubeObject[], isDefault: (c: KubeObject) => boolean): KubeObject | undefined {
  const defaults = classes.filter(isDefault);
  defaults.sort((a, b) => {
    const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
    const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
    if (ta !== tb) return tb - ta;
    const na = a.metadata.name ?? '';
    const nb = b.metadata.name ?? '';
    return na < nb ? -1 : na > nb ? 1 : 0;
  });
  return defaults[0];
}

export function annotation(obj: KubeObject, key: string): string | undefined {
  const a = obj.metadata.annotations as Record<string, string> | undefined;
  return a?.[key];
}
