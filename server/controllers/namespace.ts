// The namespace controller: watches Namespaces and, for each one being deleted, runs the
// NamespaceDeleter until the namespace is released. Runs on the elected leader only (one
// replica at a time), though every pass is idempotent. A namespace whose content is held by
// finalizers is looked at again periodically and whenever one of the remaining objects
// changes (a watch per remaining resource in that namespace), so it goes away soon after
// the last finalizer is removed.

import type { Watch } from '../../storage/interface.js';
import type { RESTResource, ResourceResolver } from '../registry/rest.js';
import { runLeaderElected } from './leader.js';
import { NamespaceDeleter, type RemainingContent } from './namespace-deleter.js';
import { defaultLogger, type Controller, type ControllerDeps, type Logger } from './types.js';
import { errorMessage, internalContext, sleep } from './util.js';
import { WorkQueue } from './workqueue.js';

export interface NamespaceControllerOptions {
  /** namespaces processed at once. Default 5. */
  workers?: number;
  log?: Logger;
}

/** runs the controller loop until `signal` aborts (no leader election: see namespaceController) */
export async function runNamespaceController(
  resolver: ResourceResolver,
  signal: AbortSignal,
  opts: NamespaceControllerOptions = {},
): Promise<void> {
  const log = opts.log ?? defaultLogger;
  const queue = new WorkQueue();
  const deleter = new NamespaceDeleter(resolver, { signal });
  const contentWatches = new ContentWatches(queue, signal, log);

  const worker = async (name: string) => {
    try {
      const result = await deleter.sync(name);
      queue.forget(name);
      if (result.state === 'done') {
        contentWatches.close(name);
        return;
      }
      await contentWatches.ensure(name, result.remaining);
      queue.addAfter(name, result.recheckAfterMs);
    } catch (err) {
      if (signal.aborted) return;
      log.warn('namespace deletion pass failed, retrying', { namespace: name, err: errorMessage(err) });
      queue.addRateLimited(name);
    }
  };

  const informer = watchNamespaces(resolver, queue, contentWatches, signal, log);
  await queue.run(signal, opts.workers ?? 5, worker);
  await informer;
  contentWatches.closeAll();
}

/** feeds the queue with every namespace that has a deletionTimestamp, re-listing on any break */
async function watchNamespaces(
  resolver: ResourceResolver,
  queue: WorkQueue,
  contentWatches: ContentWatches,
  signal: AbortSignal,
  log: Logger,
): Promise<void> {
  let retryMs = 200;
  while (!signal.aborted) {
    const namespaces = resolver.lookup('', 'v1', 'namespaces');
    if (!namespaces) {
      log.error('namespace controller: the registry serves no namespaces');
      await sleep(5_000, signal);
      continue;
    }
    let watch: Watch | undefined;
    const stop = () => watch?.stop();
    signal.addEventListener('abort', stop, { once: true });
    try {
      // no resourceVersion: the current namespaces arrive first as ADDED, so a restart (or a
      // new leader) picks up every namespace already terminating
      watch = await namespaces.watch(internalContext('kube-controller-manager', '', signal), {});
      if (signal.aborted) watch.stop();
      for await (const ev of watch) {
        retryMs = 200;
        if (ev.type === 'ERROR') break;
        const name = ev.object.metadata.name;
        if (ev.type === 'BOOKMARK' || !name) continue;
        if (ev.type === 'DELETED') {
          contentWatches.close(name);
          queue.forget(name);
        } else if (ev.object.metadata.deletionTimestamp) {
          queue.add(name);
        }
      }
    } catch (err) {
      if (!signal.aborted) log.warn('namespace controller: watching namespaces failed', { err: errorMessage(err) });
    } finally {
      signal.removeEventListener('abort', stop);
      watch?.stop();
    }
    await sleep(retryMs, signal);
    retryMs = Math.min(retryMs * 2, 10_000);
  }
}

/** per terminating namespace, one watch on each resource that still has objects in it */
class ContentWatches {
  private readonly byNamespace = new Map<string, Map<RESTResource, Watch>>();

  constructor(
    private readonly queue: WorkQueue,
    private readonly signal: AbortSignal,
    private readonly log: Logger,
  ) {}

  async ensure(namespace: string, remaining: RemainingContent[]): Promise<void> {
    let watches = this.byNamespace.get(namespace);
    if (!watches) {
      watches = new Map();
      this.byNamespace.set(namespace, watches);
    }
    const wanted = new Set(remaining.map((r) => r.resource));
    for (const [res, w] of watches) {
      if (!wanted.has(res)) {
        w.stop();
        watches.delete(res);
      }
    }
    for (const { resource, resourceVersion } of remaining) {
      if (watches.has(resource) || this.signal.aborted) continue;
      try {
        const w = await resource.watch(internalContext('kube-controller-manager', namespace, this.signal), {
          resourceVersion: resourceVersion || undefined,
        });
        watches.set(resource, w);
        void this.drain(namespace, resource, w, watches);
      } catch (err) {
        // the periodic re-check still covers this resource
        this.log.warn('namespace controller: watching remaining content failed', {
          namespace,
          resource: resource.info.resource,
          err: errorMessage(err),
        });
      }
    }
  }

  private async drain(namespace: string, res: RESTResource, w: Watch, watches: Map<RESTResource, Watch>): Promise<void> {
    try {
      for await (const ev of w) {
        // DELETED: an object went away (its last finalizer was removed, or a graceful deletion
        // finished); ADDED: something new to delete. MODIFIED is ignored on purpose: our own
        // deletes modify objects, and reacting to them would make every pass trigger the next.
        if (ev.type === 'DELETED' || ev.type === 'ADDED') this.queue.add(namespace);
        if (ev.type === 'ERROR') {
          this.queue.add(namespace);
          break;
        }
      }
    } catch {
      // ended: the next sync opens a new one if still needed
    } finally {
      w.stop();
      if (watches.get(res) === w) watches.delete(res);
    }
  }

  close(namespace: string): void {
    const watches = this.byNamespace.get(namespace);
    if (!watches) return;
    this.byNamespace.delete(namespace);
    for (const w of watches.values()) w.stop();
  }

  closeAll(): void {
    for (const ns of [...this.byNamespace.keys()]) this.close(ns);
  }
}

/** the namespace controller, leader-elected among replicas */
export function namespaceController(
  deps: ControllerDeps,
  opts: { leaseDurationSeconds?: number; retryPeriodMs?: number } = {},
): Controller {
  const log = deps.log ?? defaultLogger;
  return {
    name: 'namespace',
    start(signal) {
      return runLeaderElected(
        'namespace-controller',
        { resolver: deps.resolver, identity: deps.identity, signal, log, ...opts },
        (leading) => runNamespaceController(deps.resolver, leading, { log }),
      );
    },
  };
}
