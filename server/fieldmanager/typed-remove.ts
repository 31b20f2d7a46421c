// Removing the paths of a field set from a value (pruning what an applier stopped applying).
// Only what the set names goes; a list or map left empty becomes null, as in
// structured-merge-diff, and the caller drops such members.

import type { PathElement } from './path.js';
import { deducedType, type TypeRef } from './schema.js';
import type { FieldSet } from './set.js';
import { asList, asMap, atomKind, deduceAtom, ListItemError, listItemPathElement, memberTypeOrDeduced } from './typed-common.js';
import type { Json, JsonMap } from './value.js';

export function removeItems(v: Json, set: FieldSet, type: TypeRef): Json {
  const a = deduceAtom(type.atom(), v);
  switch (atomKind(a)) {
    case 'list': {
      const items = asList(v);
      if (!items || items.length === 0) return null;
      const list = a.list!;
      if (list.atomic) return null;
      const out: Json[] = [];
      for (const item of items) {
        let pe: PathElement;
        try {
          pe = listItemPathElement(list, item);
        } catch (err) {
          if (!(err instanceof ListItemError)) throw err;
          out.push(item);
          continue;
        }
        if (set.hasMember(pe)) continue;
        const sub = set.child(pe);
        out.push(sub && !sub.empty() ? removeItems(item, sub, list.element) : item);
      }
      return out.length > 0 ? out : null;
    }
    case 'map': {
      const m = asMap(v);
      if (!m || Object.keys(m).length === 0) return null;
      const map = a.map!;
      if (map.atomic) return null;
      const out: JsonMap = {};
      for (const [key, child] of Object.entries(m)) {
        const pe: PathElement = { field: key };
        if (set.hasMember(pe)) continue;
        const sub = set.child(pe);
        out[key] = sub && !sub.empty() ? removeItems(child, sub, memberTypeOrDeduced(map, key, deducedType)) : child;
      }
      return Object.keys(out).length > 0 ? out : null;
    }
    default:
      return v;
  }
}
