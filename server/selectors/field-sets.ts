// Field selectors, per resource, in two steps as in kube-apiserver: the request's field
// labels are checked (and renamed) by the requested resource's converter; objects are then
// matched on the stored object's fields. Each built-in resource's descriptor names its
// converter and its fields; this module has the building blocks and the rule of resources
// without their own (custom resources): metadata.name and metadata.namespace only.

import type { KubeObject } from '../../storage/interface.js';
import { SelectorError } from './labels.js';
import type { FieldSet } from './fields.js';

/** Renames or rejects one field label; throws SelectorError for an unsupported label. */
export type FieldLabelConverter = (label: string, value: string) => [string, string];

/** kube's message for a label a resource does not support */
export const notSupported = (label: string) => `field label not supported: ${label}`;

/** accepts `labels` as they are and `renames` under their new names; rejects everything else */
export function fieldLabels(
  labels: string[],
  renames: Record<string, string> = {},
  message: (label: string) => string = notSupported,
): FieldLabelConverter {
  const allowed = new Set(labels);
  return (label, value) => {
    if (Object.hasOwn(renames, label)) return [renames[label], value];
    if (allowed.has(label)) return [label, value];
    throw new SelectorError(message(label));
  };
}

/** the labels of a resource without its own: metadata.name and metadata.namespace */
export const objectMetaFieldLabels: FieldLabelConverter = (label, value) => {
  if (label === 'metadata.name' || label === 'metadata.namespace') return [label, value];
  throw new SelectorError(`"${label}" is not a known field selector: only "metadata.name", "metadata.namespace"`);
};

// ---- the fields objects offer ----

type Obj = Record<string, unknown>;

/** `v` when it is an object, else an empty one */
export function fieldObject(v: unknown): Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {};
}

/** a string field's value; numbers and booleans as Go prints them; '' for anything else */
export function fieldText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return '';
}

/** an integer field's value, 0 when unset */
export function fieldCount(v: unknown): string {
  return typeof v === 'number' ? String(Math.trunc(v)) : '0';
}

/** metadata.name always; metadata.namespace for namespaced kinds */
export function objectMetaFields(o: KubeObject, namespaced: boolean): Record<string, string> {
  const out: Record<string, string> = { 'metadata.name': o.metadata?.name ?? '' };
  if (namespaced) out['metadata.namespace'] = o.metadata?.namespace ?? '';
  return out;
}

/** the fields a stored object offers beyond its metadata */
export type ObjectFields = (o: KubeObject) => Record<string, string>;

/** The selectable fields of a stored object: its metadata's, and `extra`'s when given. */
export function selectableFields(namespaced: boolean, extra?: ObjectFields): (o: KubeObject) => FieldSet {
  return (o) => ({ ...objectMetaFields(o, namespaced), ...(extra ? extra(o) : {}) });
}
