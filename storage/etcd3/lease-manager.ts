// Leases for objects written with a TTL (Events). A lease grant is a raft round trip, so a
// burst of writes with the same TTL shares one lease, as kube-apiserver's lease manager does
// (k8s.io/apiserver pkg/storage/etcd3/lease_manager.go): a lease is granted for the TTL plus
// a reuse window, and handed out again while it still outlives the TTL and does not outlive
// it by more than the window. So every object lives at least its TTL and at most TTL + window.
// Every lease carries a TTL in etcd, so a lease nobody attached anything to (a failed write)
// expires by itself: at most one such lease per window, never a growing pile.

import type { EtcdClient } from '../etcd/types.js';

export interface LeaseManagerOptions {
  /** --lease-reuse-duration-seconds: the longest window one lease is handed out in */
  reuseDurationSeconds?: number;
  /** the window is also at most this fraction of the TTL (kube: 5%), so short TTLs stay
   *  close to what was asked for */
  reuseDurationFraction?: number;
  /** objects one lease may carry before a fresh one is granted (kube: 1000) */
  maxObjectsPerLease?: number;
  /** the clock, in milliseconds (tests move it) */
  now?: () => number;
}

export const DEFAULT_LEASE_REUSE_DURATION_SECONDS = 60;
const DEFAULT_REUSE_FRACTION = 0.05;
const DEFAULT_MAX_OBJECTS_PER_LEASE = 1000;

export class LeaseManager {
  private readonly reuseSeconds: number;
  private readonly reuseFraction: number;
  private readonly maxObjects: number;
  private readonly now: () => number;
  private current: { id: number; expiresAtMs: number } | undefined;
  private attached = 0;
  /** grants are serialized, so writers arriving during a grant reuse its lease */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly client: EtcdClient,
    opts: LeaseManagerOptions = {},
  ) {
    this.reuseSeconds = Math.max(0, opts.reuseDurationSeconds ?? DEFAULT_LEASE_REUSE_DURATION_SECONDS);
    this.reuseFraction = opts.reuseDurationFraction ?? DEFAULT_REUSE_FRACTION;
    this.maxObjects = opts.maxObjectsPerLease ?? DEFAULT_MAX_OBJECTS_PER_LEASE;
    this.now = opts.now ?? Date.now;
  }

  /** the reuse window for a TTL: the smaller of the configured seconds and the fraction of
   *  the TTL, in whole seconds */
  reuseWindowSeconds(ttlSeconds: number): number {
    return Math.max(0, Math.min(this.reuseSeconds, Math.floor(this.reuseFraction * ttlSeconds)));
  }

  /** a lease that keeps an object written now for at least `ttlSeconds` */
  getLease(ttlSeconds: number): Promise<number> {
    const requestedAt = this.now();
    const next = this.queue.then(() => this.leaseFor(ttlSeconds, requestedAt));
    // a failed grant must not fail the writers queued behind it
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** the lease `id` turned out to be gone (etcd lost or revoked it): never hand it out again */
  forget(id: number): void {
    if (this.current?.id === id) this.current = undefined;
  }

  private async leaseFor(ttlSeconds: number, nowMs: number): Promise<number> {
    const window = this.reuseWindowSeconds(ttlSeconds);
    // every request counts toward the lease's load, whether its write succeeds or not
    this.attached++;
    const prev = this.current;
    if (prev) {
      const outlivesTtl = nowMs + ttlSeconds * 1000 < prev.expiresAtMs;
      // (>=, where kube has >: its clock is in nanoseconds, ours in milliseconds, and writes
      // within one millisecond must share the lease too)
      const notTooLong = nowMs + (ttlSeconds + window) * 1000 >= prev.expiresAtMs;
      if (outlivesTtl && notTooLong && this.attached <= this.maxObjects) return prev.id;
    }
    const granted = ttlSeconds + window;
    const lease = await this.client.leaseGrant(granted);
    this.current = { id: lease.id, expiresAtMs: nowMs + granted * 1000 };
    this.attached = 1;
    return lease.id;
  }
}
