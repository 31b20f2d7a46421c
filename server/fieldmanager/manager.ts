// The field manager of one endpoint (a kind in a version, or its status subresource), as
// kube-apiserver layers it:
//  - update (create, PUT, non-apply patch): the writer's Update entry gains the fields it
//    changed; managedFields sent with the write replace the stored ones when they decode, `[{}]`
//    resets them first (spec rules 3 and 5), `[]` changes nothing (rule 4); an object that has
//    no managedFields and is not new stays without;
//  - apply: see updater.ts; plus kubectl's upgrade from client-side apply, the
//    `before-first-apply` manager for objects that had no managedFields, and the
//    last-applied annotation kept in step for `kubectl`.
// Update entries beyond ten are folded into `ancient-changes`. Identity, version and bookkeeping
// fields of metadata are never owned.

import type { KubeObject } from '../../storage/interface.js';
import { errors, StatusError } from '../machinery/status.js';
import { deepFreeze, rfc3339 } from '../registry/object.js';
import { ApplyConflicts, conflictError, type Conflict } from './conflict.js';
import type { GoShape } from './go-shape.js';
import { allowedConflicts, KUBECTL_MANAGER, lastAppliedOf, lastAppliedValue, setLastApplied } from './last-applied.js';
import {
  cloneManaged,
  decodeManagedFields,
  emptyManaged,
  encodeManagedFields,
  isResetRequest,
  ManagedFieldsError,
  managerId,
  secondsOf,
  type Managed,
  type ManagedFieldsEntry,
  type VersionedSet,
} from './managed.js';
import type { Path } from './path.js';
import { deducedType, type TypeModel, type TypeRef } from './schema.js';
import { FieldSet } from './set.js';
import { validateValue } from './typed-validate.js';
import { Updater, type Versions } from './updater.js';
import { isMap, type Json, type JsonMap } from './value.js';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface FieldManagerConfig {
  types: TypeModel;
  shape: GoShape;
  /** the endpoint's kind (the parent's for a subresource) */
  kind: GroupVersionKind;
  /** '' for the main resource */
  subresource: string;
  /** paths this endpoint resets (status on the main resource, spec on status) */
  resetPaths: readonly Path[];
  /** converts an object of `kind` to another version of it */
  convert?: (obj: KubeObject, to: GroupVersionKind) => KubeObject;
  now?: () => Date;
}

const MAX_UPDATE_MANAGERS = 10;
const ANCIENT_CHANGES = 'ancient-changes';
const BEFORE_FIRST_APPLY = 'before-first-apply';
const CURRENT_OPERATION = 'current-operation';

const f = (name: string) => ({ field: name });
/** what nobody owns: type and object identity, server-set metadata */
const STRIPPED = FieldSet.of(
  [f('apiVersion')],
  [f('kind')],
  [f('metadata')],
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map(
    (n) => [f('metadata'), f(n)],
  ),
);

export function apiVersionString(g: { group: string; version: string }): string {
  return g.group ? `${g.group}/${g.version}` : g.version;
}

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash >= 0 ? { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) } : { group: '', version: apiVersion };
}

function gvkString(apiVersion: string, kind: string): string {
  const { group, version } = splitApiVersion(apiVersion);
  return `${group}/${version}, Kind=${kind}`;
}

function withoutManagedFields(obj: JsonMap): JsonMap {
  const meta = obj.metadata;
  if (!isMap(meta) || !('managedFields' in meta)) return obj;
  const { managedFields: _drop, ...rest } = meta;
  return { ...obj, metadata: rest };
}

export class FieldManager {
  readonly apiVersion: string;
  private readonly definition?: string;
  private readonly type: TypeRef;
  private readonly updater: Updater;
  private readonly now: () => Date;

  constructor(private readonly c: FieldManagerConfig) {
    this.apiVersion = apiVersionString(c.kind);
    this.now = c.now ?? (() => new Date());
    this.type = c.types.typeOfKind(c.kind.group, c.kind.version, c.kind.kind) ?? deducedType;
    this.definition = this.type === deducedType ? undefined : this.type.name;
    const ignored = new Map<string, FieldSet>();
    if (c.resetPaths.length > 0) ignored.set(this.apiVersion, FieldSet.of(...c.resetPaths));
    this.updater = new Updater({ version: this.apiVersion, versions: this.versions(), ignored });
  }

  private versions(): Versions {
    return {
      typeOf: (apiVersion) => {
        if (apiVersion === this.apiVersion) return this.type;
        const { group, version } = splitApiVersion(apiVersion);
        return this.c.types.typeOfKind(group, version, this.c.kind.kind);
      },
      convert: (value, apiVersion) => {
        const to = { ...splitApiVersion(apiVersion), kind: this.c.kind.kind };
        if (!this.c.convert || !isMap(value)) return value;
        const out = this.c.convert(value as unknown as KubeObject, to) as unknown as JsonMap;
        const type = this.versions().typeOf(apiVersion);
        return type?.name ? this.c.shape.of(out, type.name) : out;
      },
    };
  }

  /** the object as the field manager compares it (see go-shape.ts) */
  private view(obj: JsonMap): JsonMap {
    const bare = withoutManagedFields(obj);
    return this.definition ? this.c.shape.of(bare, this.definition) : bare;
  }

  /** the empty object a create is compared with, built once: it is only read (frozen, so
   *  that a change to it would fail loudly instead of leaking into the next write) */
  private zeroView: JsonMap | undefined;

  private zero(): JsonMap {
    return (this.zeroView ??= deepFreeze(this.definition ? this.c.shape.zero(this.definition) : {}));
  }

  private id(manager: string, operation: 'Apply' | 'Update'): string {
    return managerId({ manager: manager || 'unknown', operation, apiVersion: this.apiVersion, subresource: this.c.subresource });
  }

  /** the managed fields of an object; empty when they do not decode */
  private decodeOrEmpty(obj: JsonMap | null): Managed {
    if (!obj || !isMap(obj.metadata)) return emptyManaged();
    try {
      return decodeManagedFields(obj.metadata.managedFields);
    } catch (err) {
      if (err instanceof ManagedFieldsError) return emptyManaged();
      throw err;
    }
  }

  /**
   * managedFields for `next`, written by `manager` over `live` (null for a create); undefined
   * when the object carries none. Never fails: on an internal error the stored ones stay.
   */
  update(live: KubeObject | null, next: KubeObject, manager: string): ManagedFieldsEntry[] | undefined {
    const liveObj = live as unknown as JsonMap | null;
    const nextObj = next as unknown as JsonMap;
    try {
      const { managed, reset } = this.managedOfUpdate(liveObj, nextObj);
      // an existing object without managedFields is not tracked (unless the request reset them)
      if (managed.fields.size === 0 && liveObj && isMap(liveObj.metadata) && liveObj.metadata.uid && !reset) return undefined;
      const after = this.recordUpdate(liveObj ? this.view(liveObj) : this.zero(), this.view(nextObj), managed, this.id(manager, 'Update'));
      this.capUpdateManagers(after);
      return encodeManagedFields(after);
    } catch (err) {
      if (err instanceof StatusError) throw err;
      const kept = liveObj && isMap(liveObj.metadata) ? liveObj.metadata.managedFields : undefined;
      return Array.isArray(kept) ? (kept as ManagedFieldsEntry[]) : undefined;
    }
  }

  private managedOfUpdate(live: JsonMap | null, next: JsonMap): { managed: Managed; reset: boolean } {
    // a subresource never takes managedFields from the request
    if (this.c.subresource) return { managed: this.decodeOrEmpty(live), reset: false };
    const requested = isMap(next.metadata) ? next.metadata.managedFields : undefined;
    if (isResetRequest(requested)) return { managed: emptyManaged(), reset: true };
    if (Array.isArray(requested) && requested.length > 0) {
      try {
        const managed = decodeManagedFields(requested);
        if (managed.fields.size > 0) return { managed, reset: false };
      } catch (err) {
        if (!(err instanceof ManagedFieldsError)) throw err;
      }
    }
    return { managed: this.decodeOrEmpty(live), reset: false };
  }

  /** the managers after `id` changed `liveView` into `nextView` */
  private recordUpdate(liveView: JsonMap, nextView: JsonMap, managed: Managed, id: string): Managed {
    const sets = this.updater.update(liveView, nextView, managed.fields, CURRENT_OPERATION);
    const times = new Map(managed.times);
    const current = sets.get(CURRENT_OPERATION);
    sets.delete(CURRENT_OPERATION);
    const owned = current?.set.difference(STRIPPED);
    if (current && owned && !owned.empty()) {
      const previous = sets.get(id);
      sets.set(id, { set: previous ? owned.union(previous.set) : owned, apiVersion: current.apiVersion, applied: false });
      times.set(id, rfc3339(this.now()));
    }
    return { fields: sets, times };
  }

  /** folds the oldest Update managers beyond ten into `ancient-changes`, per version */
  private capUpdateManagers(m: Managed): void {
    // counted first: nearly every write has few managers, and nothing to fold
    let count = 0;
    for (const vs of m.fields.values()) if (!vs.applied) count++;
    if (count <= MAX_UPDATE_MANAGERS) return;
    const updaters = [...m.fields.entries()].filter(([, vs]) => !vs.applied).map(([id]) => id);
    const seconds = (id: string) => {
      const t = m.times.get(id);
      return t === undefined ? 0 : secondsOf(t);
    };
    updaters.sort((a, b) => seconds(a) - seconds(b) || (a < b ? -1 : a > b ? 1 : 0));
    const firstOfVersion = new Map<string, string>();
    let length = updaters.length;
    for (let i = 0; i < updaters.length && length > MAX_UPDATE_MANAGERS; i++) {
      const id = updaters[i];
      const vs = m.fields.get(id)!;
      const time = m.times.get(id);
      const bucket = managerId({ manager: ANCIENT_CHANGES, operation: 'Update', apiVersion: vs.apiVersion, subresource: '' });
      const first = firstOfVersion.get(vs.apiVersion);
      if (first === undefined) {
        firstOfVersion.set(vs.apiVersion, id);
        continue;
      }
      if (!m.fields.has(bucket)) {
        m.fields.set(bucket, m.fields.get(first)!);
        m.fields.delete(first);
      }
      const b = m.fields.get(bucket)!;
      m.fields.set(bucket, { set: vs.set.union(b.set), apiVersion: vs.apiVersion, applied: vs.applied });
      m.fields.delete(id);
      length--;
      m.times.set(bucket, time);
    }
  }

  /**
   * managedFields of a parent after a write through its `scale` subresource, as kube-apiserver's
   * scale handler leaves them: when spec.replicas changes, every manager loses it and the
   * writer's Update entry for `scale` owns it (an entry that, as there, carries no time).
   */
  scaleUpdate(live: KubeObject, next: KubeObject, manager: string): ManagedFieldsEntry[] | undefined {
    const liveObj = live as unknown as JsonMap;
    const managed = this.decodeOrEmpty(liveObj);
    const kept = Array.isArray(liveObj.metadata && (liveObj.metadata as JsonMap).managedFields)
      ? ((liveObj.metadata as JsonMap).managedFields as ManagedFieldsEntry[])
      : undefined;
    if (managed.fields.size === 0) return kept;
    const replicas = (o: JsonMap) => (isMap(o.spec) ? o.spec.replicas : undefined) ?? 0;
    if (replicas(liveObj) === replicas(next as unknown as JsonMap)) return kept;
    const path: Path = [{ field: 'spec' }, { field: 'replicas' }];
    const only = FieldSet.of(path);
    for (const [id, vs] of [...managed.fields]) {
      if (!vs.set.has(path)) continue;
      const rest = vs.set.difference(only);
      if (rest.empty()) managed.fields.delete(id);
      else managed.fields.set(id, { ...vs, set: rest });
    }
    const id = managerId({ manager: manager || 'unknown', operation: 'Update', apiVersion: this.apiVersion, subresource: 'scale' });
    managed.fields.set(id, { set: only, apiVersion: this.apiVersion, applied: false });
    managed.times.delete(id);
    return encodeManagedFields(managed);
  }

  /**
   * Server-side apply of `config` by `manager` over `live` (null: the object is created).
   * Returns the new object with its managedFields; throws the 400/409/500 kube-apiserver answers.
   */
  apply(live: KubeObject | null, config: JsonMap, manager: string, force: boolean): KubeObject {
    const liveObj = (live as unknown as JsonMap | null) ?? null;
    let managed: Managed;
    try {
      managed = liveObj && isMap(liveObj.metadata) ? decodeManagedFields(liveObj.metadata.managedFields) : emptyManaged();
    } catch (err) {
      if (err instanceof ManagedFieldsError) throw new StatusError(500, '', `failed to decode managed fields: ${err.message}`);
      throw err;
    }
    const apiVersion = typeof config.apiVersion === 'string' ? config.apiVersion : '';
    const kind = typeof config.kind === 'string' ? config.kind : '';
    if (apiVersion !== this.apiVersion || kind !== this.c.kind.kind) {
      throw errors.badRequest(`invalid object type: ${gvkString(apiVersion, kind)}`);
    }
    const id = this.id(manager, 'Apply');
    let result: { object: JsonMap | undefined; managed: Managed };
    try {
      result = this.applyOnce(liveObj, config, managed, id, force);
    } catch (err) {
      if (!(err instanceof ApplyConflicts)) throw err;
      result = this.forceUpgradedConflicts(err.conflicts, liveObj, config, managed, id, manager);
    }
    const times = result.managed.times;
    let obj: JsonMap;
    if (result.object) {
      obj = result.object;
      times.set(id, rfc3339(this.now()));
    } else {
      obj = structuredClone(withoutManagedFields(liveObj ?? {}));
    }
    if (this.definition) obj = this.c.shape.clean(obj, this.definition);
    if (manager === KUBECTL_MANAGER && lastAppliedOf(obj) !== undefined) setLastApplied(obj, lastAppliedValue(config));
    const entries = encodeManagedFields(result.managed);
    if (!isMap(obj.metadata)) obj.metadata = {};
    const meta = obj.metadata as JsonMap;
    if (entries) meta.managedFields = entries;
    else delete meta.managedFields;
    return obj as unknown as KubeObject;
  }

  /** kubectl's server-side apply may take over fields its client-side apply recorded in the
   *  last-applied annotation (when they still hold the recorded values) */
  private forceUpgradedConflicts(
    conflicts: Conflict[],
    live: JsonMap | null,
    config: JsonMap,
    managed: Managed,
    id: string,
    manager: string,
  ): { object: JsonMap | undefined; managed: Managed } {
    if (manager !== KUBECTL_MANAGER || !live) throw conflictError(conflicts);
    const allowed = allowedConflicts(this.view(live), this.type, this.apiVersion);
    if (!allowed) throw conflictError(conflicts);
    const remaining = conflicts.filter((c) => !allowed.has(c.path));
    if (remaining.length > 0) throw conflictError(remaining);
    return this.applyOnce(live, config, managed, id, true);
  }

  private applyOnce(
    live: JsonMap | null,
    config: JsonMap,
    managedIn: Managed,
    id: string,
    force: boolean,
  ): { object: JsonMap | undefined; managed: Managed } {
    let managed = cloneManaged(managedIn);
    if (managed.fields.size === 0) {
      // everything already there belongs to one manager first, so that applying can take it over
      const before = this.id(BEFORE_FIRST_APPLY, 'Update');
      managed = this.recordUpdate(this.zero(), live ? this.view(live) : this.zero(), managed, before);
      this.capUpdateManagers(managed);
    }
    const meta = config.metadata;
    if (isMap(meta) && meta.managedFields !== undefined && meta.managedFields !== null) {
      throw errors.badRequest('metadata.managedFields must be nil');
    }
    const problems = validateValue(config, this.type);
    if (problems.length > 0) {
      const cmeta = isMap(meta) ? meta : {};
      const ns = typeof cmeta.namespace === 'string' ? cmeta.namespace : '';
      const name = typeof cmeta.name === 'string' ? cmeta.name : '';
      const detail = problems.length === 1 ? problems[0] : ['errors:', ...problems.map((p) => `  ${p}`)].join('\n');
      throw new StatusError(
        500,
        '',
        `failed to create typed patch object (${ns}/${name}; ${gvkString(this.apiVersion, this.c.kind.kind)}): ${detail}`,
      );
    }
    const liveRaw: JsonMap = live ? withoutManagedFields(live) : {};
    const { object, managers } = this.updater.apply(liveRaw as Json, config as Json, managed.fields, id, force);
    const own = managers.get(id);
    if (own) {
      const owned = own.set.difference(STRIPPED);
      if (owned.empty()) managers.delete(id);
      else managers.set(id, { ...own, set: owned } as VersionedSet);
    }
    return { object: object === undefined ? undefined : (object as JsonMap), managed: { fields: managers, times: managed.times } };
  }
}
