// The difference between two values of a type, as three field sets: what the right side adds,
// modifies and removes. A leaf (scalar, atomic list or map, empty list or map) is compared
// whole; a list item or map member missing on one side is added or removed with everything
// under it.

import { serializePathElement, type PathElement } from './path.js';
import { deducedType, type Atom, type TypeRef } from './schema.js';
import { FieldSet } from './set.js';
import { asList, asMap, atomKind, deduceAtom, listPathElements, memberTypeOrDeduced, sameAtom } from './typed-common.js';
import { valuesEqual, type Json } from './value.js';

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/** `undefined` stands for an absent value on that side */
export function compareTyped(lhs: Json | undefined, rhs: Json | undefined, type: TypeRef): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  compare(lhs, rhs, type, [], c);
  return c;
}

function compare(l: Json | undefined, r: Json | undefined, type: TypeRef, path: PathElement[], c: Comparison): void {
  const atom = type.atom();
  const al = deduceAtom(atom, l);
  const ar = deduceAtom(atom, r);
  const leafOf = { inLeaf: false };
  if (r === undefined) handle(al, l, r, path, c, leafOf);
  else if (l === undefined || sameAtom(al, ar)) handle(ar, l, r, path, c, leafOf);
  else {
    // the two sides are different kinds: each is walked as what it is
    handle(al, l, r, path, c, { inLeaf: false });
    handle(ar, l, r, path, c, leafOf);
  }
  if (!leafOf.inLeaf) {
    if (l === undefined) c.added.insert(path);
    else if (r === undefined) c.removed.insert(path);
  }
}

function handle(a: Atom, l: Json | undefined, r: Json | undefined, path: PathElement[], c: Comparison, state: { inLeaf: boolean }): void {
  const leaf = () => {
    if (state.inLeaf) return;
    state.inLeaf = true;
    if (l === undefined) c.added.insert(path);
    else if (r === undefined) c.removed.insert(path);
    else if (!valuesEqual(l, r)) c.modified.insert(path);
  };
  switch (atomKind(a)) {
    case 'scalar':
      return leaf();
    case 'list': {
      const list = a.list!;
      const ll = asList(l);
      const rl = asList(r);
      if (list.atomic || ((!ll || ll.length === 0) && (!rl || rl.length === 0))) return leaf();
      if (!ll && !rl) return;
      const lpes = listPathElements(list, ll ?? []);
      const rpes = listPathElements(list, rl ?? []);
      if (!lpes || !rpes) return leaf();
      compareListItems(ll ?? [], lpes, rl ?? [], rpes, list.element, path, c);
      return;
    }
    case 'map': {
      const map = a.map!;
      const lm = asMap(l);
      const rm = asMap(r);
      const lEmpty = !lm || Object.keys(lm).length === 0;
      const rEmpty = !rm || Object.keys(rm).length === 0;
      if (map.atomic || (lEmpty && rEmpty)) return leaf();
      if (!lm && !rm) return;
      // `path` is one array, grown and shrunk as the walk goes (sets copy nothing of it)
      if (lm) {
        for (const key of Object.keys(lm)) {
          const rv = rm && Object.hasOwn(rm, key) ? rm[key] : undefined;
          path.push({ field: key });
          compare(lm[key], rv, memberTypeOrDeduced(map, key, deducedType), path, c);
          path.pop();
        }
      }
      if (rm) {
        for (const key of Object.keys(rm)) {
          if (lm && Object.hasOwn(lm, key)) continue;
          path.push({ field: key });
          compare(undefined, rm[key], memberTypeOrDeduced(map, key, deducedType), path, c);
          path.pop();
        }
      }
      return;
    }
    default:
      return;
  }
}

function compareListItems(
  ll: Json[],
  lpes: PathElement[],
  rl: Json[],
  rpes: PathElement[],
  element: TypeRef,
  path: PathElement[],
  c: Comparison,
): void {
  // items grouped by path element, in the order each element first appears (left, then right)
  const groups = new Map<string, { pe: PathElement; left: Json[]; right: Json[] }>();
  const groupOf = (pe: PathElement) => {
    const id = serializePathElement(pe);
    let g = groups.get(id);
    if (!g) {
      g = { pe, left: [], right: [] };
      groups.set(id, g);
    }
    return g;
  };
  ll.forEach((item, i) => groupOf(lpes[i]).left.push(item));
  rl.forEach((item, i) => groupOf(rpes[i]).right.push(item));
  for (const g of groups.values()) {
    const childPath = path;
    childPath.push(g.pe);
    if (g.left.length <= 1 && g.right.length <= 1) {
      compare(g.left[0], g.right[0], element, childPath, c);
    } else if (g.left.length >= 2 && g.right.length >= 2) {
      const same = g.left.length === g.right.length && g.left.every((v, i) => valuesEqual(v, g.right[i]));
      if (!same) c.modified.insert(childPath);
    } else if (g.left.length >= 2) {
      if (g.right.length !== 0) compare(undefined, g.right[0], element, childPath, c);
      c.removed.insert(childPath);
    } else {
      if (g.left.length !== 0) compare(g.left[0], undefined, element, childPath, c);
      c.added.insert(childPath);
    }
    childPath.pop();
  }
}
