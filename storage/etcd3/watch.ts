// A storage Watch over one etcd watch (the direct path, used when no cache can serve).
//
// Items wait in a queue and are turned into API watch events when the consumer pulls them
// (decoding and predicate checks happen at the consumer's pace). Initial events come from a
// list that is already in memory; live etcd events are bounded: a consumer that falls more
// than `maxQueued` events behind gets what was queued and then the end of the watch (the
// shared etcd stream cannot wait for one slow reader), and resumes with a new watch from the
// last resourceVersion it saw, as clients do after any watch ends.
//
// Event rules follow kube-apiserver's etcd3 watcher: with prev_kv, an update that makes an
// object enter the predicate is ADDED, one that makes it leave is DELETED carrying the last
// matching state; DELETED objects carry the deletion revision as resourceVersion.

import type { EtcdClient, EtcdEvent, EtcdWatcher, KeyValue, WatchMessage } from '../etcd/types.js';
import type { KubeObject, SelectionPredicate, Watch, WatchEvent } from '../interface.js';
import { decodeObject } from './codec.js';

export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';
const DEFAULT_MAX_QUEUED = 10_000;

type Item = { kind: 'initial'; kv: KeyValue } | { kind: 'etcd'; event: EtcdEvent } | { kind: 'ready'; event: WatchEvent };

export interface WatchParams {
  client: EtcdClient;
  etcdKey: Buffer;
  rangeEnd?: Buffer;
  /** etcd revision to start at (the first revision delivered) */
  startRevision: number;
  predicate: SelectionPredicate;
  bookmarks: boolean;
  /** the resourceVersion the client asked for, for the 410 message */
  requestedResourceVersion: string;
  initial: KeyValue[];
  /** revision of the initial list, announced by the initial-events-end bookmark; 0: none */
  initialEventsEndRevision: number;
  maxQueued?: number;
  /** encryption at rest: a stored value's plaintext (throws when it cannot be read);
   *  undefined: values are plaintext */
  plaintext?: (kv: KeyValue) => Buffer;
  onStop?: () => void;
}

export function statusObject(code: number, reason: string, message: string, details?: object): KubeObject {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  };
}

export function expiredStatus(requested: string, compactRevision: number): KubeObject {
  return statusObject(410, 'Expired', `too old resource version: ${requested} (${compactRevision})`);
}

function internalErrorStatus(message: string): KubeObject {
  return statusObject(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

function bookmark(revision: number, annotations?: Record<string, string>): WatchEvent {
  return { type: 'BOOKMARK', object: { metadata: { resourceVersion: String(revision), ...(annotations ? { annotations } : {}) } } };
}

export class EtcdStoreWatch implements Watch {
  private readonly queue: Item[] = [];
  private head = 0;
  private liveQueued = 0;
  private readonly maxQueued: number;
  /** nothing more will be queued; the iteration ends once the queue is drained */
  private ending = false;
  private stopped = false;
  private wake: (() => void) | null = null;
  private watcher: EtcdWatcher | null = null;

  constructor(private readonly p: WatchParams) {
    this.maxQueued = p.maxQueued ?? DEFAULT_MAX_QUEUED;
    for (const kv of p.initial) this.queue.push({ kind: 'initial', kv });
    if (p.initialEventsEndRevision > 0) {
      this.queue.push({ kind: 'ready', event: bookmark(p.initialEventsEndRevision, { [INITIAL_EVENTS_END_ANNOTATION]: 'true' }) });
    }
    this.watcher = p.client.watch(
      { key: p.etcdKey, rangeEnd: p.rangeEnd, startRevision: p.startRevision, prevKv: true, progressNotify: p.bookmarks },
      (msg) => this.onMessage(msg),
    );
  }

  private onMessage(msg: WatchMessage): void {
    if (this.ending) return;
    switch (msg.kind) {
      case 'events':
        for (const event of msg.events) this.queue.push({ kind: 'etcd', event });
        this.liveQueued += msg.events.length;
        if (this.liveQueued > this.maxQueued) this.end();
        break;
      case 'progress':
        // an unordered answer (to some other watch's progress request on the shared stream)
        // may be ahead of events still coming: a client resuming from it would lose them
        if (this.p.bookmarks && msg.ordered) this.queue.push({ kind: 'ready', event: bookmark(msg.revision) });
        break;
      case 'canceled':
        if (msg.compactRevision > 0) {
          this.queue.push({
            kind: 'ready',
            event: { type: 'ERROR', object: expiredStatus(this.p.requestedResourceVersion, msg.compactRevision) },
          });
        } else if (msg.reason !== 'etcd client closed') {
          this.queue.push({ kind: 'ready', event: { type: 'ERROR', object: internalErrorStatus(msg.reason) } });
        }
        this.watcher = null;
        this.end();
        break;
    }
    this.signal();
  }

  /** no more input: cancel the etcd watch; queued items are still delivered */
  private end(): void {
    this.ending = true;
    this.watcher?.cancel();
    this.watcher = null;
    this.signal();
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.end();
    this.queue.length = 0;
    this.head = 0;
    this.p.onStop?.();
  }

  async next(): Promise<IteratorResult<WatchEvent>> {
    for (;;) {
      if (this.stopped) return { done: true, value: undefined };
      if (this.head < this.queue.length) {
        const item = this.queue[this.head]!;
        this.queue[this.head++] = undefined as unknown as Item;
        if (this.head > 1024 && this.head * 2 > this.queue.length) {
          this.queue.splice(0, this.head);
          this.head = 0;
        }
        if (item.kind === 'etcd') this.liveQueued--;
        let event: WatchEvent | null;
        try {
          event = this.transform(item);
        } catch (err) {
          // an undecodable object ends the watch with an error, as kube-apiserver does
          this.end();
          this.queue.length = this.head;
          event = { type: 'ERROR', object: internalErrorStatus((err as Error).message) };
        }
        if (event) return { done: false, value: event };
        continue;
      }
      if (this.ending) {
        this.stop();
        return { done: true, value: undefined };
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
    return {
      next: () => this.next(),
      return: async () => {
        this.stop();
        return { done: true, value: undefined };
      },
    };
  }

  private transform(item: Item): WatchEvent | null {
    switch (item.kind) {
      case 'ready':
        return item.event;
      case 'initial': {
        const obj = decodeObject(this.value(item.kv), item.kv.modRevision, item.kv.key.toString());
        return this.p.predicate.matches(obj) ? { type: 'ADDED', object: obj } : null;
      }
      case 'etcd':
        return this.transformEtcd(item.event);
    }
  }

  private value(kv: KeyValue): Buffer {
    return this.p.plaintext ? this.p.plaintext(kv) : kv.value;
  }

  private transformEtcd(e: EtcdEvent): WatchEvent | null {
    const { predicate } = this.p;
    const key = e.kv.key.toString();
    const rev = e.kv.modRevision;
    const isCreate = e.type === 'PUT' && e.kv.createRevision === e.kv.modRevision;
    if (!isCreate && !e.prevKv) {
      // the previous state was compacted away before etcd could attach it
      throw new Error(`etcd event received with PrevKv=nil (key=${JSON.stringify(key)}, modRevision=${rev}, type=${e.type})`);
    }
    if (e.type === 'DELETE') {
      // the last state, at the revision of its deletion
      const old = decodeObject(this.value(e.prevKv!), rev, key);
      return predicate.matches(old) ? { type: 'DELETED', object: old } : null;
    }
    const cur = decodeObject(this.value(e.kv), rev, key);
    if (isCreate) return predicate.matches(cur) ? { type: 'ADDED', object: cur } : null;
    if (predicate.isEverything) return { type: 'MODIFIED', object: cur };
    const curMatches = predicate.matches(cur);
    const old = decodeObject(this.value(e.prevKv!), rev, key);
    const oldMatches = predicate.matches(old);
    if (curMatches) return { type: oldMatches ? 'MODIFIED' : 'ADDED', object: cur };
    return oldMatches ? { type: 'DELETED', object: old } : null;
  }
}
