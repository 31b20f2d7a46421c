// RuntimeClass (kube-apiserver 1.33's plugin/pkg/admission/runtimeclass): a pod created with
// spec.runtimeClassName takes the node.k8s.io/v1 RuntimeClass's overhead (spec.overhead) and
// scheduling (its nodeSelector merged into the pod's, its tolerations merged with the pod's).
// An unknown class, a conflicting nodeSelector value or an overhead that differs from the
// class's is denied, as is an overhead without a class that defines one.

import type { ReadFence } from '../../../storage/read-fence.js';
import type { KubeObject } from '../../../storage/interface.js';
import { asArray, asObject, isObject, semanticEqual, type JsonObject } from '../../registry/object.js';
import { compareQuantities, parseQuantity } from '../../machinery/quantity.js';
import type { AdmissionAttributes } from '../../registry/rest.js';
import type { AdmissionDeps, AdmissionPlugin, AdmissionPluginFactory } from '../plugin.js';
import { forbidden, getObject, isCoreResource, reorderPodSpec, sortedMap } from './pod-plugins-common.js';

const runtimeClasses = { group: 'node.k8s.io', version: 'v1', resource: 'runtimeclasses' };

type Toleration = JsonObject;

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** whether `ss` tolerates everything `t` does (kube's tolerations.isSuperset) */
function isSuperset(ss: Toleration, t: Toleration): boolean {
  if (semanticEqual(ss, t)) return true;
  if (str(t.key) !== str(ss.key) && (str(ss.key) !== '' || ss.operator !== 'Exists')) return false;
  if (str(t.effect) !== str(ss.effect) && str(ss.effect) !== '') return false;
  if (ss.effect === 'NoExecute' && typeof ss.tolerationSeconds === 'number') {
    if (typeof t.tolerationSeconds !== 'number' || t.tolerationSeconds > ss.tolerationSeconds) return false;
  }
  switch (str(ss.operator)) {
    case 'Equal':
    case '':
      return t.operator === 'Equal' && str(t.value) === str(ss.value);
    case 'Exists':
      return true;
    default:
      return false;
  }
}

/** the union of two toleration lists without the ones another one covers (the first of equal ones stays) */
export function mergeTolerations(first: Toleration[], second: Toleration[]): Toleration[] {
  const all = [...first, ...second];
  const merged: Toleration[] = [];
  all.forEach((t, i) => {
    if (merged.some((m) => isSuperset(m, t))) return;
    if (all.slice(i + 1).some((later) => !semanticEqual(t, later) && isSuperset(later, t))) return;
    merged.push(t);
  });
  return merged;
}

function shouldIgnore(attrs: AdmissionAttributes): boolean {
  return attrs.operation !== 'CREATE' || !isCoreResource(attrs, 'pods') || attrs.object === null;
}

/** resource lists compared by quantity value (`1` equals `1000m`), as Semantic.DeepEqual does */
function sameResources(a: unknown, b: unknown): boolean {
  const x = asObject(a);
  const y = asObject(b);
  const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
  for (const k of keys) {
    const qa = x[k];
    const qb = y[k];
    if (qa === undefined || qb === undefined) return false;
    try {
      if (compareQuantities(parseQuantity(qa as string | number), parseQuantity(qb as string | number)) !== 0) return false;
    } catch {
      if (qa !== qb) return false;
    }
  }
  return true;
}

function hasOverhead(spec: JsonObject): boolean {
  return isObject(spec.overhead) && Object.keys(spec.overhead).length > 0;
}

export function runtimeClassPlugin(deps: Pick<AdmissionDeps, 'resolver'>): AdmissionPlugin {
  async function classOf(attrs: AdmissionAttributes, pod: KubeObject, fence: ReadFence | undefined): Promise<KubeObject | null> {
    const name = asObject(pod.spec).runtimeClassName;
    if (typeof name !== 'string') return null;
    const rc = await getObject(deps.resolver, runtimeClasses, '', name, fence);
    if (!rc) throw forbidden(attrs, `pod rejected: RuntimeClass "${name}" not found`);
    return rc;
  }

  return {
    name: 'RuntimeClass',
    handles: (attrs) => !shouldIgnore(attrs),
    async mutate(attrs, ctx) {
      const pod = attrs.object as KubeObject;
      if (shouldIgnore(attrs)) return pod;
      const rc = await classOf(attrs, pod, ctx.readFence);
      if (!rc) return pod;
      const spec = isObject(pod.spec) ? pod.spec : (pod.spec = {});
      const podFixed = asObject(rc.overhead).podFixed;
      if (isObject(rc.overhead) && isObject(podFixed)) {
        if (hasOverhead(spec) && !sameResources(podFixed, spec.overhead)) {
          throw forbidden(attrs, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
        }
        spec.overhead = sortedMap(podFixed);
      }
      if (isObject(rc.scheduling)) {
        const wanted = asObject(rc.scheduling.nodeSelector);
        if (!isObject(spec.nodeSelector)) {
          if (isObject(rc.scheduling.nodeSelector)) spec.nodeSelector = sortedMap(wanted);
        } else {
          const selector = spec.nodeSelector;
          for (const [k, v] of Object.entries(wanted)) {
            if (selector[k] !== undefined && selector[k] !== v) {
              throw forbidden(
                attrs,
                `conflict: runtimeClass.scheduling.nodeSelector[${k}] = ${str(v)}; pod.spec.nodeSelector[${k}] = ${str(selector[k])}`,
              );
            }
            selector[k] = v;
          }
          spec.nodeSelector = sortedMap(selector);
        }
        const merged = mergeTolerations(asArray(spec.tolerations).map(asObject), asArray(rc.scheduling.tolerations).map(asObject));
        if (merged.length) spec.tolerations = merged;
        else delete spec.tolerations;
      }
      reorderPodSpec(pod);
      return pod;
    },
    async validate(attrs, ctx) {
      if (shouldIgnore(attrs)) return;
      const pod = attrs.object as KubeObject;
      const spec = asObject(pod.spec);
      if (!hasOverhead(spec)) return;
      const rc = await classOf(attrs, pod, ctx.readFence);
      const podFixed = rc && isObject(rc.overhead) ? asObject(rc.overhead).podFixed : undefined;
      if (!isObject(podFixed)) throw forbidden(attrs, 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
      if (!sameResources(podFixed, spec.overhead))
        throw forbidden(attrs, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
    },
  };
}

export const runtimeClassFactory: AdmissionPluginFactory = {
  name: 'RuntimeClass',
  create: (deps) => runtimeClassPlugin(deps),
};
