// Ownership bookkeeping of one write (structured-merge-diff's Updater, rewritten):
//  - update: the writer takes the fields it changed; other managers lose the fields that
//    changed under them or were removed. Never conflicts.
//  - apply: the configuration is merged into the live object; the applier owns exactly what it
//    applied; fields it applied before and dropped now are removed unless someone else owns
//    them; fields that change and belong to another manager are conflicts unless forced
//    (forcing takes them away from the other manager).
// Field sets are per API version; managers recorded in another version see the objects
// converted to theirs (or are dropped when that version is no longer served).

import { ApplyConflicts, type Conflict } from './conflict.js';
import type { VersionedSet } from './managed.js';
import type { TypeRef } from './schema.js';
import type { FieldSet } from './set.js';
import { compareTyped, type Comparison } from './typed-compare.js';
import { ensureNamedFieldsAreMembers, reconcileWithSchema, toFieldSet } from './typed-fieldset.js';
import { mergeTyped } from './typed-merge.js';
import { removeItems } from './typed-remove.js';
import { valuesEqual, type Json } from './value.js';

export type ManagedSets = Map<string, VersionedSet>;

/** the objects of one write seen in a version */
export interface Versions {
  /** the type of the kind in `version`; undefined when that version is not served */
  typeOf(version: string): TypeRef | undefined;
  /** `value` (in the write's version) converted to `version` */
  convert(value: Json, version: string): Json;
}

export interface UpdaterOptions {
  /** the version of the write */
  version: string;
  versions: Versions;
  /** per version, the fields nobody owns through this endpoint (status on the main resource) */
  ignored: ReadonlyMap<string, FieldSet>;
}

export class Updater {
  constructor(private readonly o: UpdaterOptions) {}

  private typeAt(version: string): TypeRef | undefined {
    return this.o.versions.typeOf(version);
  }

  private filtered(set: FieldSet, version: string): FieldSet {
    const ignored = this.o.ignored.get(version);
    return ignored ? set.recursiveDifference(ignored) : set;
  }

  private comparisonAt(live: Json, next: Json, version: string): Comparison | undefined {
    const type = this.typeAt(version);
    if (!type) return undefined;
    const same = version === this.o.version;
    const c = compareTyped(
      same ? live : this.o.versions.convert(live, version),
      same ? next : this.o.versions.convert(next, version),
      type,
    );
    return {
      added: this.filtered(c.added, version),
      modified: this.filtered(c.modified, version),
      removed: this.filtered(c.removed, version),
    };
  }

  /** managers whose version is gone are dropped; sets inside what became atomic are widened */
  reconcile(managers: ManagedSets): ManagedSets {
    const out: ManagedSets = new Map();
    for (const [manager, vs] of managers) {
      const type = this.typeAt(vs.apiVersion);
      if (!type) continue;
      const reconciled = reconcileWithSchema(vs.set, type);
      out.set(manager, reconciled ? { ...vs, set: reconciled } : vs);
    }
    return out;
  }

  /** takes changed fields away from every manager but `workflow`; conflicts when not forced */
  private takeOwnership(live: Json, next: Json, managers: ManagedSets, workflow: string, force: boolean): Comparison {
    const own = this.comparisonAt(live, next, this.o.version)!;
    const byVersion = new Map<string, Comparison | undefined>([[this.o.version, own]]);
    const conflicts = new Map<string, FieldSet>();
    const removed = new Map<string, FieldSet>();
    for (const [manager, vs] of managers) {
      if (manager === workflow) continue;
      if (!byVersion.has(vs.apiVersion)) byVersion.set(vs.apiVersion, this.comparisonAt(live, next, vs.apiVersion));
      const c = byVersion.get(vs.apiVersion);
      if (!c) {
        managers.delete(manager);
        continue;
      }
      const conflict = vs.set.intersection(c.modified.union(c.added));
      if (!conflict.empty()) conflicts.set(manager, conflict);
      if (!c.removed.empty()) removed.set(manager, c.removed);
    }
    if (!force && conflicts.size > 0) {
      const list: Conflict[] = [];
      for (const manager of [...conflicts.keys()].sort()) {
        for (const path of conflicts.get(manager)!.paths()) list.push({ manager, path });
      }
      throw new ApplyConflicts(list);
    }
    for (const [manager, set] of conflicts) {
      const vs = managers.get(manager)!;
      managers.set(manager, { ...vs, set: vs.set.difference(set) });
    }
    for (const [manager, set] of removed) {
      const vs = managers.get(manager);
      if (vs) managers.set(manager, { ...vs, set: vs.set.difference(set) });
    }
    for (const [manager, vs] of managers) if (vs.set.empty()) managers.delete(manager);
    return own;
  }

  /** an update by `manager`: returns the managers afterwards */
  update(live: Json, next: Json, managers: ManagedSets, manager: string): ManagedSets {
    const out = this.reconcile(managers);
    const c = this.takeOwnership(live, next, out, manager, true);
    const previous = out.get(manager)?.set;
    let set = c.modified.union(c.added);
    if (previous) set = previous.difference(c.removed).union(set);
    set = this.filtered(set, this.o.version);
    if (set.empty()) out.delete(manager);
    else out.set(manager, { set, apiVersion: this.o.version, applied: false });
    return out;
  }

  /** an apply by `manager`: the new object (undefined when nothing changes) and the managers */
  apply(
    live: Json,
    config: Json,
    managers: ManagedSets,
    manager: string,
    force: boolean,
  ): { object: Json | undefined; managers: ManagedSets } {
    const type = this.typeAt(this.o.version)!;
    const out = this.reconcile(managers);
    let merged: Json = mergeTyped(live, config, type) ?? {};
    const last = out.get(manager);
    out.set(manager, { set: this.filtered(toFieldSet(config, type), this.o.version), apiVersion: this.o.version, applied: true });
    merged = this.prune(merged, out, last, type);
    this.takeOwnership(live, merged, out, manager, force);
    return { object: valuesEqual(live, merged) ? undefined : merged, managers: out };
  }

  /** removes what `manager` applied last time and nobody owns now */
  private prune(merged: Json, managers: ManagedSets, last: VersionedSet | undefined, type: TypeRef): Json {
    if (!last || last.set.empty()) return merged;
    // sets recorded in another version are compared in this one (paths rarely differ)
    const lastSet = ensureNamedFieldsAreMembers(last.set, type);
    let pruned = removeItems(merged, lastSet, type);
    // add back whatever any manager still owns
    let owned: FieldSet | undefined;
    for (const vs of managers.values()) owned = owned ? owned.union(vs.set) : vs.set;
    const mergedSet = ensureNamedFieldsAreMembers(toFieldSet(merged, type), type);
    const prunedSet = ensureNamedFieldsAreMembers(toFieldSet(pruned, type), type);
    const keep = prunedSet.union(owned ? ensureNamedFieldsAreMembers(owned, type) : prunedSet);
    pruned = removeItems(merged, mergedSet.difference(keep), type);
    // add back items that were never applied by this manager (dangling)
    const pruned2Set = ensureNamedFieldsAreMembers(toFieldSet(pruned, type), type);
    return removeItems(merged, mergedSet.difference(pruned2Set).intersection(lastSet), type);
  }
}
