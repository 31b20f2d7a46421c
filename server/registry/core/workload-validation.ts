// Checks shared by every controller of pods (Deployments, ReplicaSets, StatefulSets,
// DaemonSets, ReplicationControllers, Jobs): the selector, its match with the template's
// labels, replicas, the pod template, and selector immutability.

import type { KubeObject } from '../../../storage/interface.js';
import { labelSelectorFromObject, SelectorError, validateLabelSelectorObject, type LabelSelectorObject } from '../../selectors/labels.js';
import { asArray, asObject, isObject, jsonEqual } from '../object.js';
import { fieldErrors, goQuote, type FieldError } from '../validation/field-error.js';
import { validatePodSpec } from './pod-spec.js';

/** Go's %#v of a metav1.LabelSelector, as kube-apiserver prints it in errors */
export function goLabelSelector(sel: unknown): string {
  const s = asObject(sel);
  const labels = Object.entries(asObject(s.matchLabels));
  const ml = isObject(s.matchLabels)
    ? `map[string]string{${labels
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, v]) => `${goQuote(k)}:${goQuote(String(v))}`)
        .join(', ')}}`
    : 'map[string]string(nil)';
  const exprs = asArray(s.matchExpressions);
  const me = Array.isArray(s.matchExpressions)
    ? `[]v1.LabelSelectorRequirement{${exprs
        .map((e) => {
          const r = asObject(e);
          const vals = Array.isArray(r.values) ? `[]string{${r.values.map((v) => goQuote(String(v))).join(', ')}}` : '[]string(nil)';
          return `v1.LabelSelectorRequirement{Key:${goQuote(String(r.key ?? ''))}, Operator:${goQuote(String(r.operator ?? ''))}, Values:${vals}}`;
        })
        .join(', ')}}`
    : '[]v1.LabelSelectorRequirement(nil)';
  return `&v1.LabelSelector{MatchLabels:${ml}, MatchExpressions:${me}}`;
}

export interface WorkloadRules {
  /** lowercase kind for messages, e.g. `deployment` */
  noun: string;
  /** restart policies the template may use */
  restartPolicies: string[];
  /** the selector may be absent (ReplicationController: a map, defaulted from the template) */
  selectorIsMap?: boolean;
  /** whether a Job-like template may omit the selector (it is generated) */
  selectorOptional?: boolean;
}

export function validateWorkload(obj: KubeObject, rules: WorkloadRules): FieldError[] {
  const errs: FieldError[] = [];
  const spec = asObject(obj.spec);
  const replicas = spec.replicas;
  if (typeof replicas === 'number' && replicas < 0) errs.push(fieldErrors.invalid('spec.replicas', replicas, 'must be greater than or equal to 0'));
  const template = asObject(spec.template);
  const templateLabels = asObject(asObject(template.metadata).labels) as Record<string, string>;
  if (rules.selectorIsMap) {
    const sel = asObject(spec.selector) as Record<string, string>;
    if (Object.keys(sel).length === 0) errs.push(fieldErrors.required('spec.selector'));
    else if (isObject(spec.template) && !Object.entries(sel).every(([k, v]) => templateLabels[k] === v)) {
      errs.push(fieldErrors.invalid('spec.template.metadata.labels', templateLabels, '`selector` does not match template `labels`'));
    }
  } else if (spec.selector === undefined || spec.selector === null) {
    if (!rules.selectorOptional) errs.push(fieldErrors.required('spec.selector'));
  } else {
    const selErrs = validateLabelSelectorObject(spec.selector as LabelSelectorObject, 'spec.selector');
    errs.push(...selErrs);
    const s = asObject(spec.selector);
    if (Object.keys(asObject(s.matchLabels)).length + asArray(s.matchExpressions).length === 0) {
      errs.push(fieldErrors.invalid('spec.selector', { rendered: goLabelSelector(s) }, `empty selector is invalid for ${rules.noun}`));
    } else if (!selErrs.length) {
      try {
        const selector = labelSelectorFromObject(spec.selector as LabelSelectorObject);
        if (!selector.matches(templateLabels)) {
          errs.push(fieldErrors.invalid('spec.template.metadata.labels', templateLabels, '`selector` does not match template `labels`'));
        }
      } catch (e) {
        if (!(e instanceof SelectorError)) throw e;
        errs.push(fieldErrors.invalid('spec.selector', { rendered: goLabelSelector(s) }, e.message));
      }
    }
  }
  if (isObject(spec.template)) errs.push(...validatePodSpec(template.spec, 'spec.template.spec', rules.restartPolicies));
  else errs.push(fieldErrors.required('spec.template'));
  return errs;
}

export function validateSelectorImmutable(obj: KubeObject, old: KubeObject): FieldError[] {
  const now = asObject(obj.spec).selector;
  const before = asObject(old.spec).selector;
  if (jsonEqual(now ?? null, before ?? null)) return [];
  return [fieldErrors.invalid('spec.selector', { rendered: goLabelSelector(now) }, 'field is immutable')];
}
