// The FieldsV1 encoding of a field set: a JSON object whose keys are path elements (`f:spec`,
// `k:{"name":"app"}`, `v:"x"`, `i:0`) and whose values are the children at that element;
// `{}` ends a path, and `.` inside an object says the element itself is in the set too.
// Keys come in the set's order (fields, then keys, then values, then indexes), `.` first.

import { comparePathElements, parsePathElement, serializePathElement, type PathElement } from './path.js';
import { FieldSet } from './set.js';
import { isMap, type Json, type JsonMap } from './value.js';
import { BoundedMemo } from '../machinery/bounded-memo.js';

/** `f:<name>` keys by name: the same few strings every write, made (and hashed as property
 *  keys) once rather than concatenated anew for every member */
const fieldKeys = new BoundedMemo<string>(16384);

/** a level with more members than this is a map's keys (a ConfigMap's data), each seen once:
 *  remembering them would only push the struct fields out of the memo */
const MEMO_LEVEL_LIMIT = 256;

function keyOf(pe: PathElement, memo: boolean): string {
  return memo && 'field' in pe ? fieldKeys.get(pe.field, () => serializePathElement(pe)) : serializePathElement(pe);
}

export function toFieldsV1(set: FieldSet): JsonMap {
  return emit(set, false);
}

function emit(set: FieldSet, includeSelf: boolean): JsonMap {
  const out: JsonMap = {};
  if (includeSelf && (set.members.length > 0 || set.children.length > 0)) out['.'] = {};
  let mi = 0;
  let ci = 0;
  const { members, children } = set;
  const memo = members.length + children.length <= MEMO_LEVEL_LIMIT;
  while (mi < members.length || ci < children.length) {
    const m = mi < members.length ? members[mi] : undefined;
    const c = ci < children.length ? children[ci] : undefined;
    const cmp = m && c ? comparePathElements(m, c.pe) : m ? -1 : 1;
    if (cmp < 0) {
      out[keyOf(m as PathElement, memo)] = {};
      mi++;
    } else if (cmp > 0) {
      out[keyOf(c!.pe, memo)] = emit(c!.set, false);
      ci++;
    } else {
      out[keyOf(c!.pe, memo)] = emit(c!.set, true);
      mi++;
      ci++;
    }
  }
  return out;
}

export class FieldsV1Error extends Error {}

/** parses FieldsV1 (throws FieldsV1Error on anything malformed) */
export function fromFieldsV1(fields: unknown): FieldSet {
  if (!isMap(fields)) throw new FieldsV1Error('FieldsV1 must be an object');
  return read(fields).children ?? new FieldSet();
}

/** the set of children of one level and whether the level itself is a member */
function read(obj: JsonMap): { children?: FieldSet; member: boolean } {
  let children: FieldSet | undefined;
  let member = false;
  for (const key in obj) {
    const value = obj[key];
    if (key === '.') {
      member = true;
      continue;
    }
    let pe: PathElement | undefined;
    try {
      pe = parsePathElement(key);
    } catch (err) {
      throw new FieldsV1Error(`parsing key as path element: ${(err as Error).message}`);
    }
    if (pe === undefined) continue;
    if (!isMap(value as Json)) throw new FieldsV1Error(`expected an object at ${key}`);
    const sub = read(value as JsonMap);
    children ??= new FieldSet();
    if (sub.member) children.insertMember(pe);
    if (sub.children) children.insertChild(pe, sub.children);
  }
  // an object without children is a leaf
  if (!children) member = true;
  return { children, member };
}
