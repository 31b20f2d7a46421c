// The scale subresource of a custom resource: an autoscaling/v1 Scale read from and written
// to the paths the CRD names (specReplicasPath, statusReplicasPath, labelSelectorPath).

import type { KubeObject, Watch } from '../../storage/interface.js';
import type { ResourceInfo } from '../apis/types.js';
import { errors } from '../machinery/status.js';
import { fieldManagers } from '../fieldmanager/field-managers.js';
import { clone } from '../registry/object.js';
import type { GenericStore } from '../registry/store.js';
import { scaleMetadata } from '../registry/scale.js';
import type { DeleteRequestOptions, ListObject, ObjectTransform, RequestContext, RESTResource } from '../registry/rest.js';
import { fieldErrors, invalidError } from '../machinery/validation/field-error.js';
import type { ScaleSubresource } from '../registry/apiextensions/definition.js';
import { valueAtJsonPath } from './table.js';

function setAtJsonPath(obj: Record<string, unknown>, jsonPath: string, value: unknown): void {
  const steps = jsonPath.replace(/^\./, '').split('.');
  let cur = obj;
  steps.forEach((s, i) => {
    if (i === steps.length - 1) {
      cur[s] = value;
      return;
    }
    if (cur[s] === null || typeof cur[s] !== 'object' || Array.isArray(cur[s])) cur[s] = {};
    cur = cur[s] as Record<string, unknown>;
  });
}

export class CustomScaleStore implements RESTResource {
  readonly info: ResourceInfo;
  readonly subresource = 'scale';

  constructor(
    private readonly parent: GenericStore,
    private readonly paths: ScaleSubresource,
  ) {
    this.info = parent.info;
  }

  toScale(obj: KubeObject): KubeObject {
    const metadata = scaleMetadata(obj);
    const specReplicas = valueAtJsonPath(obj, this.paths.specReplicasPath);
    const statusReplicas = valueAtJsonPath(obj, this.paths.statusReplicasPath);
    const status: Record<string, unknown> = { replicas: typeof statusReplicas === 'number' ? statusReplicas : 0 };
    if (this.paths.labelSelectorPath) {
      const sel = valueAtJsonPath(obj, this.paths.labelSelectorPath);
      if (typeof sel === 'string' && sel) status.selector = sel;
    }
    const spec: Record<string, unknown> = {};
    if (typeof specReplicas === 'number') spec.replicas = specReplicas;
    return { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata, spec, status };
  }

  async get(ctx: RequestContext, name: string): Promise<KubeObject> {
    return this.toScale(await this.parent.get(ctx, name, {}));
  }

  async update(ctx: RequestContext, name: string, transform: ObjectTransform): Promise<{ object: KubeObject; created: boolean }> {
    // admission sees the Scale, not the parent; managedFields are this handler's
    const parentCtx: RequestContext = { ...ctx, admission: undefined, managedFieldsRecorded: true };
    const attrs = (object: KubeObject, oldObject: KubeObject) => ({
      operation: 'UPDATE' as const,
      resource: this.info,
      subresource: 'scale',
      namespace: ctx.namespace,
      name,
      object,
      oldObject,
      dryRun: ctx.dryRun,
      user: ctx.user,
    });
    const res = await this.parent.update(
      parentCtx,
      name,
      async (current) => {
        if (!current) throw errors.notFound({ group: this.info.group, resource: this.info.resource, name });
        const oldScale = this.toScale(current);
        let scale = await transform(clone(oldScale));
        if (ctx.admission?.mutate) scale = await ctx.admission.mutate(attrs(scale, oldScale));
        const replicas = (scale.spec as Record<string, unknown> | undefined)?.replicas;
        if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
          throw invalidError('autoscaling', 'Scale', name, [
            fieldErrors.invalid('spec.replicas', (replicas ?? null) as number, 'must be greater than or equal to 0'),
          ]);
        }
        await ctx.admission?.validate?.(attrs(scale, oldScale));
        const next = clone(current);
        const rv = scale.metadata?.resourceVersion;
        if (rv) next.metadata.resourceVersion = rv;
        setAtJsonPath(next as unknown as Record<string, unknown>, this.paths.specReplicasPath, replicas);
        // the scale manager owns the replicas field (kube records it with subresource scale)
        if (this.paths.specReplicasPath === '.spec.replicas') {
          const managedFields = fieldManagers()
            .for(this.info)
            .scaleUpdate(current, next, ctx.fieldManager ?? '');
          if (managedFields) next.metadata.managedFields = managedFields;
          else delete next.metadata.managedFields;
        }
        return next;
      },
      { allowCreate: false },
    );
    return { object: this.toScale(res.object), created: false };
  }

  list(): Promise<ListObject> {
    throw errors.methodNotSupported({ group: this.info.group, resource: this.info.resource }, 'list');
  }
  watch(): Promise<Watch> {
    throw errors.methodNotSupported({ group: this.info.group, resource: this.info.resource }, 'watch');
  }
  create(): Promise<KubeObject> {
    throw errors.methodNotSupported({ group: this.info.group, resource: this.info.resource }, 'create');
  }
  delete(_ctx: RequestContext, _name: string, _opts: DeleteRequestOptions): Promise<{ object: KubeObject; deleted: boolean }> {
    throw errors.methodNotSupported({ group: this.info.group, resource: this.info.resource }, 'delete');
  }
  deleteCollection(): Promise<ListObject> {
    throw errors.methodNotSupported({ group: this.info.group, resource: this.info.resource }, 'deletecollection');
  }
}
