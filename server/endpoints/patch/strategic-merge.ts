// Strategic merge patch as kube-apiserver applies it (k8s.io/apimachinery strategicpatch, the
// server side: parallel lists merged, nulls without a counterpart ignored).
//
// Like JSON merge patch, objects merge and `null` deletes. Lists follow the field's patch
// strategy: `merge` lists of maps merge item by item on the merge key, `merge` lists of
// primitives become the union, any other list is replaced. Directives in the patch:
//   `$patch: replace`  in a map: the map replaces the live one; as a list item: the list's
//                      other items replace the live list
//   `$patch: delete`   in a map: the map becomes empty; as a list item: the live item with its
//                      merge key goes
//   `$retainKeys: [..]` keys of the live map not listed are dropped
//   `$deleteFromPrimitiveList/<f>: [..]` values removed from primitive list <f>
//   `$setElementOrder/<f>: [..]` the order of list <f> after merging
//
// Both inputs are modified; callers pass copies.

import type { Json } from '../../machinery/json-patch.js';
import { smpErrors } from './strategic-errors.js';
import { goTypeOf, goEqual, hasKey, isObject, type GoType, type JsonObject } from './strategic-go.js';
import { findByMergeKey, normalizeOrder, partitionByPresence, type ItemIdentity } from './strategic-order.js';
import {
  deduplicateScalars,
  FirstPositions,
  firstNonMap,
  goEqualityKey,
  InPlaceRemoval,
  mergeKeyOf,
  scalarMembership,
  scanning,
} from './strategic-index.js';
import type { PatchMeta, PatchSchema } from './strategic-schema.js';

export { StrategicMergePatchError } from './strategic-errors.js';

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';
const SET_ELEMENT_ORDER = '$setElementOrder';

/** Applies `patch` to `original` (both objects) following `schema`; returns the result. */
export function applyStrategicMergePatch(original: JsonObject, patch: JsonObject, schema: PatchSchema): JsonObject {
  return mergeMap(original, patch, schema);
}

/** the strategy other than retainKeys (retainKeys only matters to the client building a patch) */
function listOrMapStrategy(meta: PatchMeta): string {
  const s = meta.strategies;
  if (s.length === 0) return '';
  if (s.length === 1) return s[0] === 'retainKeys' ? '' : (s[0] as string);
  if (s.length === 2) {
    if (s[0] === 'retainKeys') return s[1] as string;
    if (s[1] === 'retainKeys') return s[0] as string;
  }
  throw smpErrors.unexpectedStrategy(s);
}

/** `<prefix>/<field>` -> `<field>` */
function fieldOfDirectiveKey(key: string, prefix: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) {
    throw prefix === DELETE_FROM_PRIMITIVE_LIST
      ? smpErrors.badPatchFormatForPrimitiveList()
      : smpErrors.badPatchFormatForSetElementOrderList();
  }
  return key.slice(slash + 1);
}

/** drops null members of objects, at any depth (null list items stay) */
function discardNulls(v: Json): void {
  if (Array.isArray(v)) {
    for (const item of v) discardNulls(item);
  } else if (isObject(v)) {
    for (const [k, x] of Object.entries(v)) {
      if (x === null) delete v[k];
      else discardNulls(x);
    }
  }
}

/** Removes maps carrying `$patch` (and list items that are such maps), at any depth.
 *  Returns undefined when `v` itself is such a map. */
function removeDirectives(v: Json): Json | undefined {
  if (isObject(v)) {
    if (hasKey(v, DIRECTIVE)) return undefined;
    for (const [k, x] of Object.entries(v)) {
      const kept = removeDirectives(x);
      if (kept === undefined) delete v[k];
      else v[k] = kept;
    }
    return v;
  }
  if (Array.isArray(v)) {
    const out: Json[] = [];
    for (const item of v) {
      const kept = removeDirectives(item);
      if (kept !== undefined) out.push(kept);
    }
    return out;
  }
  return v;
}

/** a patch value taken as it is (no live counterpart to merge with) */
function setFromPatch(target: JsonObject, key: string, patchValue: Json): void {
  discardNulls(patchValue);
  const kept = removeDirectives(patchValue);
  if (kept === undefined) delete target[key];
  else target[key] = kept;
}

function mergeMap(original: JsonObject | null, patch: JsonObject, schema: PatchSchema): JsonObject {
  if (hasKey(patch, DIRECTIVE)) return mapDirective(patch[DIRECTIVE], patch);
  const out = original ?? {};
  applyRetainKeys(out, patch);
  mergeOrderedLists(out, patch, schema);

  for (const [patchKey, patchValue] of Object.entries(patch)) {
    let key = patchKey;
    let isDeleteList = false;
    if (patchKey.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      key = fieldOfDirectiveKey(patchKey, DELETE_FROM_PRIMITIVE_LIST);
      isDeleteList = true;
    }
    if (patchValue === null) {
      delete out[key];
      continue;
    }
    if (!hasKey(out, key)) {
      if (!isDeleteList) setFromPatch(out, key, patchValue);
      continue;
    }
    const liveValue = out[key] as Json;
    const liveType = goTypeOf(liveValue);
    if (liveType !== goTypeOf(patchValue)) {
      if (!isDeleteList) setFromPatch(out, key, patchValue);
      continue;
    }
    if (liveType === 'map') {
      const { schema: sub, meta } = schema.field(key);
      const strategy = listOrMapStrategy(meta);
      out[key] = strategy === 'replace' ? patchValue : mergeMap(liveValue as JsonObject, patchValue as JsonObject, sub);
    } else if (liveType === 'slice') {
      const { schema: sub, meta } = schema.listField(key);
      const strategy = listOrMapStrategy(meta);
      out[key] = mergeListField(liveValue as Json[], patchValue as Json[], sub, strategy, meta.mergeKey, isDeleteList);
    } else {
      // primitives are never maps carrying $patch: always kept
      out[key] = patchValue;
    }
  }
  return out;
}

/** `$patch` in a map: replace keeps the patch (minus the directive), delete empties it */
function mapDirective(directive: Json | undefined, patch: JsonObject): JsonObject {
  if (directive === 'replace') {
    delete patch[DIRECTIVE];
    return patch;
  }
  if (directive === 'delete') return {};
  throw smpErrors.badPatchType(directive, patch);
}

/** `$retainKeys`: live keys not listed go; every key the patch sets must be listed */
function applyRetainKeys(original: JsonObject, patch: JsonObject): void {
  if (!hasKey(patch, RETAIN_KEYS)) return;
  const list = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(list)) throw smpErrors.badPatchFormatForRetainKeys();
  const retained = new Set(list.filter((v): v is string => typeof v === 'string'));
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(DELETE_FROM_PRIMITIVE_LIST) || k.startsWith(SET_ELEMENT_ORDER)) continue;
    if (!retained.has(k)) throw smpErrors.badPatchFormatForRetainKeys();
  }
  for (const k of Object.keys(original)) if (!retained.has(k)) delete original[k];
}

function asList(v: Json | undefined): Json[] {
  if (!Array.isArray(v)) throw smpErrors.badArgType('slice', v);
  return v;
}

/** the common Go type of the items of `lists` (not itself a list) */
function elementType(...lists: Json[][]): GoType {
  let found: GoType | undefined;
  for (const list of lists) {
    for (const item of list) {
      const t = goTypeOf(item);
      if (found === undefined) {
        if (t === 'slice') throw smpErrors.noListOfLists();
        found = t;
      } else if (t !== found) {
        throw smpErrors.elementTypesDiffer(lists);
      }
    }
  }
  if (found === undefined) throw smpErrors.noElements();
  return found;
}

/** The patch's lists must name their items in an order the $setElementOrder list agrees with
 *  (deleted items aside), and only items that list names. */
function checkAgainstOrder(patchList: Json[], orderList: Json[], mergeKey: string): void {
  if (orderList.length === 0 || patchList.length === 0) return;
  let items = patchList;
  if (mergeKey !== '') {
    for (const item of patchList) if (!isObject(item)) throw smpErrors.badArgType('map', item);
    items = patchList.filter((v) => !(isObject(v) && v[DIRECTIVE] === 'delete'));
  }
  const sameItem = (a: Json, b: Json): boolean => {
    if (mergeKey === '') return goEqual(a, b);
    if (!isObject(a)) throw smpErrors.badArgType('map', a);
    if (!isObject(b)) throw smpErrors.badArgType('map', b);
    if (!hasKey(a, mergeKey)) throw smpErrors.noMergeKey(a, mergeKey);
    if (!hasKey(b, mergeKey)) throw smpErrors.noMergeKey(b, mergeKey);
    return goEqual(a[mergeKey], b[mergeKey]);
  };
  let p = 0;
  let o = 0;
  while (p < items.length && o < orderList.length) {
    const item = items[p] as Json;
    if (isObject(item) && hasKey(item, DIRECTIVE)) {
      p++;
      continue;
    }
    if (sameItem(item, orderList[o] as Json)) p++;
    o++;
  }
  if (p < items.length && o >= orderList.length) throw smpErrors.orderMismatch(patchList, orderList);
}

/** `$setElementOrder/<f>`: merges list <f> (if the patch has it) and puts it in that order */
function mergeOrderedLists(original: JsonObject, patch: JsonObject, schema: PatchSchema): void {
  for (const directiveKey of Object.keys(patch)) {
    if (!directiveKey.startsWith(SET_ELEMENT_ORDER)) continue;
    const orderValue = patch[directiveKey];
    delete patch[directiveKey];
    if (!Array.isArray(orderValue)) throw smpErrors.badArgType('slice', orderValue);
    const order = orderValue;
    const key = fieldOfDirectiveKey(directiveKey, SET_ELEMENT_ORDER);

    const foundLive = hasKey(original, key);
    const foundPatch = hasKey(patch, key);
    const live = foundLive ? asList(original[key]) : [];
    const patched = foundPatch ? asList(patch[key]) : [];
    const { schema: sub, meta } = schema.listField(key);
    const strategy = listOrMapStrategy(meta);
    checkAgainstOrder(patched, order, meta.mergeKey);

    let merged: Json[];
    if (foundLive && !foundPatch) {
      merged = live;
    } else if (!foundLive && foundPatch) {
      merged = removeDirectives(patched) as Json[];
    } else if (foundLive && foundPatch) {
      // shares `live` as Go shares the slice: the order below sees what the merge did to it
      merged = mergeListField(live, patched, sub, strategy, meta.mergeKey, false);
    } else {
      continue;
    }

    const id: ItemIdentity = { mergeKey: meta.mergeKey, maps: meta.mergeKey !== '' };
    const [named, others] = partitionByPresence(merged, order, id);
    const itemType = elementType(live, patched);
    original[key] = normalizeOrder(named, others, order, live, { mergeKey: meta.mergeKey, maps: itemType === 'map' });
    delete patch[key];
  }
}

function mergeListField(
  original: Json[],
  patch: Json[],
  schema: PatchSchema,
  strategy: string,
  mergeKey: string,
  isDeleteList: boolean,
): Json[] {
  // a deletion list applies whatever the field's strategy
  if (strategy === 'merge' || isDeleteList) return mergeList(original, patch, schema, mergeKey, isDeleteList);
  return patch;
}

/**
 * Merges two lists following the field's strategy. For lists of maps, `original` is treated
 * as Go's backing array: removing items shifts the later ones down in place and appended items
 * land in the freed slots. A caller that still looks at the live list afterwards (the
 * $setElementOrder step orders by it) sees what kube-apiserver's does.
 */
function mergeList(original: Json[], patch: Json[], schema: PatchSchema, mergeKey: string, isDeleteList: boolean): Json[] {
  if (original.length === 0 && patch.length === 0) return original;
  const itemType = elementType(original, patch);
  let merged: Json[];
  let live = original;
  let patchItems = patch;
  if (itemType !== 'map') {
    if (isDeleteList) return withoutValues(original, patch);
    merged = deduplicate([...original, ...patch]);
  } else {
    if (mergeKey === '') throw smpErrors.mergeListWithoutKey(schema.name);
    const directed = applyListDirectives(original, patch, mergeKey);
    live = directed.backing.slice(0, directed.length);
    patchItems = directed.patchItems;
    merged = mergeItems(directed.backing, directed.length, patchItems, mergeKey, schema);
  }
  const id: ItemIdentity = { mergeKey, maps: itemType === 'map' };
  const [named, others] = partitionByPresence(merged, patchItems, { mergeKey, maps: mergeKey !== '' });
  return normalizeOrder(named, others, patchItems, live, id);
}

/** the items of `list` equal to none of `values` */
function withoutValues(list: Json[], values: Json[]): Json[] {
  const gone = scalarMembership(values);
  return list.filter((v) => !gone(v));
}

/** Go's in-place de-duplication of scalars (a later duplicate is overwritten by the last item) */
function deduplicate(s: Json[]): Json[] {
  if (s.length > scanning.limit) return deduplicateScalars(s);
  let last = s.length - 1;
  for (let i = 0; i < last; i++) {
    for (let j = i + 1; j <= last; j++) {
      if (goEqual(s[i], s[j])) {
        s[j] = s[last] as Json;
        s.length = last;
        last--;
        j--;
      }
    }
  }
  return s;
}

/** a live list as Go slices it: the first `length` items of `backing` */
interface ListView {
  backing: Json[];
  length: number;
  /** the patch items left to merge */
  patchItems: Json[];
}

/** List items carrying `$patch`: deletions remove live items (in place, Go-style), `replace`
 *  makes the patch's other items the whole list. */
function applyListDirectives(original: Json[], patch: Json[], mergeKey: string): ListView {
  let length = original.length;
  const plain: Json[] = [];
  let replace = false;
  const removal =
    original.length > scanning.limit ? new InPlaceRemoval(original, length, mergeKey, (i) => smpErrors.notAMapInList(i)) : undefined;
  for (const v of patch) {
    const item = v as JsonObject;
    if (!hasKey(item, DIRECTIVE)) {
      plain.push(v);
      continue;
    }
    const directive = item[DIRECTIVE];
    if (directive === 'delete') {
      if (!hasKey(item, mergeKey)) throw smpErrors.noMergeKey(item, mergeKey);
      const value = item[mergeKey] as Json;
      if (removal) {
        removal.removeAll(value);
        continue;
      }
      for (;;) {
        const i = findByMergeKey(original.slice(0, length), mergeKey, value);
        if (i < 0) break;
        // the later items move down a slot; the last slot keeps its old item
        for (let t = i; t < length - 1; t++) original[t] = original[t + 1] as Json;
        length--;
      }
    } else if (directive === 'replace') {
      // keep scanning: the other directive items are dropped
      replace = true;
    } else if (directive === 'merge') {
      throw smpErrors.mergeDirectiveInList();
    } else {
      throw smpErrors.badPatchType(directive, item);
    }
  }
  if (removal) length = removal.finish();
  if (replace) return { backing: plain, length: plain.length, patchItems: [] };
  return { backing: original, length, patchItems: plain };
}

/** Merges each patch item into the live item with its merge key, or appends it (into the
 *  backing array's free slots first, as Go's append does). Returns the merged list. */
function mergeItems(backing: Json[], length: number, patch: Json[], mergeKey: string, schema: PatchSchema): Json[] {
  const appended: Json[] = [];
  let n = length;
  const index = length + patch.length > scanning.limit ? new MergeKeyIndex(backing, length, mergeKey) : undefined;
  for (const v of patch) {
    const item = v as JsonObject;
    if (!hasKey(item, mergeKey)) throw smpErrors.noMergeKey(item, mergeKey);
    const value = item[mergeKey] as Json;
    let i = index?.exact ? index.inBacking(value, n) : findByMergeKey(backing.slice(0, Math.min(n, backing.length)), mergeKey, value);
    if (i >= 0) {
      const merged = mergeMap(backing[i] as JsonObject, item, schema);
      backing[i] = merged;
      index?.merged(merged, value);
      continue;
    }
    i = index?.exact ? index.inAppended(value) : findByMergeKey(appended, mergeKey, value);
    if (i >= 0) {
      const merged = mergeMap(appended[i] as JsonObject, item, schema);
      appended[i] = merged;
      index?.merged(merged, value);
    } else if (n < backing.length) {
      index?.placed(value, n, false);
      backing[n++] = v;
    } else {
      index?.placed(value, appended.length, true);
      appended.push(v);
      n++;
    }
  }
  return [...backing.slice(0, Math.min(n, backing.length)), ...appended];
}

/** mergeItems' lookups by merge key, kept exact as long as merging leaves each item's key as it
 *  was (a patch can remove it: from then on the scans answer) */
class MergeKeyIndex {
  exact = true;
  private readonly backingFirst: FirstPositions;
  private readonly appendedFirst = new FirstPositions([], () => undefined);
  /** where a scan of the backing array stops with an error (-1: nowhere) */
  private readonly nonMap: number;

  constructor(
    backing: readonly Json[],
    length: number,
    private readonly mergeKey: string,
  ) {
    this.nonMap = firstNonMap(backing, length);
    this.backingFirst = new FirstPositions(
      backing,
      (item) => mergeKeyOf(item as JsonObject, mergeKey),
      this.nonMap < 0 ? length : this.nonMap,
    );
  }

  inBacking(value: Json, n: number): number {
    const at = this.backingFirst.of(goEqualityKey(value));
    if (at >= 0 && at < n) return at;
    if (this.nonMap >= 0 && this.nonMap < n) throw smpErrors.notAMapInList(this.nonMap);
    return -1;
  }

  inAppended(value: Json): number {
    return this.appendedFirst.of(goEqualityKey(value));
  }

  placed(value: Json, at: number, appended: boolean): void {
    (appended ? this.appendedFirst : this.backingFirst).add(goEqualityKey(value), at);
  }

  merged(item: JsonObject, value: Json): void {
    if (mergeKeyOf(item, this.mergeKey) !== goEqualityKey(value)) this.exact = false;
  }
}
