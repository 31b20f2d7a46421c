// A sorted set of keys with range lookups by prefix: the cache's index for ordered lists and
// continue tokens. Keys are compared as JS strings, which is etcd's byte order for the ASCII
// keys Kubernetes uses. The keys are kept in sorted blocks of at most BLOCK_KEYS: an insert or
// delete moves at most one block's keys, not every key after it (one array of 100,000 keys
// moved 400 KB per create).

const BLOCK_KEYS = 512;

/** index of the first key >= `key` in a sorted array */
function lowerIn(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** a place among the keys: block `block`, index `index` in it (index may be the block's length) */
interface Position {
  block: number;
  index: number;
}

export class SortedKeys {
  /** non-empty, each sorted, every key of a block below every key of the next */
  private blocks: string[][] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** the block a key belongs in: the first whose last key is >= `key`, else the last */
  private blockFor(key: string): number {
    const blocks = this.blocks;
    let lo = 0;
    let hi = blocks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const block = blocks[mid]!;
      if (block[block.length - 1]! < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** where the first key >= `key` is */
  private position(key: string): Position {
    if (this.blocks.length === 0) return { block: 0, index: 0 };
    const block = this.blockFor(key);
    return { block, index: lowerIn(this.blocks[block]!, key) };
  }

  /** how many keys are < `key` */
  private rank(key: string): number {
    const { block, index } = this.position(key);
    let n = index;
    for (let b = 0; b < block; b++) n += this.blocks[b]!.length;
    return n;
  }

  add(key: string): void {
    if (this.blocks.length === 0) {
      this.blocks.push([key]);
      this.count = 1;
      return;
    }
    const { block, index } = this.position(key);
    const keys = this.blocks[block]!;
    if (keys[index] === key) return;
    keys.splice(index, 0, key);
    this.count++;
    if (keys.length > BLOCK_KEYS) this.blocks.splice(block + 1, 0, keys.splice(keys.length >> 1));
  }

  delete(key: string): void {
    if (this.blocks.length === 0) return;
    const { block, index } = this.position(key);
    const keys = this.blocks[block]!;
    if (keys[index] !== key) return;
    keys.splice(index, 1);
    this.count--;
    if (keys.length === 0) this.blocks.splice(block, 1);
  }

  /** the keys starting with `prefix`, from `start` on (inclusive) when given, in order; the
   *  first `max` of them when given */
  range(prefix: string, start?: string, max = Infinity): string[] {
    const end = prefixEnd(prefix);
    const out: string[] = [];
    let { block, index } = this.position(start !== undefined && start > prefix ? start : prefix);
    for (; block < this.blocks.length && out.length < max; block++, index = 0) {
      const keys = this.blocks[block]!;
      for (; index < keys.length && out.length < max; index++) {
        const key = keys[index]!;
        if (key >= end) return out;
        out.push(key);
      }
    }
    return out;
  }

  /** how many keys range(prefix, start) holds */
  countRange(prefix: string, start?: string): number {
    return Math.max(0, this.rank(prefixEnd(prefix)) - this.rank(start !== undefined && start > prefix ? start : prefix));
  }

  countPrefix(prefix: string): number {
    return Math.max(0, this.rank(prefixEnd(prefix)) - this.rank(prefix));
  }

  clear(): void {
    this.blocks = [];
    this.count = 0;
  }
}

/** the smallest string greater than every string starting with `prefix` */
export function prefixEnd(prefix: string): string {
  if (prefix === '') return '\uffff';
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}
