// Leader election among kapi replicas on coordination.k8s.io/v1 Lease objects, so that each
// controller loop runs on one replica at a time and `kubectl get leases -n kube-system` shows
// who runs it. It follows client-go's leaderelection with a LeaseLock:
// - one Lease per controller, `kube-system/kapi-<name>`; spec.holderIdentity names the leader,
//   acquireTime/renewTime are MicroTimes, leaseDurationSeconds the term a renewal buys,
//   leaseTransitions counts changes of holder;
// - every write is an update at the resourceVersion last read (or a create), so of two
//   replicas racing for the same Lease exactly one wins and the other gets a Conflict;
// - defaults: lease duration 15 s, renew deadline 10 s, retry period 2 s (jittered by 1.2
//   while acquiring);
// - a graceful stop releases the Lease (holderIdentity "", leaseDurationSeconds 1, as
//   client-go's ReleaseOnCancel writes it), so another replica takes over at once.
//
// Time. A contender judges expiry as client-go does: by its own monotonic clock, counting the
// holder's leaseDurationSeconds from the moment *it* saw the Lease change, not by comparing
// the Lease's renewTime with its wall clock. Replicas' wall clocks may then disagree by any
// amount (they do on real deployments) without a contender taking a live Lease; only clock
// *rates* must roughly agree. renewTime and acquireTime are still written (wall clock, UTC)
// because people and tools read them; kube accepts that those may be skewed between holders.
//
// Safety (no two replicas ever run the same controller). A leader aborts its work when it
// has not renewed successfully within the renew deadline, counted from the moment it *sent*
// its last successful renewal. Every other contender saw that renewal no earlier than it was
// committed, so it cannot take the Lease before sent + leaseDuration. With renew deadline <
// lease duration the leader stops first, and the difference (5 s by default) is the time the
// aborted work has to return. Non-leaders also watch the Lease, so they see each renewal (and
// a release) as it happens rather than at their next poll: a crashed leader is replaced about
// one lease duration after its last renewal.

import type { Watch } from '../../storage/interface.js';
import type { ResourceResolver } from '../registry/rest.js';
import { LeaseClient, leaseNamespace, leaseObject, microTime, type Lease, type LeaseSpec } from './leases.js';
import { defaultLogger, type Logger } from './types.js';
import { errorMessage, isAlreadyExists, isConflict, isNotFound, sleep } from './util.js';

export interface LeaderElectionDeps {
  /** the registry, through which the Lease is read and written */
  resolver: ResourceResolver;
  /** unique per replica process: it is the Lease's holderIdentity */
  identity: string;
  /** stops contending (and leading) */
  signal: AbortSignal;
  /** how long a renewal holds the Lease against others. Default 15. */
  leaseDurationSeconds?: number;
  /** a leader that has not renewed for this long stops its work. Default 10 000, or two
   *  thirds of leaseDurationSeconds when that is given. Must be below the lease duration. */
  renewDeadlineMs?: number;
  /** the pause between attempts to acquire or renew. Default 2000. */
  retryPeriodMs?: number;
  /** told about every gain (true) and loss (false) of leadership */
  onLeadershipChange?: (leading: boolean) => void;
  log?: Logger;
}

/** client-go's JitterFactor for acquisition attempts */
const jitterFactor = 1.2;
/** the pause between attempts while kube-system does not exist yet */
const namespaceRetryMs = 100;

/** the Lease (in kube-system) that elects the leader of controller `name` */
export function leaderLeaseName(name: string): string {
  return `kapi-${name}`;
}

export interface LeaderRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions: number;
}

/** who holds leadership of `name` according to its Lease, or null (no Lease, or released) */
export async function readLeader(resolver: ResourceResolver, name: string): Promise<LeaderRecord | null> {
  let lease: Lease;
  try {
    lease = await new LeaseClient(resolver, 'kapi-leader-election').get(leaderLeaseName(name));
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
  const spec = lease.spec ?? {};
  if (!spec.holderIdentity) return null;
  return {
    holderIdentity: spec.holderIdentity,
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    acquireTime: spec.acquireTime,
    renewTime: spec.renewTime,
    leaseTransitions: spec.leaseTransitions ?? 0,
  };
}

interface Timing {
  leaseDurationSeconds: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

function timingOf(deps: LeaderElectionDeps): Timing {
  const leaseDurationSeconds = deps.leaseDurationSeconds ?? 15;
  const renewDeadlineMs =
    deps.renewDeadlineMs ?? (deps.leaseDurationSeconds === undefined ? 10_000 : Math.floor((leaseDurationSeconds * 2000) / 3));
  const retryPeriodMs = deps.retryPeriodMs ?? 2000;
  if (!Number.isInteger(leaseDurationSeconds) || leaseDurationSeconds < 1) {
    throw new Error(`leader election: leaseDurationSeconds must be a positive integer, not ${leaseDurationSeconds}`);
  }
  if (renewDeadlineMs >= leaseDurationSeconds * 1000) {
    throw new Error('leader election: the renew deadline must be shorter than the lease duration');
  }
  if (renewDeadlineMs <= retryPeriodMs * jitterFactor) {
    throw new Error(`leader election: the renew deadline must be longer than ${jitterFactor} retry periods`);
  }
  return { leaseDurationSeconds, renewDeadlineMs, retryPeriodMs };
}

/** milliseconds on a clock that never jumps */
const monotonicNow = (): number => performance.now();

/**
 * Contends for leadership of `name` until `deps.signal` aborts; while leading, runs `work`
 * with a signal that aborts when leadership is lost or contention stops. When `work` ends on
 * its own (returns or throws) leadership is released and contended for again after a retry
 * period. Resolves once `deps.signal` has aborted, `work` has returned and the Lease has been
 * released.
 */
export async function runLeaderElected(
  name: string,
  deps: LeaderElectionDeps,
  work: (signal: AbortSignal) => Promise<void>,
): Promise<void> {
  const timing = timingOf(deps);
  const log = deps.log ?? defaultLogger;
  const elector = new Elector(new LeaseClient(deps.resolver, 'kapi-leader-election'), leaderLeaseName(name), deps.identity, timing, log);
  const outer = deps.signal;
  while (!outer.aborted) {
    const sentAt = await elector.acquire(outer);
    if (sentAt === null) return;
    const endedByItself = await lead(elector, deps, timing, sentAt, work, log);
    if (endedByItself) await sleep(timing.retryPeriodMs, outer);
  }
}

/** One contender's view of one Lease: client-go's LeaderElector, minus the callbacks. */
class Elector {
  private observed: { lease: Lease; raw: string } | null = null;
  /** when (monotonic) the observed spec last changed */
  private observedAt = 0;

  constructor(
    private readonly leases: LeaseClient,
    readonly leaseName: string,
    readonly identity: string,
    private readonly timing: Timing,
    private readonly log: Logger,
  ) {}

  get describe(): string {
    return `${leaseNamespace}/${this.leaseName}`;
  }

  /** the last attempt failed because the Lease's namespace does not exist yet */
  private namespaceMissing = false;

  /** the last observed holder is us (client-go's IsLeader) */
  get isLeader(): boolean {
    return this.observed?.lease.spec?.holderIdentity === this.identity;
  }

  get observedHolder(): string {
    return this.observed?.lease.spec?.holderIdentity ?? '';
  }

  /** ms until the observed Lease expires for us (negative once it has) */
  private validForMs(now: number): number {
    const seconds = this.observed?.lease.spec?.leaseDurationSeconds ?? 0;
    return this.observedAt + seconds * 1000 - now;
  }

  /** ms until another holder's Lease expires (<= 0: expired), or null when no one else holds it */
  heldByOtherForMs(): number | null {
    const holder = this.observedHolder;
    if (!holder || holder === this.identity) return null;
    return this.validForMs(monotonicNow());
  }

  private observe(lease: Lease): void {
    const raw = JSON.stringify(lease.spec ?? {});
    if (this.observed?.raw !== raw) this.observedAt = monotonicNow();
    this.observed = { lease, raw };
  }

  /** a watch event: only ever moves the observation forward */
  private observeFromWatch(lease: Lease): void {
    const seen = this.observed?.lease.metadata.resourceVersion;
    const incoming = lease.metadata.resourceVersion;
    if (seen && incoming && isOlderOrSame(incoming, seen)) return;
    this.observe(lease);
  }

  /**
   * One step of client-go's tryAcquireOrRenew. Returns true when the Lease now names us with
   * a fresh renewTime.
   */
  async tryAcquireOrRenew(): Promise<boolean> {
    const now = microTime();
    const desired: LeaseSpec = {
      holderIdentity: this.identity,
      leaseDurationSeconds: this.timing.leaseDurationSeconds,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: 0,
    };

    // the leader's fast path: update the version it wrote last, without reading first
    if (this.observed && this.isLeader && this.validForMs(monotonicNow()) > 0) {
      const old = this.observed.lease;
      try {
        this.observe(
          await this.leases.update(
            withSpec(old, { ...desired, acquireTime: old.spec?.acquireTime, leaseTransitions: old.spec?.leaseTransitions ?? 0 }),
          ),
        );
        return true;
      } catch (err) {
        if (!isConflict(err))
          this.log.warn('renewing the lease failed, reading it again', { lease: this.describe, err: errorMessage(err) });
      }
    }

    let current: Lease;
    try {
      current = await this.leases.get(this.leaseName);
    } catch (err) {
      if (!isNotFound(err)) {
        this.log.warn('reading the lease failed', { lease: this.describe, err: errorMessage(err) });
        return false;
      }
      try {
        this.observe(await this.leases.create(leaseObject({ name: this.leaseName }, desired)));
        return true;
      } catch (createErr) {
        // NotFound: kube-system does not exist yet (bootstrap creates it at start)
        this.namespaceMissing = isNotFound(createErr);
        if (isNotFound(createErr)) this.log.v(2).info('creating the lease failed', { lease: this.describe, err: errorMessage(createErr) });
        else if (!isAlreadyExists(createErr))
          this.log.warn('creating the lease failed', { lease: this.describe, err: errorMessage(createErr) });
        return false;
      }
    }

    this.observe(current);
    const spec = current.spec ?? {};
    if (spec.holderIdentity && !this.isLeader && this.validForMs(monotonicNow()) > 0) return false;

    const next: LeaseSpec = this.isLeader
      ? { ...desired, acquireTime: spec.acquireTime, leaseTransitions: spec.leaseTransitions ?? 0 }
      : { ...desired, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 };
    try {
      this.observe(await this.leases.update(withSpec(current, next)));
      return true;
    } catch (err) {
      // a Conflict: someone else wrote the Lease since we read it (most likely won it)
      if (!isConflict(err)) this.log.warn('updating the lease failed', { lease: this.describe, err: errorMessage(err) });
      return false;
    }
  }

  /**
   * Tries until it holds the Lease or `signal` aborts. Returns the monotonic time at which the
   * successful attempt started (the renew deadline counts from there), or null on abort.
   */
  async acquire(signal: AbortSignal): Promise<number | null> {
    let wake = new AbortController();
    const watching = this.watchLease(signal, () => wake.abort());
    try {
      while (!signal.aborted) {
        const startedAt = monotonicNow();
        const ok = await untilAborted(this.tryAcquireOrRenew(), signal);
        if (ok === undefined) return null;
        if (ok) {
          this.log.info('became leader', { lease: this.describe, identity: this.identity });
          return startedAt;
        }
        let waitMs = this.timing.retryPeriodMs * (1 + Math.random() * jitterFactor);
        // at a cluster's first start kube-system appears within moments (bootstrap makes it):
        // do not leave every controller idle for a retry period (pods would be refused until
        // the service account controller runs)
        if (this.namespaceMissing) waitMs = Math.min(waitMs, namespaceRetryMs);
        this.namespaceMissing = false;
        // try right when the holder's term ends rather than up to a retry period later
        const heldFor = this.heldByOtherForMs();
        if (heldFor !== null) waitMs = Math.min(waitMs, Math.max(heldFor, 0) + 1);
        if (!wake.signal.aborted) await sleepUnlessAborted(waitMs, signal, wake.signal);
        wake = new AbortController();
      }
      return null;
    } finally {
      await watching.stop();
    }
  }

  /** Feeds the observation from a watch on the Lease (so that a contender sees each renewal
   *  when it happens) and calls `onVacant` when the Lease is released or deleted. */
  private watchLease(signal: AbortSignal, onVacant: () => void): { stop(): Promise<void> } {
    const ctl = new AbortController();
    const onAbort = () => ctl.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    const loop = (async () => {
      while (!ctl.signal.aborted) {
        let watch: Watch | undefined;
        const stopWatch = () => watch?.stop();
        ctl.signal.addEventListener('abort', stopWatch, { once: true });
        try {
          const opening = this.leases.watch(this.leaseName, ctl.signal);
          watch = await untilAborted(opening, ctl.signal);
          if (!watch) {
            void opening.then(
              (w) => w.stop(),
              () => undefined,
            );
            break;
          }
          for await (const ev of watch) {
            if (ev.type === 'ADDED' || ev.type === 'MODIFIED') {
              const lease = ev.object as Lease;
              this.observeFromWatch(lease);
              if (!lease.spec?.holderIdentity) onVacant();
            } else if (ev.type === 'DELETED') {
              onVacant();
            } else if (ev.type === 'ERROR') {
              break;
            }
          }
        } catch (err) {
          if (!ctl.signal.aborted) this.log.v(2).info('watching the lease failed', { lease: this.describe, err: errorMessage(err) });
        } finally {
          watch?.stop();
          ctl.signal.removeEventListener('abort', stopWatch);
        }
        await sleep(this.timing.retryPeriodMs, ctl.signal);
      }
    })();
    return {
      async stop() {
        ctl.abort();
        signal.removeEventListener('abort', onAbort);
        await loop;
      },
    };
  }

  /** Gives the Lease up if we hold it (client-go's release): holderIdentity "" and a 1 s
   *  duration, so that others take it without waiting. */
  async release(): Promise<void> {
    for (let attempt = 0; attempt < 2; attempt++) {
      if (!this.observed || !this.isLeader) return;
      const old = this.observed.lease;
      const now = microTime();
      const spec: LeaseSpec = {
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: old.spec?.leaseTransitions ?? 0,
      };
      try {
        this.observe(await this.leases.update(withSpec(old, spec)));
        this.log.info('released the lease', { lease: this.describe, identity: this.identity });
        return;
      } catch (err) {
        if (!isConflict(err)) throw err;
        this.observe(await this.leases.get(this.leaseName));
      }
    }
  }
}

function withSpec(lease: Lease, spec: LeaseSpec): Lease {
  return leaseObject(lease.metadata, spec);
}

/** resourceVersions are opaque to clients, but kapi's are etcd revisions */
function isOlderOrSame(a: string, b: string): boolean {
  try {
    return BigInt(a) <= BigInt(b);
  } catch {
    return false;
  }
}

/**
 * Runs `work` while we lead. Renews every retry period until `work` has returned, also while
 * it winds down after a graceful stop, so that no one takes over before it has. Steps down
 * (aborts `work`) when the renew deadline passes or someone else holds the Lease. Releases the
 * Lease at the end unless leadership was lost. Returns true when `work` ended on its own.
 */
async function lead(
  elector: Elector,
  deps: LeaderElectionDeps,
  timing: Timing,
  acquiredAt: number,
  work: (signal: AbortSignal) => Promise<void>,
  log: Logger,
): Promise<boolean> {
  const lease = elector.describe;
  const term = new AbortController();
  /** aborted once leadership is lost: stops the renewal loop at once */
  const lost = new AbortController();
  const stepDown = (why: string, isLoss: boolean) => {
    if (isLoss && !lost.signal.aborted) {
      log.warn('lost leadership', { lease, identity: deps.identity, why });
      lost.abort();
    }
    term.abort();
  };
  const onOuterAbort = () => stepDown('stopping', false);
  deps.signal.addEventListener('abort', onOuterAbort, { once: true });
  if (deps.signal.aborted) onOuterAbort();

  let deadline: NodeJS.Timeout | undefined;
  const armDeadline = (renewedAt: number) => {
    clearTimeout(deadline);
    deadline = setTimeout(
      () => stepDown(`not renewed within the renew deadline (${timing.renewDeadlineMs} ms)`, true),
      Math.max(0, renewedAt + timing.renewDeadlineMs - monotonicNow()),
    );
  };
  armDeadline(acquiredAt);

  deps.onLeadershipChange?.(true);
  let endedByItself = false;
  const workReturned = new AbortController();
  const working = (async () => {
    try {
      await work(term.signal);
    } catch (err) {
      log.error('leader-elected work failed', { lease, err: errorMessage(err) });
    }
    if (!term.signal.aborted) {
      endedByItself = true;
      stepDown('controller returned', false);
    }
    workReturned.abort();
  })();

  // renew until the work has returned or leadership is lost
  const stopRenewing = anySignal(workReturned.signal, lost.signal);
  while (!stopRenewing.aborted) {
    await sleep(timing.retryPeriodMs, stopRenewing);
    if (stopRenewing.aborted) break;
    const sentAt = monotonicNow();
    let ok: boolean | undefined;
    try {
      ok = await untilAborted(elector.tryAcquireOrRenew(), lost.signal);
    } catch (err) {
      log.warn('renewing the lease failed', { lease, err: errorMessage(err) });
      ok = false;
    }
    if (ok === undefined) break;
    if (ok) armDeadline(sentAt);
    else if (elector.heldByOtherForMs() !== null) stepDown(`the lease is held by ${elector.observedHolder}`, true);
  }
  const lostAt = monotonicNow();
  await working;
  clearTimeout(deadline);
  deps.signal.removeEventListener('abort', onOuterAbort);
  if (lost.signal.aborted) {
    const tookMs = Math.round(monotonicNow() - lostAt);
    // the margin between the renew deadline and the lease duration is what work may take
    if (tookMs > timing.leaseDurationSeconds * 1000 - timing.renewDeadlineMs) {
      log.error('leader-elected work returned late after losing leadership', { lease, tookMs });
    }
  }
  log.info('stopped leading', { lease, identity: deps.identity });
  deps.onLeadershipChange?.(false);
  if (!lost.signal.aborted) {
    // bounded like client-go's (by the renew deadline): a stop must not hang on a lost etcd
    const giveUp = AbortSignal.timeout(timing.renewDeadlineMs);
    try {
      const released = await untilAborted(
        elector.release().then(() => true),
        giveUp,
      );
      if (!released) log.warn('releasing the lease timed out', { lease });
    } catch (err) {
      log.warn('releasing the lease failed', { lease, err: errorMessage(err) });
    }
  }
  return endedByItself;
}

/** a signal that aborts when either does */
function anySignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  const ctl = new AbortController();
  const abort = () => ctl.abort();
  if (a.aborted || b.aborted) abort();
  a.addEventListener('abort', abort, { once: true });
  b.addEventListener('abort', abort, { once: true });
  return ctl.signal;
}

/** sleeps `ms`, less when either signal aborts; leaves no listener behind on either */
function sleepUnlessAborted(ms: number, a: AbortSignal, b: AbortSignal): Promise<void> {
  if (a.aborted || b.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      a.removeEventListener('abort', done);
      b.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    a.addEventListener('abort', done, { once: true });
    b.addEventListener('abort', done, { once: true });
  });
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
