// Checks an applied configuration against its type, as structured-merge-diff does before it
// merges: undeclared fields, values of the wrong kind, map-list items without their keys and
// repeated items are errors, each prefixed with its path (`.spec.foo: field not declared in
// schema`).

import { pathElementString } from './path.js';
import { memberType, type ScalarKind, type TypeRef } from './schema.js';
import { atomKind, deduceAtom, ListItemError, listItemPathElement, pathElementId } from './typed-common.js';
import type { PathElement } from './path.js';
import { goValue, isMap, type Json } from './value.js';

/** how Go's %#v prints a structured-merge-diff value holding `v` */
function goSyntaxValue(v: Json): string {
  const inner = typeof v === 'string' ? JSON.stringify(v) : goValue(v);
  return `&value.valueUnstructured{Value:${inner}}`;
}

function goTypeName(v: Json): string {
  if (v === null) return '<nil>';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  return Array.isArray(v) ? '[]interface {}' : 'map[string]interface {}';
}

function scalarError(kind: ScalarKind, v: Json): string | undefined {
  if (v === null) return undefined;
  switch (kind) {
    case 'numeric':
      return typeof v === 'number' ? undefined : `expected numeric (int or float), got ${goTypeName(v)}`;
    case 'string':
      return typeof v === 'string' ? undefined : `expected string, got ${goSyntaxValue(v)}`;
    case 'boolean':
      return typeof v === 'boolean' ? undefined : `expected boolean, got ${goValue(v)}`;
    case 'untyped':
      return typeof v === 'object' ? `expected any scalar, got ${goValue(v)}` : undefined;
  }
}

/** every error of `v` against `type`, as `<path>: <message>` */
export function validateValue(v: Json, type: TypeRef, allowDuplicates = false): string[] {
  const errs: string[] = [];
  walk(v, type, '', errs, allowDuplicates);
  return errs;
}

function walk(v: Json, type: TypeRef, path: string, errs: string[], allowDuplicates: boolean): void {
  const at = (msg: string) => errs.push(path ? `${path}: ${msg}` : msg);
  const a = deduceAtom(type.atom(), v);
  switch (atomKind(a)) {
    case 'scalar': {
      const e = scalarError(a.scalar!, v);
      if (e) at(e);
      return;
    }
    case 'list': {
      if (v === null) return;
      if (!Array.isArray(v)) return void at(`expected list, got ${goValue(v)}`);
      const list = a.list!;
      const seen = new Set<string>();
      for (let i = 0; i < v.length; i++) {
        let pe: PathElement;
        if (list.atomic) pe = { index: i };
        else {
          try {
            pe = listItemPathElement(list, v[i]);
          } catch (err) {
            if (!(err instanceof ListItemError)) throw err;
            return void at(`element ${i}: ${err.message}`);
          }
          const id = pathElementId(pe);
          if (seen.has(id) && !allowDuplicates) at(`duplicate entries for key ${pathElementString(pe)}`);
          seen.add(id);
        }
        walk(v[i], list.element, path + pathElementString(pe), errs, allowDuplicates);
      }
      return;
    }
    case 'map': {
      if (v === null) return;
      if (!isMap(v)) return void at(`expected map, got ${goValue(v)}`);
      const map = a.map!;
      for (const [key, child] of Object.entries(v)) {
        const t = memberType(map, key);
        if (!t) {
          errs.push(`${path}.${key}: field not declared in schema`);
          return;
        }
        walk(child, t, `${path}.${key}`, errs, allowDuplicates);
      }
      return;
    }
    default:
      at(`schema error: invalid atom: ${type.name ? `named type: ${type.name}` : 'inlined'}`);
  }
}
