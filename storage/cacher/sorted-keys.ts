// A sorted set of keys with range lookups by prefix: the cache's index for ordered lists and
// continue tokens. Keys are compared as JS strings, which is etcd's byte order for the ASCII
// keys Kubernetes uses. Inserts and deletes splice the array: O(n) memory moves, cheap next
// to decoding the objects a list returns.

export class SortedKeys {
  private keys: string[] = [];

  get size(): number {
    return this.keys.length;
  }

  /** index of the first key >= `key` */
  lowerBound(key: string): number {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.keys[mid]! < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  add(key: string): void {
    const i = this.lowerBound(key);
    if (this.keys[i] !== key) this.keys.splice(i, 0, key);
  }

  delete(key: string): void {
    const i = this.lowerBound(key);
    if (this.keys[i] === key) this.keys.splice(i, 1);
  }

  /** the keys starting with `prefix`, from `start` on (inclusive) when given, in order; the
   *  first `max` of them when given */
  range(prefix: string, start?: string, max = Infinity): string[] {
    const from = this.lowerBound(start !== undefined && start > prefix ? start : prefix);
    const to = Math.min(this.lowerBound(prefixEnd(prefix)), from + max);
    return from < to ? this.keys.slice(from, to) : [];
  }

  /** how many keys range(prefix, start) holds */
  countRange(prefix: string, start?: string): number {
    const from = this.lowerBound(start !== undefined && start > prefix ? start : prefix);
    return Math.max(0, this.lowerBound(prefixEnd(prefix)) - from);
  }

  countPrefix(prefix: string): number {
    return Math.max(0, this.lowerBound(prefixEnd(prefix)) - this.lowerBound(prefix));
  }

  clear(): void {
    this.keys = [];
  }
}

/** the smallest string greater than every string starting with `prefix` */
export function prefixEnd(prefix: string): string {
  if (prefix === '') return '\uffff';
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}
