// metadata.managedFields in and out: each entry becomes a manager identity (kube-apiserver's
// JSON of manager, operation, apiVersion (Update only) and subresource) with its field set,
// version and time; entries are written back sorted as kube-apiserver sorts them (Apply before
// Update, then by time, manager, apiVersion and subresource).

import { BoundedMemo } from '../machinery/bounded-memo.js';
import { rfc3339 } from '../registry/object.js';
import { fromFieldsV1, FieldsV1Error, toFieldsV1 } from './fields-v1.js';
import type { FieldSet } from './set.js';
import { compareStrings, goJson, isMap, type Json, type JsonMap } from './value.js';

export type Operation = 'Apply' | 'Update';

export interface VersionedSet {
  readonly set: FieldSet;
  readonly apiVersion: string;
  /** owned by an Apply */
  readonly applied: boolean;
}

/** The field sets of every manager, by manager identity, with their times. */
export interface Managed {
  fields: Map<string, VersionedSet>;
  times: Map<string, string | undefined>;
}

export interface ManagerInfo {
  manager: string;
  operation: Operation;
  apiVersion: string;
  subresource: string;
}

export class ManagedFieldsError extends Error {}

export function emptyManaged(): Managed {
  return { fields: new Map(), times: new Map() };
}

export function cloneManaged(m: Managed): Managed {
  return { fields: new Map(m.fields), times: new Map(m.times) };
}

const ids = new BoundedMemo<string>(4096);
const infos = new BoundedMemo<Readonly<ManagerInfo>>(4096);

/** kube-apiserver's manager identity: the entry's JSON without fieldsType, fieldsV1, time, and
 *  (for Apply) apiVersion */
export function managerId(info: ManagerInfo): string {
  // lengths keep the parts of the key apart whatever they contain
  const key = `${info.manager.length}:${info.manager}${info.operation}|${info.apiVersion.length}:${info.apiVersion}${info.subresource}`;
  return ids.get(key, () => {
    const o: JsonMap = {};
    if (info.manager) o.manager = info.manager;
    if (info.operation) o.operation = info.operation;
    if (info.apiVersion && info.operation !== 'Apply') o.apiVersion = info.apiVersion;
    if (info.subresource) o.subresource = info.subresource;
    return goJson(o);
  });
}

/** the parts of a manager identity (shared: not to be changed) */
export function parseManagerId(id: string): Readonly<ManagerInfo> {
  return infos.get(id, () => Object.freeze(parseId(id)));
}

function parseId(id: string): ManagerInfo {
  let o: unknown;
  try {
    o = JSON.parse(id);
  } catch {
    o = undefined;
  }
  const m = isMap(o as Json) ? (o as JsonMap) : {};
  const str = (v: Json | undefined) => (typeof v === 'string' ? v : '');
  return {
    manager: isMap(o as Json) ? str(m.manager) : id,
    operation: (str(m.operation) || 'Update') as Operation,
    apiVersion: str(m.apiVersion),
    subresource: str(m.subresource),
  };
}

const normalizedTimes = new BoundedMemo<string>(4096);

/** the time as kube-apiserver writes it back (whole seconds, UTC); stored entries keep their
 *  times from write to write, so each is worked out once */
function normalizeTime(v: unknown): string | undefined {
  if (typeof v !== 'string' || v === '') return undefined;
  return normalizedTimes.get(v, () => {
    const d = new Date(v);
    return Number.isNaN(d.getTime()) ? v : rfc3339(d);
  });
}

/** decodes metadata.managedFields; throws ManagedFieldsError as kube-apiserver's decoder fails */
export function decodeManagedFields(entries: unknown): Managed {
  const out = emptyManaged();
  if (entries === undefined || entries === null) return out;
  if (!Array.isArray(entries)) throw new ManagedFieldsError('managedFields must be a list');
  entries.forEach((raw, i) => {
    if (!isMap(raw as Json)) throw new ManagedFieldsError(`managed fields entry ${i} must be an object`);
    const e = raw as JsonMap;
    const operation = e.operation;
    if (operation !== 'Apply' && operation !== 'Update') throw new ManagedFieldsError('operation must be `Apply` or `Update`');
    const apiVersion = typeof e.apiVersion === 'string' ? e.apiVersion : '';
    if (apiVersion === '') throw new ManagedFieldsError('apiVersion must not be empty');
    const fieldsType = typeof e.fieldsType === 'string' ? e.fieldsType : '';
    if (fieldsType === '') throw new ManagedFieldsError(`missing fieldsType in managed fields entry ${i}`);
    if (fieldsType !== 'FieldsV1')
      throw new ManagedFieldsError(`invalid fieldsType ${JSON.stringify(fieldsType)} in managed fields entry ${i}`);
    const id = managerId({
      manager: typeof e.manager === 'string' ? e.manager : '',
      operation,
      apiVersion,
      subresource: typeof e.subresource === 'string' ? e.subresource : '',
    });
    let set: FieldSet;
    try {
      set = fromFieldsV1(e.fieldsV1 === undefined || e.fieldsV1 === null ? {} : e.fieldsV1);
    } catch (err) {
      if (err instanceof FieldsV1Error) throw new ManagedFieldsError(`error decoding set: ${err.message}`);
      throw err;
    }
    out.fields.set(id, { set, apiVersion, applied: operation === 'Apply' });
    out.times.set(id, normalizeTime(e.time));
  });
  return out;
}

export interface ManagedFieldsEntry extends JsonMap {}

const seconds = new BoundedMemo<number>(4096);

/** whole seconds since the epoch of an entry's time (0 when it does not parse), which orders
 *  the entries */
export function secondsOf(time: string): number {
  return seconds.get(time, () => Math.floor(new Date(time).getTime() / 1000) || 0);
}

/** the entries of metadata.managedFields; undefined when no manager is left */
export function encodeManagedFields(m: Managed): ManagedFieldsEntry[] | undefined {
  if (m.fields.size === 0) return undefined;
  const entries: { e: ManagedFieldsEntry; seconds: number; info: ManagerInfo }[] = [];
  for (const [id, vs] of m.fields) {
    const info = parseManagerId(id);
    const operation: Operation = vs.applied ? 'Apply' : info.operation;
    const e: ManagedFieldsEntry = {};
    if (info.manager) e.manager = info.manager;
    e.operation = operation;
    e.apiVersion = vs.apiVersion;
    const time = m.times.get(id);
    if (time !== undefined) e.time = time;
    e.fieldsType = 'FieldsV1';
    e.fieldsV1 = toFieldsV1(vs.set);
    if (info.subresource) e.subresource = info.subresource;
    const seconds = time === undefined ? 0 : secondsOf(time);
    entries.push({ e, seconds, info: { ...info, operation, apiVersion: vs.apiVersion } });
  }
  entries.sort((p, q) => {
    if (p.info.operation !== q.info.operation) return p.info.operation < q.info.operation ? -1 : 1;
    if (p.seconds !== q.seconds) return p.seconds < q.seconds ? -1 : 1;
    return (
      compareStrings(p.info.manager, q.info.manager) ||
      compareStrings(p.info.apiVersion, q.info.apiVersion) ||
      compareStrings(p.info.subresource, q.info.subresource)
    );
  });
  return entries.map((x) => x.e);
}

/** `[{}]`: a request that resets managedFields */
export function isResetRequest(entries: unknown): boolean {
  if (!Array.isArray(entries) || entries.length !== 1) return false;
  const e = entries[0] as unknown;
  if (!isMap(e as Json)) return false;
  // every member at its zero value: the Go struct equals ManagedFieldsEntry{}
  const entry = e as JsonMap;
  const empty = (k: string) => entry[k] === undefined || entry[k] === null || entry[k] === '';
  return ['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1', 'subresource'].every(empty);
}
