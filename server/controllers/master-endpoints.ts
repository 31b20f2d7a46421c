// The `kubernetes` Service's Endpoints and EndpointSlice list every live replica, as
// kube-apiserver's lease endpoint reconciler keeps them: each replica holds a key
// `<prefix>/masterleases/<ip>` bound to an etcd lease it keeps alive, and every replica
// periodically rewrites the Endpoints to the set of IPs that have a key. A replica that dies
// stops renewing; its key expires and the next pass of any replica drops its address. A
// replica stopping cleanly removes its key and its address at once.
//
// kube-apiserver assumes every replica serves on the same port; so do we (the port written
// is this replica's securePort).

import type { EtcdClient } from '../../storage/etcd/types.js';
import { prefixEnd } from '../../storage/etcd/types.js';
import type { KubeObject } from '../../storage/interface.js';
import type { RESTResource, ResourceResolver } from '../registry/rest.js';
import { kubernetesServiceName } from './bootstrap.js';
import { ipFamily } from './service-ip.js';
import { defaultLogger, normalizePrefix, type Controller, type ControllerDeps } from './types.js';
import { errorMessage, internalContext, isNotFound, jsonEqual, sleep } from './util.js';

const fieldManager = 'kube-apiserver';

export interface MasterEndpointsOptions {
  /** TTL of this replica's key. Default 15 s, as kube-apiserver's master lease. */
  leaseSeconds?: number;
  /** how often the key is renewed and the Endpoints reconciled. Default 10 s. */
  intervalMs?: number;
}

export function masterLeaseKeyPrefix(prefix: string): Buffer {
  return Buffer.from(`${normalizePrefix(prefix)}/masterleases/`);
}

function endpointPorts(securePort: number) {
  return [{ name: 'https', port: securePort, protocol: 'TCP' }];
}

export function desiredEndpoints(ips: string[], securePort: number): KubeObject {
  return {
    kind: 'Endpoints',
    apiVersion: 'v1',
    metadata: {
      name: kubernetesServiceName,
      namespace: 'default',
      // the EndpointSlice is written here, so the mirroring controller must leave it alone
      labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' },
    },
    subsets: [{ addresses: ips.map((ip) => ({ ip })), ports: endpointPorts(securePort) }],
  };
}

export function desiredEndpointSlice(ips: string[], securePort: number): KubeObject {
  const addressType = ips.length > 0 && ips.every((ip) => ipFamily(ip) === 'IPv6') ? 'IPv6' : 'IPv4';
  return {
    kind: 'EndpointSlice',
    apiVersion: 'discovery.k8s.io/v1',
    metadata: {
      name: kubernetesServiceName,
      namespace: 'default',
      labels: { 'kubernetes.io/service-name': kubernetesServiceName },
    },
    addressType,
    endpoints: ips
      .filter((ip) => ipFamily(ip) === addressType)
      .map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    ports: endpointPorts(securePort),
  };
}

/** the IPs of every replica whose master lease key is alive, sorted */
export async function listMasterIPs(etcd: EtcdClient, prefix: string): Promise<string[]> {
  const key = masterLeaseKeyPrefix(prefix);
  const resp = await etcd.range({ key, rangeEnd: prefixEnd(key), keysOnly: true });
  return resp.kvs.map((kv) => kv.key.subarray(key.length).toString('utf8')).sort();
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

/** writes the Endpoints and EndpointSlice of the `kubernetes` Service to list exactly `ips` */
export async function reconcileMasterEndpoints(
  resolver: ResourceResolver,
  ips: string[],
  securePort: number,
  signal?: AbortSignal,
): Promise<void> {
  const endpoints = resolver.lookup('', 'v1', 'endpoints');
  if (!endpoints) throw new Error('the registry serves no core/v1 endpoints');
  await reconcileObject(endpoints, desiredEndpoints(ips, securePort), ['subsets'], signal);
  const slices = resolver.lookup('discovery.k8s.io', 'v1', 'endpointslices');
  if (slices) await reconcileObject(slices, desiredEndpointSlice(ips, securePort), ['addressType', 'endpoints', 'ports'], signal);
}

/** keeps this replica's master lease alive and the `kubernetes` Endpoints in line with all leases */
export function masterEndpointsController(deps: ControllerDeps, opts: MasterEndpointsOptions = {}): Controller {
  const log = deps.log ?? defaultLogger;
  const leaseSeconds = opts.leaseSeconds ?? 15;
  const intervalMs = opts.intervalMs ?? 10_000;
  const { etcd } = deps;
  const ownKey = Buffer.concat([masterLeaseKeyPrefix(deps.prefix), Buffer.from(deps.advertiseAddress)]);
  let leaseId = 0;

  /** renews our lease, or takes a new one and re-writes the key when it expired */
  async function refreshOwnKey(): Promise<void> {
    if (leaseId !== 0) {
      const ttl = await etcd.leaseKeepAliveOnce(leaseId).catch(() => 0);
      if (ttl > 0) {
        const held = await etcd.range({ key: ownKey });
        // another replica on the same IP may have re-written the key under its own lease;
        // either way the address is listed
        if (held.kvs.length > 0) return;
      }
    }
    const lease = await etcd.leaseGrant(leaseSeconds);
    leaseId = lease.id;
    const value = JSON.stringify({ ip: deps.advertiseAddress, identity: deps.identity });
    await etcd.put(ownKey, Buffer.from(value), { lease: leaseId });
  }

  async function pass(signal: AbortSignal): Promise<void> {
    await refreshOwnKey();
    const ips = await listMasterIPs(etcd, deps.prefix);
    // we have just written our own key: an empty list means etcd answered wrongly, and
    // erasing every address would cut in-cluster clients off
    if (ips.length === 0) throw new Error('no master leases listed; not touching the kubernetes endpoints');
    await reconcileMasterEndpoints(deps.resolver, ips, deps.securePort, signal);
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
    const ips = await listMasterIPs(etcd, deps.prefix);
    if (ips.length > 0) await reconcileMasterEndpoints(deps.resolver, ips, deps.securePort);
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
