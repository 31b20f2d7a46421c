// admissionregistration.k8s.io/v1alpha1 MutatingAdmissionPolicy and its bindings: kube 1.33's
// defaults (failurePolicy Fail, match resources as for ValidatingAdmissionPolicy, a paramRef's
// parameterNotFoundAction Deny) and validation: the spec fields it shares with
// ValidatingAdmissionPolicy are checked by validatePolicySpecBase (validation.ts), its
// expressions compiled in the mutating policy environment (message construction,
// `jsonpatch.escapeKey`).

import type { KubeObject } from '../../../storage/interface.js';
import { child, fieldErrors, index, type FieldError } from '../../machinery/validation/field-error.js';
import { nameIsDNSSubdomain } from '../../machinery/validation/names.js';
import { isObject, type JsonObject } from '../object.js';
import { celErrors, type Declarations } from './cel-check.js';
import { defaultValidatingAdmissionPolicyBinding } from './defaults.js';
import { validateMatchResources, validateParamRef, validatePolicySpecBase } from './validation.js';

const objects = (v: unknown): JsonObject[] => (Array.isArray(v) ? v.filter(isObject) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

const PATCH_TYPES = ['ApplyConfiguration', 'JSONPatch'];
const REINVOCATION_POLICIES = ['IfNeeded', 'Never'];

export function defaultMutatingAdmissionPolicy(obj: KubeObject): void {
  if (!isObject(obj.spec)) obj.spec = {};
  const spec = obj.spec as JsonObject;
  spec.failurePolicy ??= 'Fail';
  // the match resources default as a binding's do
  const carrier = { spec: { matchResources: spec.matchConstraints } } as unknown as KubeObject;
  defaultValidatingAdmissionPolicyBinding(carrier);
}

export function defaultMutatingAdmissionPolicyBinding(obj: KubeObject): void {
  defaultValidatingAdmissionPolicyBinding(obj);
  const spec = obj.spec;
  if (isObject(spec) && isObject(spec.paramRef)) spec.paramRef.parameterNotFoundAction ??= 'Deny';
}

function validateMutation(m: JsonObject, decls: Declarations, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const patchType = str(m.patchType);
  const typePath = child(path, 'patchType');
  if (!patchType) {
    errs.push(fieldErrors.required(typePath));
    return errs;
  }
  if (!PATCH_TYPES.includes(patchType)) {
    errs.push(fieldErrors.notSupported(typePath, patchType, PATCH_TYPES));
    return errs;
  }
  const [field, other] = patchType === 'ApplyConfiguration' ? ['applyConfiguration', 'jsonPatch'] : ['jsonPatch', 'applyConfiguration'];
  if (m[other] != null)
    errs.push(
      fieldErrors.invalid(
        child(path, other),
        { rendered: `&admissionregistration.${other === 'jsonPatch' ? 'JSONPatch' : 'ApplyConfiguration'}{...}` },
        `must not be specified when patchType is ${patchType}`,
      ),
    );
  const body = m[field];
  const expression = isObject(body) ? str(body.expression) : '';
  const exprPath = child(child(path, field), 'expression');
  if (!isObject(body)) errs.push(fieldErrors.required(child(path, field), `must be specified when patchType is ${patchType}`));
  else if (!expression.trim()) errs.push(fieldErrors.required(exprPath));
  else errs.push(...celErrors(exprPath, expression, 'any', decls, 'mutating'));
  return errs;
}

export function validateMutatingAdmissionPolicy(obj: KubeObject, old?: KubeObject): FieldError[] {
  const spec = isObject(obj.spec) ? obj.spec : {};
  const path = 'spec';
  const { errs, decls } = validatePolicySpecBase(obj, old, 'mutating', (s, p) =>
    s.reinvocationPolicy !== undefined && !REINVOCATION_POLICIES.includes(str(s.reinvocationPolicy))
      ? [fieldErrors.notSupported(child(p, 'reinvocationPolicy'), str(s.reinvocationPolicy), REINVOCATION_POLICIES)]
      : [],
  );
  const mutations = objects(spec.mutations);
  if (mutations.length === 0) errs.push(fieldErrors.required(child(path, 'mutations'), 'mutations must contain at least one item'));
  mutations.forEach((m, i) => errs.push(...validateMutation(m, decls, index(child(path, 'mutations'), i))));
  return errs;
}

export function validateMutatingAdmissionPolicyBinding(obj: KubeObject): FieldError[] {
  const spec = isObject(obj.spec) ? obj.spec : {};
  const errs: FieldError[] = [];
  const policyName = str(spec.policyName);
  if (!policyName) errs.push(fieldErrors.required('spec.policyName'));
  else for (const m of nameIsDNSSubdomain(policyName, false)) errs.push(fieldErrors.invalid('spec.policyName', policyName, m));
  errs.push(...validateParamRef(spec.paramRef, 'spec.paramRef'));
  errs.push(...validateMatchResources(spec.matchResources, 'spec.matchResources'));
  return errs;
}
