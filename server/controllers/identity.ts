// API server identity Leases, as kube-apiserver keeps them (the APIServerIdentity feature):
// every replica holds `kube-system/apiserver-<id>`, labelled
// `apiserver.kubernetes.io/identity=kube-apiserver` and `kubernetes.io/hostname=<host>`,
// holderIdentity = the replica's identity, leaseDurationSeconds 3600, renewed every 10 s. A
// garbage collector deletes identity Leases whose renewTime + leaseDurationSeconds has passed
// (replicas that went away), once an hour. `kubectl get leases -n kube-system -l
// apiserver.kubernetes.io/identity=kube-apiserver` lists the live replicas.
//
// The id. kube-apiserver's is "apiserver-" + the first 16 bytes of a SHA-256, in lower-case
// unpadded base32, over length-prefixed fields: the hostname and "kube-apiserver"; one
// apiserver per host is assumed, and a restart reuses its Lease. kapi replicas often share a
// host (`make cluster`, tests), so kapi hashes a third field, the replica's serving endpoint
// `<advertise address>:<port>`: each replica gets its own Lease, and a replica restarted at
// the same address still reuses its own.
//
// Expiry here compares the Lease's renewTime with the collector's wall clock, as kube's
// collector does; with an hour-long lease, clock skew between replicas does not matter.
// Unlike kube-apiserver (whose every instance runs the collector), kapi's runs leader-elected.

import { createHash } from 'node:crypto';
import os from 'node:os';
import { runLeaderElected } from './leader.js';
import { LeaseClient, leaseNamespace, leaseObject, microTime, type Lease } from './leases.js';
import { defaultLogger, type Controller, type ControllerDeps, type Logger } from './types.js';
import { errorMessage, isConflict, isNotFound, sleep } from './util.js';

export const identityLabel = 'apiserver.kubernetes.io/identity';
export const identityLabelValue = 'kube-apiserver';
export const hostnameLabel = 'kubernetes.io/hostname';
/** the selector kube-apiserver's identity lease collector lists with */
export const identityLeaseSelector = `${identityLabel}=${identityLabelValue}`;

/** kube's defaults (IdentityLeaseDurationSeconds, ...RenewIntervalPeriod, ...GCPeriod) */
const defaultLeaseDurationSeconds = 3600;
const defaultRenewIntervalMs = 10_000;
const defaultGcPeriodMs = 3600_000;
/** the lease controller's renewal jitter and retries (component-helpers' lease controller) */
const renewJitter = 0.04;
const maxUpdateRetries = 5;

const base32Alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 without padding */
function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += base32Alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += base32Alphabet[(value << (5 - bits)) & 31];
  return out;
}

/** each field as a big-endian uint16 length and its UTF-8 bytes (Go's cryptobyte builder) */
function lengthPrefixed(fields: string[]): Buffer {
  return Buffer.concat(
    fields.map((f) => {
      const bytes = Buffer.from(f, 'utf8');
      const len = Buffer.alloc(2);
      len.writeUInt16BE(bytes.length);
      return Buffer.concat([len, bytes]);
    }),
  );
}

/**
 * The identity Lease's name. Without `endpoint` it is exactly kube-apiserver's APIServerID for
 * `hostname`; kapi passes its serving endpoint so replicas sharing a host differ.
 */
export function apiserverIdentityLeaseName(hostname: string, endpoint?: string): string {
  const fields = [hostname, identityLabelValue];
  if (endpoint !== undefined) fields.push(endpoint);
  const hash = createHash('sha256').update(lengthPrefixed(fields)).digest();
  return `apiserver-${base32(hash.subarray(0, 16)).toLowerCase()}`;
}

/**
 * The serving endpoint that names a replica's identity Lease. The worker processes of one
 * replica (--workers) share its endpoint; each is its own apiserver towards etcd, so each
 * holds a Lease: worker k > 0 appends `#worker-k`, worker 0 keeps the replica's name. A worker
 * restarted in the same slot reuses its Lease; slots no longer run expire and are collected.
 */
export function servingEndpoint(advertiseAddress: string, securePort: number, workerIndex = 0): string {
  const endpoint = `${advertiseAddress.includes(':') ? `[${advertiseAddress}]` : advertiseAddress}:${securePort}`;
  return workerIndex > 0 ? `${endpoint}#worker-${workerIndex}` : endpoint;
}

export interface IdentityLeaseOptions {
  /** default: os.hostname() */
  hostname?: string;
  /** default 3600 */
  leaseDurationSeconds?: number;
  /** default 10 000 */
  renewIntervalMs?: number;
  log?: Logger;
}

/** renewTime + leaseDurationSeconds has passed (or either is missing) at `now` */
export function isIdentityLeaseExpired(lease: Lease, now: Date): boolean {
  const renewTime = lease.spec?.renewTime;
  const seconds = lease.spec?.leaseDurationSeconds;
  if (!renewTime || seconds === undefined) return true;
  const renewed = Date.parse(renewTime);
  return Number.isNaN(renewed) || renewed + seconds * 1000 < now.getTime();
}

/** This replica's identity Lease, created and then renewed until `signal` aborts. */
export function identityLeaseController(deps: ControllerDeps, opts: IdentityLeaseOptions = {}): Controller {
  const hostname = opts.hostname ?? os.hostname();
  const name = apiserverIdentityLeaseName(hostname, servingEndpoint(deps.advertiseAddress, deps.securePort, deps.workerIndex));
  const leaseDurationSeconds = opts.leaseDurationSeconds ?? defaultLeaseDurationSeconds;
  const renewIntervalMs = opts.renewIntervalMs ?? defaultRenewIntervalMs;
  const log = opts.log ?? deps.log ?? defaultLogger;
  const leases = new LeaseClient(deps.resolver, 'kube-apiserver');

  /** the labels (and, on a takeover, the holder) this replica asserts on every write */
  const withOurClaims = (lease: Lease): Lease => {
    const spec = { ...lease.spec };
    if (spec.holderIdentity !== deps.identity) {
      spec.holderIdentity = deps.identity;
      spec.leaseDurationSeconds = leaseDurationSeconds;
      spec.leaseTransitions = (spec.leaseTransitions ?? 0) + 1;
    }
    spec.renewTime = microTime();
    const labels = { ...lease.metadata.labels, [identityLabel]: identityLabelValue, [hostnameLabel]: hostname };
    return leaseObject({ ...lease.metadata, labels }, spec);
  };

  let latest: Lease | null = null;

  /** gets the Lease or creates it; `created` means the write just made is the renewal */
  const ensure = async (): Promise<{ lease: Lease; created: boolean }> => {
    try {
      return { lease: await leases.get(name), created: false };
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const fresh = leaseObject(
      { name, labels: { [identityLabel]: identityLabelValue, [hostnameLabel]: hostname } },
      { holderIdentity: deps.identity, leaseDurationSeconds, renewTime: microTime() },
    );
    return { lease: await leases.create(fresh), created: true };
  };

  const renew = async (base: Lease): Promise<Lease> => {
    let lastErr: unknown;
    for (let i = 0; i < maxUpdateRetries; i++) {
      try {
        return await leases.update(withOurClaims(base));
      } catch (err) {
        lastErr = err;
        if (isConflict(err)) base = (await ensure()).lease;
      }
    }
    throw lastErr;
  };

  const sync = async (): Promise<void> => {
    if (latest) {
      try {
        latest = await renew(latest);
        return;
      } catch (err) {
        log
          .v(2)
          .info('renewing the identity lease from the last version failed, reading it again', { lease: name, err: errorMessage(err) });
      }
    }
    const { lease, created } = await ensure();
    latest = created ? lease : await renew(lease);
  };

  return {
    name: 'apiserver-identity-lease',
    async start(signal) {
      log.info('keeping the apiserver identity lease', { lease: `${leaseNamespace}/${name}`, identity: deps.identity });
      // failures retry sooner, backing off up to the renew interval (at start kube-system
      // may not exist yet: bootstrap creates it concurrently)
      let failures = 0;
      while (!signal.aborted) {
        let waitMs = renewIntervalMs * (1 + Math.random() * renewJitter);
        try {
          await sync();
          failures = 0;
        } catch (err) {
          latest = null;
          failures++;
          waitMs = Math.min(waitMs, 100 * 2 ** failures);
          if (signal.aborted) break;
          if (isNotFound(err) && failures < 5) log.v(2).info('identity lease not created yet', { lease: name, err: errorMessage(err) });
          else log.warn('identity lease not renewed, retrying', { lease: name, err: errorMessage(err) });
        }
        await sleep(waitMs, signal);
      }
    },
  };
}

/** One collection pass: deletes the expired identity Leases, each checked again right before
 *  its delete (at that resourceVersion). Returns the names deleted. */
export async function collectExpiredIdentityLeases(leases: LeaseClient, log: Logger = defaultLogger): Promise<string[]> {
  const deleted: string[] = [];
  for (const listed of await leases.list(identityLeaseSelector)) {
    if (!isIdentityLeaseExpired(listed, new Date())) continue;
    const name = listed.metadata.name ?? '';
    try {
      const current = await leases.get(name);
      if (!isIdentityLeaseExpired(current, new Date())) continue;
      await leases.delete(name, current.metadata.resourceVersion);
      deleted.push(name);
      log.info('deleted an expired apiserver identity lease', {
        lease: `${leases.namespace}/${name}`,
        holder: current.spec?.holderIdentity,
      });
    } catch (err) {
      // gone already, or renewed between the read and the delete: both are fine
      if (!isNotFound(err) && !isConflict(err))
        log.warn('deleting an expired identity lease failed', { lease: name, err: errorMessage(err) });
    }
  }
  return deleted;
}

export interface IdentityLeaseGCOptions {
  /** default 3 600 000 */
  gcPeriodMs?: number;
  /** the collector's own leader election */
  leaseDurationSeconds?: number;
  retryPeriodMs?: number;
  log?: Logger;
}

/** Collects expired identity Leases once at start and every period, on the elected replica. */
export function identityLeaseGarbageCollector(deps: ControllerDeps, opts: IdentityLeaseGCOptions = {}): Controller {
  const log = opts.log ?? deps.log ?? defaultLogger;
  const gcPeriodMs = opts.gcPeriodMs ?? defaultGcPeriodMs;
  const leases = new LeaseClient(deps.resolver, 'kube-apiserver');
  return {
    name: 'apiserver-identity-lease-gc',
    start(signal) {
      return runLeaderElected(
        'apiserver-identity-lease-gc',
        {
          resolver: deps.resolver,
          identity: deps.identity,
          signal,
          log,
          leaseDurationSeconds: opts.leaseDurationSeconds,
          retryPeriodMs: opts.retryPeriodMs,
        },
        async (leading) => {
          while (!leading.aborted) {
            try {
              await collectExpiredIdentityLeases(leases, log);
            } catch (err) {
              if (!leading.aborted) log.warn('identity lease collection failed', { err: errorMessage(err) });
            }
            await sleep(gcPeriodMs, leading);
          }
        },
      );
    },
  };
}
