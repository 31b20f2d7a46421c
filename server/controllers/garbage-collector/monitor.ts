// One resource's list-and-watch for the graph (an informer keeping only metadata): it lists
// every object, then watches from the list's revision, and turns what it sees into graph
// events with the previous state of each object. A watch that ends is resumed from the last
// revision seen; one that fails (a compacted revision, an ERROR event) is replaced by a
// relist whose differences from what was known become events, deletions included.

import type { KubeObject, Watch } from '../../../storage/interface.js';
import type { RESTResource } from '../../registry/rest.js';
import type { Logger } from '../types.js';
import { errorMessage, internalContext, sleep } from '../util.js';
import type { GraphEvent } from './graph-builder.js';
import { apiVersionOf } from './resources.js';
import { ByNamespace } from '../../machinery/by-namespace.js';
import { relevantChange, snapshotOf, type ObjectMetaSnapshot } from './types.js';

const fieldManager = 'kube-controller-manager';
const listPageSize = 500;

export type GraphEventSink = (ev: GraphEvent) => void;

export class ResourceMonitor {
  private readonly objects = new ByNamespace<ObjectMetaSnapshot>();
  private readonly apiVersion: string;
  private readonly kind: string;
  private markSynced!: () => void;
  private isSynced = false;
  /** resolves once the first complete list has been handed to the graph */
  readonly synced: Promise<void>;

  constructor(
    readonly resource: RESTResource,
    private readonly sink: GraphEventSink,
    private readonly log: Logger,
  ) {
    this.apiVersion = apiVersionOf(resource);
    this.kind = resource.info.kind;
    this.synced = new Promise((resolve) => {
      this.markSynced = resolve;
    });
  }

  get hasSynced(): boolean {
    return this.isSynced;
  }

  /** lists and watches until `signal` aborts */
  async run(signal: AbortSignal): Promise<void> {
    let resourceVersion: string | undefined;
    let retryMs = 200;
    while (!signal.aborted) {
      let watch: Watch | undefined;
      const stop = () => watch?.stop();
      signal.addEventListener('abort', stop, { once: true });
      try {
        if (resourceVersion === undefined) {
          resourceVersion = await this.relist(signal);
          if (!this.isSynced) {
            this.isSynced = true;
            this.markSynced();
          }
        }
        watch = await this.resource.watch(internalContext(fieldManager, '', signal), {
          resourceVersion,
          allowWatchBookmarks: true,
          metadataOnly: true,
        });
        if (signal.aborted) watch.stop();
        for await (const ev of watch) {
          retryMs = 200;
          if (ev.type === 'ERROR') {
            // typically 410 Expired: what happened since is unknown, so list again
            resourceVersion = undefined;
            break;
          }
          resourceVersion = ev.object.metadata?.resourceVersion || resourceVersion;
          if (ev.type !== 'BOOKMARK') this.apply(ev.type, ev.object);
        }
      } catch (err) {
        if (signal.aborted) break;
        const expired = (err as { code?: unknown }).code === 410;
        if (expired) resourceVersion = undefined;
        this.log.warn('garbage collector: watching failed', {
          resource: `${this.resource.info.group}/${this.resource.info.resource}`,
          err: errorMessage(err),
        });
      } finally {
        signal.removeEventListener('abort', stop);
        watch?.stop();
      }
      await sleep(retryMs, signal);
      retryMs = Math.min(retryMs * 2, 10_000);
    }
  }

  /** lists everything (paged) and hands the graph the differences from what was known */
  private async relist(signal: AbortSignal): Promise<string> {
    const ctx = internalContext(fieldManager, '', signal);
    const items: KubeObject[] = [];
    let resourceVersion = '';
    let continueToken: string | undefined;
    do {
      const page = await this.resource.list(ctx, { limit: listPageSize, continue: continueToken });
      if (!continueToken) resourceVersion = page.metadata.resourceVersion;
      items.push(...page.items);
      continueToken = page.metadata.continue || undefined;
    } while (continueToken && !signal.aborted);

    const seen = new ByNamespace<true>();
    for (const obj of items) {
      const snap = snapshotOf(obj);
      seen.set(snap.namespace, snap.name, true);
      this.upsert(snap);
    }
    this.objects.deleteAbsentFrom(seen, (old) => this.emit({ type: 'delete', object: old }));
    return resourceVersion;
  }

  private apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KubeObject): void {
    const snap = snapshotOf(obj);
    if (type !== 'DELETED') {
      this.upsert(snap);
      return;
    }
    const old = this.objects.delete(snap.namespace, snap.name);
    // an older object of the same name went away unseen
    if (old && old.uid !== snap.uid) this.emit({ type: 'delete', object: old });
    this.emit({ type: 'delete', object: snap });
  }

  private upsert(snap: ObjectMetaSnapshot): void {
    const old = this.objects.set(snap.namespace, snap.name, snap);
    if (!old) {
      this.emit({ type: 'add', object: snap });
    } else if (old.uid !== snap.uid) {
      // deleted and created again under the same name between two looks
      this.emit({ type: 'delete', object: old });
      this.emit({ type: 'add', object: snap });
    } else if (relevantChange(old, snap)) {
      this.emit({ type: 'update', object: snap, old });
    }
  }

  private emit(ev: Omit<GraphEvent, 'apiVersion' | 'kind'>): void {
    this.sink({ ...ev, apiVersion: this.apiVersion, kind: this.kind });
  }
}
