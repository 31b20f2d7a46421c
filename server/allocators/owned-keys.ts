// One etcd key per allocated value, naming the Service that holds it (`spec.parentRef`, as
// an IPAddress does). Taking a value is a create-only write (etcd compares create_revision
// to 0), so exactly one of any number of concurrent takers wins. Releasing checks the holder
// first and deletes only that exact object, so a late release never frees a value that has
// since gone to someone else.

import { isStorageError } from '../../storage/errors.js';
import { everything, type KubeObject, type Storage } from '../../storage/interface.js';
import { asObject } from '../registry/object.js';

export interface ServiceRef {
  namespace: string;
  name: string;
}

export function sameService(a: ServiceRef, b: ServiceRef): boolean {
  return a.namespace === b.namespace && a.name === b.name;
}

/** the Service an allocation object names in spec.parentRef, if it names one */
export function parentServiceOf(obj: KubeObject): ServiceRef | undefined {
  const ref = asObject(asObject(obj.spec).parentRef);
  if (ref.resource !== 'services' || (ref.group ?? '') !== '') return undefined;
  if (typeof ref.namespace !== 'string' || typeof ref.name !== 'string') return undefined;
  return { namespace: ref.namespace, name: ref.name };
}

/** builds the object stored for one taken value */
export type AllocationObjectBuilder = (name: string, holder: ServiceRef) => KubeObject;

export class OwnedKeys {
  constructor(
    private readonly storage: Storage,
    /** e.g. `/networking.k8s.io/ipaddresses` (no trailing slash) */
    readonly prefix: string,
    private readonly build: AllocationObjectBuilder,
  ) {}

  key(name: string): string {
    return `${this.prefix}/${name}`;
  }

  /** the stored object when this call took the value; undefined when it was taken already */
  async take(name: string, holder: ServiceRef): Promise<KubeObject | undefined> {
    try {
      return await this.storage.create(this.key(name), this.build(name, holder));
    } catch (e) {
      if (isStorageError(e, 'KeyExists')) return undefined;
      throw e;
    }
  }

  async get(name: string): Promise<KubeObject | null> {
    return this.storage.get(this.key(name), { ignoreNotFound: true });
  }

  /**
   * Frees a value: only when `holder` (if given) holds it, and only the object with `uid`
   * (if given). True when this call removed it.
   */
  async release(name: string, holder?: ServiceRef, uid?: string): Promise<boolean> {
    const current = await this.get(name);
    if (!current) return false;
    if (uid !== undefined && current.metadata.uid !== uid) return false;
    if (holder) {
      const parent = parentServiceOf(current);
      if (!parent || !sameService(parent, holder)) return false;
    }
    try {
      await this.storage.delete(this.key(name), {
        preconditions: { uid: current.metadata.uid, resourceVersion: current.metadata.resourceVersion },
      });
      return true;
    } catch (e) {
      if (isStorageError(e, 'KeyNotFound') || isStorageError(e, 'ResourceVersionConflict')) return false;
      throw e;
    }
  }

  /** every allocation object (the taken set, with holders) */
  async list(): Promise<KubeObject[]> {
    const res = await this.storage.getList(`${this.prefix}/`, { recursive: true, resourceVersion: '0', predicate: everything });
    return res.items;
  }
}
