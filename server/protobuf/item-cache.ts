// The protobuf bytes of list items, kept between requests within a replica-wide byte budget.
//
// A protobuf list (what client-go's informers ask for) would otherwise decode every item's
// stored JSON and encode it again on every list: five times the time of the JSON list, which
// is written from the stored texts as they are. An item's bytes depend only on its stored
// version and the form it is written in (the list kind), so they are made once per version and
// shared by every list that includes it until the budget needs the room; the least recently
// used go first. A version is named by its key and etcd's modRevision, which no other version
// of that key shares: a changed object is never answered with its old bytes, and the cache
// keeps no stored object alive.

/** what an item costs beyond its bytes and its name: the map slot and the record */
const ENTRY_OVERHEAD_BYTES = 96;

/** one stored version of an object */
export interface CachedItemVersion {
  readonly key: string;
  readonly modRevision: number;
}

interface Cached {
  readonly modRevision: number;
  readonly bytes: Uint8Array;
  readonly cost: number;
}

export interface EncodedItemCacheStats {
  readonly bytes: number;
  readonly items: number;
  readonly hits: number;
  readonly misses: number;
}

export class EncodedItemCache {
  /** by form and key; the map's order is the eviction order, most recently used last */
  private readonly entries = new Map<string, Cached>();
  private used = 0;
  private hitCount = 0;
  private missCount = 0;

  constructor(readonly limitBytes: number) {}

  /** the bytes of `version` in `form`, made by `make` unless kept from an earlier request */
  get(version: CachedItemVersion, form: string, make: () => Uint8Array): Uint8Array {
    const name = `${form} ${version.key}`;
    const kept = this.entries.get(name);
    if (kept) {
      this.entries.delete(name);
      if (kept.modRevision === version.modRevision) {
        this.hitCount++;
        this.entries.set(name, kept);
        return kept.bytes;
      }
      this.used -= kept.cost;
    }
    this.missCount++;
    const bytes = make();
    const cost = bytes.length + 2 * name.length + ENTRY_OVERHEAD_BYTES;
    if (cost > this.limitBytes) return bytes;
    this.entries.set(name, { modRevision: version.modRevision, bytes, cost });
    this.used += cost;
    for (const [oldest, cached] of this.entries) {
      if (this.used <= this.limitBytes) break;
      this.entries.delete(oldest);
      this.used -= cached.cost;
    }
    return bytes;
  }

  get stats(): EncodedItemCacheStats {
    return { bytes: this.used, items: this.entries.size, hits: this.hitCount, misses: this.missCount };
  }
}
export const DEFAULT_ENCODED_ITEM_CACHE_BYTES = 64 * 1024 * 1024;

let processCache = new EncodedItemCache(DEFAULT_ENCODED_ITEM_CACHE_BYTES);

/** the replica's cache of encoded list items */
export function encodedItemCache(): EncodedItemCache {
  return processCache;
}

/** replaces the replica's cache with an empty one of `limitBytes` (0 keeps nothing) */
export function setEncodedItemCache(limitBytes: number): void {
  processCache = new EncodedItemCache(limitBytes);
}
