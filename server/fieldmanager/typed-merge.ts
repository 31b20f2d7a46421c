// Merging an applied configuration into a live value: leaves (scalars, atomic lists and maps)
// take the configuration's value, maps merge member by member, sets and map-lists item by
// item. Items keep the live order; new items go where the configuration puts them relative to
// the items both sides have (structured-merge-diff's ordering).

import { pathElementString, pathElementsEqual, serializePathElement, type PathElement } from './path.js';
import { deducedType, type Atom, type ListAtom, type TypeRef } from './schema.js';
import { asList, asMap, atomKind, deduceAtom, ListItemError, listItemPathElement, memberTypeOrDeduced, sameAtom } from './typed-common.js';
import type { Json, JsonMap } from './value.js';

export class MergeError extends Error {}

/** the merged value; undefined when neither side leaves anything */
export function mergeTyped(lhs: Json | undefined, rhs: Json | undefined, type: TypeRef): Json | undefined {
  return merge(lhs, rhs, type, '');
}

function merge(l: Json | undefined, r: Json | undefined, type: TypeRef, path: string): Json | undefined {
  const atom = type.atom();
  const al = deduceAtom(atom, l);
  const ar = deduceAtom(atom, r);
  if (r === undefined) return handle(al, l, r, path);
  if (l === undefined || sameAtom(al, ar)) return handle(ar, l, r, path);
  // different kinds on each side: the configuration's kind wins
  return handle(ar, l, r, path);
}

function keepRight(l: Json | undefined, r: Json | undefined): Json | undefined {
  return r !== undefined ? r : l;
}

function handle(a: Atom, l: Json | undefined, r: Json | undefined, path: string): Json | undefined {
  switch (atomKind(a)) {
    case 'scalar':
      return keepRight(l, r);
    case 'list': {
      const list = a.list!;
      const ll = asList(l);
      const rl = asList(r);
      if (list.atomic || ((!ll || ll.length === 0) && (!rl || rl.length === 0))) return keepRight(l, r);
      if (!ll && !rl) return undefined;
      const out = mergeListItems(list, ll ?? [], rl ?? [], path);
      return out.length > 0 ? out : undefined;
    }
    case 'map': {
      const map = a.map!;
      const lm = asMap(l);
      const rm = asMap(r);
      const lEmpty = !lm || Object.keys(lm).length === 0;
      const rEmpty = !rm || Object.keys(rm).length === 0;
      if (map.atomic || (lEmpty && rEmpty)) return keepRight(l, r);
      if (!lm && !rm) return undefined;
      const out: JsonMap = {};
      // live members first, in their order; then the configuration's new ones
      for (const key of Object.keys(lm ?? {})) {
        const v = merge(
          lm![key],
          rm && Object.hasOwn(rm, key) ? rm[key] : undefined,
          memberTypeOrDeduced(map, key, deducedType),
          `${path}.${key}`,
        );
        if (v !== undefined) out[key] = v;
      }
      for (const key of Object.keys(rm ?? {})) {
        if (lm && Object.hasOwn(lm, key)) continue;
        const v = merge(undefined, rm![key], memberTypeOrDeduced(map, key, deducedType), `${path}.${key}`);
        if (v !== undefined) out[key] = v;
      }
      return Object.keys(out).length > 0 ? out : undefined;
    }
    default:
      return keepRight(l, r);
  }
}

interface Indexed {
  pes: PathElement[];
  /** item by path element; a repeated element of the live side maps to null */
  observed: Map<string, Json>;
}

function index(list: ListAtom, items: Json[], allowDuplicates: boolean, path: string): Indexed {
  const pes: PathElement[] = [];
  const observed = new Map<string, Json>();
  items.forEach((item, i) => {
    let pe: PathElement;
    try {
      pe = listItemPathElement(list, item);
    } catch (err) {
      if (err instanceof ListItemError) throw new MergeError(`${path}: element ${i}: ${err.message}`);
      throw err;
    }
    const id = serializePathElement(pe);
    if (observed.has(id)) {
      if (!allowDuplicates) throw new MergeError(`${path}: duplicate entries for key ${pathElementString(pe)}`);
      observed.set(id, null);
    } else {
      observed.set(id, item);
    }
    pes.push(pe);
  });
  return { pes, observed };
}

function mergeListItems(list: ListAtom, lhs: Json[], rhs: Json[], path: string): Json[] {
  const out: Json[] = [];
  const right = index(list, rhs, false, path);
  const left = index(list, lhs, true, path);
  const id = serializePathElement;
  const shared = right.pes.filter((pe) => left.observed.has(id(pe)));
  let nextShared: PathElement | undefined = shared.shift();
  const mergedRight = new Set<string>();
  const item = (pe: PathElement, l: Json | undefined, r: Json | undefined) => {
    const v = merge(l, r, list.element, path + pathElementString(pe));
    if (v !== undefined) out.push(v);
  };
  let li = 0;
  let ri = 0;
  while (li < left.pes.length || ri < right.pes.length) {
    if (li < left.pes.length && ri < right.pes.length) {
      const pe = left.pes[li];
      if (pathElementsEqual(pe, right.pes[ri])) {
        mergedRight.add(id(pe));
        item(pe, left.observed.get(id(pe)), right.observed.get(id(pe)));
        li++;
        ri++;
        nextShared = shared.shift();
        continue;
      }
      if (right.observed.has(id(pe)) && nextShared !== undefined && !pathElementsEqual(nextShared, pe)) {
        li++;
        continue;
      }
    }
    if (li < left.pes.length) {
      const pe = left.pes[li];
      if (!right.observed.has(id(pe))) {
        item(pe, lhs[li], undefined);
        li++;
        continue;
      } else if (mergedRight.has(id(pe))) {
        li++;
      }
    }
    if (ri < right.pes.length) {
      const pe = right.pes[ri];
      mergedRight.add(id(pe));
      item(pe, left.observed.get(id(pe)), right.observed.get(id(pe)));
      ri++;
      if (nextShared !== undefined && pathElementsEqual(nextShared, pe)) nextShared = shared.shift();
    }
  }
  return out;
}
