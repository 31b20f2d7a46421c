// Field sets of typed values: the set a value spells out (what an applier owns), named fields
// made members (so removing a struct field removes it whole), and old sets brought in line with
// a type that became atomic.

import { serializePathElement, type Path, type PathElement } from './path.js';
import { deducedType, type MapAtom, type TypeRef } from './schema.js';
import { FieldSet } from './set.js';
import { asList, asMap, atomKind, deduceAtom, listPathElements, memberTypeOrDeduced } from './typed-common.js';
import { isMap, type Json } from './value.js';

/** The paths a value sets: every leaf, every list item, every member that is null, an empty
 *  map or not a declared field; an atomic list or map as a whole. */
export function toFieldSet(v: Json, type: TypeRef): FieldSet {
  const set = new FieldSet();
  walk(v, type, [], set);
  return set;
}

function walk(v: Json, type: TypeRef, path: PathElement[], set: FieldSet): void {
  const a = deduceAtom(type.atom(), v);
  switch (atomKind(a)) {
    case 'scalar':
      set.insert(path);
      return;
    case 'list': {
      const list = a.list!;
      if (list.atomic) return void set.insert(path);
      const items = asList(v);
      if (!items) return;
      const pes = listPathElements(list, items);
      if (!pes) return void set.insert(path);
      const counts = new Map<string, number>();
      for (const pe of pes) counts.set(serializePathElement(pe), (counts.get(serializePathElement(pe)) ?? 0) + 1);
      const repeated = (i: number) => (counts.get(serializePathElement(pes[i])) ?? 0) > 1;
      pes.forEach((pe, i) => {
        const childPath = [...path, pe];
        if (repeated(i)) {
          // a repeated item is owned as a whole, once
          set.insert(childPath);
          return;
        }
        walk(items[i], list.element, childPath, set);
        set.insert(childPath);
      });
      return;
    }
    case 'map': {
      const map = a.map!;
      if (map.atomic) return void set.insert(path);
      const m = asMap(v);
      if (!m) return;
      for (const [key, child] of Object.entries(m)) {
        const t = memberTypeOrDeduced(map, key, deducedType);
        const childPath: Path = [...path, { field: key }];
        walk(child, t, childPath as PathElement[], set);
        if (child === null || (isMap(child) && Object.keys(child).length === 0) || !map.fields.has(key)) set.insert(childPath);
      }
      return;
    }
    default:
      return;
  }
}

/** Adds, at every level, the declared fields that have children as members too: removing
 *  such a set from a value removes those fields whole. */
export function ensureNamedFieldsAreMembers(set: FieldSet, type: TypeRef | undefined): FieldSet {
  const atom = type?.atom();
  const members = [...set.members];
  const extra = new FieldSet(members, []);
  for (const c of set.children) {
    if ('field' in c.pe && atom?.map && atom.map.fields.has(c.pe.field)) extra.insert([c.pe]);
  }
  const children = set.children.map((c) => {
    let t: TypeRef | undefined;
    if ('field' in c.pe && atom?.map) t = memberTypeOrDeduced(atom.map, c.pe.field, deducedType);
    else if ('key' in c.pe && atom?.list) t = atom.list.element;
    return { pe: c.pe, set: ensureNamedFieldsAreMembers(c.set, t) };
  });
  return new FieldSet([...extra.members], children);
}

/**
 * A manager's set after its type changed from granular to atomic: ownership of anything inside
 * an atomic list or map becomes ownership of the whole. Undefined when nothing changes.
 */
export function reconcileWithSchema(set: FieldSet, type: TypeRef): FieldSet | undefined {
  const r: Reconciling = { path: [], toRemove: new FieldSet(), toAdd: new FieldSet() };
  reconcile(set, type, false, r);
  if (r.toRemove.empty() && r.toAdd.empty()) return undefined;
  return set.recursiveDifference(r.toRemove).union(r.toAdd);
}

/** a reconciling walk: its current path (one array, grown and shrunk) and what it changes */
interface Reconciling {
  readonly path: PathElement[];
  readonly toRemove: FieldSet;
  readonly toAdd: FieldSet;
}

function reconcile(set: FieldSet | undefined, type: TypeRef, isAtomic: boolean, r: Reconciling): void {
  const atom = type.atom();
  if (atom.map) {
    const map = atom.map;
    // an untyped deduced map is left as it is
    if (map.fields.size === 0 && map.element === deducedType) return;
    if (!isAtomic && map.atomic) {
      if (set && set.size() > 0) ownWhole(r);
      return;
    }
    if (!set) return;
    for (const c of set.children) if (!set.hasMember(c.pe)) reconcileAt(set, c.pe, false, memberTypeOf(map, c.pe), r);
    for (const m of set.members) reconcileAt(set, m, true, memberTypeOf(map, m), r);
    return;
  }
  if (atom.list) {
    if (!isAtomic && atom.list.atomic) return ownWhole(r);
    if (!set) return;
    for (const c of set.children) if (!set.hasMember(c.pe)) reconcileAt(set, c.pe, false, atom.list.element, r);
    for (const m of set.members) reconcileAt(set, m, true, atom.list.element, r);
  }
}

/** the path is owned as a whole instead of what was owned inside it */
function ownWhole(r: Reconciling): void {
  r.toRemove.insert(r.path);
  r.toAdd.insert(r.path);
}

function memberTypeOf(map: MapAtom, pe: PathElement): TypeRef | undefined {
  return 'field' in pe ? (map.fields.get(pe.field) ?? map.element) : undefined;
}

/** reconciles what `set` holds at `pe` (of type `type`, skipped when undefined) */
function reconcileAt(set: FieldSet, pe: PathElement, isMember: boolean, type: TypeRef | undefined, r: Reconciling): void {
  if (!type) return;
  const child = set.child(pe);
  r.path.push(pe);
  reconcile(child, type, isMember && !child, r);
  r.path.pop();
}
