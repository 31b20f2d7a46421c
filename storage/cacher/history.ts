// The bounded event history of one resource: the changes after `startRevision`, oldest
// first, so that a watch from a recent resourceVersion replays what it missed. Bounded by
// age and by count; evicting an event moves `startRevision` up to that event's revision.

import type { StoredEntry } from './entry.js';

export interface CacheEvent {
  /** the etcd revision of the change */
  readonly revision: number;
  readonly key: string;
  /** the new state; undefined for a deletion */
  readonly cur: StoredEntry | undefined;
  /** the state before; undefined for a creation */
  readonly prev: StoredEntry | undefined;
  /** Date.now() when recorded, for age-based eviction */
  readonly recordedAt: number;
}

export class EventHistory {
  private events: CacheEvent[] = [];
  private head = 0;
  /** every event with a revision above this one is retained */
  private start: number;

  constructor(
    startRevision: number,
    private readonly maxEvents: number,
    private readonly windowMs: number,
  ) {
    this.start = startRevision;
  }

  get startRevision(): number {
    return this.start;
  }

  get length(): number {
    return this.events.length - this.head;
  }

  push(e: CacheEvent): void {
    this.events.push(e);
    while (this.length > this.maxEvents) this.evictOne();
    this.evictOlderThan(e.recordedAt - this.windowMs);
  }

  evictOlderThan(cutoffMs: number): void {
    while (this.length > 0 && this.events[this.head]!.recordedAt < cutoffMs) this.evictOne();
  }

  /** the events after `revision`, oldest first; undefined when some of them were evicted */
  since(revision: number): CacheEvent[] | undefined {
    if (revision < this.start) return undefined;
    return this.events.slice(this.firstAfter(revision));
  }

  /** how many events since(revision) holds */
  countSince(revision: number): number | undefined {
    if (revision < this.start) return undefined;
    return this.events.length - this.firstAfter(revision);
  }

  private firstAfter(revision: number): number {
    let lo = this.head;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.events[mid]!.revision <= revision) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** forgets everything: only changes after `startRevision` can be replayed from now on */
  reset(startRevision: number): void {
    this.events = [];
    this.head = 0;
    this.start = startRevision;
  }

  private evictOne(): void {
    const e = this.events[this.head]!;
    this.start = Math.max(this.start, e.revision);
    this.head++;
    // compact the array now and then instead of shifting on every eviction
    if (this.head > 1024 && this.head * 2 > this.events.length) {
      this.events = this.events.slice(this.head);
      this.head = 0;
    }
  }
}
