// A set of field paths, kept as a trie: at each level the path elements that end there
// (members) and those that lead further (children), both sorted. A path can be both a member
// and have children (a list item owned as a whole and field by field: `.` in FieldsV1).
// Operations return new sets and share unchanged subtrees; only `insert` mutates.

import { comparePathElements, pathElementsEqual, type Path, type PathElement } from './path.js';

export interface ChildNode {
  readonly pe: PathElement;
  readonly set: FieldSet;
}

/** where `pe` is in sorted `members`: its index, or -(insertion point) - 1 when absent (a
 *  number rather than an object: this runs for every path element of every set operation) */
function searchMembers(members: readonly PathElement[], pe: PathElement): number {
  let lo = 0;
  let hi = members.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (comparePathElements(members[mid], pe) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo < members.length && pathElementsEqual(members[lo], pe) ? lo : -lo - 1;
}

/** searchMembers over the path elements of `children` */
function searchChildren(children: readonly ChildNode[], pe: PathElement): number {
  let lo = 0;
  let hi = children.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (comparePathElements(children[mid].pe, pe) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo < children.length && pathElementsEqual(children[lo].pe, pe) ? lo : -lo - 1;
}

/** A level's lists stay sorted while they are small; a larger one that is given an element out
 *  of order takes the rest unsorted and is sorted once, when next read: inserting each in place
 *  would move the whole list per insert (a body's map of 100k keys in descending order). */
const SORTED_INSERT_LIMIT = 256;

export class FieldSet {
  private memberList: PathElement[];
  private childList: ChildNode[];
  private membersUnsorted = false;
  private childrenUnsorted = false;

  constructor(members: PathElement[] = [], children: ChildNode[] = []) {
    this.memberList = members;
    this.childList = children;
  }

  /** the path elements that end at this level, sorted */
  get members(): readonly PathElement[] {
    if (this.membersUnsorted) this.sortMembers();
    return this.memberList;
  }

  /** the path elements that lead further, sorted */
  get children(): readonly ChildNode[] {
    if (this.childrenUnsorted) this.sortChildren();
    return this.childList;
  }

  static of(...paths: Path[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** adds a path (the empty path adds nothing) */
  insert(path: Path): void {
    if (path.length === 0) return;
    let s: FieldSet = this;
    for (let i = 0; i < path.length - 1; i++) s = s.descend(path[i]);
    s.insertMember(path[path.length - 1]);
  }

  /** adds `pe` as a member of this level (mutates) */
  insertMember(pe: PathElement): void {
    const members = this.memberList;
    if (!this.membersUnsorted) {
      // members often come in order (a map's keys): appending needs no search
      if (members.length === 0 || comparePathElements(members[members.length - 1], pe) < 0) {
        members.push(pe);
        return;
      }
      if (members.length < SORTED_INSERT_LIMIT) {
        const at = searchMembers(members, pe);
        if (at < 0) members.splice(-at - 1, 0, pe);
        return;
      }
      this.membersUnsorted = true;
    }
    members.push(pe);
  }

  /** the child set at `pe`, created when absent (mutates) */
  descend(pe: PathElement): FieldSet {
    const children = this.childList;
    const last = children[children.length - 1];
    if (!this.childrenUnsorted) {
      // as for members: a child after the last one is appended
      if (last === undefined || comparePathElements(last.pe, pe) < 0) return this.addChild(pe, new FieldSet());
      const at = searchChildren(children, pe);
      if (at >= 0) return children[at].set;
      if (children.length < SORTED_INSERT_LIMIT) {
        const set = new FieldSet();
        children.splice(-at - 1, 0, { pe, set });
        return set;
      }
      this.childrenUnsorted = true;
    }
    // unsorted: paths under one element mostly come one after another; a child added twice is
    // merged when the level is sorted
    if (last !== undefined && pathElementsEqual(last.pe, pe)) return last.set;
    return this.addChild(pe, new FieldSet());
  }

  private addChild(pe: PathElement, set: FieldSet): FieldSet {
    this.childList.push({ pe, set });
    return set;
  }

  /** adds the paths of `set` under `pe` (mutates; `set` becomes part of this one) */
  insertChild(pe: PathElement, set: FieldSet): void {
    const children = this.childList;
    if (!this.childrenUnsorted) {
      const last = children.length - 1;
      const at = last < 0 || comparePathElements(children[last].pe, pe) < 0 ? -children.length - 1 : searchChildren(children, pe);
      if (at >= 0) return children[at].set.absorb(set);
      if (at === -children.length - 1 || children.length < SORTED_INSERT_LIMIT) {
        children.splice(-at - 1, 0, { pe, set });
        return;
      }
      this.childrenUnsorted = true;
    }
    this.addChild(pe, set);
  }

  /** takes in the paths of `o` (a second key for the same element: a map-list key spelled in
   *  another order, or an element given twice) */
  private absorb(o: FieldSet): void {
    const merged = this.union(o);
    if (merged === this) return;
    this.memberList = [...merged.members];
    this.childList = [...merged.children];
  }

  private sortMembers(): void {
    const sorted = this.memberList.sort(comparePathElements);
    let kept = 0;
    for (let i = 0; i < sorted.length; i++) {
      if (kept > 0 && pathElementsEqual(sorted[kept - 1], sorted[i])) continue;
      sorted[kept++] = sorted[i];
    }
    sorted.length = kept;
    this.membersUnsorted = false;
  }

  private sortChildren(): void {
    // a stable sort: of a child added twice, the first stays and takes in the later ones
    const sorted = this.childList.sort((a, b) => comparePathElements(a.pe, b.pe));
    let kept = 0;
    for (let i = 0; i < sorted.length; i++) {
      if (kept > 0 && pathElementsEqual(sorted[kept - 1].pe, sorted[i].pe)) {
        sorted[kept - 1].set.absorb(sorted[i].set);
        continue;
      }
      sorted[kept++] = sorted[i];
    }
    sorted.length = kept;
    this.childrenUnsorted = false;
  }

  hasMember(pe: PathElement): boolean {
    return searchMembers(this.members, pe) >= 0;
  }

  child(pe: PathElement): FieldSet | undefined {
    const at = searchChildren(this.children, pe);
    return at >= 0 ? this.children[at].set : undefined;
  }

  has(path: Path): boolean {
    if (path.length === 0) return false;
    let s: FieldSet | undefined = this;
    for (let i = 0; i < path.length - 1 && s; i++) s = s.child(path[i]);
    return s !== undefined && s.hasMember(path[path.length - 1]);
  }

  /** the paths under `pe`, relative to it (an empty set when none) */
  withPrefix(pe: PathElement): FieldSet {
    return this.child(pe) ?? new FieldSet();
  }

  empty(): boolean {
    return this.members.length === 0 && this.children.every((c) => c.set.empty());
  }

  size(): number {
    return this.members.length + this.children.reduce((n, c) => n + c.set.size(), 0);
  }

  union(o: FieldSet): FieldSet {
    return this.combine(o, 'union');
  }

  intersection(o: FieldSet): FieldSet {
    return this.combine(o, 'intersection');
  }

  /** the paths of this set not in `o` (a member of `o` removes only that path) */
  difference(o: FieldSet): FieldSet {
    return this.combine(o, 'difference');
  }

  /** `op` of two sets. A result with the paths of one side is that side itself: unchanged sets
   *  keep their identity (results are shared, never changed), and nothing is copied for them. */
  private combine(o: FieldSet, op: SetOp): FieldSet {
    if (o.bare()) return op === 'intersection' ? new FieldSet() : this;
    if (this.bare()) return op === 'union' ? o : this;
    const members = mergeMembers(this.members, o.members, op);
    const children = mergeChildren(this.children, o.children, op);
    if (members === this.members && children === this.children) return this;
    return new FieldSet(members === this.members ? [...members] : members, children === this.children ? [...children] : children);
  }

  /** no members and no children (an empty set can still have emptied children) */
  private bare(): boolean {
    return this.members.length === 0 && this.children.length === 0;
  }

  /** `op` of two sets at the level below (used by mergeChildren) */
  static combine(a: FieldSet, b: FieldSet, op: SetOp): FieldSet {
    return a.combine(b, op);
  }

  /** like difference, but a member of `o` also removes everything under it */
  recursiveDifference(o: FieldSet): FieldSet {
    const members = [...mergeMembers(this.members, o.members, 'difference')];
    const children: ChildNode[] = [];
    let j = 0;
    for (const node of this.children) {
      while (j < o.children.length && comparePathElements(o.children[j].pe, node.pe) < 0) j++;
      if (o.hasMember(node.pe)) continue;
      if (j < o.children.length && pathElementsEqual(o.children[j].pe, node.pe)) {
        const set = node.set.recursiveDifference(o.children[j].set);
        if (!set.empty()) children.push({ pe: node.pe, set });
      } else {
        children.push(node);
      }
    }
    return new FieldSet(members, children);
  }

  /** the members that are not also parents, at every level */
  leaves(): FieldSet {
    const children = this.children;
    // both lists are sorted: one pass tells which members are also parents
    let j = 0;
    const members = this.members.filter((m) => {
      while (j < children.length && comparePathElements(children[j].pe, m) < 0) j++;
      return !(j < children.length && pathElementsEqual(children[j].pe, m));
    });
    return new FieldSet(
      members,
      children.map((c) => ({ pe: c.pe, set: c.set.leaves() })),
    );
  }

  equals(o: FieldSet): boolean {
    if (this.members.length !== o.members.length || this.children.length !== o.children.length) return false;
    for (let i = 0; i < this.members.length; i++) if (!pathElementsEqual(this.members[i], o.members[i])) return false;
    for (let i = 0; i < this.children.length; i++) {
      if (!pathElementsEqual(this.children[i].pe, o.children[i].pe) || !this.children[i].set.equals(o.children[i].set)) return false;
    }
    return true;
  }

  /** every path, members of a level before its children, each in order */
  paths(prefix: Path = []): Path[] {
    const out: Path[] = this.members.map((m) => [...prefix, m]);
    for (const c of this.children) out.push(...c.set.paths([...prefix, c.pe]));
    return out;
  }
}

type SetOp = 'union' | 'intersection' | 'difference';

/** `op` of two sorted member lists; `a` itself when the result holds exactly its elements */
function mergeMembers(a: readonly PathElement[], b: readonly PathElement[], op: SetOp): PathElement[] {
  const out: PathElement[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const c = comparePathElements(a[i], b[j]);
    if (c < 0) {
      if (op !== 'intersection') out.push(a[i]);
      i++;
    } else if (c > 0) {
      if (op === 'union') out.push(b[j]);
      j++;
    } else {
      if (op !== 'difference') out.push(a[i]);
      i++;
      j++;
    }
  }
  for (; op !== 'intersection' && i < a.length; i++) out.push(a[i]);
  for (; op === 'union' && j < b.length; j++) out.push(b[j]);
  // a result of a's length holds a's elements: a difference or intersection only takes from
  // `a`, a union only adds to it
  return out.length === a.length ? (a as PathElement[]) : out;
}

/** `op` of two sorted child lists, a path under both sides combined one level down (an
 *  emptied subtree disappears but from a union); `a` itself when nothing in it changes */
function mergeChildren(a: readonly ChildNode[], b: readonly ChildNode[], op: SetOp): ChildNode[] {
  const out: ChildNode[] = [];
  let changed = false;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const c = comparePathElements(a[i].pe, b[j].pe);
    if (c < 0) {
      if (op !== 'intersection') out.push(a[i]);
      else changed = true;
      i++;
    } else if (c > 0) {
      if (op === 'union') {
        out.push(b[j]);
        changed = true;
      }
      j++;
    } else {
      const set = FieldSet.combine(a[i].set, b[j].set, op);
      if (op === 'union' || !set.empty()) {
        if (set === a[i].set) out.push(a[i]);
        else {
          out.push({ pe: a[i].pe, set });
          changed = true;
        }
      } else changed = true;
      i++;
      j++;
    }
  }
  if (op !== 'intersection') for (; i < a.length; i++) out.push(a[i]);
  else if (i < a.length) changed = true;
  if (op === 'union' && j < b.length) {
    for (; j < b.length; j++) out.push(b[j]);
    changed = true;
  }
  return changed ? out : (a as ChildNode[]);
}
