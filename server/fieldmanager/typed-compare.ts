// The difference between two values of a type, as three field sets: what the right side adds,
// modifies and removes. A leaf (scalar, atomic list or map, empty list or map) is compared
// whole; a list item or map member missing on one side is added or removed with everything
// under it.

import type { PathElement } from './path.js';
import { deducedType, type Atom, type TypeRef } from './schema.js';
import { FieldSet } from './set.js';
import { asList, asMap, atomKind, deduceAtom, listPathElements, memberTypeOrDeduced, pathElementId, sameAtom } from './typed-common.js';
import { isEmptyMap, valuesEqual, type Json } from './value.js';

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/**
 * One of the three sets as the walk fills it: the set's node of each prefix of the walk's path
 * is kept as it is reached, so that a path (typically every node of a created object) is added
 * below its parent's node instead of being looked up again level by level from the root.
 */
class SetAtPath {
  readonly set = new FieldSet();
  /** levels[i]: the node of the path's first i elements, for i below `reached` (entries
   *  beyond are left from other paths, to be overwritten) */
  private readonly levels: FieldSet[] = [this.set];
  private reached = 1;

  /** adds `path` (the walk's current path, not empty) */
  insert(path: readonly PathElement[]): void {
    const levels = this.levels;
    for (let i = this.reached; i < path.length; i++) levels[i] = levels[i - 1].descend(path[i - 1]);
    if (this.reached < path.length) this.reached = path.length;
    levels[path.length - 1].insertMember(path[path.length - 1]);
  }

  /** the walk left its path's prefix of this length: deeper nodes are of another path now */
  truncate(length: number): void {
    if (this.reached > length + 1) this.reached = length + 1;
  }
}

/** the walk's state: its current path (one array, grown and shrunk) and the three sets */
class Walk {
  readonly path: PathElement[] = [];
  readonly added = new SetAtPath();
  readonly modified = new SetAtPath();
  readonly removed = new SetAtPath();

  push(pe: PathElement): void {
    this.path.push(pe);
  }

  pop(): void {
    this.path.pop();
    const length = this.path.length;
    this.added.truncate(length);
    this.modified.truncate(length);
    this.removed.truncate(length);
  }

  /** the current path is added, removed or modified, as which side is absent says */
  record(l: Json | undefined, r: Json | undefined): void {
    if (l === undefined) this.added.insert(this.path);
    else if (r === undefined) this.removed.insert(this.path);
    else if (!valuesEqual(l, r)) this.modified.insert(this.path);
  }
}

/** `undefined` stands for an absent value on that side */
export function compareTyped(lhs: Json | undefined, rhs: Json | undefined, type: TypeRef): Comparison {
  const w = new Walk();
  compare(lhs, rhs, type, w);
  return { added: w.added.set, modified: w.modified.set, removed: w.removed.set };
}

function compare(l: Json | undefined, r: Json | undefined, type: TypeRef, w: Walk): void {
  if (l === undefined && r !== undefined) return addedWhole(r, type, w);
  const atom = type.atom();
  const al = deduceAtom(atom, l);
  const ar = deduceAtom(atom, r);
  let leaf: boolean;
  if (r === undefined) leaf = handle(al, l, r, w);
  else if (l === undefined || sameAtom(al, ar)) leaf = handle(ar, l, r, w);
  else {
    // the two sides are different kinds: each is walked as what it is
    handle(al, l, r, w);
    leaf = handle(ar, l, r, w);
  }
  // a value that is no leaf is added or removed (besides everything under it) as a whole
  if (!leaf && w.path.length > 0 && (l === undefined || r === undefined)) w.record(l, r);
}

/**
 * `r` where the left side has nothing: every path in it is added, leaf or not (what compare
 * finds walking it against undefined, without comparing each value with nothing). Most of a
 * created object goes through here.
 */
function addedWhole(r: Json, type: TypeRef, w: Walk): void {
  if (w.path.length > 0) w.added.insert(w.path);
  const a = deduceAtom(type.atom(), r);
  switch (atomKind(a)) {
    case 'list': {
      const list = a.list!;
      const rl = asList(r);
      if (list.atomic || !rl || rl.length === 0) return;
      const rpes = listPathElements(list, rl);
      if (!rpes) return;
      // an item whose path element repeats is added whole, once
      let repeats: Map<string, number> | undefined;
      if (rl.length > 1) {
        repeats = new Map();
        for (const pe of rpes) {
          const id = pathElementId(pe);
          repeats.set(id, (repeats.get(id) ?? 0) + 1);
        }
        if (repeats.size === rl.length) repeats = undefined;
      }
      const done = repeats ? new Set<string>() : undefined;
      for (let i = 0; i < rl.length; i++) {
        const pe = rpes[i]!;
        if (repeats && (repeats.get(pathElementId(pe)) ?? 0) > 1) {
          const id = pathElementId(pe);
          if (done!.has(id)) continue;
          done!.add(id);
          w.push(pe);
          w.added.insert(w.path);
          w.pop();
          continue;
        }
        w.push(pe);
        addedWhole(rl[i]!, list.element, w);
        w.pop();
      }
      return;
    }
    case 'map': {
      const map = a.map!;
      const rm = asMap(r);
      if (map.atomic || !rm) return;
      for (const key in rm) {
        w.push({ field: key });
        addedWhole(rm[key]!, memberTypeOrDeduced(map, key, deducedType), w);
        w.pop();
      }
      return;
    }
    default:
      return;
  }
}

/** walks both sides as `a`; true when they were compared as a leaf (and recorded as one) */
function handle(a: Atom, l: Json | undefined, r: Json | undefined, w: Walk): boolean {
  switch (atomKind(a)) {
    case 'scalar':
      return leaf(l, r, w);
    case 'list': {
      const list = a.list!;
      const ll = asList(l);
      const rl = asList(r);
      if (list.atomic || ((!ll || ll.length === 0) && (!rl || rl.length === 0))) return leaf(l, r, w);
      if (!ll && !rl) return false;
      const lpes = listPathElements(list, ll ?? []);
      const rpes = listPathElements(list, rl ?? []);
      if (!lpes || !rpes) return leaf(l, r, w);
      compareListItems(ll ?? [], lpes, rl ?? [], rpes, list.element, w);
      return false;
    }
    case 'map': {
      const map = a.map!;
      const lm = asMap(l);
      const rm = asMap(r);
      if (map.atomic || ((!lm || isEmptyMap(lm)) && (!rm || isEmptyMap(rm)))) return leaf(l, r, w);
      if (!lm && !rm) return false;
      if (lm) {
        for (const key in lm) {
          const rv = rm && Object.hasOwn(rm, key) ? rm[key] : undefined;
          w.push({ field: key });
          compare(lm[key], rv, memberTypeOrDeduced(map, key, deducedType), w);
          w.pop();
        }
      }
      if (rm) {
        for (const key in rm) {
          if (lm && Object.hasOwn(lm, key)) continue;
          w.push({ field: key });
          compare(undefined, rm[key], memberTypeOrDeduced(map, key, deducedType), w);
          w.pop();
        }
      }
      return false;
    }
    default:
      return false;
  }
}

function leaf(l: Json | undefined, r: Json | undefined, w: Walk): true {
  if (w.path.length > 0) w.record(l, r);
  return true;
}

interface ItemGroup {
  pe: PathElement;
  left: Json[];
  right: Json[];
}

function compareListItems(ll: Json[], lpes: PathElement[], rl: Json[], rpes: PathElement[], element: TypeRef, w: Walk): void {
  // items grouped by path element (the sets come out sorted whatever the order of the groups)
  const groups = new Map<string, ItemGroup>();
  const groupOf = (pe: PathElement): ItemGroup => {
    const id = pathElementId(pe);
    let g = groups.get(id);
    if (!g) {
      g = { pe, left: [], right: [] };
      groups.set(id, g);
    }
    return g;
  };
  for (let i = 0; i < ll.length; i++) groupOf(lpes[i]).left.push(ll[i]);
  for (let i = 0; i < rl.length; i++) groupOf(rpes[i]).right.push(rl[i]);
  for (const g of groups.values()) {
    w.push(g.pe);
    if (g.left.length <= 1 && g.right.length <= 1) {
      compare(g.left[0], g.right[0], element, w);
    } else if (g.left.length >= 2 && g.right.length >= 2) {
      const same = g.left.length === g.right.length && g.left.every((v, i) => valuesEqual(v, g.right[i]));
      if (!same) w.modified.insert(w.path);
    } else if (g.left.length >= 2) {
      if (g.right.length !== 0) compare(undefined, g.right[0], element, w);
      w.removed.insert(w.path);
    } else {
      if (g.left.length !== 0) compare(g.left[0], undefined, element, w);
      w.added.insert(w.path);
    }
    w.pop();
  }
}
