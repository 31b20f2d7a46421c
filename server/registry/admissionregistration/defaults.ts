// admissionregistration.k8s.io/v1 defaulting, as kube-apiserver 1.33 applies it: webhooks get
// failurePolicy Fail, matchPolicy Equivalent, empty selectors, a 10 s timeout (and mutating
// ones reinvocationPolicy Never), rules the scope "*", services port 443; policies get
// failurePolicy Fail and their match resources (and bindings' ones) matchPolicy Equivalent
// with empty selectors. v1 has no default for sideEffects, admissionReviewVersions or a
// binding's paramRef.parameterNotFoundAction: they are required instead.

import type { KubeObject } from '../../../storage/interface.js';
import { isObject, type JsonObject } from '../object.js';

function objects(v: unknown): JsonObject[] {
  return Array.isArray(v) ? v.filter(isObject) : [];
}

function defaultRules(rules: unknown): void {
  for (const r of objects(rules)) r.scope ??= '*';
}

function defaultWebhook(hook: JsonObject, mutating: boolean): void {
  hook.failurePolicy ??= 'Fail';
  hook.matchPolicy ??= 'Equivalent';
  hook.namespaceSelector ??= {};
  hook.objectSelector ??= {};
  hook.timeoutSeconds ??= 10;
  if (mutating) hook.reinvocationPolicy ??= 'Never';
  defaultRules(hook.rules);
  const cc = hook.clientConfig;
  if (isObject(cc) && isObject(cc.service)) cc.service.port ??= 443;
}

export function defaultWebhookConfiguration(obj: KubeObject, mutating: boolean): void {
  for (const hook of objects(obj.webhooks)) defaultWebhook(hook, mutating);
}

function defaultMatchResources(m: unknown): void {
  if (!isObject(m)) return;
  m.matchPolicy ??= 'Equivalent';
  m.namespaceSelector ??= {};
  m.objectSelector ??= {};
  defaultRules(m.resourceRules);
  defaultRules(m.excludeResourceRules);
}

export function defaultValidatingAdmissionPolicy(obj: KubeObject): void {
  // the spec is a struct in Go: its defaults apply even when the request left it out
  if (!isObject(obj.spec)) obj.spec = {};
  const spec = obj.spec as JsonObject;
  spec.failurePolicy ??= 'Fail';
  defaultMatchResources(spec.matchConstraints);
}

export function defaultValidatingAdmissionPolicyBinding(obj: KubeObject): void {
  const spec = obj.spec;
  if (!isObject(spec)) return;
  defaultMatchResources(spec.matchResources);
}
