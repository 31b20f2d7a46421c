// NodePorts of `--service-node-port-range`. kube-apiserver keeps them in one bitmap object
// updated with compare-and-swap; here every taken port is its own etcd key (create-only, like
// an IPAddress), so replicas allocating at once never contend on one object and never hand
// out a port twice. The keys are internal: no API serves them.

import type { KubeObject, Storage } from '../../storage/interface.js';
import { newUid, orderObject, rfc3339 } from '../registry/object.js';
import { portErrors } from './errors.js';
import { OwnedKeys, parentServiceOf, type ServiceRef } from './owned-keys.js';
import { takeFree } from './pool.js';
import { formatPortRange, portRangeContains, portRangeOffset, type PortRange } from './port-range.js';

/** where taken node ports live, relative to the etcd prefix */
export const nodePortKeyPrefix = '/servicenodeports';

function nodePortObject(name: string, holder: ServiceRef, now: Date): KubeObject {
  return orderObject({
    kind: 'ServiceNodePort',
    apiVersion: 'internal.kapi/v1',
    metadata: { name, uid: newUid(), creationTimestamp: rfc3339(now) },
    spec: { parentRef: { resource: 'services', namespace: holder.namespace, name: holder.name } },
  });
}

export class NodePortAllocator {
  private readonly keys: OwnedKeys;

  constructor(
    readonly range: PortRange,
    storage: Storage,
    opts: { now?: () => Date } = {},
  ) {
    const now = opts.now ?? (() => new Date());
    this.keys = new OwnedKeys(storage, nodePortKeyPrefix, (name, holder) => nodePortObject(name, holder, now()));
  }

  get rangeText(): string {
    return formatPortRange(this.range);
  }

  contains(port: number): boolean {
    return portRangeContains(this.range, port);
  }

  /** reserves the requested port for `holder`; returns the allocation's uid */
  async allocate(port: number, holder: ServiceRef): Promise<string> {
    if (!this.contains(port)) throw portErrors.notInRange(this.rangeText);
    const obj = await this.keys.take(String(port), holder);
    if (!obj) throw portErrors.allocated();
    return obj.metadata.uid ?? '';
  }

  /** what allocate() would say, without writing */
  async checkAvailable(port: number): Promise<void> {
    if (!this.contains(port)) throw portErrors.notInRange(this.rangeText);
    if (await this.keys.get(String(port))) throw portErrors.allocated();
  }

  /** reserves a free port, above the static band first */
  async allocateNext(holder: ServiceRef): Promise<{ port: number; uid: string }> {
    const base = BigInt(this.range.base);
    const last = base + BigInt(this.range.size) - 1n;
    const offset = base + BigInt(portRangeOffset(this.range));
    const bands =
      offset > base
        ? [
            { first: offset, last },
            { first: base, last: offset - 1n },
          ]
        : [{ first: base, last }];
    let uid = '';
    const got = await takeFree(bands, {
      tryTake: async (v) => {
        const obj = await this.keys.take(v.toString(), holder);
        if (obj) uid = obj.metadata.uid ?? '';
        return obj !== undefined;
      },
      listTaken: async () => {
        const out = new Set<bigint>();
        for (const obj of await this.keys.list()) {
          const name = obj.metadata.name ?? '';
          if (/^\d+$/.test(name)) out.add(BigInt(name));
        }
        return out;
      },
    });
    if (got === undefined) throw portErrors.full();
    return { port: Number(got), uid };
  }

  async release(port: number, holder?: ServiceRef, uid?: string): Promise<boolean> {
    return this.keys.release(String(port), holder, uid);
  }

  async holder(port: number): Promise<ServiceRef | undefined> {
    const obj = await this.keys.get(String(port));
    return obj ? parentServiceOf(obj) : undefined;
  }

  /** every taken port with its holder (for repair) */
  async list(): Promise<Array<{ port: number; holder?: ServiceRef; object: KubeObject }>> {
    return (await this.keys.list()).map((object) => ({ port: Number(object.metadata.name), holder: parentServiceOf(object), object }));
  }
}
