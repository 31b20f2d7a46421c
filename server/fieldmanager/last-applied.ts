// Server-side apply by `kubectl` over objects client-side apply made: conflicts on fields the
// last-applied-configuration annotation still describes truthfully are forced (the upgrade from
// client-side apply does not conflict with itself), and the annotation is kept in step with
// what was applied when the object has one.

import { compareTyped } from './typed-compare.js';
import { toFieldSet } from './typed-fieldset.js';
import { validateValue } from './typed-validate.js';
import type { TypeRef } from './schema.js';
import type { FieldSet } from './set.js';
import { goJsonSorted, isMap, type Json, type JsonMap } from './value.js';

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
/** the field manager kubectl's server-side apply uses */
export const KUBECTL_MANAGER = 'kubectl';
const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

function annotationsOf(obj: JsonMap): JsonMap | undefined {
  const meta = obj.metadata;
  if (!isMap(meta)) return undefined;
  return isMap(meta.annotations) ? meta.annotations : undefined;
}

export function lastAppliedOf(obj: JsonMap): string | undefined {
  const v = annotationsOf(obj)?.[LAST_APPLIED_ANNOTATION];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** the fields a conflict may be forced on: in the annotation and unchanged since */
export function allowedConflicts(live: JsonMap, type: TypeRef, apiVersion: string): FieldSet | undefined {
  const text = lastAppliedOf(live);
  if (text === undefined) return undefined;
  let last: Json;
  try {
    last = JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
  if (!isMap(last) || last.apiVersion !== apiVersion) return undefined;
  if (validateValue(last, type).length > 0) return undefined;
  const c = compareTyped(last, live, type);
  return toFieldSet(last, type).difference(c.modified).difference(c.added).difference(c.removed);
}

/** the annotation's value for an applied configuration: the configuration without the
 *  annotation, as Go marshals a map (sorted members), with json.Encoder's newline */
export function lastAppliedValue(config: JsonMap): string {
  const copy = structuredClone(config);
  const annotations = annotationsOf(copy);
  if (annotations) delete annotations[LAST_APPLIED_ANNOTATION];
  return `${goJsonSorted(copy)}\n`;
}

/** sets the annotation unless that takes the annotations past their size limit */
export function setLastApplied(obj: JsonMap, value: string): void {
  if (!isMap(obj.metadata)) obj.metadata = {};
  const meta = obj.metadata as JsonMap;
  const annotations: JsonMap = isMap(meta.annotations) ? { ...meta.annotations } : {};
  annotations[LAST_APPLIED_ANNOTATION] = value;
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) size += Buffer.byteLength(k) + (typeof v === 'string' ? Buffer.byteLength(v) : 0);
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) delete annotations[LAST_APPLIED_ANNOTATION];
  meta.annotations = annotations;
}
