// Leader election among kapi replicas, so that a controller runs on one replica at a time.
//
// Chosen mechanism: one key per controller, `<prefix>/kapi-leader/<name>`, created with an
// etcd txn (`create_revision == 0` then put) and bound to an etcd lease that the leader keeps
// alive. Not a coordination.k8s.io/v1 Lease object written through the registry, because:
// - etcd's lease TTL runs on etcd's clock: replicas' clocks never have to agree, whereas a
//   Lease object's renewTime is compared against each contender's own clock;
// - a leader that stops cleanly revokes its lease and the key vanishes at once, so another
//   replica takes over on the watch event instead of after a full lease duration;
// - it needs nothing from the registry (the coordination group, admission, the watch cache),
//   so it works while those are still starting and cannot be broken by a user editing a
//   Lease object.
// The price: `kubectl get lease -n kube-system` does not show who leads kapi's controllers.
//
// Safety: the leader steps down (aborts its work) when it has not renewed within two thirds of
// the TTL, before etcd can hand the key to someone else. The work must still be idempotent:
// a leader cut off from etcd cannot be stopped from outside.

import type { EtcdClient, EtcdWatcher, KeyValue } from '../../storage/etcd/types.js';
import { defaultLogger, normalizePrefix, type Logger } from './types.js';
import { errorMessage, sleep } from './util.js';

export interface LeaderElectionDeps {
  etcd: EtcdClient;
  prefix: string;
  identity: string;
  /** stops contending (and leading) */
  signal: AbortSignal;
  /** the etcd lease TTL: how long a crashed leader blocks the others. Default 15. */
  leaseDurationSeconds?: number;
  /** the pause after a failed attempt or after the work ended on its own. Default 2000. */
  retryPeriodMs?: number;
  /** told about every gain (true) and loss (false) of leadership */
  onLeadershipChange?: (leading: boolean) => void;
  log?: Logger;
}

export interface LeaderRecord {
  holderIdentity: string;
  acquireTime: string;
  leaseDurationSeconds: number;
}

export function leaderKey(prefix: string, name: string): Buffer {
  return Buffer.from(`${normalizePrefix(prefix)}/kapi-leader/${name}`);
}

/** who holds leadership of `name` now, or null */
export async function readLeader(etcd: EtcdClient, prefix: string, name: string): Promise<LeaderRecord | null> {
  const resp = await etcd.range({ key: leaderKey(prefix, name) });
  const kv = resp.kvs[0];
  return kv ? decodeRecord(kv) : null;
}

function decodeRecord(kv: KeyValue): LeaderRecord | null {
  try {
    return JSON.parse(kv.value.toString('utf8')) as LeaderRecord;
  } catch {
    return null;
  }
}

interface Term {
  leaseId: number;
  /** the revision at which the key became ours */
  revision: number;
  /** local time just before the acquiring request was sent: the lease is at least this fresh */
  renewedAt: number;
}

/**
 * Contends for leadership of `name` until `deps.signal` aborts; while leading, runs `work`
 * with a signal that aborts when leadership is lost or contention stops. When `work` ends on
 * its own (returns or throws) leadership is released and contended for again after a retry
 * period. Resolves once `deps.signal` has aborted and `work` has returned.
 */
export async function runLeaderElected(
  name: string,
  deps: LeaderElectionDeps,
  work: (signal: AbortSignal) => Promise<void>,
): Promise<void> {
  const log = deps.log ?? defaultLogger;
  const ttlSeconds = deps.leaseDurationSeconds ?? 15;
  const retryMs = deps.retryPeriodMs ?? 2000;
  const key = leaderKey(deps.prefix, name);
  const outer = deps.signal;

  while (!outer.aborted) {
    let attempt: { term: Term } | { heldAtRevision: number };
    try {
      attempt = await tryAcquire(deps.etcd, key, deps.identity, ttlSeconds);
    } catch (err) {
      log.warn('leader election attempt failed', { lock: name, err: errorMessage(err) });
      await sleep(retryMs, outer);
      continue;
    }
    if ('heldAtRevision' in attempt) {
      // the watch reports the key's deletion; the timeout only bounds a missed event
      await waitForVacancy(deps.etcd, key, attempt.heldAtRevision, ttlSeconds * 1000, outer);
      continue;
    }
    const endedByItself = await lead(name, deps, attempt.term, ttlSeconds, work, log);
    if (endedByItself) await sleep(retryMs, outer);
  }
}

async function tryAcquire(
  etcd: EtcdClient,
  key: Buffer,
  identity: string,
  ttlSeconds: number,
): Promise<{ term: Term } | { heldAtRevision: number }> {
  const renewedAt = Date.now();
  const lease = await etcd.leaseGrant(ttlSeconds);
  const record: LeaderRecord = {
    holderIdentity: identity,
    acquireTime: new Date().toISOString(),
    leaseDurationSeconds: ttlSeconds,
  };
  let resp;
  try {
    resp = await etcd.txn({
      compare: [{ key, target: 'CREATE', result: 'EQUAL', value: 0 }],
      success: [{ put: { key, value: Buffer.from(JSON.stringify(record)), lease: lease.id } }],
      failure: [{ range: { key } }],
    });
  } catch (err) {
    await etcd.leaseRevoke(lease.id).catch(() => undefined);
    throw err;
  }
  if (resp.succeeded) return { term: { leaseId: lease.id, revision: resp.header.revision, renewedAt } };
  await etcd.leaseRevoke(lease.id).catch(() => undefined);
  return { heldAtRevision: resp.header.revision };
}

/** resolves when the key is deleted after `revision` (or the watch ends), after `maxWaitMs`,
 *  or on abort */
async function waitForVacancy(
  etcd: EtcdClient,
  key: Buffer,
  revision: number,
  maxWaitMs: number,
  signal: AbortSignal,
): Promise<void> {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  let watcher: EtcdWatcher | undefined;
  try {
    watcher = etcd.watch({ key, startRevision: revision + 1 }, (msg) => {
      if (msg.kind === 'canceled' || (msg.kind === 'events' && msg.events.some((e) => e.type === 'DELETE'))) stop.abort();
    });
    await sleep(maxWaitMs, stop.signal);
  } finally {
    watcher?.cancel();
    signal.removeEventListener('abort', onAbort);
  }
}

/** runs `work` while the term lasts; returns true when `work` ended on its own */
async function lead(
  name: string,
  deps: LeaderElectionDeps,
  term: Term,
  ttlSeconds: number,
  work: (signal: AbortSignal) => Promise<void>,
  log: Logger,
): Promise<boolean> {
  const { etcd } = deps;
  const key = leaderKey(deps.prefix, name);
  const termCtl = new AbortController();
  const stepDown = (why: string) => {
    if (termCtl.signal.aborted) return;
    if (!deps.signal.aborted) log.warn('lost leadership', { lock: name, identity: deps.identity, why });
    termCtl.abort();
  };
  const onOuterAbort = () => stepDown('stopping');
  deps.signal.addEventListener('abort', onOuterAbort, { once: true });

  // Someone deleting or overwriting the key (lease expired, an operator) ends the term at once.
  const watcher = etcd.watch({ key, startRevision: term.revision + 1 }, (msg) => {
    if (msg.kind !== 'events') return;
    for (const e of msg.events) {
      if (e.type === 'DELETE') stepDown('leader key deleted');
      else if (e.kv.lease !== term.leaseId) stepDown('leader key taken over');
    }
  });

  log.info('became leader', { lock: name, identity: deps.identity });
  deps.onLeadershipChange?.(true);
  let endedByItself = false;
  const working = (async () => {
    try {
      await work(termCtl.signal);
    } catch (err) {
      log.error('leader-elected work failed', { lock: name, err: errorMessage(err) });
    }
    if (!termCtl.signal.aborted) {
      endedByItself = true;
      stepDown('controller returned');
    }
  })();

  await keepAlive(etcd, term, ttlSeconds, termCtl.signal, stepDown);
  await working;
  watcher.cancel();
  deps.signal.removeEventListener('abort', onOuterAbort);
  deps.onLeadershipChange?.(false);
  // Revoking deletes the key, so the next leader starts on the watch event; only after our
  // work has returned, so that the two never overlap on a clean handover.
  await etcd.leaseRevoke(term.leaseId).catch(() => undefined);
  return endedByItself;
}

/** renews the lease every TTL/3 until `signal` aborts; steps down when renewal is overdue,
 *  even while a renewal request hangs */
async function keepAlive(
  etcd: EtcdClient,
  term: Term,
  ttlSeconds: number,
  signal: AbortSignal,
  stepDown: (why: string) => void,
): Promise<void> {
  const renewEveryMs = (ttlSeconds * 1000) / 3;
  const renewDeadlineMs = (ttlSeconds * 1000 * 2) / 3;
  const retryAfterFailureMs = Math.min(500, renewEveryMs);
  let lastError = '';
  let deadline: NodeJS.Timeout | undefined;
  const armDeadline = (renewedAt: number) => {
    clearTimeout(deadline);
    deadline = setTimeout(
      () => stepDown(`lease not renewed in time${lastError ? `: ${lastError}` : ''}`),
      Math.max(0, renewedAt + renewDeadlineMs - Date.now()),
    );
  };
  armDeadline(term.renewedAt);
  try {
    // renewals are scheduled from the last success, so a slow acquisition renews at once
    let lastRenewal = term.renewedAt;
    let failing = false;
    while (!signal.aborted) {
      await sleep(failing ? retryAfterFailureMs : Math.max(0, lastRenewal + renewEveryMs - Date.now()), signal);
      if (signal.aborted) return;
      const sentAt = Date.now();
      try {
        const ttlLeft = await untilAborted(etcd.leaseKeepAliveOnce(term.leaseId), signal);
        if (ttlLeft === undefined) return;
        if (ttlLeft <= 0) {
          stepDown('lease expired');
          return;
        }
        lastError = '';
        lastRenewal = sentAt;
        failing = false;
        armDeadline(sentAt);
      } catch (err) {
        lastError = errorMessage(err);
        failing = true;
      }
    }
  } finally {
    clearTimeout(deadline);
  }
}

/** the promise's value, or undefined as soon as `signal` aborts */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.resolve(undefined);
  }
  return new Promise<T | undefined>((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
