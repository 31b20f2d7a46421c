// Deleting a CustomResourceDefinition, as kube's CRD storage does: the delete first puts the
// customresourcecleanup finalizer on the CRD, so the generic delete only marks it; the CRD
// controller deletes its custom resources and then lets it go.

import type { KubeObject } from '../../storage/interface.js';
import { errors } from '../machinery/status.js';
import { clone } from '../registry/object.js';
import type { DeleteRequestOptions, ListObject, ListRequestOptions, RequestContext, RESTResource } from '../registry/rest.js';
import { CLEANUP_FINALIZER } from '../registry/apiextensions/crd-strategy.js';

export function withCleanupFinalizer(store: RESTResource): RESTResource {
  const addFinalizer = async (ctx: RequestContext, name: string, opts: DeleteRequestOptions): Promise<void> => {
    if (ctx.dryRun) return;
    try {
      await store.update(
        { ...ctx, fieldManager: ctx.fieldManager ?? 'kube-apiserver' },
        name,
        (cur) => {
          if (!cur) throw errors.notFound({ group: store.info.group, resource: store.info.resource, name });
          const p = opts.preconditions;
          if (p?.uid && p.uid !== cur.metadata.uid) {
            throw errors.conflict(
              { group: store.info.group, resource: store.info.resource, name },
              `Precondition failed: UID in precondition: ${p.uid}, UID in object meta: ${cur.metadata.uid ?? ''}`,
            );
          }
          if (cur.metadata.deletionTimestamp || (cur.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER)) return cur;
          const next = clone(cur);
          next.metadata.finalizers = [...(next.metadata.finalizers ?? []), CLEANUP_FINALIZER];
          return next;
        },
        { allowCreate: false },
      );
    } catch (err) {
      // the delete itself answers 404 and precondition failures in kube's words
      if ((err as { code?: number }).code === 404) return;
      throw err;
    }
  };
  const wrapper: RESTResource = {
    info: store.info,
    subresource: store.subresource,
    get: (ctx, name, opts) => store.get(ctx, name, opts),
    list: (ctx, opts) => store.list(ctx, opts),
    watch: (ctx, opts) => store.watch(ctx, opts),
    create: (ctx, obj) => store.create(ctx, obj),
    update: (ctx, name, transform, opts) => store.update(ctx, name, transform, opts),
    async delete(ctx, name, opts) {
      await addFinalizer(ctx, name, opts);
      return store.delete(ctx, name, opts);
    },
    async deleteCollection(ctx: RequestContext, opts: DeleteRequestOptions, list: ListRequestOptions): Promise<ListObject> {
      const items: KubeObject[] = (await store.list(ctx, list)).items;
      for (const item of items) await addFinalizer(ctx, item.metadata.name ?? '', {});
      return store.deleteCollection(ctx, opts, list);
    },
  };
  return wrapper;
}
