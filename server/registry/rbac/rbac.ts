// rbac.authorization.k8s.io/v1: defaults (roleRef and User/Group subjects get the RBAC API
// group) and validation of rules (verbs required, resource vs non-resource rules), aggregation
// selectors, role references, subjects, and the immutable roleRef of bindings.

import type { KubeObject } from '../../../storage/interface.js';
import { validateLabelSelector } from '../core/workload-validation.js';
import { asArray, asObject, isObject, type JsonObject } from '../object.js';
import { defineStrategy, type ResourceStrategy } from '../strategy.js';
import { fieldErrors, goQuote, type FieldError } from '../validation/field-error.js';
import { isDNS1123Subdomain, nameIsPathSegment } from '../validation/names.js';
import { goStringSlice, str } from '../validation/values.js';

export const rbacGroup = 'rbac.authorization.k8s.io';

function defaultSubjects(obj: KubeObject): void {
  for (const s of asArray(obj.subjects)) {
    if (!isObject(s) || s.apiGroup) continue;
    if (s.kind === 'User' || s.kind === 'Group') s.apiGroup = rbacGroup;
    else if (s.kind === 'ServiceAccount') s.apiGroup = '';
  }
}

function defaultBinding(obj: KubeObject): void {
  if (isObject(obj.roleRef) && !obj.roleRef.apiGroup) obj.roleRef.apiGroup = rbacGroup;
  defaultSubjects(obj);
}

function validatePolicyRule(rule: JsonObject, namespaced: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (asArray(rule.verbs).length === 0) errs.push(fieldErrors.required(`${path}.verbs`, 'verbs must contain at least one value'));
  const urls = asArray(rule.nonResourceURLs);
  if (urls.length > 0) {
    if (namespaced) errs.push(fieldErrors.invalid(`${path}.nonResourceURLs`, goStringSlice(urls), 'namespaced rules cannot apply to non-resource URLs'));
    if (asArray(rule.apiGroups).length || asArray(rule.resources).length || asArray(rule.resourceNames).length) {
      errs.push(fieldErrors.invalid(`${path}.nonResourceURLs`, goStringSlice(urls), 'rules cannot apply to both regular resources and non-resource URLs'));
    }
    return errs;
  }
  if (asArray(rule.apiGroups).length === 0) errs.push(fieldErrors.required(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
  if (asArray(rule.resources).length === 0) errs.push(fieldErrors.required(`${path}.resources`, 'resource rules must supply at least one resource'));
  return errs;
}

function validateRules(obj: KubeObject, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  asArray(obj.rules).forEach((r, i) => errs.push(...validatePolicyRule(asObject(r), namespaced, `rules[${i}]`)));
  return errs;
}

export function validateRole(obj: KubeObject): FieldError[] {
  return validateRules(obj, true);
}

export function validateClusterRole(obj: KubeObject): FieldError[] {
  const errs = validateRules(obj, false);
  if (isObject(obj.aggregationRule)) {
    const selectors = asArray(obj.aggregationRule.clusterRoleSelectors);
    if (selectors.length === 0) {
      errs.push(fieldErrors.required('aggregationRule.clusterRoleSelectors', 'at least one clusterRoleSelector required if aggregationRule is non-nil'));
    }
    selectors.forEach((s, i) => errs.push(...validateLabelSelector(asObject(s), `aggregationRule.clusterRoleSelectors[${i}]`)));
  }
  return errs;
}

function validateSubject(subject: JsonObject, namespaced: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(subject.name);
  const group = str(subject.apiGroup);
  if (!name) errs.push(fieldErrors.required(`${path}.name`));
  switch (subject.kind) {
    case 'ServiceAccount':
      if (name) for (const m of isDNS1123Subdomain(name)) errs.push(fieldErrors.invalid(`${path}.name`, name, m));
      if (group) errs.push(fieldErrors.notSupported(`${path}.apiGroup`, group, ['']));
      if (!namespaced && !str(subject.namespace)) errs.push(fieldErrors.required(`${path}.namespace`));
      break;
    case 'User':
    case 'Group':
      if (group !== rbacGroup) errs.push(fieldErrors.notSupported(`${path}.apiGroup`, group, [rbacGroup]));
      break;
    default:
      errs.push(fieldErrors.notSupported(`${path}.kind`, str(subject.kind), ['ServiceAccount', 'User', 'Group']));
  }
  return errs;
}

function validateBinding(obj: KubeObject, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ref = asObject(obj.roleRef);
  const group = str(ref.apiGroup);
  if (group !== rbacGroup) errs.push(fieldErrors.notSupported('roleRef.apiGroup', group, [rbacGroup]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  const kind = str(ref.kind);
  if (!kinds.includes(kind)) errs.push(fieldErrors.notSupported('roleRef.kind', kind, kinds));
  const name = str(ref.name);
  if (!name) errs.push(fieldErrors.required('roleRef.name'));
  else for (const m of nameIsPathSegment(name, false)) errs.push(fieldErrors.invalid('roleRef.name', name, m));
  asArray(obj.subjects).forEach((s, i) => errs.push(...validateSubject(asObject(s), namespaced, `subjects[${i}]`)));
  return errs;
}

/** `%#v` of an rbac.RoleRef */
function goRoleRef(ref: unknown) {
  const r = asObject(ref);
  return { rendered: `rbac.RoleRef{APIGroup:${goQuote(str(r.apiGroup))}, Kind:${goQuote(str(r.kind))}, Name:${goQuote(str(r.name))}}` };
}

function validateRoleRefUnchanged(obj: KubeObject, old: KubeObject): FieldError[] {
  const now = asObject(obj.roleRef);
  const before = asObject(old.roleRef);
  if (['apiGroup', 'kind', 'name'].every((f) => str(now[f]) === str(before[f]))) return [];
  return [fieldErrors.invalid('roleRef', goRoleRef(now), 'cannot change roleRef')];
}

export function roleStrategy(): ResourceStrategy {
  return defineStrategy({ namespaced: true, validateName: nameIsPathSegment, allowCreateOnUpdate: true, validateSpec: validateRole });
}

export function clusterRoleStrategy(): ResourceStrategy {
  return defineStrategy({ namespaced: false, validateName: nameIsPathSegment, allowCreateOnUpdate: true, validateSpec: validateClusterRole });
}

export function roleBindingStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    validateName: nameIsPathSegment,
    allowCreateOnUpdate: true,
    applyDefaults: defaultBinding,
    validateSpec: (obj) => validateBinding(obj, true),
    validateSpecUpdate: validateRoleRefUnchanged,
  });
}

export function clusterRoleBindingStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: false,
    validateName: nameIsPathSegment,
    allowCreateOnUpdate: true,
    applyDefaults: defaultBinding,
    validateSpec: (obj) => validateBinding(obj, false),
    validateSpecUpdate: validateRoleRefUnchanged,
  });
}
