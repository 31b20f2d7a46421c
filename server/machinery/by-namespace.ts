// Objects kept by namespace and name, as a map per namespace. An informer of every Pod would
// otherwise key a flat map by `namespace/name`: a string made for each object and kept for
// its lifetime (two linked strings of about 60 bytes together, per object and per informer).

export class ByNamespace<V> {
  private readonly namespaces = new Map<string, Map<string, V>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(namespace: string, name: string): V | undefined {
    return this.namespaces.get(namespace)?.get(name);
  }

  /** the value it replaces, if any */
  set(namespace: string, name: string, value: V): V | undefined {
    let names = this.namespaces.get(namespace);
    if (!names) this.namespaces.set(namespace, (names = new Map()));
    const old = names.get(name);
    if (old === undefined) this.count++;
    names.set(name, value);
    return old;
  }

  /** the value it removes, if any */
  delete(namespace: string, name: string): V | undefined {
    const names = this.namespaces.get(namespace);
    const old = names?.get(name);
    if (old === undefined) return undefined;
    names!.delete(name);
    this.count--;
    if (names!.size === 0) this.namespaces.delete(namespace);
    return old;
  }

  /** deletes every entry `present` has no entry for, calling `deleted` with each as it goes
   *  (what a relist does with the objects it no longer found) */
  deleteAbsentFrom(present: ByNamespace<unknown>, deleted: (value: V) => void): void {
    for (const [namespace, name, value] of [...this.entries()]) {
      if (present.get(namespace, name) !== undefined) continue;
      this.delete(namespace, name);
      deleted(value);
    }
  }

  /** one namespace's values by name (a live view: do not change it) */
  namespace(namespace: string): ReadonlyMap<string, V> | undefined {
    return this.namespaces.get(namespace);
  }

  *values(): IterableIterator<V> {
    for (const names of this.namespaces.values()) yield* names.values();
  }

  /** [namespace, name, value] of every entry */
  *entries(): IterableIterator<[string, string, V]> {
    for (const [namespace, names] of this.namespaces) for (const [name, value] of names) yield [namespace, name, value];
  }
}
