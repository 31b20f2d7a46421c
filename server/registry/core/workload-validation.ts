// Checks shared by the controllers of pods (Deployments, ReplicaSets, StatefulSets,
// DaemonSets, ReplicationControllers, Jobs): label selectors, their match with the template's
// labels, and selector immutability, reported as kube-apiserver reports them.

import {
  labelSelectorFromObject,
  SelectorError,
  validateLabelSelectorObject,
  type LabelSelector,
  type LabelSelectorObject,
} from '../../selectors/labels.js';
import { asObject, isObject, semanticEqual } from '../object.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { fieldImmutableErrorMsg, goLabelSelector, goStringMap } from '../validation/values.js';

export { goLabelSelector } from '../validation/values.js';

/** metav1.LabelSelectorAsSelector: nil selects nothing, an empty selector everything */
export type SelectorResult =
  | { kind: 'nothing' }
  | { kind: 'error'; message: string }
  | { kind: 'selector'; selector: LabelSelector; empty: boolean };

export function selectorOf(sel: unknown): SelectorResult {
  if (sel === undefined || sel === null) return { kind: 'nothing' };
  const s = asObject(sel);
  const empty = Object.keys(asObject(s.matchLabels)).length + (Array.isArray(s.matchExpressions) ? s.matchExpressions.length : 0) === 0;
  try {
    return { kind: 'selector', selector: labelSelectorFromObject(s as LabelSelectorObject), empty };
  } catch (e) {
    if (!(e instanceof SelectorError)) throw e;
    return { kind: 'error', message: e.message };
  }
}

/** whether the selector matches the labels (a nil selector matches nothing) */
export function selectorMatches(r: SelectorResult, labels: unknown): boolean {
  if (r.kind !== 'selector') return false;
  return r.selector.matches(asObject(labels) as Record<string, string>);
}

export function validateLabelSelector(sel: unknown, path: string): FieldError[] {
  if (!isObject(sel)) return [];
  return validateLabelSelectorObject(sel as LabelSelectorObject, path);
}

export function isEmptySelector(sel: unknown): boolean {
  const s = asObject(sel);
  return Object.keys(asObject(s.matchLabels)).length + (Array.isArray(s.matchExpressions) ? s.matchExpressions.length : 0) === 0;
}

export function selectorMismatch(path: string, templateLabels: unknown): FieldError {
  return fieldErrors.invalid(path, goStringMap(templateLabels), '`selector` does not match template `labels`');
}

/** ValidateImmutableField for spec.selector (a *metav1.LabelSelector) */
export function validateSelectorImmutable(now: unknown, before: unknown, path = 'spec.selector'): FieldError[] {
  if (semanticEqual(now ?? null, before ?? null) && (now === undefined || now === null) === (before === undefined || before === null))
    return [];
  const shown = now === undefined || now === null ? null : goLabelSelector(now);
  return [fieldErrors.invalid(path, shown, fieldImmutableErrorMsg)];
}
