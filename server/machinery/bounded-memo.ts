// Memos of values that repeat from request to request (label keys, manager identities, quantity
// texts, FieldsV1 keys): bounded, and forgotten all at once when full, since a miss only costs
// working the value out again. Used where a hot path would otherwise compute the same answer on
// every write.

export class BoundedMemo<V> {
  private readonly map = new Map<string, V>();

  constructor(private readonly limit: number) {}

  /** the value remembered for `key`, `compute`d (and remembered) the first time */
  get(key: string, compute: () => V): V {
    let v = this.map.get(key);
    if (v === undefined) {
      v = compute();
      this.set(key, v);
    }
    return v;
  }

  /** the value remembered for `key`, if any */
  peek(key: string): V | undefined {
    return this.map.get(key);
  }

  set(key: string, v: V): void {
    if (this.map.size >= this.limit) this.map.clear();
    this.map.set(key, v);
  }
}
