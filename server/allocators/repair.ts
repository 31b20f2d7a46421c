// Bringing allocation state and Services back in line (kube-apiserver's repair controllers):
//   - a Service whose address or node port has no allocation object gets one (Services
//     written before allocation existed, or restored from a backup);
//   - an allocation no Service uses any more is freed once it is older than a grace period
//     (a replica that died between allocating and writing the Service, or between deleting
//     the Service and freeing what it held). The grace period covers writes still in flight.
// Every step is a create-only write or a delete pinned to one object's uid and
// resourceVersion, so all replicas may run it at once. It also creates the default
// ServiceCIDR `kubernetes` naming the configured ranges, as kube-apiserver does.

import { isStorageError } from '../../storage/errors.js';
import { everything, type KubeObject, type Storage } from '../../storage/interface.js';
import { createLogger } from '../log.js';
import {
  ClusterIPNone,
  clusterIPsOf,
  defaultOnRead,
  healthCheckNodePortOf,
  needsClusterIP,
  needsHealthCheckNodePort,
  nodePortsOf,
  specOf,
} from '../registry/core/service-fields.js';
import { clone, newUid, orderObject, rfc3339 } from '../registry/object.js';
import { ipAddressKeyPrefix, ipAddressLabels, ipAllocatorName } from './cluster-ip.js';
import { canonicalIP, familyOf, ipToBigInt } from './ip.js';
import { nodePortKeyPrefix } from './node-port.js';
import { parentServiceOf, sameService, type ServiceRef } from './owned-keys.js';
import type { ServiceAllocator } from './service-allocator.js';

const log = createLogger('allocators');

export const serviceCIDRKeyPrefix = '/networking.k8s.io/servicecidrs';
export const defaultServiceCIDRName = 'kubernetes';

export interface RepairOptions {
  allocator: ServiceAllocator;
  /** read with consistent reads: the etcd3 store (not a cache that may lag) */
  storage: Storage;
  /** an unused allocation younger than this is left alone (a write may still be in flight) */
  graceMs?: number;
  now?: () => Date;
}

export interface RepairReport {
  /** allocations created for Services that lacked them, e.g. `ClusterIP 10.96.0.10 -> ns/name` */
  backfilled: string[];
  /** allocations no Service uses, freed */
  freed: string[];
  /** values two Services claim; left for a human (kube-apiserver only reports them too) */
  conflicts: string[];
}

const defaultGraceMs = 5 * 60_000;

const label = (h: ServiceRef): string => `${h.namespace}/${h.name}`;

function ageMs(obj: KubeObject, now: Date): number {
  const t = Date.parse(String(obj.metadata.creationTimestamp ?? ''));
  return Number.isNaN(t) ? Number.POSITIVE_INFINITY : now.getTime() - t;
}

async function listAll(storage: Storage, prefix: string): Promise<KubeObject[]> {
  return (await storage.getList(`${prefix}/`, { recursive: true, predicate: everything })).items;
}

/** what the stored Services hold: address/port -> every Service using it (normally one) */
function expectedHolders(
  services: KubeObject[],
  allocator: ServiceAllocator,
): { ips: Map<string, ServiceRef[]>; ports: Map<number, ServiceRef[]> } {
  const ips = new Map<string, ServiceRef[]>();
  const ports = new Map<number, ServiceRef[]>();
  const add = <K>(m: Map<K, ServiceRef[]>, k: K, h: ServiceRef) => {
    const list = m.get(k) ?? [];
    if (!list.some((x) => sameService(x, h))) list.push(h);
    m.set(k, list);
  };
  for (const svc of services) {
    const spec = clone(specOf(svc));
    defaultOnRead(spec, allocator.families[0]!);
    const holder = { namespace: svc.metadata.namespace ?? '', name: svc.metadata.name ?? '' };
    const addresses = clusterIPsOf(spec);
    if (needsClusterIP(spec) && addresses[0] !== ClusterIPNone) {
      for (const ip of addresses) if (familyOf(ip)) add(ips, canonicalIP(ip), holder);
    }
    for (const port of nodePortsOf(spec)) add(ports, port, holder);
    const hc = healthCheckNodePortOf(spec);
    if (needsHealthCheckNodePort(spec) && hc > 0) add(ports, hc, holder);
  }
  return { ips, ports };
}

/**
 * One kind of allocation: records what users lack, reports double claims, frees what no
 * user holds once it is old enough.
 */
async function reconcile<K>(
  what: string,
  users: Map<K, ServiceRef[]>,
  objects: Map<K, KubeObject>,
  tracked: (k: K) => boolean,
  take: (k: K, holder: ServiceRef) => Promise<unknown>,
  free: (k: K, obj: KubeObject) => Promise<boolean>,
  ours: (obj: KubeObject) => boolean,
  oldEnough: (obj: KubeObject) => boolean,
  report: RepairReport,
): Promise<void> {
  for (const [k, list] of users) {
    if (!tracked(k)) continue; // outside every configured range: nothing to track
    const obj = objects.get(k);
    if (!obj) {
      try {
        await take(k, list[0]!);
        report.backfilled.push(`${what} ${String(k)} -> ${label(list[0]!)}`);
      } catch {
        // taken since the list: the next pass looks again
        continue;
      }
    }
    const parent = obj ? parentServiceOf(obj) : list[0];
    for (const user of list) {
      if (parent && sameService(parent, user)) continue;
      report.conflicts.push(`${what} ${String(k)}: held by ${parent ? label(parent) : 'an unknown parent'}, used by ${label(user)}`);
    }
  }
  for (const [k, obj] of objects) {
    if (!ours(obj) || users.has(k) || !oldEnough(obj)) continue;
    if (await free(k, obj)) report.freed.push(`${what} ${String(k)}`);
  }
}

export async function repairOnce(opts: RepairOptions): Promise<RepairReport> {
  const { allocator, storage } = opts;
  const now = (opts.now ?? (() => new Date()))();
  const graceMs = opts.graceMs ?? defaultGraceMs;
  const report: RepairReport = { backfilled: [], freed: [], conflicts: [] };
  // allocations first: one made after this read belongs to a Service the next read may miss,
  // and it is young enough to be left alone
  const ipObjects = await listAll(storage, ipAddressKeyPrefix);
  const portObjects = await listAll(storage, nodePortKeyPrefix);
  const services = await listAll(storage, '/services');
  const expected = expectedHolders(services, allocator);

  const oldEnough = (obj: KubeObject) => ageMs(obj, now) >= graceMs;
  await reconcile(
    'ClusterIP',
    expected.ips,
    new Map(ipObjects.map((o) => [o.metadata.name ?? '', o])),
    (ip) => allocator.clusterIPs.some((a) => a.covers(ip) && a.range.contains(ipToBigInt(ip))),
    (ip, holder) => allocator.clusterIPs.find((a) => a.covers(ip))!.allocate(ip, holder),
    (ip, obj) => releaseExact(storage, `${ipAddressKeyPrefix}/${ip}`, obj),
    (obj) => obj.metadata.labels?.[ipAddressLabels.managedBy] === ipAllocatorName,
    oldEnough,
    report,
  );
  await reconcile(
    'node port',
    expected.ports,
    new Map(portObjects.map((o) => [Number(o.metadata.name), o])),
    (port) => allocator.nodePorts.contains(port),
    (port, holder) => allocator.nodePorts.allocate(port, holder),
    (port, obj) => releaseExact(storage, `${nodePortKeyPrefix}/${port}`, obj),
    () => true,
    oldEnough,
    report,
  );
  return report;
}

/** deletes exactly this object (same uid, unchanged since read) */
async function releaseExact(storage: Storage, key: string, obj: KubeObject): Promise<boolean> {
  try {
    await storage.delete(key, { preconditions: { uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion } });
    return true;
  } catch (e) {
    if (isStorageError(e, 'KeyNotFound') || isStorageError(e, 'ResourceVersionConflict')) return false;
    throw e;
  }
}

/** the ServiceCIDR kube-apiserver creates from --service-cluster-ip-range (left alone if present) */
export async function ensureDefaultServiceCIDR(storage: Storage, allocator: ServiceAllocator, now = new Date()): Promise<boolean> {
  const time = rfc3339(now);
  const obj = orderObject({
    kind: 'ServiceCIDR',
    apiVersion: 'networking.k8s.io/v1',
    metadata: { name: defaultServiceCIDRName, uid: newUid(), creationTimestamp: time },
    spec: { cidrs: allocator.clusterIPs.map((a) => a.range.cidr) },
    status: {
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: time, reason: '', message: 'Kubernetes default Service CIDR is ready' },
      ],
    },
  });
  try {
    await storage.create(`${serviceCIDRKeyPrefix}/${defaultServiceCIDRName}`, obj);
    return true;
  } catch (e) {
    if (isStorageError(e, 'KeyExists')) return false;
    throw e;
  }
}

export interface RepairLoop {
  /** the first pass (and the default ServiceCIDR); resolves even when it failed (logged) */
  readonly firstPass: Promise<void>;
  stop(): void;
}

/** runs repairOnce now and every `intervalMs` (default 3 minutes, as kube-apiserver) */
export function startRepairLoop(opts: RepairOptions & { intervalMs?: number }): RepairLoop {
  const intervalMs = opts.intervalMs ?? 3 * 60_000;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const pass = async (): Promise<void> => {
    try {
      const r = await repairOnce(opts);
      if (r.backfilled.length) log.info('recorded allocations Services held without them', { allocations: r.backfilled.join(', ') });
      if (r.freed.length) log.info('freed allocations no Service uses', { allocations: r.freed.join(', ') });
      for (const c of r.conflicts) log.warn('an address or port is claimed twice', { conflict: c });
    } catch (err) {
      log.warn('repairing service allocations failed', { error: (err as Error).message });
    }
  };
  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => void pass().then(schedule), intervalMs);
    timer.unref();
  };
  const firstPass = (async () => {
    try {
      await ensureDefaultServiceCIDR(opts.storage, opts.allocator, (opts.now ?? (() => new Date()))());
    } catch (err) {
      log.warn('creating the default ServiceCIDR failed', { error: (err as Error).message });
    }
    await pass();
    schedule();
  })();
  return {
    firstPass,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
