// Lookups of list items by identity for strategic merge patch. kube-apiserver finds each item
// of one list in another by scanning it (Go's `==` on decoded values), which is quadratic in the
// lists' lengths: a patch of 20k items against a list of 20k took kapi's single thread minutes.
// Items whose identity is a scalar are found through a map instead; the answers, errors and
// even the slots Go leaves behind in a list it shrank in place stay as the scans give them.
// Short lists keep the scans (cheaper than building a map, and the reference the tests hold
// the maps to).

import type { Json } from '../../machinery/json-patch.js';
import { goEqual, goTypeOf, hasKey, isObject, type JsonObject } from './strategic-go.js';

/** lists up to this long are scanned (a setting so that tests can hold the maps to the scans) */
export const scanning = { limit: 32 };

/** A key two values share exactly when Go's `==` holds between them; maps and slices equal
 *  nothing, so they have none. */
export function goEqualityKey(v: Json | undefined): string | undefined {
  const t = goTypeOf(v);
  if (t === 'map' || t === 'slice') return undefined;
  if (t === 'nil') return 'nil';
  return `${t}:${String(v)}`;
}

/** The first position of each key among a list's first `end` items (items without a key are
 *  skipped); positions added later count only for keys not seen before. */
export class FirstPositions {
  private readonly first = new Map<string, number>();

  constructor(list: readonly Json[], keyOf: (item: Json) => string | undefined, end = list.length) {
    for (let i = end - 1; i >= 0; i--) {
      const key = keyOf(list[i] as Json);
      if (key !== undefined) this.first.set(key, i);
    }
  }

  /** the first position of `key`, or -1 */
  of(key: string | undefined): number {
    return key === undefined ? -1 : (this.first.get(key) ?? -1);
  }

  add(key: string | undefined, position: number): void {
    if (key !== undefined && !this.first.has(key)) this.first.set(key, position);
  }
}

/** whether a value equals (Go's ==) one of `values`: a scan of a short list, a set of a long one */
export function scalarMembership(values: readonly Json[]): (v: Json) => boolean {
  if (values.length <= scanning.limit) return (v) => values.some((x) => goEqual(x, v));
  const keys = new Set(values.map((x) => goEqualityKey(x)));
  return (v) => {
    const key = goEqualityKey(v);
    return key !== undefined && keys.has(key);
  };
}

/** the first map of `list` that is not one (-1 when all are), where a scan for a merge key
 *  stops with an error unless it found its item before */
export function firstNonMap(list: readonly Json[], end = list.length): number {
  for (let i = 0; i < end; i++) if (!isObject(list[i])) return i;
  return -1;
}

/** the merge key's value of a map as a lookup key (none when the map lacks it) */
export function mergeKeyOf(item: JsonObject, mergeKey: string): string | undefined {
  return hasKey(item, mergeKey) ? goEqualityKey(item[mergeKey]) : undefined;
}

/**
 * Go's in-place de-duplication of scalars (sigs.k8s.io strategicpatch's deduplicateScalars):
 * for each item in turn, every later equal item is overwritten by the list's last item, which
 * is checked again in its new place. Done with a min-heap of positions per value, so that the
 * next equal item is found without scanning; the result is the scan's, item for item.
 */
export function deduplicateScalars(s: Json[]): Json[] {
  const heaps = new Map<string, number[]>();
  const keys: (string | undefined)[] = s.map((v) => goEqualityKey(v));
  for (let p = 0; p < s.length; p++) {
    const key = keys[p];
    if (key === undefined) continue;
    let heap = heaps.get(key);
    if (!heap) heaps.set(key, (heap = []));
    heapPush(heap, p);
  }
  let last = s.length - 1;
  for (let i = 0; i < last; i++) {
    const key = keys[i];
    if (key === undefined) continue;
    const heap = heaps.get(key) as number[];
    for (;;) {
      // the smallest position after i still holding this value (entries left by moves are stale)
      while (heap.length > 0 && ((heap[0] as number) <= i || (heap[0] as number) > last || keys[heap[0] as number] !== key)) heapPop(heap);
      if (heap.length === 0) break;
      const j = heapPop(heap);
      s[j] = s[last] as Json;
      keys[j] = keys[last];
      const moved = keys[j];
      if (j !== last && moved !== undefined) {
        let movedHeap = heaps.get(moved);
        if (!movedHeap) heaps.set(moved, (movedHeap = []));
        heapPush(movedHeap, j);
      }
      s.length = last;
      keys.length = last;
      last--;
      if (i >= last) break;
    }
  }
  return s;
}

function heapPush(heap: number[], v: number): void {
  heap.push(v);
  let c = heap.length - 1;
  while (c > 0) {
    const p = (c - 1) >> 1;
    if ((heap[p] as number) <= v) break;
    heap[c] = heap[p] as number;
    c = p;
  }
  heap[c] = v;
}

function heapPop(heap: number[]): number {
  const top = heap[0] as number;
  const end = heap.pop() as number;
  if (heap.length > 0) {
    let c = 0;
    for (;;) {
      const l = 2 * c + 1;
      if (l >= heap.length) break;
      const r = l + 1;
      const m = r < heap.length && (heap[r] as number) < (heap[l] as number) ? r : l;
      if ((heap[m] as number) >= end) break;
      heap[c] = heap[m] as number;
      c = m;
    }
    heap[c] = end;
  }
  return top;
}

/**
 * Removes from the first `length` items of `list`, in place, every map whose merge key equals a
 * value, as Go's loop does it: find the first such item, move the later ones down a slot (the
 * last slot keeps its old item), again until none is left. The survivors and the slots Go leaves
 * behind (a caller may still look at the list's old length) come out the same, without a scan
 * per removal. A scan meets a non-map before any match with an error; so does this.
 */
export class InPlaceRemoval {
  private readonly bound: number;
  private readonly positions = new Map<string, { at: number[]; next: number }>();
  private readonly removed: Uint8Array;
  private removedCount = 0;
  private lastKept: number;
  private currentLength: number;
  /** what slot p keeps once the list is shorter than p + 1 */
  private readonly leftBehind = new Map<number, Json>();

  constructor(
    private readonly list: Json[],
    private readonly length: number,
    mergeKey: string,
    private readonly notAMap: (position: number) => Error,
  ) {
    const f = firstNonMap(list, length);
    this.bound = f < 0 ? length : f;
    for (let i = 0; i < this.bound; i++) {
      const key = mergeKeyOf(list[i] as JsonObject, mergeKey);
      if (key === undefined) continue;
      let entry = this.positions.get(key);
      if (!entry) this.positions.set(key, (entry = { at: [], next: 0 }));
      entry.at.push(i);
    }
    this.removed = new Uint8Array(length);
    this.lastKept = length - 1;
    this.currentLength = length;
  }

  /** removes every item whose merge key is `value` */
  removeAll(value: Json): void {
    const key = goEqualityKey(value);
    const entry = key === undefined ? undefined : this.positions.get(key);
    for (;;) {
      const j = entry && entry.next < entry.at.length ? (entry.at[entry.next++] as number) : -1;
      if (j < 0) {
        if (this.bound < this.length) throw this.notAMap(this.bound - this.removedCount);
        return;
      }
      this.leftBehind.set(this.currentLength - 1, this.list[this.lastKept] as Json);
      this.removed[j] = 1;
      this.removedCount++;
      this.currentLength--;
      while (this.lastKept >= 0 && this.removed[this.lastKept] === 1) this.lastKept--;
    }
  }

  /** writes the survivors and the left-behind slots into the list; its new length */
  finish(): number {
    if (this.removedCount === 0) return this.length;
    const list = this.list;
    let w = 0;
    for (let i = 0; i < this.length; i++) if (this.removed[i] !== 1) list[w++] = list[i] as Json;
    for (let p = w; p < this.length; p++) list[p] = this.leftBehind.get(p) as Json;
    return w;
  }
}
