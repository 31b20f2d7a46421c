// Owners known not to exist (an identity: uid, coordinates and, for namespaced owners, the
// namespace they were looked up in). UIDs are never reused, so an entry never turns stale;
// the cache is bounded only to bound memory, dropping the least recently used entry.

import type { ObjectIdentity } from './types.js';

export class AbsentOwnerCache {
  private readonly entries = new Map<string, true>();

  constructor(private readonly capacity = 500) {}

  private static key(id: ObjectIdentity): string {
    return JSON.stringify([id.uid, id.apiVersion, id.kind, id.name, id.namespace]);
  }

  add(id: ObjectIdentity): void {
    const k = AbsentOwnerCache.key(id);
    this.entries.delete(k);
    this.entries.set(k, true);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  has(id: ObjectIdentity): boolean {
    const k = AbsentOwnerCache.key(id);
    if (!this.entries.has(k)) return false;
    // refresh its place as the most recently used
    this.entries.delete(k);
    this.entries.set(k, true);
    return true;
  }
}
