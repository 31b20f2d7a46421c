// What the garbage collector does to the cluster, through the registry as an in-process
// client: live reads, deletes with uid (and resourceVersion) preconditions, owner reference
// and finalizer removal as read-modify-writes pinned to the object's uid, and Events.

import type { KubeObject, ObjectMeta } from '../../../storage/interface.js';
import { rfc3339 } from '../../registry/object.js';
import type { RESTResource, RequestContext } from '../../registry/rest.js';
import { internalContext, isConflict, isNotFound } from '../util.js';
import type { KindMapper } from './resources.js';
import { ownerReferencesOf, sameOwnerReferences, type ObjectIdentity, type OwnerReference } from './types.js';

const fieldManager = 'kube-controller-manager';
const eventSource = 'garbage-collector-controller';

export type PropagationPolicy = 'Orphan' | 'Background' | 'Foreground';

/** the result of a metadata change: written, nothing to change, or the object (by uid) is gone */
export type MetaUpdate = 'updated' | 'unchanged' | 'gone';

class NothingToChange extends Error {}
class UidMismatch extends Error {}

export class ApiOperations {
  constructor(
    private readonly mapper: KindMapper,
    private readonly signal?: AbortSignal,
  ) {}

  private ctx(namespace: string): RequestContext {
    return internalContext(fieldManager, namespace, this.signal);
  }

  /** the resource of an identity and the namespace to address it in ('' when cluster-scoped) */
  locate(id: Pick<ObjectIdentity, 'apiVersion' | 'kind' | 'namespace'>): { resource: RESTResource; namespace: string } {
    const resource = this.mapper.resourceFor(id.apiVersion, id.kind);
    return { resource, namespace: resource.info.namespaced ? id.namespace : '' };
  }

  /** the live object; throws NotFound (404) when absent */
  async get(id: ObjectIdentity): Promise<KubeObject> {
    const { resource, namespace } = this.locate(id);
    return resource.get(this.ctx(namespace), id.name, {});
  }

  /**
   * Deletes the object if it is still the one with `id.uid` at `resourceVersion`. When only
   * the resourceVersion moved and its owner references are still `ownersAt`, deletes anyway.
   * Throws NotFound when it is gone.
   */
  async delete(id: ObjectIdentity, resourceVersion: string, ownersAt: readonly OwnerReference[], policy: PropagationPolicy): Promise<void> {
    const { resource, namespace } = this.locate(id);
    const ctx = this.ctx(namespace);
    try {
      await resource.delete(ctx, id.name, {
        preconditions: { uid: id.uid, ...(resourceVersion ? { resourceVersion } : {}) },
        propagationPolicy: policy,
      });
    } catch (err) {
      if (!isConflict(err) || !resourceVersion) throw err;
      const live = await resource.get(ctx, id.name, {});
      const m = live.metadata;
      if (m.uid === id.uid && m.resourceVersion !== resourceVersion && sameOwnerReferences(ownerReferencesOf(live), ownersAt)) {
        await resource.delete(ctx, id.name, { preconditions: { uid: id.uid }, propagationPolicy: policy });
        return;
      }
      throw err;
    }
  }

  /** applies `change` to the live object's metadata (false: nothing to change) and writes it */
  async updateMetadata(id: ObjectIdentity, change: (meta: ObjectMeta) => boolean): Promise<MetaUpdate> {
    const { resource, namespace } = this.locate(id);
    try {
      await resource.update(
        this.ctx(namespace),
        id.name,
        (cur) => {
          if (!cur || cur.metadata.uid !== id.uid) throw new UidMismatch();
          const next = structuredClone(cur);
          if (!change(next.metadata)) throw new NothingToChange();
          return next;
        },
        { allowCreate: false },
      );
      return 'updated';
    } catch (err) {
      if (err instanceof NothingToChange) return 'unchanged';
      if (err instanceof UidMismatch || isNotFound(err)) return 'gone';
      throw err;
    }
  }

  /** removes the owner references to `ownerUids` */
  removeOwnerReferences(id: ObjectIdentity, ownerUids: string[]): Promise<MetaUpdate> {
    const drop = new Set(ownerUids);
    return this.updateMetadata(id, (meta) => {
      const refs = meta.ownerReferences ?? [];
      const kept = refs.filter((r) => !(typeof r === 'object' && r !== null && !Array.isArray(r) && drop.has(String(r.uid))));
      if (kept.length === refs.length) return false;
      if (kept.length) meta.ownerReferences = kept;
      else delete meta.ownerReferences;
      return true;
    });
  }

  /** sets blockOwnerDeletion to false on every reference that blocks its owner */
  unblockOwnerReferences(id: ObjectIdentity): Promise<MetaUpdate> {
    return this.updateMetadata(id, (meta) => {
      let changed = false;
      meta.ownerReferences = (meta.ownerReferences ?? []).map((r) => {
        if (typeof r !== 'object' || r === null || Array.isArray(r) || r.blockOwnerDeletion !== true) return r;
        changed = true;
        return { ...r, blockOwnerDeletion: false };
      });
      return changed;
    });
  }

  removeFinalizer(id: ObjectIdentity, finalizer: string): Promise<MetaUpdate> {
    return this.updateMetadata(id, (meta) => {
      const finalizers = meta.finalizers ?? [];
      if (!finalizers.includes(finalizer)) return false;
      const kept = finalizers.filter((f) => f !== finalizer);
      if (kept.length) meta.finalizers = kept;
      else delete meta.finalizers;
      return true;
    });
  }

  /** a Warning Event about `about`, as kube-controller-manager's event recorder writes one */
  async recordWarning(about: ObjectIdentity, reason: string, message: string): Promise<void> {
    const events = this.mapper.resourceFor('v1', 'Event');
    const namespace = about.namespace || 'default';
    const now = new Date();
    const time = rfc3339(now);
    const nanos = BigInt(now.getTime()) * 1_000_000n;
    await events.create(this.ctx(namespace), {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${about.name}.${nanos.toString(16)}`, namespace },
      involvedObject: {
        kind: about.kind,
        namespace: about.namespace || undefined,
        name: about.name,
        uid: about.uid,
        apiVersion: about.apiVersion,
      },
      reason,
      message,
      source: { component: eventSource },
      firstTimestamp: time,
      lastTimestamp: time,
      count: 1,
      type: 'Warning',
      eventTime: null,
      reportingComponent: eventSource,
      reportingInstance: '',
    });
  }
}
