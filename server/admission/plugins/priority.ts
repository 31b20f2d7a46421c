// Priority (kube-apiserver 1.33's plugin/pkg/admission/priority):
// - a pod created without priorityClassName gets the globalDefault PriorityClass (the lowest
//   valued one if a race left several) or priority 0 with PreemptLowerPriority; a named class
//   must exist (the system-* classes are objects kapi creates at start-up);
// - spec.priority and spec.preemptionPolicy come from the class; a pod that sets them to other
//   values is denied; updates keep the values set at create;
// - a PriorityClass may become globalDefault only while no other class is.

import type { ReadFence } from '../../../storage/read-fence.js';
import type { KubeObject } from '../../../storage/interface.js';
import { asObject, isObject } from '../../registry/object.js';
import type { AdmissionAttributes } from '../../registry/rest.js';
import type { AdmissionDeps, AdmissionPlugin, AdmissionPluginFactory } from '../plugin.js';
import { forbidden, getObject, listSharedObjects, messageOf, reorderPodSpec } from './pod-plugins-common.js';

const priorityClasses = { group: 'scheduling.k8s.io', version: 'v1', resource: 'priorityclasses' };
/** kube's DefaultPriorityWhenNoDefaultClassExists */
const priorityWithoutDefaultClass = 0;

function isPods(attrs: AdmissionAttributes): boolean {
  return attrs.resource.group === '' && attrs.resource.resource === 'pods';
}

function isPriorityClasses(attrs: AdmissionAttributes): boolean {
  return attrs.resource.group === priorityClasses.group && attrs.resource.resource === priorityClasses.resource;
}

function valueOf(pc: KubeObject): number {
  return typeof pc.value === 'number' ? pc.value : 0;
}

export function priorityPlugin(deps: Pick<AdmissionDeps, 'resolver'>): AdmissionPlugin {
  async function defaultClass(fence: ReadFence | undefined): Promise<KubeObject | undefined> {
    let found: KubeObject | undefined;
    // the class is only read: its name and values are copied into the pod
    for (const pc of await listSharedObjects(deps.resolver, priorityClasses, '', fence)) {
      if (pc.globalDefault === true && (!found || valueOf(found) > valueOf(pc))) found = pc;
    }
    return found;
  }

  async function admitPodCreate(attrs: AdmissionAttributes, pod: KubeObject, fence: ReadFence | undefined): Promise<void> {
    const spec = isObject(pod.spec) ? pod.spec : (pod.spec = {});
    let priority: number;
    let preemptionPolicy: string | undefined;
    const className = typeof spec.priorityClassName === 'string' ? spec.priorityClassName : '';
    if (!className) {
      let dpc: KubeObject | undefined;
      try {
        dpc = await defaultClass(fence);
      } catch (err) {
        throw new Error(`failed to get default priority class: ${messageOf(err)}`);
      }
      if (dpc) {
        spec.priorityClassName = dpc.metadata.name ?? '';
        priority = valueOf(dpc);
        preemptionPolicy = typeof dpc.preemptionPolicy === 'string' ? dpc.preemptionPolicy : undefined;
      } else {
        priority = priorityWithoutDefaultClass;
        preemptionPolicy = 'PreemptLowerPriority';
      }
    } else {
      let pc: KubeObject | null;
      try {
        pc = await getObject(deps.resolver, priorityClasses, '', className, fence);
      } catch (err) {
        throw new Error(`failed to get PriorityClass with name ${className}: ${messageOf(err)}`);
      }
      if (!pc) throw forbidden(attrs, `no PriorityClass with name ${className} was found`);
      priority = valueOf(pc);
      preemptionPolicy = typeof pc.preemptionPolicy === 'string' ? pc.preemptionPolicy : undefined;
    }
    if (typeof spec.priority === 'number' && spec.priority !== priority) {
      throw forbidden(
        attrs,
        `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`,
      );
    }
    spec.priority = priority;
    if (preemptionPolicy !== undefined) {
      if (typeof spec.preemptionPolicy === 'string' && spec.preemptionPolicy !== preemptionPolicy) {
        throw forbidden(
          attrs,
          `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${preemptionPolicy} from the given PriorityClass name`,
        );
      }
      spec.preemptionPolicy = preemptionPolicy;
    }
  }

  function admitPodUpdate(pod: KubeObject, old: KubeObject): void {
    const spec = isObject(pod.spec) ? pod.spec : (pod.spec = {});
    const oldSpec = asObject(old.spec);
    // validation forbids changing them; an update that leaves them out keeps the stored ones
    if (spec.priority === undefined || spec.priority === null) {
      if (oldSpec.priority !== undefined && oldSpec.priority !== null) spec.priority = oldSpec.priority;
    }
    if (spec.preemptionPolicy === undefined || spec.preemptionPolicy === null) {
      if (oldSpec.preemptionPolicy !== undefined && oldSpec.preemptionPolicy !== null) spec.preemptionPolicy = oldSpec.preemptionPolicy;
    }
  }

  return {
    name: 'Priority',
    handles: (attrs) => !attrs.subresource && attrs.object !== null && (isPods(attrs) || isPriorityClasses(attrs)),
    async mutate(attrs, ctx) {
      const obj = attrs.object as KubeObject;
      if (!isPods(attrs)) return obj;
      if (attrs.operation === 'CREATE') await admitPodCreate(attrs, obj, ctx.readFence);
      else if (attrs.operation === 'UPDATE' && attrs.oldObject) admitPodUpdate(obj, attrs.oldObject);
      reorderPodSpec(obj);
      return obj;
    },
    async validate(attrs, ctx) {
      if (!isPriorityClasses(attrs) || (attrs.operation !== 'CREATE' && attrs.operation !== 'UPDATE')) return;
      const pc = attrs.object as KubeObject;
      if (pc.globalDefault !== true) return;
      let dpc: KubeObject | undefined;
      try {
        dpc = await defaultClass(ctx.readFence);
      } catch (err) {
        throw new Error(`failed to get default priority class: ${messageOf(err)}`);
      }
      if (!dpc) return;
      if (attrs.operation === 'CREATE' || dpc.metadata.name !== pc.metadata.name) {
        throw forbidden(attrs, `PriorityClass ${dpc.metadata.name ?? ''} is already marked as default. Only one default can exist`);
      }
    },
  };
}

export const priorityFactory: AdmissionPluginFactory = {
  name: 'Priority',
  create: (deps) => priorityPlugin(deps),
};
