// Runs every ValidatingAdmissionPolicy bound to a request, as kube-apiserver's validating
// policy dispatcher does: policy matchConstraints, binding matchResources, params from the
// binding's paramRef, matchConditions, validations (message, messageExpression, reason),
// auditAnnotations, the failure policy for configuration and evaluation errors, and the
// binding's validationActions (Deny: the first denial is the request's error; Warn: a
// warning; Audit: the validation_failure audit annotation).

import { randomUUID } from 'node:crypto';
import type { KubeObject } from '../../../storage/interface.js';
import { StatusError, type StatusReason } from '../../machinery/status.js';
import type { AdmissionAttributes } from '../../registry/rest.js';
import { labelSelectorFromObject, type LabelSelector } from '../../selectors/labels.js';
import { AuthorizerSession, AuthorizerValue } from '../../cel/authorizer-library.js';
import type { ReviewAuthorizer } from '../../machinery/access-review.js';
import { MATCH_CONDITIONS_COST_BUDGET, RUNTIME_COST_BUDGET } from '../../cel/budget.js';
import { activation, bindVariables, OUT_OF_BUDGET, type Activation } from '../../cel/admission-policy.js';
import type { CompiledPolicy } from './compiled.js';
import { matchesResources, type GroupVersionKind, type GroupVersionResource, type MatchEnvironment } from './matching.js';
import type { BindingObject, ParamKind, ParamRef, ValidationAction } from './types.js';

/** a served kind that params are read from */
export interface ParamResource {
  namespaced: boolean;
  get(namespace: string, name: string): Promise<KubeObject | undefined>;
  list(namespace: string, selector: LabelSelector): Promise<KubeObject[]>;
}

export interface DispatchEnvironment extends MatchEnvironment {
  /** the Namespace object (for `namespaceObject`); undefined when it does not exist */
  namespace(name: string): Promise<KubeObject | undefined>;
  /** the resource of a paramKind; undefined when no served resource has that kind */
  paramResource(kind: ParamKind): ParamResource | undefined;
  /** answers `authorizer` checks; absent: every check is allowed */
  authorizer?: ReviewAuthorizer;
}

export interface PolicyHook {
  policy: CompiledPolicy;
  bindings: BindingObject[];
}

export interface DispatchResult {
  /** the error the request fails with */
  denial?: StatusError;
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

interface Denial {
  policy: string;
  binding?: string;
  message: string;
  reason?: string;
}

interface ValidationFailureValue {
  message: string;
  policy: string;
  binding: string;
  expressionIndex: number;
  validationActions: ValidationAction[];
}

const MAX_AUDIT_VALUE = 10 * 1024;
const MAX_VALIDATION_FAILURES = 50;
const MAX_MESSAGE_BYTES = 5 * 1024;
export const VALIDATION_FAILURE_ANNOTATION = 'validation.policy.admission.k8s.io/validation_failure';

const paramKindString = (k: ParamKind) => `&ParamKind{APIVersion:${k.apiVersion ?? ''},Kind:${k.kind ?? ''},}`;

export async function dispatch(
  hooks: readonly PolicyHook[],
  attrs: AdmissionAttributes,
  base: DispatchEnvironment,
): Promise<DispatchResult> {
  const env = memoizeNamespaces(base);
  const denials: Denial[] = [];
  const failures: ValidationFailureValue[] = [];
  const warnings: string[] = [];
  const auditAnnotations: Record<string, string> = {};
  const authorizer = new AuthorizerValue(new AuthorizerSession(env.authorizer), attrs.user, {
    group: attrs.resource.group,
    resource: attrs.resource.resource,
    subresource: attrs.subresource ?? '',
    namespace: attrs.namespace,
    name: attrs.name,
  });

  for (const { policy, bindings } of hooks) {
    const configError = (message: string, binding?: string) => {
      if (policy.failurePolicy === 'Ignore') return;
      const prefix = binding === undefined ? 'failed to configure policy: ' : 'failed to configure binding: ';
      denials.push({ policy: policy.name, binding, message: prefix + message });
    };

    let policyMatch;
    try {
      policyMatch = await matchesResources(policy.spec.matchConstraints, attrs, env, { required: true });
    } catch (err) {
      configError((err as Error).message);
      continue;
    }
    if (!policyMatch.matches) continue;

    const collected = new Map<string, string[]>();
    for (const binding of bindings) {
      const bindingName = binding.metadata.name ?? '';
      const spec = binding.spec ?? {};
      try {
        const m = await matchesResources(spec.matchResources, attrs, env, { required: false });
        if (!m.matches) continue;
      } catch (err) {
        configError((err as Error).message, bindingName);
        continue;
      }

      let params: (KubeObject | null)[];
      try {
        params = await collectParams(policy.spec.paramKind ?? undefined, spec.paramRef ?? undefined, attrs.namespace, env);
      } catch (err) {
        configError((err as Error).message, bindingName);
        continue;
      }
      if (params.length === 0) continue;

      const namespaceName = isNamespaceRequest(attrs) ? '' : attrs.namespace;
      const namespaceObject = namespaceName ? namespaceForCel(await env.namespace(namespaceName)) : null;
      const request = admissionRequest(attrs, policyMatch.resource!, policyMatch.kind!);
      const actions = spec.validationActions ?? [];

      for (const param of params) {
        const act = activation({
          object: attrs.object,
          oldObject: attrs.oldObject,
          request,
          params: withTypeMeta(param, policy.spec.paramKind ?? undefined),
          namespaceObject,
          authorizer,
        });
        bindVariables(act, policy.variables);
        const result = await validate(policy, act);
        for (const d of result.decisions) {
          if (d.action !== 'deny') continue;
          for (const action of actions) {
            if (action === 'Deny') denials.push({ policy: policy.name, binding: bindingName, message: d.message, reason: d.reason });
            else if (action === 'Warn')
              warnings.push(`Validation failed for ValidatingAdmissionPolicy '${policy.name}' with binding '${bindingName}': ${d.message}`);
            else if (action === 'Audit') {
              failures.push({
                message: d.message,
                policy: spec.policyName ?? policy.name,
                binding: bindingName,
                expressionIndex: d.index,
                validationActions: actions,
              });
            }
          }
        }
        for (const a of result.annotations) {
          if (a.error !== undefined) {
            denials.push({ policy: policy.name, binding: bindingName, message: a.error });
            continue;
          }
          const values = collected.get(a.key) ?? [];
          if (!values.includes(a.value!)) values.push(a.value!);
          collected.set(a.key, values);
        }
      }
    }
    for (const [key, values] of collected) auditAnnotations[`${policy.name}/${key}`] = values.join(', ');
  }

  if (failures.length > 0) {
    auditAnnotations[VALIDATION_FAILURE_ANNOTATION] = JSON.stringify(failures.slice(0, MAX_VALIDATION_FAILURES));
  }
  const first = denials[0];
  return { denial: first ? denialError(first, attrs) : undefined, warnings, auditAnnotations };
}

/** one read of each namespace per request, however many policies and bindings ask */
export function memoizeNamespaces(env: DispatchEnvironment): DispatchEnvironment {
  const objects = new Map<string, Promise<KubeObject | undefined>>();
  const namespace = (name: string) => {
    let p = objects.get(name);
    if (!p) objects.set(name, (p = env.namespace(name)));
    return p;
  };
  return {
    ...env,
    namespace,
    namespaceLabels: async (name) => {
      const ns = await namespace(name);
      return ns ? ((ns.metadata.labels as Record<string, string> | undefined) ?? {}) : undefined;
    },
    equivalents: (r) => env.equivalents(r),
    paramResource: (k) => env.paramResource(k),
  };
}

interface Decision {
  action: 'admit' | 'deny';
  index: number;
  message: string;
  reason?: string;
}

interface AnnotationResult {
  key: string;
  value?: string;
  error?: string;
}

/** one policy over one activation (one param) */
async function validate(policy: CompiledPolicy, act: Activation): Promise<{ decisions: Decision[]; annotations: AnnotationResult[] }> {
  const onError = policy.failurePolicy === 'Fail' ? 'deny' : 'admit';
  // match conditions: any false skips the policy; errors (without a false) follow the failure policy
  const errors: string[] = [];
  // the match conditions share kube's match-condition budget; spending it follows the failure policy
  act.budget = { remaining: MATCH_CONDITIONS_COST_BUDGET };
  for (const mc of policy.matchConditions) {
    const r = await mc.program.evaluateAsync(act);
    if (!r.ok && r.outOfBudget) {
      act.budget = undefined;
      return { decisions: onError === 'deny' ? [{ action: 'deny', index: 0, message: r.error }] : [], annotations: [] };
    }
    if (!r.ok) errors.push(r.error);
    else if (r.value === false) return { decisions: [], annotations: [] };
  }
  if (errors.length > 0) {
    const message = errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
    return { decisions: [{ action: onError, index: 0, message }], annotations: [] };
  }

  const decisions: Decision[] = [];
  // the validations (and the variables they read) share kube's runtime budget; spending it
  // denies, whatever the failure policy
  act.budget = { remaining: RUNTIME_COST_BUDGET };
  for (const [index, v] of policy.validations.entries()) {
    const d = await decide(v, index);
    if (d.outOfBudget) return { decisions: [{ action: 'deny', index, message: OUT_OF_BUDGET }], annotations: [] };
    decisions.push(d);
  }
  act.budget = undefined;
  async function decide(v: CompiledPolicy['validations'][number], index: number): Promise<Decision & { outOfBudget?: boolean }> {
    const r = await v.program.evaluateAsync(act);
    if (!r.ok) return { action: onError, index, message: r.error, outOfBudget: r.outOfBudget };
    if (r.value === true) return { action: 'admit', index, message: '' };
    let message = '';
    if (v.messageProgram) {
      const m = await v.messageProgram.evaluateAsync(act);
      if (!m.ok && m.outOfBudget) return { action: 'deny', index, message: OUT_OF_BUDGET, outOfBudget: true };
      if (m.ok && typeof m.value === 'string') {
        message = m.value.trim();
        if (Buffer.byteLength(message) > MAX_MESSAGE_BYTES || message.includes('\n')) message = '';
      }
    }
    if (!message && v.message) message = v.message.trim();
    if (!message) message = `failed expression: ${v.program.expression.trim()}`;
    return { action: 'deny', index, message, reason: v.reason ?? 'Invalid' };
  }

  const annotations: AnnotationResult[] = [];
  for (const a of policy.auditAnnotations) {
    const r = await a.program.evaluateAsync(act);
    if (!r.ok) {
      if (policy.failurePolicy === 'Fail') annotations.push({ key: a.key, error: r.error });
      continue;
    }
    if (r.value === null) continue;
    if (typeof r.value !== 'string') {
      annotations.push({
        key: a.key,
        error: `valueExpression '${a.valueExpression}' resulted in unsupported return type: ${typeof r.value}. Return type must be either string or null.`,
      });
      continue;
    }
    const value = r.value.trim();
    if (value) annotations.push({ key: a.key, value: value.slice(0, MAX_AUDIT_VALUE) });
  }
  return { decisions, annotations };
}

export async function collectParams(
  kind: ParamKind | undefined,
  ref: ParamRef | undefined,
  requestNamespace: string,
  env: DispatchEnvironment,
): Promise<(KubeObject | null)[]> {
  if (!kind || !ref) return [null];
  const resource = env.paramResource(kind);
  if (!resource) throw new Error(`paramKind kind \`${paramKindString(kind)}\` not known`);
  let namespace = '';
  if (resource.namespaced) {
    namespace = ref.namespace || requestNamespace;
    if (!namespace) throw new Error('cannot use namespaced paramRef in policy binding that matches cluster-scoped resources');
  } else if (ref.namespace) {
    throw new Error('paramRef.namespace must not be provided for a cluster-scoped `paramKind`');
  }
  let params: KubeObject[];
  if (ref.name) {
    if (ref.selector) throw new Error('paramRef.name and paramRef.selector are mutually exclusive');
    const p = await resource.get(namespace, ref.name);
    params = p ? [p] : [];
  } else if (ref.selector) {
    params = await resource.list(namespace, labelSelectorFromObject(ref.selector));
  } else {
    throw new Error('one of name or selector must be provided');
  }
  if (params.length === 0 && ref.parameterNotFoundAction === 'Deny') {
    throw new Error('no params found for policy binding with `Deny` parameterNotFoundAction');
  }
  return params;
}

export function withTypeMeta(param: KubeObject | null, kind: ParamKind | undefined): KubeObject | null {
  if (!param || (param.apiVersion && param.kind) || !kind) return param;
  return { ...param, apiVersion: kind.apiVersion ?? '', kind: kind.kind ?? '' };
}

export function isNamespaceRequest(attrs: AdmissionAttributes): boolean {
  return attrs.resource.group === '' && attrs.resource.resource === 'namespaces';
}

/** the Namespace as CEL sees it: metadata without managedFields, spec, status */
export function namespaceForCel(ns: KubeObject | undefined): KubeObject | null {
  if (!ns) return null;
  const { managedFields: _drop, ...metadata } = ns.metadata as Record<string, unknown>;
  return { apiVersion: 'v1', kind: 'Namespace', metadata, spec: ns['spec'] ?? {}, status: ns['status'] ?? {} } as KubeObject;
}

function optionsFor(op: AdmissionAttributes['operation']): Record<string, unknown> {
  const kind = op === 'CREATE' ? 'CreateOptions' : op === 'UPDATE' ? 'UpdateOptions' : 'DeleteOptions';
  return { kind, apiVersion: 'meta.k8s.io/v1' };
}

/** admission.k8s.io/v1 AdmissionRequest as CEL's `request` */
export function admissionRequest(
  attrs: AdmissionAttributes,
  resource: GroupVersionResource,
  kind: GroupVersionKind,
): Record<string, unknown> {
  const own = attrs.resource;
  const ownKind = attrs.subresource ? own.subresources.find((s) => s.name === attrs.subresource)?.kind : undefined;
  const userInfo: Record<string, unknown> = { username: attrs.user.username, groups: attrs.user.groups };
  if (attrs.user.uid) userInfo['uid'] = attrs.user.uid;
  if (attrs.user.extra) userInfo['extra'] = attrs.user.extra;
  return {
    uid: randomUUID(),
    kind,
    resource,
    subResource: attrs.subresource ?? '',
    requestKind: ownKind ?? { group: own.group, version: own.version, kind: own.kind },
    requestResource: { group: own.group, version: own.version, resource: own.resource },
    requestSubResource: attrs.subresource ?? '',
    name: attrs.name,
    namespace: attrs.namespace,
    operation: attrs.operation,
    userInfo,
    dryRun: attrs.dryRun,
    options: attrs.options ?? optionsFor(attrs.operation),
  };
}

const CODE_OF_REASON: Record<string, number> = { Forbidden: 403, Unauthorized: 401, RequestEntityTooLarge: 413, Invalid: 422 };

/** kube's admission.NewForbidden with the validation's reason and its code */
function denialError(d: Denial, attrs: AdmissionAttributes): StatusError {
  const message =
    d.binding !== undefined
      ? `ValidatingAdmissionPolicy '${d.policy}' with binding '${d.binding}' denied request: ${d.message}`
      : `ValidatingAdmissionPolicy '${d.policy}' denied request: ${d.message}`;
  const obj = attrs.object ?? attrs.oldObject;
  let name = attrs.name;
  if (!name) name = obj?.metadata?.name || (obj?.metadata?.generateName as string | undefined) || 'Unknown';
  const group = attrs.resource.group;
  const qualified = group ? `${attrs.resource.resource}.${group}` : attrs.resource.resource;
  const reason = (d.reason || 'Invalid') as StatusReason;
  return new StatusError(CODE_OF_REASON[reason] ?? 422, reason, `${qualified} "${name}" is forbidden: ${message}`, {
    name,
    group,
    kind: attrs.resource.resource,
    causes: [{ message }],
  });
}
