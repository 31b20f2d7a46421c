// The aggregator's two loops, run by one replica at a time (a kube-system Lease): local
// APIService registration and the Available conditions. Both write shared objects, so two
// replicas with different views (one that has not seen a CRD yet, one that cannot reach a
// backend) would undo each other's writes; every replica reads the result through its own
// APIService watch.

import { runLeaderElected } from '../controllers/leader.js';
import { sleep } from '../controllers/util.js';
import { startInformer } from '../authz/informer.js';
import type { Logger } from '../log.js';
import type { ResourceResolver } from '../registry/rest.js';
import type { APIServiceIndex } from './api-services.js';
import { syncLocalAPIServices, type LocalGroupVersion } from './autoregister.js';
import { checkAvailability, conditionMatches, recordAvailability } from './availability.js';
import type { BackendAgents } from './backend-client.js';

/** kube's resync of the availability controller */
const RECHECK_MS = 30_000;
/** a failing backend is retried sooner, backing off up to the resync */
const FIRST_RETRY_MS = 1_000;
/** local registration is also redone now and then, in case someone deleted one */
const REREGISTER_MS = 60_000;
/** changes arrive in bursts (a Service and its EndpointSlice): one pass for the burst */
const DEBOUNCE_MS = 100;

export interface AggregatorControllerDeps {
  resolver: ResourceResolver;
  index: APIServiceIndex;
  agents: BackendAgents;
  identity: string;
  log: Logger;
  /** the group versions served locally now (built-in and CRDs) */
  localGroupVersions: () => LocalGroupVersion[];
  /** subscribes to changes of localGroupVersions() */
  onLocalChange: (listener: () => void) => void;
  /** resolves once localGroupVersions() is complete (the CRDs have been listed) */
  localSynced: Promise<void>;
}

export class Wakeup {
  private waiter: (() => void) | undefined;
  private pending = false;
  wake(): void {
    this.pending = true;
    this.waiter?.();
  }
  /** resolves at `ms`, at a wake-up, or when `signal` aborts */
  async wait(ms: number, signal: AbortSignal): Promise<void> {
    // an aborted signal fires no more 'abort' events: waiting would take the whole `ms`
    // (up to a minute), holding up the replica's shutdown
    if (signal.aborted) return;
    if (this.pending) {
      this.pending = false;
      return;
    }
    const controller = new AbortController();
    const stop = (): void => controller.abort();
    signal.addEventListener('abort', stop, { once: true });
    this.waiter = stop;
    await sleep(ms, controller.signal);
    signal.removeEventListener('abort', stop);
    this.waiter = undefined;
    this.pending = false;
  }
}

async function registrationLoop(deps: AggregatorControllerDeps, signal: AbortSignal): Promise<void> {
  await deps.localSynced;
  const wakeup = new Wakeup();
  deps.onLocalChange(() => wakeup.wake());
  let firstPass = true;
  while (!signal.aborted) {
    try {
      await syncLocalAPIServices(deps.resolver, deps.localGroupVersions(), { firstPass, log: deps.log, signal });
      firstPass = false;
    } catch (err) {
      if (!signal.aborted) deps.log.warn('local APIService registration failed', { error: (err as Error).message });
    }
    await wakeup.wait(firstPass ? FIRST_RETRY_MS : REREGISTER_MS, signal);
    if (!signal.aborted) await sleep(DEBOUNCE_MS, signal);
  }
}

async function availabilityLoop(deps: AggregatorControllerDeps, signal: AbortSignal): Promise<void> {
  await deps.index.synced;
  const wakeup = new Wakeup();
  const unsubscribe = deps.index.onChange(() => wakeup.wake());
  // Services and EndpointSlices decide availability too: follow them while leading
  const services = deps.resolver.lookup('', 'v1', 'services');
  const slices = deps.resolver.lookup('discovery.k8s.io', 'v1', 'endpointslices');
  const informers = [services, slices].filter((r) => r !== undefined).map((r) => startInformer(r, deps.log, signal));
  for (const informer of informers) informer.onChange(() => wakeup.wake());
  const retryAfter = new Map<string, number>();
  const dueAt = new Map<string, number>();
  try {
    while (!signal.aborted) {
      const now = Date.now();
      const names = new Set<string>();
      for (const api of deps.index.all()) {
        names.add(api.name);
        try {
          const verdict = await checkAvailability(api, deps, signal);
          if (signal.aborted) return;
          if (!conditionMatches(api, verdict)) await recordAvailability(deps.resolver, api.name, verdict, { log: deps.log, signal });
          const failing = verdict.status !== 'True';
          const retry = failing ? Math.min(RECHECK_MS, (retryAfter.get(api.name) ?? FIRST_RETRY_MS / 2) * 2) : RECHECK_MS;
          if (failing) retryAfter.set(api.name, retry);
          else retryAfter.delete(api.name);
          dueAt.set(api.name, now + retry);
        } catch (err) {
          if (!signal.aborted)
            deps.log.warn('APIService availability not recorded', { apiservice: api.name, error: (err as Error).message });
          dueAt.set(api.name, now + FIRST_RETRY_MS);
        }
      }
      for (const name of [...dueAt.keys()]) if (!names.has(name)) dueAt.delete(name);
      deps.agents.retain(names);
      const next = Math.min(RECHECK_MS, ...[...dueAt.values()].map((t) => Math.max(0, t - Date.now())));
      await wakeup.wait(next, signal);
      if (!signal.aborted) await sleep(DEBOUNCE_MS, signal);
    }
  } finally {
    unsubscribe();
    for (const informer of informers) informer.stop();
  }
}

/** contends for the aggregator's Lease until `signal` aborts; resolves once stopped */
export function runAggregatorControllers(deps: AggregatorControllerDeps, signal: AbortSignal): Promise<void> {
  return runLeaderElected(
    'kube-aggregator',
    { resolver: deps.resolver, identity: deps.identity, signal, log: deps.log },
    async (leading) => {
      await Promise.all([registrationLoop(deps, leading), availabilityLoop(deps, leading)]);
    },
  );
}
