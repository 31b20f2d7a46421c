// The `kubernetes` Service's Endpoints and EndpointSlice list every live replica, as
// kube-apiserver's lease endpoint reconciler keeps them: each replica holds a key
// `<prefix>/masterleases/<ip>:<port>` bound to an etcd lease it keeps alive, and every
// replica periodically rewrites the Endpoints to the set of addresses that have a key. A
// replica that dies stops renewing; its key expires and the next pass of any replica drops
// its address. A replica stopping cleanly removes its key and its address at once.
//
// kube-apiserver assumes every replica serves on the same port and keys its leases by IP
// alone. kapi's local cluster runs replicas on one loopback IP with different ports, so the
// key includes the port and the Endpoints get one subset per port; every replica computes
// the same object from the same keys, so they never undo each other's writes. With one port
// (any real deployment) the objects are exactly kube-apiserver's.

import type { EtcdClient } from '../../storage/etcd/types.js';
import { prefixEnd } from '../../storage/etcd/types.js';
import type { KubeObject } from '../../storage/interface.js';
import type { RESTResource, ResourceResolver } from '../registry/rest.js';
import { kubernetesServiceName } from './bootstrap.js';
import { ipFamily } from './service-ip.js';
import { defaultLogger, normalizePrefix, type Controller, type ControllerDeps } from './types.js';
import { errorMessage, internalContext, isNotFound, sleep } from './util.js';
import { jsonEqual } from '../registry/object.js';

const fieldManager = 'kube-apiserver';

export interface MasterEndpointsOptions {
  /** TTL of this replica's key. Default 15 s, as kube-apiserver's master lease. */
  leaseSeconds?: number;
  /** how often the key is renewed and the Endpoints reconciled. Default 10 s. */
  intervalMs?: number;
}

/** where one replica serves */
export interface MasterAddress {
  ip: string;
  port: number;
}

export function masterLeaseKeyPrefix(prefix: string): Buffer {
  return Buffer.from(`${normalizePrefix(prefix)}/masterleases/`);
}

function endpointPorts(port: number) {
  return [{ name: 'https', port, protocol: 'TCP' }];
}

/** addresses grouped by port, ports ascending, IPs sorted within each */
function byPort(masters: MasterAddress[]): Array<{ port: number; ips: string[] }> {
  const groups = new Map<number, Set<string>>();
  for (const m of masters) {
    let ips = groups.get(m.port);
    if (!ips) groups.set(m.port, (ips = new Set()));
    ips.add(m.ip);
  }
  return [...groups].sort(([a], [b]) => a - b).map(([port, ips]) => ({ port, ips: [...ips].sort() }));
}

export function desiredEndpoints(masters: MasterAddress[]): KubeObject {
  return {
    kind: 'Endpoints',
    apiVersion: 'v1',
    metadata: {
      name: kubernetesServiceName,
      namespace: 'default',
      // the EndpointSlice is written here, so the mirroring controller must leave it alone
      labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' },
    },
    subsets: byPort(masters).map(({ port, ips }) => ({ addresses: ips.map((ip) => ({ ip })), ports: endpointPorts(port) })),
  };
}

/** One slice, as kube-apiserver writes: it has a single port list, so with several ports it
 *  carries the port most replicas serve on (the lowest of a tie). */
export function desiredEndpointSlice(masters: MasterAddress[]): KubeObject {
  const groups = byPort(masters);
  const main = groups.reduce<{ port: number; ips: string[] } | undefined>(
    (best, g) => (!best || g.ips.length > best.ips.length ? g : best),
    undefined,
  ) ?? { port: 443, ips: [] };
  const addressType = main.ips.length > 0 && main.ips.every((ip) => ipFamily(ip) === 'IPv6') ? 'IPv6' : 'IPv4';
  return {
    kind: 'EndpointSlice',
    apiVersion: 'discovery.k8s.io/v1',
    metadata: {
      name: kubernetesServiceName,
      namespace: 'default',
      labels: { 'kubernetes.io/service-name': kubernetesServiceName },
    },
    addressType,
    endpoints: main.ips.filter((ip) => ipFamily(ip) === addressType).map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    ports: endpointPorts(main.port),
  };
}

function masterKey(prefix: string, m: MasterAddress): Buffer {
  return Buffer.concat([masterLeaseKeyPrefix(prefix), Buffer.from(`${m.ip}:${m.port}`)]);
}

/** every replica whose master lease key is alive */
export async function listMasters(etcd: EtcdClient, prefix: string): Promise<MasterAddress[]> {
  const key = masterLeaseKeyPrefix(prefix);
  const resp = await etcd.range({ key, rangeEnd: prefixEnd(key) });
  const out: MasterAddress[] = [];
  for (const kv of resp.kvs) {
    try {
      const v = JSON.parse(kv.value.toString('utf8')) as Partial<MasterAddress>;
      if (typeof v.ip === 'string' && typeof v.port === 'number') out.push({ ip: v.ip, port: v.port });
    } catch {
      // not ours to interpret
    }
  }
  return out;
}

/** the fields that matter, compared; metadata other than labels is the server's */
function sameContent(current: KubeObject, desired: KubeObject, fields: string[]): boolean {
  const labels = current.metadata.labels ?? {};
  const wanted = desired.metadata.labels ?? {};
  if (!Object.entries(wanted).every(([k, v]) => labels[k] === v)) return false;
  return fields.every((f) => jsonEqual(current[f], desired[f]));
}

async function reconcileObject(res: RESTResource, desired: KubeObject, fields: string[], signal?: AbortSignal): Promise<void> {
  const ctx = internalContext(fieldManager, 'default', signal);
  try {
    const current = await res.get(ctx, kubernetesServiceName, {});
    if (sameContent(current, desired, fields)) return;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  await res.update(
    ctx,
    kubernetesServiceName,
    (current) => {
      if (!current) return desired;
      const next: KubeObject = {
        ...current,
        metadata: { ...current.metadata, labels: { ...(current.metadata.labels ?? {}), ...(desired.metadata.labels ?? {}) } },
      };
      for (const f of fields) next[f] = desired[f];
      return next;
    },
    { allowCreate: true },
  );
}

/** writes the Endpoints and EndpointSlice of the `kubernetes` Service to list exactly `masters` */
export async function reconcileMasterEndpoints(resolver: ResourceResolver, masters: MasterAddress[], signal?: AbortSignal): Promise<void> {
  const endpoints = resolver.lookup('', 'v1', 'endpoints');
  if (!endpoints) throw new Error('the registry serves no core/v1 endpoints');
  await reconcileObject(endpoints, desiredEndpoints(masters), ['subsets'], signal);
  const slices = resolver.lookup('discovery.k8s.io', 'v1', 'endpointslices');
  if (slices) await reconcileObject(slices, desiredEndpointSlice(masters), ['addressType', 'endpoints', 'ports'], signal);
}

/** keeps this replica's master lease alive and the `kubernetes` Endpoints in line with all leases */
export function masterEndpointsController(deps: ControllerDeps, opts: MasterEndpointsOptions = {}): Controller {
  const log = deps.log ?? defaultLogger;
  const leaseSeconds = opts.leaseSeconds ?? 15;
  const intervalMs = opts.intervalMs ?? 10_000;
  const { etcd } = deps;
  const self: MasterAddress = { ip: deps.advertiseAddress, port: deps.securePort };
  const ownKey = masterKey(deps.prefix, self);
  let leaseId = 0;

  /** renews our lease; takes a new one and re-writes the key when the lease or key is gone */
  async function refreshOwnKey(): Promise<void> {
    if (leaseId !== 0) {
      const ttl = await etcd.leaseKeepAliveOnce(leaseId).catch(() => 0);
      if (ttl > 0 && (await etcd.range({ key: ownKey })).kvs.length > 0) return;
      await etcd.leaseRevoke(leaseId).catch(() => undefined);
      leaseId = 0;
    }
    const lease = await etcd.leaseGrant(leaseSeconds);
    leaseId = lease.id;
    await etcd.put(ownKey, Buffer.from(JSON.stringify({ ...self, identity: deps.identity })), { lease: leaseId });
  }

  async function pass(signal: AbortSignal): Promise<void> {
    await refreshOwnKey();
    const masters = await listMasters(etcd, deps.prefix);
    // we have just written our own key: an empty list means etcd answered wrongly, and
    // erasing every address would cut in-cluster clients off
    if (masters.length === 0) throw new Error('no master leases listed; not touching the kubernetes endpoints');
    await reconcileMasterEndpoints(deps.resolver, masters, signal);
  }

  /** drops our key (only if it is still ours) and our address */
  async function removeOwn(): Promise<void> {
    if (leaseId === 0) return;
    await etcd.txn({
      compare: [{ key: ownKey, target: 'LEASE', result: 'EQUAL', value: leaseId }],
      success: [{ deleteRange: { key: ownKey } }],
      failure: [],
    });
    await etcd.leaseRevoke(leaseId).catch(() => undefined);
    leaseId = 0;
    // the last replica leaves its address: kube-apiserver never empties the endpoints either
    const masters = await listMasters(etcd, deps.prefix);
    if (masters.length > 0) await reconcileMasterEndpoints(deps.resolver, masters);
  }

  return {
    name: 'master-endpoints',
    async start(signal) {
      let retryMs = 200;
      while (!signal.aborted) {
        try {
          await pass(signal);
          retryMs = 200;
          await sleep(intervalMs, signal);
        } catch (err) {
          if (signal.aborted) break;
          log.warn('reconciling the kubernetes endpoints failed', { err: errorMessage(err) });
          await sleep(retryMs, signal);
          retryMs = Math.min(retryMs * 2, intervalMs);
        }
      }
      try {
        await removeOwn();
      } catch (err) {
        log.warn('removing our address from the kubernetes endpoints failed', { ip: deps.advertiseAddress, err: errorMessage(err) });
      }
    },
  };
}
