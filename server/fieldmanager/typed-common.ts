// What every walk over a typed value shares: narrowing a type to the kind of a value, the
// path element of a list item, and the type of a map member.

import { keyElement, type PathElement } from './path.js';
import { memberType, type Atom, type ListAtom, type MapAtom, type TypeRef } from './schema.js';
import { isMap, isScalar, type Json, type JsonMap } from './value.js';

/** the part of an atom that fits the value (structured-merge-diff's deduceAtom) */
export function deduceAtom(atom: Atom, v: Json | undefined): Atom {
  if (v === undefined || v === null) return atom;
  if (isScalar(v)) return atom.scalar !== undefined ? partOf(atom, 'scalar') : atom;
  if (Array.isArray(v)) return atom.list ? partOf(atom, 'list') : atom;
  return atom.map ? partOf(atom, 'map') : atom;
}

type AtomPart = 'scalar' | 'list' | 'map';

/** the parts of atoms of more than one kind, made once: this runs for every value walked */
const atomParts = new WeakMap<Atom, Partial<Record<AtomPart, Atom>>>();

/** the atom with only its `part` (present in it) */
function partOf(atom: Atom, part: AtomPart): Atom {
  const kinds = (atom.scalar !== undefined ? 1 : 0) + (atom.list ? 1 : 0) + (atom.map ? 1 : 0);
  if (kinds === 1) return atom;
  let parts = atomParts.get(atom);
  if (!parts) {
    parts = {};
    atomParts.set(atom, parts);
  }
  return (parts[part] ??= part === 'scalar' ? { scalar: atom.scalar } : part === 'list' ? { list: atom.list } : { map: atom.map });
}

export type AtomKind = 'map' | 'scalar' | 'list' | 'none';

/** which handler an atom goes to: maps first, then scalars, then lists */
export function atomKind(a: Atom): AtomKind {
  if (a.map) return 'map';
  if (a.scalar !== undefined) return 'scalar';
  if (a.list) return 'list';
  return 'none';
}

export function sameAtom(a: Atom, b: Atom): boolean {
  return a.map === b.map && a.scalar === b.scalar && a.list === b.list;
}

export function asMap(v: Json | undefined): JsonMap | undefined {
  return isMap(v) ? v : undefined;
}

export function asList(v: Json | undefined): Json[] | undefined {
  return Array.isArray(v) ? v : undefined;
}

export class ListItemError extends Error {}

/** the path element of an item of a set or map-list */
export function listItemPathElement(list: ListAtom, item: Json): PathElement {
  if (list.atomic) throw new ListItemError('invalid indexing of non-associative list');
  if (list.keys.length > 0) {
    if (item === null) throw new ListItemError('associative list with keys may not have a null element');
    if (!isMap(item)) throw new ListItemError('associative list with keys may not have non-map elements');
    const defaults = list.element.atom().map?.defaults;
    const fields = list.keys.map((name) => {
      if (Object.hasOwn(item, name)) return { name, value: item[name] };
      const def = defaults?.get(name);
      if (def !== undefined) return { name, value: def };
      throw new ListItemError(
        `associative list with keys has an element that omits key field ${JSON.stringify(name)} (and doesn't have default value)`,
      );
    });
    return keyElement(fields);
  }
  if (isMap(item)) throw new ListItemError("associative list without keys has an element that's a map type");
  if (Array.isArray(item)) throw new ListItemError('not supported: associative list with lists as elements');
  if (item === null) throw new ListItemError("associative list without keys has an element that's an explicit null");
  return { value: item };
}

/** path elements of every item, or undefined when one has none (the list is then a leaf) */
export function listPathElements(list: ListAtom, items: readonly Json[]): PathElement[] | undefined {
  try {
    return items.map((item) => listItemPathElement(list, item));
  } catch (err) {
    if (err instanceof ListItemError) return undefined;
    throw err;
  }
}

/** A string that tells path elements apart (equal elements, equal strings), cheaper than their
 *  FieldsV1 form: scalars are tagged by type and strings by length, so no two differ only in
 *  where one value ends; other values fall back to their JSON. */
export function pathElementId(pe: PathElement): string {
  if ('field' in pe) return `f${pe.field}`;
  if ('value' in pe) return `v${valueId(pe.value)}`;
  if ('key' in pe) {
    let id = 'k';
    for (const f of pe.key) id += `${f.name.length}:${f.name}${valueId(f.value)}`;
    return id;
  }
  return `i${pe.index}`;
}

function valueId(v: Json): string {
  switch (typeof v) {
    case 'string':
      return `s${v.length}:${v}`;
    case 'number':
      return `n${v};`;
    case 'boolean':
      return v ? 't' : 'b';
    default: {
      const json = JSON.stringify(v);
      return `j${json.length}:${json}`;
    }
  }
}

/** the type of a map member; members no schema declares are treated as deduced values */
export function memberTypeOrDeduced(map: MapAtom, key: string, deduced: TypeRef): TypeRef {
  return memberType(map, key) ?? deduced;
}
