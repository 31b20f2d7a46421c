// One change, decoded at most once and shared by every watcher it is delivered to. The
// objects are frozen: watchers of one resource all hold the same object, and the HTTP layer
// only serializes it.

import type { KubeObject, SelectionPredicate, WatchEvent } from '../interface.js';
import { decodeEntry, decodeEntryMetadata, deepFreeze, metadataOf } from './entry.js';
import type { CacheEvent } from './history.js';

export class DecodedEvent {
  private curObj: KubeObject | undefined;
  private prevObj: KubeObject | undefined;
  private curMetaObj: KubeObject | undefined;
  private prevMetaObj: KubeObject | undefined;
  /** the events handed out: ADDED, MODIFIED, DELETED, each whole, then metadata only */
  private readonly events: (WatchEvent | undefined)[] = [];

  constructor(readonly event: CacheEvent) {}

  get revision(): number {
    return this.event.revision;
  }

  /** the new state, at its own mod revision */
  private cur(): KubeObject {
    return (this.curObj ??= deepFreeze(decodeEntry(this.event.cur!)));
  }

  /** the previous state, carrying the revision of this change (what DELETED reports) */
  private prev(): KubeObject {
    return (this.prevObj ??= deepFreeze(decodeEntry(this.event.prev!, this.event.revision)));
  }

  /** cur() for a reader of metadata: from the whole object when it is decoded already */
  private curMeta(): KubeObject {
    return (this.curMetaObj ??= this.curObj ? Object.freeze(metadataOf(this.curObj)) : deepFreeze(decodeEntryMetadata(this.event.cur!)));
  }

  private prevMeta(): KubeObject {
    return (this.prevMetaObj ??= this.prevObj
      ? Object.freeze(metadataOf(this.prevObj))
      : deepFreeze(decodeEntryMetadata(this.event.prev!, this.event.revision)));
  }

  /** the event a watcher with `predicate` sees, or undefined when it concerns it not; with
   *  `metadataOnly`, its object may have nothing but kind, apiVersion and metadata */
  forPredicate(predicate: SelectionPredicate, metadataOnly = false): WatchEvent | undefined {
    const { cur, prev } = this.event;
    if (predicate.isEverything) {
      if (cur) return this.eventOf(prev ? 'MODIFIED' : 'ADDED', metadataOnly);
      return prev ? this.eventOf('DELETED', metadataOnly) : undefined;
    }
    if (predicate.keyMayMatch && !predicate.keyMayMatch(this.event.key)) return undefined;
    const curPasses = cur !== undefined && predicate.matches(this.cur());
    const prevPasses = prev !== undefined && predicate.matches(this.prev());
    if (curPasses) return this.eventOf(prevPasses ? 'MODIFIED' : 'ADDED', metadataOnly);
    // leaving the selection looks like a deletion to this watcher: the last state it saw
    return prevPasses ? this.eventOf('DELETED', metadataOnly) : undefined;
  }

  private eventOf(type: 'ADDED' | 'MODIFIED' | 'DELETED', metadataOnly: boolean): WatchEvent {
    const slot = (type === 'ADDED' ? 0 : type === 'MODIFIED' ? 1 : 2) + (metadataOnly ? 3 : 0);
    let ev = this.events[slot];
    if (!ev) {
      const object = type === 'DELETED' ? (metadataOnly ? this.prevMeta() : this.prev()) : metadataOnly ? this.curMeta() : this.cur();
      ev = { type, object };
      this.events[slot] = ev;
    }
    return ev;
  }
}
