// The set of running resource monitors, kept equal to the deletable resources the registry
// serves: `sync` starts monitors for new resources and stops those of resources gone.

import type { RESTResource } from '../../registry/rest.js';
import type { Logger } from '../types.js';
import { errorMessage, sleep } from '../util.js';
import { ResourceMonitor, type GraphEventSink } from './monitor.js';
import { groupResourceOf } from './resources.js';

interface Running {
  monitor: ResourceMonitor;
  stop: AbortController;
  done: Promise<void>;
}

export class Monitors {
  private readonly running = new Map<string, Running>();
  /** monitors told to stop by `sync` that may not have returned yet */
  private readonly stopping = new Set<Promise<void>>();

  constructor(
    private readonly sink: GraphEventSink,
    private readonly signal: AbortSignal,
    private readonly log: Logger,
  ) {}

  /** starts and stops monitors so that exactly `resources` are watched; true when anything changed */
  sync(resources: RESTResource[]): boolean {
    const wanted = new Map(resources.map((r) => [groupResourceOf(r), r]));
    let changed = false;
    for (const [key, r] of this.running) {
      const want = wanted.get(key);
      if (want && want.info.version === r.monitor.resource.info.version) continue;
      r.stop.abort();
      this.running.delete(key);
      this.stopping.add(r.done);
      void r.done.then(() => this.stopping.delete(r.done));
      changed = true;
    }
    for (const [key, resource] of wanted) {
      if (this.running.has(key) || this.signal.aborted) continue;
      const stop = new AbortController();
      const onAbort = () => stop.abort();
      this.signal.addEventListener('abort', onAbort, { once: true });
      const monitor = new ResourceMonitor(resource, this.sink, this.log);
      const done = monitor
        .run(stop.signal)
        .catch((err: unknown) =>
          this.log.error('garbage collector: monitor stopped with an error', { resource: key, err: errorMessage(err) }),
        )
        .finally(() => this.signal.removeEventListener('abort', onAbort));
      this.running.set(key, { monitor, stop, done });
      changed = true;
    }
    return changed;
  }

  get synced(): boolean {
    return this.running.size > 0 && [...this.running.values()].every((r) => r.monitor.hasSynced);
  }

  /** resolves true once every monitor has listed once, false after `timeoutMs` or on abort */
  async waitForSync(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.synced) {
      if (this.signal.aborted || Date.now() >= deadline) return false;
      await sleep(Math.min(100, deadline - Date.now()), this.signal);
    }
    return true;
  }

  /** the resources not yet listed once */
  unsynced(): string[] {
    return [...this.running].filter(([, r]) => !r.monitor.hasSynced).map(([k]) => k);
  }

  async stopAll(): Promise<void> {
    const all = [...this.running.values()];
    this.running.clear();
    for (const r of all) r.stop.abort();
    await Promise.all([...all.map((r) => r.done), ...this.stopping]);
  }
}
