// One change, decoded at most once and shared by every watcher it is delivered to. The
// objects are frozen: watchers of one resource all hold the same object, and the HTTP layer
// only serializes it.

import type { KubeObject, SelectionPredicate, WatchEvent } from '../interface.js';
import { decodeEntry, deepFreeze } from './entry.js';
import type { CacheEvent } from './history.js';

export class DecodedEvent {
  private curObj: KubeObject | undefined;
  private prevObj: KubeObject | undefined;
  private added: WatchEvent | undefined;
  private modified: WatchEvent | undefined;
  private deleted: WatchEvent | undefined;

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

  /** the event a watcher with `predicate` sees, or undefined when it concerns it not */
  forPredicate(predicate: SelectionPredicate): WatchEvent | undefined {
    const { cur, prev } = this.event;
    if (predicate.isEverything) {
      if (cur) return prev ? this.modifiedEvent() : this.addedEvent();
      return prev ? this.deletedEvent() : undefined;
    }
    if (predicate.keyMayMatch && !predicate.keyMayMatch(this.event.key)) return undefined;
    const curPasses = cur !== undefined && predicate.matches(this.cur());
    const prevPasses = prev !== undefined && predicate.matches(this.prev());
    if (curPasses) return prevPasses ? this.modifiedEvent() : this.addedEvent();
    // leaving the selection looks like a deletion to this watcher: the last state it saw
    return prevPasses ? this.deletedEvent() : undefined;
  }

  private addedEvent(): WatchEvent {
    return (this.added ??= { type: 'ADDED', object: this.cur() });
  }

  private modifiedEvent(): WatchEvent {
    return (this.modified ??= { type: 'MODIFIED', object: this.cur() });
  }

  private deletedEvent(): WatchEvent {
    return (this.deleted ??= { type: 'DELETED', object: this.prev() });
  }
}
