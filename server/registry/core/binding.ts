// `pods/<name>/binding`: how a scheduler assigns a pod to a node. Creating a Binding sets
// spec.nodeName once (409 if the pod is already bound or being deleted), merges the
// Binding's annotations into the pod, and marks the pod PodScheduled=True.

import type { KubeObject } from '../../../storage/interface.js';
import { errors } from '../../machinery/status.js';
import { asArray, asObject, clone, ensureObject, isObject, orderObject, rfc3339 } from '../object.js';
import type { RequestContext } from '../rest.js';
import { CreateOnlyResource } from '../create-only.js';
import type { GenericStore } from '../store.js';
import { fieldErrors, invalidError, type FieldError } from '../../machinery/validation/field-error.js';
import { isStorageError } from '../../../storage/errors.js';

export class PodBindingResource extends CreateOnlyResource {
  constructor(private readonly pods: GenericStore) {
    super(pods.info, 'binding');
  }

  async create(ctx: RequestContext, binding: KubeObject): Promise<KubeObject> {
    const name = ctx.name ?? binding.metadata?.name ?? '';
    if (binding.metadata?.name && binding.metadata.name !== name) {
      throw errors.badRequest('name in URL does not match name in Binding object');
    }
    const target = asObject(binding.target);
    const errs: FieldError[] = [];
    if (typeof target.kind === 'string' && target.kind !== '' && target.kind !== 'Node') {
      errs.push(fieldErrors.notSupported('target.kind', target.kind, ['Node', '<empty>']));
    }
    const node = typeof target.name === 'string' ? target.name : '';
    if (!node) errs.push(fieldErrors.required('target.name'));
    if (errs.length) throw invalidError('', 'Binding', name, errs);

    const key = this.pods.keys.objectKey(ctx.namespace, name);
    const preconditions = {
      uid: binding.metadata?.uid || undefined,
      resourceVersion: binding.metadata?.resourceVersion || undefined,
    };
    const ref = { group: '', resource: 'pods', name };
    try {
      await this.pods.storage.guaranteedUpdate(
        key,
        async (current) => {
          if (!current) throw errors.notFound(ref);
          const pod = clone(current);
          if (pod.metadata.deletionTimestamp) throw errors.conflict(ref, `pod ${name} is being deleted, cannot be assigned to a host`);
          const spec = ensureObject(pod, 'spec');
          if (typeof spec.nodeName === 'string' && spec.nodeName) {
            throw errors.conflict(ref, `pod ${name} is already assigned to node "${spec.nodeName}"`);
          }
          spec.nodeName = node;
          const annotations = binding.metadata?.annotations;
          if (annotations && Object.keys(annotations).length) {
            pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), ...annotations };
          }
          const status = ensureObject(pod, 'status');
          const conditions = asArray(status.conditions).filter(isObject);
          const existing = conditions.find((c) => c.type === 'PodScheduled');
          if (existing) {
            if (existing.status !== 'True') existing.lastTransitionTime = rfc3339(new Date());
            existing.status = 'True';
          } else {
            conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: rfc3339(new Date()) });
          }
          status.conditions = conditions;
          return orderObject(pod);
        },
        {
          preconditions: preconditions.uid || preconditions.resourceVersion ? preconditions : undefined,
          dryRun: ctx.dryRun,
        },
      );
    } catch (e) {
      if (isStorageError(e)) throw this.pods.fromStorageError(e, name);
      throw e;
    }
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } as KubeObject;
  }
}
