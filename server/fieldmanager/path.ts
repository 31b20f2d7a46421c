// Path elements of field paths: a struct field or map key (`f:name`), an item of a map-list by
// its keys (`k:{"name":"app"}`), an item of a set by its value (`v:"x"`), or a list index
// (`i:0`, only in old records). Ordering, equality, the FieldsV1 key form and the `.a[k=v]`
// form conflict messages print.

import { compareStrings, compareValues, goJson, isMap, valueString, valuesEqual, type Json } from './value.js';

export interface KeyField {
  readonly name: string;
  readonly value: Json;
}

export type PathElement =
  | { readonly field: string }
  | { readonly key: readonly KeyField[] }
  | { readonly value: Json }
  | { readonly index: number };

export type Path = readonly PathElement[];

export const fieldElement = (name: string): PathElement => ({ field: name });

/** a map-list item's key, its fields sorted by name (`fields` is taken over: every caller
 *  makes it for the key, one per list item) */
export function keyElement(fields: KeyField[]): PathElement {
  if (fields.length > 1) fields.sort(byName);
  return { key: fields };
}

const byName = (a: KeyField, b: KeyField): number => compareStrings(a.name, b.name);

function order(pe: PathElement): number {
  if ('field' in pe) return 0;
  if ('key' in pe) return 1;
  if ('value' in pe) return 2;
  return 3;
}

function compareKeys(a: readonly KeyField[], b: readonly KeyField[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = compareStrings(a[i].name, b[i].name) || compareValues(a[i].value, b[i].value);
    if (c !== 0) return c;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** fields < keys < values < indexes, each ordered within */
export function comparePathElements(a: PathElement, b: PathElement): number {
  // two fields, by far the most common pair, need no look at the other kinds
  if ('field' in a && 'field' in b) return compareStrings(a.field, b.field);
  const oa = order(a);
  const ob = order(b);
  if (oa !== ob) return oa < ob ? -1 : 1;
  if ('field' in a) return compareStrings(a.field, (b as { field: string }).field);
  if ('key' in a) return compareKeys(a.key, (b as { key: readonly KeyField[] }).key);
  if ('value' in a) return compareValues(a.value, (b as { value: Json }).value);
  const ib = (b as { index: number }).index;
  return a.index === ib ? 0 : a.index < ib ? -1 : 1;
}

export function pathElementsEqual(a: PathElement, b: PathElement): boolean {
  if ('field' in a) return 'field' in b && a.field === b.field;
  if ('key' in a) {
    if (!('key' in b) || a.key.length !== b.key.length) return false;
    return a.key.every((f, i) => f.name === b.key[i].name && valuesEqual(f.value, b.key[i].value));
  }
  if ('value' in a) return 'value' in b && valuesEqual(a.value, b.value);
  return 'index' in b && a.index === b.index;
}

/** `.name`, `[name="app",port=80]`, `[=value]`, `[3]` */
export function pathElementString(pe: PathElement): string {
  if ('field' in pe) return `.${pe.field}`;
  if ('key' in pe) return `[${pe.key.map((f) => `${f.name}=${valueString(f.value)}`).join(',')}]`;
  if ('value' in pe) return `[=${valueString(pe.value)}]`;
  return `[${pe.index}]`;
}

export function pathString(p: Path): string {
  return p.map(pathElementString).join('');
}

/** the FieldsV1 form of a path element */
export function serializePathElement(pe: PathElement): string {
  if ('field' in pe) return `f:${pe.field}`;
  if ('key' in pe) {
    const members = pe.key.map((f) => `${goJson(f.name)}:${goJson(f.value)}`);
    return `k:{${members.join(',')}}`;
  }
  if ('value' in pe) return `v:${goJson(pe.value)}`;
  return `i:${pe.index}`;
}

export class PathElementSyntaxError extends Error {}

/** parses a FieldsV1 key; undefined for an unknown element type (skipped, as kube does) */
export function parsePathElement(s: string): PathElement | undefined {
  if (s.length < 2) throw new PathElementSyntaxError('key must be 2 characters long:');
  if (s[1] !== ':') throw new PathElementSyntaxError(`missing colon: ${s}`);
  const rest = s.slice(2);
  switch (s[0]) {
    case 'f':
      return { field: rest };
    case 'v':
      return { value: parseJson(rest) };
    case 'k': {
      const obj = parseJson(rest);
      if (!isMap(obj)) throw new PathElementSyntaxError(`expected an object in ${s}`);
      return keyElement(Object.entries(obj).map(([name, value]) => ({ name, value })));
    }
    case 'i': {
      if (!/^[+-]?\d+$/.test(rest)) throw new PathElementSyntaxError(`strconv.Atoi: parsing ${JSON.stringify(rest)}: invalid syntax`);
      return { index: Number(rest) };
    }
    default:
      return undefined;
  }
}

function parseJson(text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch (err) {
    throw new PathElementSyntaxError((err as Error).message);
  }
}
