// coordination.k8s.io/v1 Lease objects as kapi's own controllers read and write them: through
// the registry in-process (no HTTP, no authorization), like kube-apiserver's loopback client.
// Leader election (leader.ts) and the apiserver identity leases (identity.ts) share this.

import type { KubeObject, Watch } from '../../storage/interface.js';
import { rfc3339Micro } from '../registry/object.js';
import type { RESTResource, ResourceResolver } from '../registry/rest.js';
import { internalContext } from './util.js';

/** where kube-controller-manager and kube-apiserver keep their Leases */
export const leaseNamespace = 'kube-system';

/** coordination.k8s.io/v1 LeaseSpec, fields in the Go struct's order (JSON keeps it) */
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  /** metav1.MicroTime: RFC 3339, UTC, microseconds */
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

/** metav1.MicroTime's JSON form of `d` */
export function microTime(d: Date = new Date()): string {
  return rfc3339Micro(d);
}

/** A Lease body in kube's field order: apiVersion, kind, metadata, spec. */
export function leaseObject(metadata: KubeObject['metadata'], spec: LeaseSpec): Lease {
  return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata, spec };
}

/** Lease reads and writes in one namespace, as `fieldManager`. */
export class LeaseClient {
  constructor(
    private readonly resolver: ResourceResolver,
    private readonly fieldManager: string,
    readonly namespace: string = leaseNamespace,
  ) {}

  private rest(): RESTResource {
    const r = this.resolver.lookup('coordination.k8s.io', 'v1', 'leases');
    if (!r) throw new Error('the registry serves no coordination.k8s.io/v1 leases');
    return r;
  }

  private ctx(signal?: AbortSignal) {
    return internalContext(this.fieldManager, this.namespace, signal);
  }

  /** a consistent read (never from a cache that may lag); rejects with NotFound when absent */
  async get(name: string): Promise<Lease> {
    return (await this.rest().get(this.ctx(), name, {})) as Lease;
  }

  /** rejects with AlreadyExists when someone else created it first */
  async create(lease: Lease): Promise<Lease> {
    return (await this.rest().create(this.ctx(), { ...lease, metadata: { ...lease.metadata, namespace: this.namespace } })) as Lease;
  }

  /** Replaces the Lease. `lease.metadata.resourceVersion` is a precondition: a Conflict means
   *  someone wrote it since that version was read. */
  async update(lease: Lease): Promise<Lease> {
    const name = lease.metadata.name ?? '';
    if (!lease.metadata.resourceVersion) throw new Error(`lease ${name}: an update needs the resourceVersion it was read at`);
    const body = { ...lease, metadata: { ...lease.metadata, namespace: this.namespace } };
    const { object } = await this.rest().update(this.ctx(), name, () => body, { allowCreate: false });
    return object as Lease;
  }

  async delete(name: string, resourceVersion?: string): Promise<void> {
    await this.rest().delete(this.ctx(), name, resourceVersion ? { preconditions: { resourceVersion } } : {});
  }

  async list(labelSelector?: string): Promise<Lease[]> {
    return (await this.rest().list(this.ctx(), { labelSelector })).items as Lease[];
  }

  /** watches one Lease (its current state first, as ADDED) until `signal` aborts */
  async watch(name: string, signal: AbortSignal): Promise<Watch> {
    return this.rest().watch(this.ctx(signal), { name });
  }
}
