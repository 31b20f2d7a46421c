// ClusterIPs of one service range, tracked as networking.k8s.io/v1 IPAddress objects (one per
// allocated address, named by the address, with the Service as parentRef) exactly as
// kube-apiserver 1.33's allocator keeps them: `kubectl get ipaddresses` lists them, and the
// create-only write of the object is what makes an address belong to one Service.

import type { KubeObject, Storage } from '../../storage/interface.js';
import { newUid, orderObject, rfc3339 } from '../registry/object.js';
import { ipErrors } from './errors.js';
import { canonicalIP, familyOf, ipToBigInt, ServiceIPRange, type IPFamily } from './ip.js';
import { OwnedKeys, parentServiceOf, type ServiceRef } from './owned-keys.js';
import { takeFree } from './pool.js';

/** where IPAddress objects live (the registry's key prefix for networking.k8s.io ipaddresses) */
export const ipAddressKeyPrefix = '/networking.k8s.io/ipaddresses';

export const ipAddressLabels = {
  family: 'ipaddress.kubernetes.io/ip-family',
  managedBy: 'ipaddress.kubernetes.io/managed-by',
} as const;
/** kube-apiserver's allocator names itself so on the objects it manages */
export const ipAllocatorName = 'ipallocator.k8s.io';

export function ipAddressObject(name: string, family: IPFamily, holder: ServiceRef, now: Date): KubeObject {
  const time = rfc3339(now);
  return orderObject({
    kind: 'IPAddress',
    apiVersion: 'networking.k8s.io/v1',
    metadata: {
      name,
      uid: newUid(),
      creationTimestamp: time,
      labels: { [ipAddressLabels.family]: family, [ipAddressLabels.managedBy]: ipAllocatorName },
      managedFields: [
        {
          manager: 'kube-apiserver',
          operation: 'Update',
          apiVersion: 'networking.k8s.io/v1',
          time,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:labels': { '.': {}, [`f:${ipAddressLabels.family}`]: {}, [`f:${ipAddressLabels.managedBy}`]: {} } },
            'f:spec': { 'f:parentRef': { '.': {}, 'f:name': {}, 'f:namespace': {}, 'f:resource': {} } },
          },
        },
      ],
    },
    spec: { parentRef: { resource: 'services', namespace: holder.namespace, name: holder.name } },
  });
}

export interface ClusterIPAllocatorOptions {
  /** addresses never handed out dynamically (the kubernetes Service's) */
  reserved?: readonly string[];
  now?: () => Date;
}

export class ClusterIPAllocator {
  readonly range: ServiceIPRange;
  private readonly keys: OwnedKeys;
  private readonly reserved: Set<bigint>;

  constructor(cidr: string, storage: Storage, opts: ClusterIPAllocatorOptions = {}) {
    this.range = new ServiceIPRange(cidr);
    const now = opts.now ?? (() => new Date());
    const family = this.range.family;
    this.keys = new OwnedKeys(storage, ipAddressKeyPrefix, (name, holder) => ipAddressObject(name, family, holder, now()));
    this.reserved = new Set((opts.reserved ?? []).filter((ip) => familyOf(ip) === family).map(ipToBigInt));
  }

  get family(): IPFamily {
    return this.range.family;
  }

  /** the allocator's business: in the CIDR of its range */
  covers(ip: string): boolean {
    return familyOf(ip) === this.family && this.range.containsPrefix(ipToBigInt(ip));
  }

  /** throws unless `ip` is an allocatable address of this range; its IPAddress name */
  private check(ip: string): { n: bigint; name: string } {
    if (familyOf(ip) !== this.family) throw ipErrors.mismatchedNetwork();
    const n = ipToBigInt(ip);
    if (!this.range.containsPrefix(n)) throw ipErrors.mismatchedNetwork();
    if (!this.range.contains(n)) throw ipErrors.notInRange(ip, this.range.cidr);
    return { n, name: this.range.format(n) };
  }

  /** reserves the requested address for `holder`; returns the IPAddress object's uid */
  async allocate(ip: string, holder: ServiceRef): Promise<string> {
    const { name } = this.check(ip);
    const obj = await this.keys.take(name, holder);
    if (!obj) throw ipErrors.allocated();
    return obj.metadata.uid ?? '';
  }

  /** what allocate() would say, without writing */
  async checkAvailable(ip: string): Promise<void> {
    const { name } = this.check(ip);
    if (await this.keys.get(name)) throw ipErrors.allocated();
  }

  /** reserves a free address for `holder`, upper band first */
  async allocateNext(holder: ServiceRef): Promise<{ ip: string; uid: string }> {
    let uid = '';
    const got = await takeFree(
      this.range.bands(),
      {
        tryTake: async (v) => {
          const obj = await this.keys.take(this.range.format(v), holder);
          if (obj) uid = obj.metadata.uid ?? '';
          return obj !== undefined;
        },
        listTaken: async () => this.taken(),
      },
      { skip: (v) => this.reserved.has(v) },
    );
    if (got === undefined) throw ipErrors.full();
    return { ip: this.range.format(got), uid };
  }

  /** frees `ip` if `holder` (or, with `uid`, exactly that allocation) holds it */
  async release(ip: string, holder?: ServiceRef, uid?: string): Promise<boolean> {
    if (!familyOf(ip)) return false;
    return this.keys.release(canonicalIP(ip), holder, uid);
  }

  /** the Service holding `ip`, if any */
  async holder(ip: string): Promise<ServiceRef | undefined> {
    const obj = await this.keys.get(canonicalIP(ip));
    return obj ? parentServiceOf(obj) : undefined;
  }

  private async taken(): Promise<Set<bigint>> {
    const out = new Set<bigint>();
    for (const obj of await this.keys.list()) {
      const name = obj.metadata.name ?? '';
      if (familyOf(name) === this.family) out.add(ipToBigInt(name));
    }
    return out;
  }
}
