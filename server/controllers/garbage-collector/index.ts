// The garbage collector, as kube-controller-manager runs it: monitors (list + watch, metadata
// only) on every deletable resource feed a dependency graph of owner references; the graph
// queues what may be garbage, owners deleting in foreground and owners orphaning their
// dependents; workers act on those through the registry. Leader-elected: one replica at a
// time builds the graph from scratch when it starts leading, so a restart or a new leader
// picks up whatever happened meanwhile (owners deleted, finalizers waiting).

import { setMaxListeners } from 'node:events';
import type { ResourceResolver } from '../../registry/rest.js';
import { runLeaderElected } from '../leader.js';
import { defaultLogger, type Controller, type ControllerDeps, type Logger } from '../types.js';
import { errorMessage, sleep } from '../util.js';
import { WorkQueue } from '../workqueue.js';
import { AbsentOwnerCache } from './absent-owners.js';
import { Collector, type Outcome } from './collector.js';
import { GraphBuilder } from './graph-builder.js';
import { DependencyGraph } from './graph.js';
import { Monitors } from './monitors.js';
import { ApiOperations } from './operations.js';
import { deletableResources, KindMapper } from './resources.js';
import type { ObjectIdentity, OwnerReference } from './types.js';

export interface GarbageCollectorOptions {
  /** objects processed at once, per queue. Default 20 (kube-controller-manager's --concurrent-gc-syncs). */
  workers?: number;
  /** how often the served resources are compared with the watched ones. Default 30 s. */
  resourceSyncPeriodMs?: number;
  /** how long workers wait for every resource's first list before they start anyway. Default 30 s. */
  initialSyncTimeoutMs?: number;
  log?: Logger;
}

/** runs the garbage collector until `signal` aborts (no leader election: see garbageCollectorController) */
export async function runGarbageCollector(
  resolver: ResourceResolver,
  outer: AbortSignal,
  opts: GarbageCollectorOptions = {},
): Promise<void> {
  // one signal of our own, followed by every monitor, worker and in-flight request (more
  // listeners than Node's leak warning expects), tied to the caller's by a single listener
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  const onAbort = () => stop.abort();
  outer.addEventListener('abort', onAbort, { once: true });
  if (outer.aborted) stop.abort();
  try {
    await collectGarbage(resolver, stop.signal, opts);
  } finally {
    outer.removeEventListener('abort', onAbort);
  }
}

async function collectGarbage(resolver: ResourceResolver, signal: AbortSignal, opts: GarbageCollectorOptions): Promise<void> {
  const log = opts.log ?? defaultLogger;
  const workers = opts.workers ?? 20;
  const deleteQueue = new WorkQueue({ baseMs: 100, maxMs: 60_000 });
  const orphanQueue = new WorkQueue({ baseMs: 100, maxMs: 60_000 });
  const absentOwners = new AbsentOwnerCache();
  const api = new ApiOperations(new KindMapper(resolver), signal);
  const reportInvalidOwner = (dependent: ObjectIdentity, owner: OwnerReference) => {
    const ns = dependent.namespace;
    const message = `ownerRef [${owner.apiVersion}/${owner.kind}, namespace: ${ns}, name: ${owner.name}, uid: ${owner.uid}] does not exist in namespace "${ns}"`;
    api.recordWarning(dependent, 'OwnerRefInvalidNamespace', message).catch((err: unknown) => {
      log.warn('garbage collector: recording an event failed', { err: errorMessage(err) });
    });
  };
  const builder = new GraphBuilder(
    new DependencyGraph(),
    {
      attemptToDelete: (uid, o) => (o?.rateLimited ? deleteQueue.addRateLimited(uid) : deleteQueue.add(uid)),
      attemptToOrphan: (uid) => orphanQueue.add(uid),
    },
    absentOwners,
    reportInvalidOwner,
  );
  const collector = new Collector(builder, api, absentOwners, (uid) => deleteQueue.add(uid), log);
  const monitors = new Monitors((ev) => builder.process(ev), signal, log);

  monitors.sync(deletableResources(resolver));
  const resourceSync = (async () => {
    const period = opts.resourceSyncPeriodMs ?? 30_000;
    while (!signal.aborted) {
      await sleep(period, signal);
      if (!signal.aborted && monitors.sync(deletableResources(resolver)))
        log.info('garbage collector: the served resources changed; monitors resynced');
    }
  })();

  // Orphaning and foreground deletion read dependents from the graph: a graph missing some
  // resource's objects would let an owner go before them. Wait (bounded, as upstream does).
  const synced = await monitors.waitForSync(opts.initialSyncTimeoutMs ?? 30_000);
  if (!synced && !signal.aborted) {
    log.warn('garbage collector: not all resources could be listed; proceeding anyway', { unsynced: monitors.unsynced().join(',') });
  }

  const drive = (queue: WorkQueue, work: (uid: string) => Promise<Outcome>) => async (uid: string) => {
    let outcome: Outcome;
    try {
      outcome = await work(uid);
    } catch (err) {
      log.warn('garbage collector: unexpected failure, retrying', { uid, err: errorMessage(err) });
      outcome = 'requeue';
    }
    if (signal.aborted) return;
    if (outcome === 'forget') queue.forget(uid);
    else queue.addRateLimited(uid);
  };
  await Promise.all([
    deleteQueue.run(
      signal,
      workers,
      drive(deleteQueue, (uid) => collector.attemptToDelete(uid)),
    ),
    orphanQueue.run(
      signal,
      workers,
      drive(orphanQueue, (uid) => collector.attemptToOrphan(uid)),
    ),
  ]);
  await resourceSync;
  await monitors.stopAll();
}

/** the garbage collector, leader-elected among replicas */
export function garbageCollectorController(
  deps: ControllerDeps,
  opts: GarbageCollectorOptions & { leaseDurationSeconds?: number; retryPeriodMs?: number } = {},
): Controller {
  const log = opts.log ?? deps.log ?? defaultLogger;
  const { leaseDurationSeconds, retryPeriodMs, ...gcOpts } = opts;
  return {
    name: 'garbage-collector',
    start(signal) {
      // everything an election may need (the registry for a Lease, etcd for a raw key),
      // built apart from the call so that the mechanism can change behind runLeaderElected
      const election = {
        resolver: deps.resolver,
        etcd: deps.etcd,
        prefix: deps.prefix,
        identity: deps.identity,
        signal,
        log,
        leaseDurationSeconds,
        retryPeriodMs,
      };
      return runLeaderElected('garbage-collector', election, (leading) => runGarbageCollector(deps.resolver, leading, { ...gcOpts, log }));
    },
  };
}
