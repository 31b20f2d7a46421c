// The registry's ServiceIPAllocator: ClusterIPs (one allocator per configured family, primary
// first) and node ports for Service creates, updates and deletes, following kube-apiserver's
// service REST (pkg/registry/core/service/storage/alloc.go) in what it allocates, keeps,
// frees and how it reports failures:
//   - a requested address or port that cannot be had is a 422 on spec.clusterIPs or
//     spec.ports[i].nodePort; an exhausted range is a 500;
//   - ExternalName Services get no address, headless ones (`None`) keep `None`;
//   - a failed write gives back what it took; what an update stops using is freed only after
//     the update is written; a delete frees everything the Service held;
//   - a dry run writes nothing: requested values are checked, picked ones are placeholders.
// All state is in etcd (IPAddress objects, node port keys): replicas share nothing else.

import type { KubeObject, Storage } from '../../storage/interface.js';
import { errors } from '../machinery/status.js';
import { createLogger } from '../log.js';
import {
  ClusterIPNone,
  clusterIPsOf,
  defaultOnRead,
  healthCheckNodePortOf,
  ipFamiliesOf,
  needsClusterIP,
  needsHealthCheckNodePort,
  needsNodePort,
  nodePortOf,
  nodePortsOf,
  normalizeClusterIPs,
  patchAllocatedValues,
  portsOf,
  shouldAllocateNodePorts,
  specOf,
  typeOf,
} from '../registry/core/service-fields.js';
import type { ServiceIPAllocator } from '../registry/core/services.js';
import { clone, type JsonObject } from '../registry/object.js';
import type { FinishFunc } from '../registry/strategy.js';
import { fieldErrors, invalidError } from '../machinery/validation/field-error.js';
import { ClusterIPAllocator } from './cluster-ip.js';
import { AllocationError } from './errors.js';
import { initIPFamilyFields, unchangedPreferDualStack } from './ip-families.js';
import { familyOf, ServiceIPRange, type IPFamily } from './ip.js';
import { NodePortOperation } from './node-port-op.js';
import { NodePortAllocator } from './node-port.js';
import type { ServiceRef } from './owned-keys.js';
import { parsePortRange, type PortRange } from './port-range.js';
import { AllocationLedger } from './transaction.js';

const log = createLogger('allocators');

export interface ServiceAllocatorOptions {
  /** `--service-cluster-ip-range`: one CIDR, or two of different families (primary first) */
  serviceClusterIPRange: string;
  /** `--service-node-port-range` */
  serviceNodePortRange: string | PortRange;
  /** where IPAddress objects are read and written (the registry's storage for them) */
  ipAddresses: Storage;
  /** where node port keys are read and written (any Storage over the same etcd prefix) */
  nodePorts: Storage;
  now?: () => Date;
}

interface Write {
  spec: JsonObject;
  holder: ServiceRef;
  name: string;
  ledger: AllocationLedger;
  dryRun: boolean;
}

function holderOf(svc: KubeObject): ServiceRef {
  return { namespace: svc.metadata.namespace ?? '', name: svc.metadata.name ?? '' };
}

export class ServiceAllocator implements ServiceIPAllocator {
  /** one per configured family, primary first */
  readonly clusterIPs: readonly ClusterIPAllocator[];
  readonly nodePorts: NodePortAllocator;
  readonly families: readonly IPFamily[];

  constructor(opts: ServiceAllocatorOptions) {
    const cidrs = opts.serviceClusterIPRange
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    if (cidrs.length < 1 || cidrs.length > 2) throw new Error('--service-cluster-ip-range must contain one or two (dual-stack) CIDRs');
    const primary = new ServiceIPRange(cidrs[0]!);
    // the kubernetes Service's address is only ever requested, never picked
    const reserved = [primary.format(primary.first)];
    this.clusterIPs = cidrs.map((c) => new ClusterIPAllocator(c, opts.ipAddresses, { reserved, now: opts.now }));
    this.families = this.clusterIPs.map((a) => a.family);
    if (this.families.length === 2 && this.families[0] === this.families[1]) {
      throw new Error('--service-cluster-ip-range: the two CIDRs of a dual-stack range must be of different IP families');
    }
    const range = typeof opts.serviceNodePortRange === 'string' ? parsePortRange(opts.serviceNodePortRange) : opts.serviceNodePortRange;
    this.nodePorts = new NodePortAllocator(range, opts.nodePorts, { now: opts.now });
  }

  private allocatorFor(family: string | undefined): ClusterIPAllocator | undefined {
    return this.clusterIPs.find((a) => a.family === family);
  }

  // ---- the registry's hooks -------------------------------------------------------------

  async allocate(svc: KubeObject, opts: { dryRun: boolean }): Promise<FinishFunc> {
    const w = this.begin(svc, opts.dryRun);
    normalizeClusterIPs(w.spec);
    initIPFamilyFields(w.spec, undefined, this.families, w.name);
    try {
      await this.allocateClusterIPs(w);
      await this.allocateNodePorts(w);
    } catch (e) {
      await w.ledger.revert();
      throw e;
    }
    return w.ledger.finish();
  }

  async reallocate(svc: KubeObject, old: KubeObject, opts: { dryRun: boolean }): Promise<FinishFunc> {
    const w = this.begin(svc, opts.dryRun);
    // a Service stored before its families were recorded still says which it has
    const before = clone(specOf(old));
    defaultOnRead(before, this.families[0]!);
    patchAllocatedValues(w.spec, before);
    normalizeClusterIPs(w.spec, before);
    initIPFamilyFields(w.spec, before, this.families, w.name);
    try {
      await this.updateClusterIPs(w, before);
      await this.updateNodePorts(w, before);
    } catch (e) {
      await w.ledger.revert();
      throw e;
    }
    return w.ledger.finish();
  }

  async release(svc: KubeObject): Promise<void> {
    const spec = clone(specOf(svc));
    defaultOnRead(spec, this.families[0]!);
    const holder = holderOf(svc);
    const work: Array<[string, () => Promise<unknown>]> = [];
    const ips = clusterIPsOf(spec);
    if (needsClusterIP(spec) && ips[0] !== ClusterIPNone) {
      for (const ip of ips) {
        const a = this.allocatorFor(familyOf(ip));
        if (a) work.push([`ClusterIP ${ip}`, () => a.release(ip, holder)]);
      }
    }
    for (const port of new Set(nodePortsOf(spec))) work.push([`node port ${port}`, () => this.nodePorts.release(port, holder)]);
    const hc = healthCheckNodePortOf(spec);
    if (needsHealthCheckNodePort(spec) && hc > 0) work.push([`health check node port ${hc}`, () => this.nodePorts.release(hc, holder)]);
    for (const [what, run] of work) {
      try {
        await run();
      } catch (err) {
        // the Service is gone either way; the repair loop frees what is left behind
        log.warn('releasing an allocation failed', {
          service: `${holder.namespace}/${holder.name}`,
          allocation: what,
          error: (err as Error).message,
        });
      }
    }
  }

  private begin(svc: KubeObject, dryRun: boolean): Write {
    return { spec: specOf(svc), holder: holderOf(svc), name: svc.metadata.name ?? '', ledger: new AllocationLedger(), dryRun };
  }

  // ---- ClusterIPs ------------------------------------------------------------------------

  /** every family of a new (or newly addressed) Service gets its requested or a free address */
  private async allocateClusterIPs(w: Write): Promise<void> {
    if (!needsClusterIP(w.spec)) return;
    const ips = clusterIPsOf(w.spec);
    if (ips[0] === ClusterIPNone) return;
    const families = ipFamiliesOf(w.spec);
    while (ips.length < families.length) ips.push('');
    w.spec.clusterIPs = ips;
    await this.allocateIPs(
      w,
      families.map((family, index) => ({ index, family })),
    );
  }

  private async allocateIPs(w: Write, wanted: Array<{ index: number; family: string }>): Promise<void> {
    const ips = clusterIPsOf(w.spec);
    for (const { index, family } of wanted) {
      const a = this.allocatorFor(family);
      if (!a) throw errors.internal(`no ClusterIP allocator for ${family}`);
      const requested = ips[index] ?? '';
      if (requested === '') {
        ips[index] = await this.allocateNextIP(a, w);
        continue;
      }
      try {
        if (w.dryRun) {
          await a.checkAvailable(requested);
        } else {
          const uid = await a.allocate(requested, w.holder);
          w.ledger.onRevert(`ClusterIP ${requested}`, () => a.release(requested, undefined, uid));
        }
      } catch (e) {
        if (!(e instanceof AllocationError)) throw e;
        throw invalidError('', 'Service', w.name, [
          fieldErrors.invalid('spec.clusterIPs', [...ips], `failed to allocate IP ${requested}: ${e.message}`),
        ]);
      }
    }
    w.spec.clusterIPs = ips;
    if (ips[0]) w.spec.clusterIP = ips[0];
  }

  private async allocateNextIP(a: ClusterIPAllocator, w: Write): Promise<string> {
    // kube-apiserver's dry run does not look for a free address; it shows the network address
    if (w.dryRun) return a.range.networkAddress;
    try {
      const got = await a.allocateNext(w.holder);
      w.ledger.onRevert(`ClusterIP ${got.ip}`, () => a.release(got.ip, undefined, got.uid));
      return got.ip;
    } catch (e) {
      if (e instanceof AllocationError) throw errors.internal(`failed to allocate a serviceIP: ${e.message}`);
      throw e;
    }
  }

  private releaseIPOnCommit(w: Write, ip: string | undefined): void {
    if (!ip || ip === ClusterIPNone || w.dryRun) return;
    const a = this.allocatorFor(familyOf(ip));
    // a family no longer configured has nothing to free
    if (a) w.ledger.onCommit(`ClusterIP ${ip}`, () => a.release(ip, w.holder));
  }

  private async updateClusterIPs(w: Write, old: JsonObject): Promise<void> {
    if (unchangedPreferDualStack(w.spec, old)) return;
    // ExternalName -> a type with addresses
    if (!needsClusterIP(old) && needsClusterIP(w.spec)) return this.allocateClusterIPs(w);
    const oldIPs = clusterIPsOf(old);
    if (oldIPs[0] === ClusterIPNone) return;
    // a type with addresses -> ExternalName
    if (needsClusterIP(old) && !needsClusterIP(w.spec)) {
      for (const ip of oldIPs) this.releaseIPOnCommit(w, ip);
      return;
    }
    const oldFamilies = ipFamiliesOf(old);
    const families = ipFamiliesOf(w.spec);
    if (oldFamilies.length === 1 && families.length === 2) {
      const ips = clusterIPsOf(w.spec);
      if (ips.length < 2) ips.push('');
      w.spec.clusterIPs = ips;
      await this.allocateIPs(w, [{ index: 1, family: families[1]! }]);
    } else if (oldFamilies.length === 2 && families.length === 1) {
      this.releaseIPOnCommit(w, oldIPs[1]);
    }
  }

  // ---- node ports ------------------------------------------------------------------------

  private nodePortError(w: Write, index: number, port: number, e: unknown): unknown {
    if (!(e instanceof AllocationError)) return e;
    return invalidError('', 'Service', w.name, [fieldErrors.invalid(`spec.ports[${index}].nodePort`, port, e.message)]);
  }

  private async nextNodePort(op: NodePortOperation, what = 'a nodePort'): Promise<number> {
    try {
      return await op.allocateNext();
    } catch (e) {
      if (e instanceof AllocationError) throw errors.internal(`failed to allocate ${what}: ${e.message}`);
      throw e;
    }
  }

  private async allocateNodePorts(w: Write): Promise<void> {
    const op = new NodePortOperation(this.nodePorts, w.holder, w.ledger, w.dryRun);
    if (needsNodePort(w.spec)) {
      const ports = portsOf(w.spec);
      // a TCP and a UDP port of one number share their node port
      const byServicePort = new Map<unknown, number>();
      for (let i = 0; i < ports.length; i++) {
        const p = ports[i]!;
        const own = nodePortOf(p);
        if (own === 0 && !shouldAllocateNodePorts(w.spec)) continue;
        const shared = byServicePort.get(p.port) ?? 0;
        if (shared === 0) {
          const requested =
            ports
              .slice(i)
              .map((q) => (q.port === p.port ? nodePortOf(q) : 0))
              .find((n) => n !== 0) ?? 0;
          if (requested !== 0) {
            try {
              await op.allocate(requested);
            } catch (e) {
              throw this.nodePortError(w, i, requested, e);
            }
            p.nodePort = requested;
          } else {
            p.nodePort = await this.nextNodePort(op);
          }
          byServicePort.set(p.port, nodePortOf(p));
        } else if (own !== shared) {
          if (own === 0) {
            p.nodePort = shared;
          } else {
            try {
              await op.allocate(own);
            } catch (e) {
              throw this.nodePortError(w, i, own, e);
            }
          }
        }
      }
    }
    if (needsHealthCheckNodePort(w.spec)) await this.allocateHealthCheckNodePort(w, op);
  }

  private async allocateHealthCheckNodePort(w: Write, op: NodePortOperation): Promise<void> {
    const requested = healthCheckNodePortOf(w.spec);
    if (requested !== 0) {
      try {
        await op.allocate(requested);
      } catch (e) {
        if (e instanceof AllocationError)
          throw errors.internal(`failed to allocate requested HealthCheck NodePort ${requested}: ${e.message}`);
        throw e;
      }
      return;
    }
    w.spec.healthCheckNodePort = await this.nextNodePort(op, 'a HealthCheck NodePort 0');
  }

  private async updateNodePorts(w: Write, old: JsonObject): Promise<void> {
    const op = new NodePortOperation(this.nodePorts, w.holder, w.ledger, w.dryRun);
    const type = typeOf(w.spec);
    if (needsNodePort(old) && (type === 'ExternalName' || type === 'ClusterIP')) {
      for (const port of nodePortsOf(old)) op.releaseOnCommit(port);
    }
    if (needsNodePort(w.spec)) {
      const oldPorts = nodePortsOf(old);
      const takenNow = new Set<number>();
      const seen = new Set<string>();
      const ports = portsOf(w.spec);
      for (let i = 0; i < ports.length; i++) {
        const p = ports[i]!;
        let port = nodePortOf(p);
        if (port === 0 && !shouldAllocateNodePorts(w.spec)) continue;
        if (port !== 0) {
          if (!oldPorts.includes(port) && !takenNow.has(port)) {
            try {
              await op.allocate(port);
            } catch (e) {
              throw this.nodePortError(w, i, port, e);
            }
            takenNow.add(port);
          }
        } else {
          port = await this.nextNodePort(op);
          p.nodePort = port;
        }
        const protocol = typeof p.protocol === 'string' ? p.protocol : 'TCP';
        if (seen.has(`${protocol}/${port}`)) throw errors.internal(`duplicate nodePort: {${protocol} ${port}}`);
        seen.add(`${protocol}/${port}`);
      }
      const nowUsed = new Set(nodePortsOf(w.spec));
      for (const port of oldPorts) if (!nowUsed.has(port)) op.releaseOnCommit(port);
    }
    const needed = needsHealthCheckNodePort(old);
    const needs = needsHealthCheckNodePort(w.spec);
    if (!needed && needs) await this.allocateHealthCheckNodePort(w, op);
    else if (needed && !needs && healthCheckNodePortOf(old) !== 0) op.releaseOnCommit(healthCheckNodePortOf(old));
  }
}

export function createServiceAllocator(opts: ServiceAllocatorOptions): ServiceAllocator {
  return new ServiceAllocator(opts);
}
