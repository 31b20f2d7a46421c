// Validation of the admissionregistration.k8s.io/v1 kinds with kube-apiserver 1.33's rules,
// messages and field paths: webhook configurations (names, rules, enums, timeouts, selectors,
// clientConfig, matchConditions, admissionReviewVersions), ValidatingAdmissionPolicies
// (matchConstraints, expressions, paramKind, audit annotations) and their bindings. Updates
// of webhook configurations are checked with the relaxations kube grants to objects that
// were already stored with them (side effects, unknown review versions, duplicate names,
// invalid selector values, unchanged match conditions).

import type { KubeObject } from '../../../storage/interface.js';
import { validateLabelSelectorObject, type LabelSelectorObject } from '../../selectors/labels.js';
import { isObject, semanticEqual, type JsonObject } from '../object.js';
import { child, fieldErrors, goQuote, index, type FieldError, type RenderedValue } from '../../machinery/validation/field-error.js';
import {
  isDNS1035Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidPathSegmentName,
  nameIsDNSSubdomain,
} from '../../machinery/validation/names.js';
import { celErrors, checkExpression, type Declarations } from './cel-check.js';
import { variableFieldType, type PolicyFlavour } from '../../cel/admission-policy.js';
import { validateClientConfig } from './webhook-client.js';
import { CEL_WORDS } from '../../cel/reserved-words.js';

// ---- small readers ----

function objects(v: unknown): JsonObject[] {
  return Array.isArray(v) ? v.map((x) => (isObject(x) ? x : {})) : [];
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : String(x))) : [];
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** a Go slice of a named string type as `%#v` prints it */
function goTypedSlice(type: string, values: readonly string[]): RenderedValue {
  return { rendered: `[]${type}{${values.map((v) => goQuote(v)).join(', ')}}` };
}

// ---- enums (kube lists the supported values sorted) ----

const failurePolicies = ['Fail', 'Ignore'];
const matchPolicies = ['Equivalent', 'Exact'];
const noSideEffectClasses = ['None', 'NoneOnDryRun'];
const allSideEffectClasses = ['None', 'NoneOnDryRun', 'Some', 'Unknown'];
const operations = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const reinvocationPolicies = ['IfNeeded', 'Never'];
const scopes = ['*', 'Cluster', 'Namespaced'];
const validationReasons = ['Forbidden', 'Invalid', 'RequestEntityTooLarge'];
const validationActions = ['Audit', 'Deny', 'Warn'];
export const acceptedAdmissionReviewVersions = ['v1', 'v1beta1'];

const maxMatchConditions = 64;
const maxAuditAnnotations = 20;
const maxAuditAnnotationValueExpressionLength = 5 * 1024;

// ---- rules ----

function validateResources(resources: string[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (resources.length === 0) errs.push(fieldErrors.required(path));
  const withWildcardSub = new Set<string>();
  const subWithWildcardRes = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let plainResource = false;
  resources.forEach((resSub, i) => {
    if (resSub === '') {
      errs.push(fieldErrors.required(index(path, i)));
      return;
    }
    if (resSub === '*/*') doubleWildcard = true;
    if (resSub === '*') singleWildcard = true;
    const slash = resSub.indexOf('/');
    if (slash < 0) {
      // kube remembers only whether the last resource without subresource was not '*'
      plainResource = resSub !== '*';
      return;
    }
    const res = resSub.slice(0, slash);
    const sub = resSub.slice(slash + 1);
    if (withWildcardSub.has(res))
      errs.push(fieldErrors.invalid(index(path, i), resSub, `if '${res}/*' is present, must not specify ${resSub}`));
    if (subWithWildcardRes.has(sub))
      errs.push(fieldErrors.invalid(index(path, i), resSub, `if '*/${sub}' is present, must not specify ${resSub}`));
    if (sub === '*') withWildcardSub.add(res);
    if (res === '*') subWithWildcardRes.add(sub);
  });
  if (resources.length > 1 && doubleWildcard)
    errs.push(fieldErrors.invalid(path, resources, "if '*/*' is present, must not specify other resources"));
  if (singleWildcard && plainResource)
    errs.push(fieldErrors.invalid(path, resources, "if '*' is present, must not specify other resources without subresources"));
  return errs;
}

function validateRule(rule: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const groups = strings(rule.apiGroups);
  const versions = strings(rule.apiVersions);
  if (groups.length === 0) errs.push(fieldErrors.required(child(path, 'apiGroups')));
  if (groups.length > 1 && groups.includes('*'))
    errs.push(fieldErrors.invalid(child(path, 'apiGroups'), groups, "if '*' is present, must not specify other API groups"));
  if (versions.length === 0) errs.push(fieldErrors.required(child(path, 'apiVersions')));
  if (versions.length > 1 && versions.includes('*'))
    errs.push(fieldErrors.invalid(child(path, 'apiVersions'), versions, "if '*' is present, must not specify other API versions"));
  versions.forEach((v, i) => {
    if (v === '') errs.push(fieldErrors.required(index(child(path, 'apiVersions'), i)));
  });
  errs.push(...validateResources(strings(rule.resources), child(path, 'resources')));
  if (typeof rule.scope === 'string' && !scopes.includes(rule.scope))
    errs.push(fieldErrors.notSupported(child(path, 'scope'), rule.scope, scopes));
  return errs;
}

function validateRuleWithOperations(rule: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const ops = strings(rule.operations);
  const opsPath = child(path, 'operations');
  if (ops.length === 0) errs.push(fieldErrors.required(opsPath));
  if (ops.length > 1 && ops.includes('*'))
    errs.push(
      fieldErrors.invalid(
        opsPath,
        goTypedSlice('admissionregistration.OperationType', ops),
        "if '*' is present, must not specify other operations",
      ),
    );
  ops.forEach((op, i) => {
    if (!operations.includes(op)) errs.push(fieldErrors.notSupported(index(opsPath, i), op, operations));
  });
  return [...errs, ...validateRule(rule, path)];
}

function validateNamedRuleWithOperations(rule: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  strings(rule.resourceNames).forEach((name, i) => {
    const p = index(child(path, 'resourceNames'), i);
    for (const m of isValidPathSegmentName(name)) errs.push(fieldErrors.invalid(p, name, m));
    if (seen.has(name)) errs.push(fieldErrors.duplicate(p, name));
    else seen.add(name);
  });
  return [...errs, ...validateRuleWithOperations(rule, path)];
}

// ---- selectors ----

function validateSelector(sel: unknown, path: string, allowInvalidValues: boolean): FieldError[] {
  if (!isObject(sel)) return [];
  const errs = validateLabelSelectorObject(sel as LabelSelectorObject, path);
  // objects stored with invalid values in matchExpressions keep them on update
  return allowInvalidValues ? errs.filter((e) => !/\.matchExpressions\[\d+\]\.values\[\d+\]$/.test(e.field)) : errs;
}

// ---- match conditions ----

interface Options {
  /** the match conditions are as stored: kube does not check them again */
  ignoreMatchConditions: boolean;
  requireNoSideEffects: boolean;
  requireRecognizedAdmissionReviewVersion: boolean;
  requireUniqueWebhookNames: boolean;
  allowInvalidLabelValueInSelector: boolean;
}

const createOptions: Options = {
  ignoreMatchConditions: false,
  requireNoSideEffects: true,
  requireRecognizedAdmissionReviewVersion: true,
  requireUniqueWebhookNames: true,
  allowInvalidLabelValueInSelector: false,
};

export function validateMatchConditions(conditions: unknown, path: string, decls: Declarations): FieldError[] {
  const list = objects(conditions);
  const errs: FieldError[] = [];
  if (list.length > maxMatchConditions) errs.push(fieldErrors.tooMany(path, list.length, maxMatchConditions));
  const names = new Set<string>();
  list.forEach((c, i) => {
    const p = index(path, i);
    const expression = str(c.expression).trim();
    if (!expression) errs.push(fieldErrors.required(child(p, 'expression')));
    else errs.push(...celErrors(child(p, 'expression'), expression, 'bool', decls));
    const name = str(c.name);
    if (!name) errs.push(fieldErrors.required(child(p, 'name')));
    else for (const m of isQualifiedName(name)) errs.push(fieldErrors.invalid(child(p, 'name'), name, m));
    if (name) {
      if (names.has(name)) errs.push(fieldErrors.duplicate(child(p, 'name'), name));
      else names.add(name);
    }
  });
  return errs;
}

// ---- webhook configurations ----

function isFullyQualifiedName(path: string, name: string): FieldError[] {
  if (!name) return [fieldErrors.required(path)];
  const errs = isDNS1123Subdomain(name);
  if (errs.length) return [fieldErrors.invalid(path, name, errs.join(','))];
  if (name.split('.').length < 3)
    return [fieldErrors.invalid(path, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

function validateAdmissionReviewVersions(versions: unknown, requireRecognized: boolean, path: string): FieldError[] {
  const list = strings(versions);
  if (list.length === 0) return [fieldErrors.required(path, `must specify one of ${acceptedAdmissionReviewVersions.join(', ')}`)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let accepted = false;
  list.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(fieldErrors.invalid(index(path, i), v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const m of isDNS1035Label(v)) errs.push(fieldErrors.invalid(index(path, i), v, m));
    if (acceptedAdmissionReviewVersions.includes(v)) accepted = true;
  });
  if (requireRecognized && !accepted)
    errs.push(fieldErrors.invalid(path, list, `must include at least one of ${acceptedAdmissionReviewVersions.join(', ')}`));
  return errs;
}

const webhookDecls: Declarations = { params: false, authorizer: true };

function validateWebhook(hook: JsonObject, mutating: boolean, opts: Options, path: string): FieldError[] {
  const errs: FieldError[] = [...isFullyQualifiedName(child(path, 'name'), str(hook.name))];
  objects(hook.rules).forEach((r, i) => errs.push(...validateRuleWithOperations(r, index(child(path, 'rules'), i))));
  if (typeof hook.failurePolicy === 'string' && !failurePolicies.includes(hook.failurePolicy)) {
    errs.push(fieldErrors.notSupported(child(path, 'failurePolicy'), hook.failurePolicy, failurePolicies));
  }
  if (typeof hook.matchPolicy === 'string' && !matchPolicies.includes(hook.matchPolicy)) {
    errs.push(fieldErrors.notSupported(child(path, 'matchPolicy'), hook.matchPolicy, matchPolicies));
  }
  const allowedSideEffects = opts.requireNoSideEffects ? noSideEffectClasses : allSideEffectClasses;
  if (typeof hook.sideEffects !== 'string') {
    errs.push(fieldErrors.required(child(path, 'sideEffects'), `must specify one of ${allowedSideEffects.join(', ')}`));
  } else if (!allowedSideEffects.includes(hook.sideEffects)) {
    errs.push(fieldErrors.notSupported(child(path, 'sideEffects'), hook.sideEffects, allowedSideEffects));
  }
  if (typeof hook.timeoutSeconds === 'number' && (hook.timeoutSeconds > 30 || hook.timeoutSeconds < 1)) {
    errs.push(
      fieldErrors.invalid(child(path, 'timeoutSeconds'), hook.timeoutSeconds, 'the timeout value must be between 1 and 30 seconds'),
    );
  }
  errs.push(...validateSelector(hook.namespaceSelector, child(path, 'namespaceSelector'), opts.allowInvalidLabelValueInSelector));
  errs.push(...validateSelector(hook.objectSelector, child(path, 'objectSelector'), opts.allowInvalidLabelValueInSelector));
  if (mutating && typeof hook.reinvocationPolicy === 'string' && !reinvocationPolicies.includes(hook.reinvocationPolicy)) {
    errs.push(fieldErrors.notSupported(child(path, 'reinvocationPolicy'), hook.reinvocationPolicy, reinvocationPolicies));
  }
  errs.push(...validateClientConfig(child(path, 'clientConfig'), hook.clientConfig));
  if (!opts.ignoreMatchConditions)
    errs.push(...validateMatchConditions(hook.matchConditions, child(path, 'matchConditions'), webhookDecls));
  return errs;
}

function validateWebhooks(obj: KubeObject, mutating: boolean, opts: Options): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  objects(obj.webhooks).forEach((hook, i) => {
    const p = index('webhooks', i);
    errs.push(...validateWebhook(hook, mutating, opts, p));
    errs.push(
      ...validateAdmissionReviewVersions(
        hook.admissionReviewVersions,
        opts.requireRecognizedAdmissionReviewVersion,
        child(p, 'admissionReviewVersions'),
      ),
    );
    const name = str(hook.name);
    if (opts.requireUniqueWebhookNames && name) {
      if (names.has(name)) errs.push(fieldErrors.duplicate(child(p, 'name'), name));
      else names.add(name);
    }
  });
  return errs;
}

/** the webhooks' fields of a Mutating/ValidatingWebhookConfiguration on create */
export function validateWebhookConfiguration(obj: KubeObject, mutating: boolean): FieldError[] {
  return validateWebhooks(obj, mutating, createOptions);
}

function selectorHasInvalidValues(sel: unknown): boolean {
  return isObject(sel) && validateLabelSelectorObject(sel as LabelSelectorObject, 's').length > 0;
}

/** the update rules: what the stored object already got away with stays allowed */
export function validateWebhookConfigurationUpdate(obj: KubeObject, old: KubeObject, mutating: boolean): FieldError[] {
  const now = objects(obj.webhooks);
  const before = objects(old.webhooks);
  const unchangedConditions =
    now.length === before.length && before.every((h, i) => semanticEqual(h.matchConditions ?? null, now[i]!.matchConditions ?? null));
  const opts: Options = {
    ignoreMatchConditions: unchangedConditions,
    requireNoSideEffects: before.every((h) => typeof h.sideEffects === 'string' && noSideEffectClasses.includes(h.sideEffects)),
    requireRecognizedAdmissionReviewVersion: before.every((h) => {
      const v = strings(h.admissionReviewVersions);
      return v.length === 0 || v.some((x) => acceptedAdmissionReviewVersions.includes(x));
    }),
    requireUniqueWebhookNames: new Set(before.map((h) => str(h.name))).size === before.length,
    allowInvalidLabelValueInSelector: before.some(
      (h) => selectorHasInvalidValues(h.namespaceSelector) || selectorHasInvalidValues(h.objectSelector),
    ),
  };
  return validateWebhooks(obj, mutating, opts);
}

// ---- ValidatingAdmissionPolicy ----

export function validateMatchResources(m: unknown, path: string): FieldError[] {
  if (!isObject(m)) return [];
  const errs: FieldError[] = [];
  if (typeof m.matchPolicy !== 'string') errs.push(fieldErrors.required(child(path, 'matchPolicy')));
  else if (!matchPolicies.includes(m.matchPolicy))
    errs.push(fieldErrors.notSupported(child(path, 'matchPolicy'), m.matchPolicy, matchPolicies));
  if (!isObject(m.namespaceSelector)) errs.push(fieldErrors.required(child(path, 'namespaceSelector')));
  else errs.push(...validateSelector(m.namespaceSelector, child(path, 'namespaceSelector'), false));
  if (!isObject(m.objectSelector)) errs.push(fieldErrors.required(child(path, 'objectSelector')));
  else errs.push(...validateSelector(m.objectSelector, child(path, 'objectSelector'), false));
  objects(m.resourceRules).forEach((r, i) => errs.push(...validateNamedRuleWithOperations(r, index(child(path, 'resourceRules'), i))));
  objects(m.excludeResourceRules).forEach((r, i) =>
    errs.push(...validateNamedRuleWithOperations(r, index(child(path, 'excludeResourceRules'), i))),
  );
  return errs;
}

export function validateParamKind(pk: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const apiVersion = str(pk.apiVersion);
  const avPath = child(path, 'apiVersion');
  if (!apiVersion) {
    errs.push(fieldErrors.required(avPath));
  } else if (apiVersion !== '/' && apiVersion.split('/').length > 2) {
    errs.push(fieldErrors.invalid(avPath, apiVersion, `unexpected GroupVersion string: ${apiVersion}`));
  } else {
    const [group, version] =
      apiVersion === '/' ? ['', ''] : apiVersion.includes('/') ? (apiVersion.split('/') as [string, string]) : ['', apiVersion];
    if (group) {
      const m = isDNS1123Subdomain(group);
      if (m.length) errs.push(fieldErrors.invalid(avPath, group, m.join(',')));
    }
    if (!version) {
      errs.push(fieldErrors.invalid(avPath, apiVersion, 'version must be specified'));
    } else {
      const m = isDNS1035Label(version);
      if (m.length) errs.push(fieldErrors.invalid(avPath, version, m.join(',')));
    }
  }
  const kind = str(pk.kind);
  if (!kind) errs.push(fieldErrors.required(child(path, 'kind')));
  else {
    const m = isDNS1035Label(kind.toLowerCase());
    if (m.length)
      errs.push(fieldErrors.invalid(child(path, 'kind'), kind, 'may have mixed case, but should otherwise match: ' + m.join(',')));
  }
  return errs;
}

export function isCELIdentifier(name: string): boolean {
  return /^[_a-zA-Z][_a-zA-Z0-9]*$/.test(name) && !CEL_WORDS.has(name);
}

function validateValidation(v: JsonObject, decls: Declarations, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const expression = str(v.expression);
  const message = str(v.message);
  const messageExpression = str(v.messageExpression);
  if (!expression.trim()) errs.push(fieldErrors.required(child(path, 'expression'), 'expression is not specified'));
  else errs.push(...celErrors(child(path, 'expression'), expression, 'bool', decls));
  if (messageExpression.length > 0 && !messageExpression.trim()) {
    errs.push(fieldErrors.invalid(child(path, 'messageExpression'), messageExpression, 'must be non-empty if specified'));
  } else if (messageExpression.trim()) {
    // messageExpression has no authorizer in kube's environment
    errs.push(...celErrors(child(path, 'messageExpression'), messageExpression, 'string', { ...decls, authorizer: false }));
  }
  if (message.length > 0 && !message.trim())
    errs.push(fieldErrors.invalid(child(path, 'message'), message, 'message must be non-empty if specified'));
  else if (/[\n\r]/.test(message.trim()))
    errs.push(fieldErrors.invalid(child(path, 'message'), message, 'message must not contain line breaks'));
  if (typeof v.reason === 'string' && !validationReasons.includes(v.reason))
    errs.push(fieldErrors.notSupported(child(path, 'reason'), v.reason, validationReasons));
  return errs;
}

function validateAuditAnnotation(policyName: string, a: JsonObject, decls: Declarations, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const key = str(a.key);
  if (policyName) {
    const full = `${policyName}/${key}`;
    for (const m of isQualifiedName(full)) errs.push(fieldErrors.invalid(child(path, 'key'), full, m));
  } else {
    errs.push(fieldErrors.invalid(child(path, 'key'), key, 'requires metadata.name be non-empty'));
  }
  const raw = str(a.valueExpression);
  const value = raw.trim();
  const vPath = child(path, 'valueExpression');
  if (!value) errs.push(fieldErrors.required(vPath, 'valueExpression is not specified'));
  else if (Buffer.byteLength(value, 'utf8') > maxAuditAnnotationValueExpressionLength) {
    errs.push(fieldErrors.required(vPath, `must not exceed ${maxAuditAnnotationValueExpressionLength} bytes in length`));
  } else {
    for (const e of celErrors(vPath, value, 'string-or-null', decls)) errs.push({ ...e, badValue: raw });
  }
  return errs;
}

/** a policy's spec on create or update (kube re-checks unchanged match conditions only when
 *  the paramKind or the conditions changed) */
/** What both policy kinds' specs share, in kube's order: failurePolicy, then what `afterFailurePolicy`
 *  adds (a mutating policy's reinvocationPolicy), paramKind, matchConstraints, matchConditions and
 *  variables (compiled in the kind's CEL environment); with the declarations the kind's own
 *  expressions compile with. */
export function validatePolicySpecBase(
  obj: KubeObject,
  old: KubeObject | undefined,
  flavour: PolicyFlavour,
  afterFailurePolicy: (spec: JsonObject, path: string) => FieldError[] = () => [],
): { errs: FieldError[]; decls: Declarations } {
  const spec = isObject(obj.spec) ? obj.spec : {};
  const errs: FieldError[] = [];
  const path = 'spec';
  if (typeof spec.failurePolicy !== 'string') errs.push(fieldErrors.required(child(path, 'failurePolicy')));
  else if (!failurePolicies.includes(spec.failurePolicy))
    errs.push(fieldErrors.notSupported(child(path, 'failurePolicy'), spec.failurePolicy, failurePolicies));
  errs.push(...afterFailurePolicy(spec, path));
  const hasParams = isObject(spec.paramKind);
  if (hasParams) errs.push(...validateParamKind(spec.paramKind as JsonObject, child(path, 'paramKind')));
  if (!isObject(spec.matchConstraints)) {
    errs.push(fieldErrors.required(child(path, 'matchConstraints')));
  } else {
    errs.push(...validateMatchResources(spec.matchConstraints, child(path, 'matchConstraints')));
    // at least one resource rule gives the expressions their types
    if (objects(spec.matchConstraints.resourceRules).length === 0)
      errs.push(fieldErrors.required(child(child(path, 'matchConstraints'), 'resourceRules')));
  }
  const variables = objects(spec.variables);
  const oldSpec = old && isObject(old.spec) ? old.spec : undefined;
  const ignoreMatchConditions =
    oldSpec !== undefined &&
    semanticEqual(oldSpec.paramKind ?? null, spec.paramKind ?? null) &&
    semanticEqual(oldSpec.matchConditions ?? null, spec.matchConditions ?? null);
  // kube compiles match conditions without the policy's variables
  if (!ignoreMatchConditions)
    errs.push(...validateMatchConditions(spec.matchConditions, child(path, 'matchConditions'), { params: hasParams, authorizer: true }));
  // as kube composes them: each variable is compiled seeing the ones before it, then declared
  // with the type its expression has (dyn when it does not compile); one without an
  // expression is not declared
  const variableTypes = new Map<string, string>();
  variables.forEach((v, i) => {
    const p = index(child(path, 'variables'), i);
    const name = str(v.name);
    if (!name.trim()) errs.push(fieldErrors.required(child(p, 'name'), 'name is not specified'));
    else if (!isCELIdentifier(name)) errs.push(fieldErrors.invalid(child(p, 'name'), name, 'name is not a valid CEL identifier'));
    const expression = str(v.expression);
    if (!expression.trim()) {
      errs.push(fieldErrors.required(child(p, 'expression'), 'expression is not specified'));
      return;
    }
    const checked = checkExpression(expression, 'any', { params: hasParams, variables: new Map(variableTypes), authorizer: true }, flavour);
    if (checked.error) errs.push(fieldErrors.invalid(child(p, 'expression'), expression, checked.error));
    variableTypes.set(name, variableFieldType(checked.outputType));
  });
  const decls: Declarations = { params: hasParams, variables: variables.length > 0 ? variableTypes : undefined, authorizer: true };
  return { errs, decls };
}

export function validateValidatingAdmissionPolicy(obj: KubeObject, old?: KubeObject): FieldError[] {
  const spec = isObject(obj.spec) ? obj.spec : {};
  const path = 'spec';
  const { errs, decls } = validatePolicySpecBase(obj, old, 'validating');
  const validations = objects(spec.validations);
  const auditAnnotations = objects(spec.auditAnnotations);
  if (validations.length === 0 && auditAnnotations.length === 0) {
    errs.push(fieldErrors.required(child(path, 'validations'), 'validations or auditAnnotations must contain at least one item'));
    errs.push(fieldErrors.required(child(path, 'auditAnnotations'), 'validations or auditAnnotations must contain at least one item'));
    return errs;
  }
  validations.forEach((v, i) => errs.push(...validateValidation(v, decls, index(child(path, 'validations'), i))));
  if (auditAnnotations.length > maxAuditAnnotations) {
    errs.push(
      fieldErrors.invalid(
        child(path, 'auditAnnotations'),
        { rendered: `[]admissionregistration.AuditAnnotation{...}` },
        `must not have more than ${maxAuditAnnotations} auditAnnotations`,
      ),
    );
  }
  const keys = new Set<string>();
  auditAnnotations.forEach((a, i) => {
    const p = index(child(path, 'auditAnnotations'), i);
    errs.push(...validateAuditAnnotation(obj.metadata.name ?? '', a, decls, p));
    const key = str(a.key);
    if (keys.has(key)) errs.push(fieldErrors.duplicate(child(p, 'key'), key));
    keys.add(key);
  });
  return errs;
}

// ---- ValidatingAdmissionPolicyBinding ----

export function validateParamRef(pr: unknown, path: string): FieldError[] {
  if (!isObject(pr)) return [];
  const errs: FieldError[] = [];
  const name = str(pr.name);
  const hasSelector = isObject(pr.selector);
  if (name) {
    for (const m of isValidPathSegmentName(name)) errs.push(fieldErrors.invalid(child(path, 'name'), name, m));
    if (hasSelector) errs.push(fieldErrors.forbidden(child(path, 'name'), 'name and selector are mutually exclusive'));
  }
  if (hasSelector) {
    errs.push(...validateSelector(pr.selector, child(path, 'selector'), false));
    if (name) errs.push(fieldErrors.forbidden(child(path, 'selector'), 'name and selector are mutually exclusive'));
  }
  if (!name && !hasSelector) errs.push(fieldErrors.required(path, 'one of name or selector must be specified'));
  const action = str(pr.parameterNotFoundAction);
  if (!action) errs.push(fieldErrors.required(child(path, 'parameterNotFoundAction')));
  else if (action !== 'Deny' && action !== 'Allow')
    errs.push(fieldErrors.notSupported(child(path, 'parameterNotFoundAction'), action, ['Deny', 'Allow']));
  return errs;
}

function validateValidationActions(va: unknown, path: string): FieldError[] {
  const list = strings(va);
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  list.forEach((a, i) => {
    if (!validationActions.includes(a)) errs.push(fieldErrors.notSupported(index(path, i), a, validationActions));
    if (seen.has(a)) errs.push(fieldErrors.duplicate(index(path, i), a));
    seen.add(a);
  });
  if (seen.has('Deny') && seen.has('Warn')) {
    errs.push(
      fieldErrors.invalid(
        path,
        goTypedSlice('admissionregistration.ValidationAction', list),
        'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
      ),
    );
  }
  if (seen.size === 0) errs.push(fieldErrors.required(path, 'at least one validation action is required'));
  return errs;
}

export function validateValidatingAdmissionPolicyBinding(obj: KubeObject): FieldError[] {
  const spec = isObject(obj.spec) ? obj.spec : {};
  const errs: FieldError[] = [];
  const policyName = str(spec.policyName);
  if (!policyName) errs.push(fieldErrors.required('spec.policyName'));
  else for (const m of nameIsDNSSubdomain(policyName, false)) errs.push(fieldErrors.invalid('spec.policyName', policyName, m));
  errs.push(...validateParamRef(spec.paramRef, 'spec.paramRef'));
  // kube-apiserver 1.33 reports these under "matchResouces" (sic)
  errs.push(...validateMatchResources(spec.matchResources, 'spec.matchResouces'));
  errs.push(...validateValidationActions(spec.validationActions, 'spec.validationActions'));
  return errs;
}
