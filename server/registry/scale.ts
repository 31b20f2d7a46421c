// The `scale` subresource: an autoscaling/v1 Scale view of a workload's spec.replicas,
// status.replicas and selector. Reading builds it from the parent object; writing changes
// only spec.replicas of the parent (through the parent's own update path, so generation,
// validation and preconditions apply). A resourceVersion in the Scale is a precondition on
// the parent.

import type { KubeObject, Watch } from '../../storage/interface.js';
import type { ResourceInfo } from '../apis/types.js';
import { fieldManagers } from '../fieldmanager/field-managers.js';
import { errors } from '../machinery/status.js';
import { labelSelectorFromObject, LabelSelector, SelectorError } from '../selectors/labels.js';
import { apiVersionOf, asObject, clone, isObject } from './object.js';
import type { GenericStore } from './store.js';
import type { DeleteRequestOptions, ListObject, ObjectTransform, RequestContext, RESTResource } from './rest.js';
import { fieldErrors, invalidError, type FieldError } from '../machinery/validation/field-error.js';
import { validateObjectMeta } from './validation/object-meta.js';
import { nameIsDNSSubdomain } from '../machinery/validation/names.js';

/** the label selector string of a workload, whichever form its spec.selector takes */
export function workloadSelector(obj: KubeObject): string {
  const sel = asObject(obj.spec).selector;
  if (!isObject(sel)) return '';
  try {
    // ReplicationController: a plain map; everything else: a metav1.LabelSelector
    const isMap = Object.values(sel).every((v) => typeof v === 'string');
    if (isMap && !('matchLabels' in sel) && !('matchExpressions' in sel)) {
      return LabelSelector.of(Object.entries(sel).map(([key, v]) => ({ key, operator: '=' as const, values: [v as string] }))).toString();
    }
    return labelSelectorFromObject(sel).toString();
  } catch (e) {
    if (e instanceof SelectorError) return '';
    throw e;
  }
}

/** a Scale's metadata: the parent's identity, version and creation time */
export function scaleMetadata(parent: KubeObject): KubeObject['metadata'] {
  const m = parent.metadata;
  const metadata: KubeObject['metadata'] = { name: m.name };
  if (m.namespace) metadata.namespace = m.namespace;
  metadata.uid = m.uid;
  metadata.resourceVersion = m.resourceVersion;
  metadata.creationTimestamp = m.creationTimestamp ?? null;
  return metadata;
}

function replicasOf(v: unknown): number {
  return typeof v === 'number' ? v : 0;
}

export class ScaleStore implements RESTResource {
  readonly info: ResourceInfo;
  readonly subresource = 'scale';
  private readonly scaleApiVersion: string;

  constructor(private readonly parent: GenericStore) {
    this.info = parent.info;
    const sub = parent.info.subresources.find((s) => s.name === 'scale');
    this.scaleApiVersion = sub ? apiVersionOf(sub.kind.group, sub.kind.version) : 'autoscaling/v1';
  }

  /** the Scale of a parent object (given in the parent's request version) */
  toScale(obj: KubeObject): KubeObject {
    const metadata = scaleMetadata(obj);
    const replicas = replicasOf(asObject(obj.spec).replicas);
    const status: Record<string, unknown> = { replicas: replicasOf(asObject(obj.status).replicas) };
    const selector = workloadSelector(obj);
    if (selector) status.selector = selector;
    // spec.replicas is omitted when zero in autoscaling/v1
    return { kind: 'Scale', apiVersion: this.scaleApiVersion, metadata, spec: replicas ? { replicas } : {}, status };
  }

  private parentNotFound(name: string) {
    const q = { group: this.info.group, resource: `${this.info.resource}/scale`, name };
    return errors.notFound(q);
  }

  async get(ctx: RequestContext, name: string): Promise<KubeObject> {
    try {
      return this.toScale(await this.parent.get(ctx, name, {}));
    } catch (e) {
      if (e instanceof Error && 'code' in e && (e as { code: unknown }).code === 404) throw this.parentNotFound(name);
      throw e;
    }
  }

  private validateScale(scale: KubeObject, name: string): void {
    const errs: FieldError[] = [...validateObjectMeta(scale.metadata ?? {}, true, nameIsDNSSubdomain)];
    const replicas = asObject(scale.spec).replicas;
    if (typeof replicas === 'number' && replicas < 0) {
      errs.push(fieldErrors.invalid('spec.replicas', replicas, 'must be greater than or equal to 0'));
    }
    if (errs.length) throw invalidError('autoscaling', 'Scale', name, errs);
  }

  async update(ctx: RequestContext, name: string, transform: ObjectTransform): Promise<{ object: KubeObject; created: boolean }> {
    // admission sees the Scale, not the parent; managedFields are the scale handler's
    const parentCtx: RequestContext = { ...ctx, admission: undefined, managedFieldsRecorded: true };
    const { object } = await this.parent.update(
      parentCtx,
      name,
      async (current) => {
        if (!current) throw errors.notFound({ group: this.info.group, resource: this.info.resource, name });
        const oldScale = this.toScale(current);
        let scale = await transform(clone(oldScale));
        if (ctx.admission?.mutate) {
          scale = await ctx.admission.mutate({
            operation: 'UPDATE',
            resource: this.info,
            subresource: 'scale',
            namespace: ctx.namespace,
            name,
            object: scale,
            oldObject: oldScale,
            dryRun: ctx.dryRun,
            user: ctx.user,
          });
        }
        this.validateScale(scale, name);
        await ctx.admission?.validate?.({
          operation: 'UPDATE',
          resource: this.info,
          subresource: 'scale',
          namespace: ctx.namespace,
          name,
          object: scale,
          oldObject: oldScale,
          dryRun: ctx.dryRun,
          user: ctx.user,
        });
        const next = clone(current);
        const rv = scale.metadata?.resourceVersion;
        if (rv) next.metadata.resourceVersion = rv;
        const spec = isObject(next.spec) ? next.spec : (next.spec = {});
        (spec as Record<string, unknown>).replicas = replicasOf(asObject(scale.spec).replicas);
        const managedFields = fieldManagers()
          .for(this.info)
          .scaleUpdate(current, next, ctx.fieldManager ?? '');
        if (managedFields) next.metadata.managedFields = managedFields;
        else delete next.metadata.managedFields;
        return next;
      },
      { allowCreate: false },
    );
    return { object: this.toScale(object), created: false };
  }

  private unsupported(): never {
    throw errors.methodNotAllowed(`the server does not allow this method on the requested resource (${this.info.resource}/scale)`);
  }

  async list(): Promise<ListObject> {
    this.unsupported();
  }
  async watch(): Promise<Watch> {
    this.unsupported();
  }
  async create(): Promise<KubeObject> {
    this.unsupported();
  }
  async delete(_ctx: RequestContext, _name: string, _opts: DeleteRequestOptions): Promise<{ object: KubeObject; deleted: boolean }> {
    this.unsupported();
  }
  async deleteCollection(): Promise<ListObject> {
    this.unsupported();
  }
}
