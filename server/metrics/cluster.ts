// /metrics of a replica that runs several worker processes (--workers): whichever worker is
// asked answers for the whole replica. The worker asks the primary over the cluster IPC
// channel; the primary collects every live worker's registry as JSON and merges them with
// prom-client's aggregation (counters and histograms summed; gauges by the `aggregator` each
// declares in apiserver-metrics.ts). prom-client's own cluster listener is not used: it
// serves one merged set of registries, and kapi serves /metrics and /metrics/slis apart.

import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { defaultMetrics, type ApiserverMetrics } from './apiserver-metrics.js';

export type RegistryName = 'metrics' | 'slis';

type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

/** the messages of this protocol; every one carries `kapiMetrics` so other traffic is ignored */
type Message =
  | { kapiMetrics: 'request'; id: number; registry: RegistryName }
  | { kapiMetrics: 'response'; id: number; text?: string; error?: string }
  | { kapiMetrics: 'collect'; id: number; registry: RegistryName }
  | { kapiMetrics: 'collected'; id: number; metrics?: MetricsJson; error?: string };

function isMessage(m: unknown): m is Message {
  return typeof m === 'object' && m !== null && typeof (m as { kapiMetrics?: unknown }).kapiMetrics === 'string';
}

/** how long the primary waits for the workers' answers; a worker that is slower (or dying) is
 *  left out of that scrape rather than failing it */
const COLLECT_TIMEOUT_MS = 5000;

function registryOf(metrics: ApiserverMetrics, name: RegistryName) {
  return name === 'metrics' ? metrics.registry : metrics.sliRegistry;
}

/** The text a scrape of `registry` returns for the whole replica. */
export type ReplicaMetricsSource = (registry: RegistryName) => Promise<string>;

/**
 * In a worker: answers the primary's collection requests with this process's metrics and
 * returns the source the /metrics handler reads the replica's metrics from.
 */
export function workerMetricsSource(metrics: ApiserverMetrics = defaultMetrics()): ReplicaMetricsSource {
  const pending = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void }>();
  let nextId = 0;
  process.on('message', (m: unknown) => {
    if (!isMessage(m)) return;
    if (m.kapiMetrics === 'collect') {
      // the primary may be gone by the time the answer is ready (a send then would throw)
      const answer = (reply: Message): void => {
        if (process.connected) process.send?.(reply);
      };
      registryOf(metrics, m.registry)
        .getMetricsAsJSON()
        .then(
          (json) => answer({ kapiMetrics: 'collected', id: m.id, metrics: json }),
          (err: Error) => answer({ kapiMetrics: 'collected', id: m.id, error: err.message }),
        );
    } else if (m.kapiMetrics === 'response') {
      const waiter = pending.get(m.id);
      pending.delete(m.id);
      if (m.error !== undefined) waiter?.reject(new Error(m.error));
      else waiter?.resolve(m.text ?? '');
    }
  });
  return (registry) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      process.send?.({ kapiMetrics: 'request', id, registry } satisfies Message, undefined, undefined, (err: Error | null) => {
        if (err) {
          pending.delete(id);
          reject(err);
        }
      });
    });
}

/** prom-client's default process_start_time_seconds says `omit`; the replica started when its
 *  first worker did */
const AGGREGATOR_OVERRIDES: ReadonlyMap<string, 'min'> = new Map([['process_start_time_seconds', 'min']]);

/** merges the workers' registries (as JSON) into one text exposition */
export async function aggregateMetricsText(perWorker: MetricsJson[]): Promise<string> {
  const adjusted = perWorker.map((metrics) =>
    metrics.map((m) => {
      const aggregator = AGGREGATOR_OVERRIDES.get(m.name);
      return aggregator ? { ...m, aggregator } : m;
    }),
  );
  return AggregatorRegistry.aggregate(adjusted).metrics();
}

export interface MetricsHub {
  stop(): void;
}

/** In the primary: serves the workers' requests for the replica's metrics. */
export function startMetricsHub(): MetricsHub {
  let nextId = 0;
  const collections = new Map<number, { answers: MetricsJson[]; waiting: Set<number>; finish: () => void }>();

  const collect = (registry: RegistryName): Promise<MetricsJson[]> =>
    new Promise((resolve) => {
      const id = nextId++;
      const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && w.isConnected());
      const answers: MetricsJson[] = [];
      const timer = setTimeout(() => finish(), COLLECT_TIMEOUT_MS);
      const finish = (): void => {
        clearTimeout(timer);
        collections.delete(id);
        resolve(answers);
      };
      collections.set(id, { answers, waiting: new Set(workers.map((w) => w.id)), finish });
      for (const w of workers) w.send({ kapiMetrics: 'collect', id, registry } satisfies Message);
      if (workers.length === 0) finish();
    });

  const onMessage = (worker: Worker, m: unknown): void => {
    if (!isMessage(m)) return;
    if (m.kapiMetrics === 'collected') {
      const c = collections.get(m.id);
      if (!c || !c.waiting.delete(worker.id)) return;
      if (m.metrics) c.answers.push(m.metrics);
      if (c.waiting.size === 0) c.finish();
    } else if (m.kapiMetrics === 'request') {
      collect(m.registry)
        .then(aggregateMetricsText)
        .then(
          (text) => worker.isConnected() && worker.send({ kapiMetrics: 'response', id: m.id, text } satisfies Message),
          (err: Error) => worker.isConnected() && worker.send({ kapiMetrics: 'response', id: m.id, error: err.message } satisfies Message),
        );
    }
  };
  // a worker that exits stops being waited for
  const onExit = (worker: Worker): void => {
    for (const c of collections.values()) if (c.waiting.delete(worker.id) && c.waiting.size === 0) c.finish();
  };
  cluster.on('message', onMessage);
  cluster.on('exit', onExit);
  return {
    stop() {
      cluster.off('message', onMessage);
      cluster.off('exit', onExit);
    },
  };
}
