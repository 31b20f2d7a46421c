// The order of a merged list. Items named by the patch come in the patch's order (or the
// $setElementOrder list's), the live object's other items keep their relative order and are
// woven in where the live order places them before a patch item.
//
// The sort comparator kube-apiserver uses is not a strict ordering when an item is missing from
// the order list, so the result depends on the sorting algorithm: Go's sort.SliceStable
// (insertion sort over blocks of 20, then in-place symmetric merges) is reproduced step for step.

import type { Json } from '../../machinery/json-patch.js';
import { smpErrors } from './strategic-errors.js';
import { goEqual, hasKey, isObject, type JsonObject } from './strategic-go.js';
import { firstNonMap, FirstPositions, goEqualityKey, mergeKeyOf, scalarMembership, scanning } from './strategic-index.js';

/** Go's stable sort over `items`, in place, with an index-based `less` as sort.SliceStable calls it */
export function goSliceStable<T>(items: T[], less: (a: T, b: T) => boolean): void {
  const lessAt = (i: number, j: number) => less(items[i] as T, items[j] as T);
  const swap = (i: number, j: number) => {
    const t = items[i] as T;
    items[i] = items[j] as T;
    items[j] = t;
  };
  const insertionSort = (a: number, b: number) => {
    for (let i = a + 1; i < b; i++) {
      for (let j = i; j > a && lessAt(j, j - 1); j--) swap(j, j - 1);
    }
  };
  const swapRange = (a: number, b: number, n: number) => {
    for (let i = 0; i < n; i++) swap(a + i, b + i);
  };
  const rotate = (a: number, m: number, b: number) => {
    let i = m - a;
    let j = b - m;
    while (i !== j) {
      if (i > j) {
        swapRange(m - i, m, j);
        i -= j;
      } else {
        swapRange(m - i, m + j - i, i);
        j -= i;
      }
    }
    swapRange(m - i, m, i);
  };
  const symMerge = (a: number, m: number, b: number): void => {
    if (m - a === 1) {
      // binary search for where items[a] goes in [m, b)
      let i = m;
      let j = b;
      while (i < j) {
        const h = (i + j) >>> 1;
        if (lessAt(h, a)) i = h + 1;
        else j = h;
      }
      for (let k = a; k < i - 1; k++) swap(k, k + 1);
      return;
    }
    if (b - m === 1) {
      let i = a;
      let j = m;
      while (i < j) {
        const h = (i + j) >>> 1;
        if (!lessAt(m, h)) i = h + 1;
        else j = h;
      }
      for (let k = m; k > i; k--) swap(k, k - 1);
      return;
    }
    const mid = (a + b) >>> 1;
    const n = mid + m;
    let start: number;
    let r: number;
    if (m > mid) {
      start = n - b;
      r = mid;
    } else {
      start = a;
      r = m;
    }
    const p = n - 1;
    while (start < r) {
      const c = (start + r) >>> 1;
      if (!lessAt(p - c, c)) start = c + 1;
      else r = c;
    }
    const end = n - start;
    if (start < m && m < end) rotate(start, m, end);
    if (a < start && start < mid) symMerge(a, start, mid);
    if (mid < end && end < b) symMerge(mid, end, b);
  };

  const n = items.length;
  let blockSize = 20;
  let a = 0;
  let b = blockSize;
  while (b <= n) {
    insertionSort(a, b);
    a = b;
    b += blockSize;
  }
  insertionSort(a, n);
  while (blockSize < n) {
    a = 0;
    b = 2 * blockSize;
    while (b <= n) {
      symMerge(a, a + blockSize, b);
      a = b;
      b += 2 * blockSize;
    }
    const m = a + blockSize;
    if (m < n) symMerge(a, m, n);
    blockSize *= 2;
  }
}

/** how list items are told apart: maps by their merge key, anything else by value */
export interface ItemIdentity {
  /** '' for lists of primitives */
  mergeKey: string;
  /** true when the list holds maps */
  maps: boolean;
}

function identityOf(item: Json, id: ItemIdentity): Json | undefined {
  if (!id.maps) return item;
  // an item that is not a map, or lacks the key, is identified by Go's nil
  return isObject(item) ? item[id.mergeKey] : undefined;
}

/** position of the item with the same identity in `list`, or -1 */
export function indexOfItem(list: readonly Json[], item: Json, id: ItemIdentity): number {
  const wanted = identityOf(item, id);
  return list.findIndex((v) => goEqual(wanted, identityOf(v, id)));
}

/** indexOfItem in `list` for many items: a scan for a short list, a map for a long one */
function positionsIn(list: readonly Json[], id: ItemIdentity): (item: Json) => number {
  if (list.length <= scanning.limit) return (item) => indexOfItem(list, item, id);
  const keyOf = (item: Json) => goEqualityKey(identityOf(item, id));
  const first = new FirstPositions(list, keyOf);
  return (item) => first.of(keyOf(item));
}

/** every item of `lists` must be a map carrying the merge key */
export function checkMergeKeys(mergeKey: string, ...lists: readonly Json[][]): void {
  for (const list of lists) {
    for (const item of list) {
      if (!isObject(item)) throw smpErrors.badArgType('map', item);
      if (!hasKey(item, mergeKey)) throw smpErrors.noMergeKey(item, mergeKey);
    }
  }
}

/** `toSort` ordered by `order`; for maps, items carrying `$patch: delete` go last */
function sortByOrder(toSort: Json[], order: readonly Json[], id: ItemIdentity): Json[] {
  let kept = toSort.slice();
  let deleted: Json[] = [];
  if (id.maps) {
    checkMergeKeys(id.mergeKey, toSort, order as Json[]);
    kept = toSort.filter((v) => !(isObject(v) && v['$patch'] === 'delete'));
    deleted = toSort.filter((v) => isObject(v) && v['$patch'] === 'delete');
  }
  const position = positionsIn(order, id);
  goSliceStable(kept, (a, b) => {
    const ia = position(a);
    if (ia >= 0) {
      const ib = position(b);
      if (ib >= 0) return ia < ib;
    }
    return true;
  });
  return [...kept, ...deleted];
}

/** Weaves `left` into `right`, both already ordered: a left item goes first only when both are
 *  in the live order and it comes earlier there. */
function weave(left: Json[], right: Json[], liveOrder: readonly Json[], id: ItemIdentity): Json[] {
  const position = positionsIn(liveOrder, id);
  const out: Json[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) {
      out.push(right[j++] as Json);
    } else if (j >= right.length) {
      out.push(left[i++] as Json);
    } else {
      const li = position(left[i] as Json);
      const ri = position(right[j] as Json);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++] as Json);
      else out.push(right[j++] as Json);
    }
  }
  return out;
}

/** The final order: patch items by `patchOrder`, server-only items by `liveOrder`, woven. */
export function normalizeOrder(
  patchItems: Json[],
  serverOnly: Json[],
  patchOrder: readonly Json[],
  liveOrder: readonly Json[],
  id: ItemIdentity,
): Json[] {
  const patchSorted = sortByOrder(patchItems, patchOrder, id);
  const serverSorted = sortByOrder(serverOnly, liveOrder, id);
  return weave(serverSorted, patchSorted, liveOrder, id);
}

/** splits `list` into the items present in `by` and the others, keeping their order */
export function partitionByPresence(list: readonly Json[], by: readonly Json[], id: ItemIdentity): [Json[], Json[]] {
  const present: Json[] = [];
  const absent: Json[] = [];
  const inBy = presenceIn(by, id);
  for (const v of list) {
    if (id.maps) {
      if (!isObject(v)) throw smpErrors.badArgType('map', v);
      if (!hasKey(v, id.mergeKey)) throw smpErrors.noMergeKey(v, id.mergeKey);
    }
    (inBy(v) ? present : absent).push(v);
  }
  return [present, absent];
}

/** whether `by` has an item of `v`'s identity (by merge key: findByMergeKey's answer, error included) */
function presenceIn(by: readonly Json[], id: ItemIdentity): (v: Json) => boolean {
  if (!id.maps) return scalarMembership(by);
  if (by.length <= scanning.limit) return (v) => findByMergeKey(by, id.mergeKey, (v as JsonObject)[id.mergeKey] as Json) >= 0;
  const nonMap = firstNonMap(by);
  const first = new FirstPositions(by, (item) => mergeKeyOf(item as JsonObject, id.mergeKey), nonMap < 0 ? by.length : nonMap);
  return (v) => {
    if (first.of(goEqualityKey((v as JsonObject)[id.mergeKey] as Json)) >= 0) return true;
    if (nonMap >= 0) throw smpErrors.notAMapInList(nonMap);
    return false;
  };
}

/** index of the first map in `list` whose `key` equals `value`; every item must be a map */
export function findByMergeKey(list: readonly Json[], key: string, value: Json): number {
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (!isObject(item)) throw smpErrors.notAMapInList(i);
    if (hasKey(item, key) && goEqual(item[key], value)) return i;
  }
  return -1;
}
