// apiserver_storage_objects{resource}: every --etcd-count-metric-poll-period, the number of
// objects of each stored resource. Counts come from the Storage each resource is served from,
// so with the watch cache they are read from memory, not from etcd.

import type { Storage } from '../../storage/interface.js';
import { defaultMetrics, type ApiserverMetrics } from './apiserver-metrics.js';

export interface CountedResource {
  /** `configmaps`, `deployments.apps` */
  label: string;
  /** the resource's storage key prefix, e.g. `/configmaps` */
  keyPrefix: string;
  storage: Storage;
}

export interface ObjectCountPoller {
  /** counts every resource once more (the poll loop does this each period) */
  pollOnce(): Promise<void>;
  stop(): void;
}

/** Starts polling now and then every `periodMs`; `periodMs` <= 0 polls never. */
export function startObjectCountPoller(
  resources: readonly CountedResource[],
  periodMs: number,
  metrics: ApiserverMetrics = defaultMetrics(),
): ObjectCountPoller {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const pollOnce = async (): Promise<void> => {
    for (const r of resources) {
      if (stopped) return;
      let count: number;
      try {
        count = await r.storage.count(r.keyPrefix);
      } catch {
        count = -1;
      }
      metrics.storageObjects.set({ resource: r.label }, count);
    }
  };
  const loop = (): void => {
    void pollOnce().finally(() => {
      if (!stopped) timer = setTimeout(loop, periodMs);
    });
  };
  if (periodMs > 0) loop();
  return {
    pollOnce,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
