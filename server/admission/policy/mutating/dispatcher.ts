// Runs every MutatingAdmissionPolicy bound to a request, as kube-apiserver's mutating policy
// dispatcher does: policies in name order, each binding in name order, each param; the
// matchConditions decide whether the mutations run; the mutations run in order, each seeing
// the object the previous one produced (variables are evaluated again for each); an error
// is the policy's, and follows its failurePolicy. Policies with reinvocationPolicy IfNeeded
// run once more when a later mutation changed the object after they ran.

import type { KubeObject } from '../../../../storage/interface.js';
import { StatusError } from '../../../machinery/status.js';
import { jsonEqual, type Json } from '../../../machinery/json-patch.js';
import type { AdmissionAttributes } from '../../../registry/rest.js';
import { AuthorizerSession, AuthorizerValue } from '../../../cel/authorizer-library.js';
import { MATCH_CONDITIONS_COST_BUDGET, RUNTIME_COST_BUDGET } from '../../../cel/budget.js';
import type { TypeRef } from '../../../fieldmanager/schema.js';
import { activation, bindVariables, type Activation } from '../../../cel/admission-policy.js';
import {
  admissionRequest,
  collectParams,
  isNamespaceRequest,
  memoizeNamespaces,
  namespaceForCel,
  withTypeMeta,
  type DispatchEnvironment,
} from '../dispatcher.js';
import { matchesResources } from '../matching.js';
import type { CompiledMutatingPolicy } from './compiled.js';
import { applyConfigurationMutation, applyJsonPatchMutation, MutationError } from './patchers.js';
import type { MutatingBindingObject } from './types.js';

export interface MutatingPolicyHook {
  policy: CompiledMutatingPolicy;
  bindings: MutatingBindingObject[];
}

export interface MutatingEnvironment extends DispatchEnvironment {
  /** the schema of a kind, for ApplyConfiguration merges; undefined when unknown */
  typeOfKind(group: string, version: string, kind: string): TypeRef | undefined;
}

interface PolicyError {
  policy: string;
  binding?: string;
  message: string;
}

/** one policy, binding and param: what reinvocation runs again */
interface Invocation {
  policy: CompiledMutatingPolicy;
  binding: MutatingBindingObject;
  param: KubeObject | null;
  /** `request` as CEL sees it, for the resource and kind the policy matched */
  request: Record<string, unknown>;
}

export interface MutationResult {
  object: KubeObject;
  /** the error the request fails with */
  denial?: StatusError;
}

export async function dispatchMutations(
  hooks: readonly MutatingPolicyHook[],
  attrs: AdmissionAttributes,
  base: MutatingEnvironment,
): Promise<MutationResult> {
  const env = { ...memoizeNamespaces(base), typeOfKind: base.typeOfKind.bind(base) };
  const errors: PolicyError[] = [];
  const authorizer = new AuthorizerValue(new AuthorizerSession(env.authorizer), attrs.user, {
    group: attrs.resource.group,
    resource: attrs.resource.resource,
    subresource: attrs.subresource ?? '',
    namespace: attrs.namespace,
    name: attrs.name,
  });
  const namespaceName = isNamespaceRequest(attrs) ? '' : attrs.namespace;
  const namespaceObject = namespaceName ? namespaceForCel(await env.namespace(namespaceName)) : null;

  let object = attrs.object as KubeObject;
  const fail = (inv: { policy: CompiledMutatingPolicy }, message: string, binding?: string) => {
    if (inv.policy.failurePolicy === 'Fail') errors.push({ policy: inv.policy.name, binding, message });
  };

  // the invocations whose matching holds, in order
  const invocations: Invocation[] = [];
  for (const { policy, bindings } of hooks) {
    let policyMatch;
    try {
      policyMatch = await matchesResources(policy.matchConstraints, attrs, env, { required: true });
    } catch (err) {
      fail({ policy }, `failed to configure policy: ${(err as Error).message}`);
      continue;
    }
    if (!policyMatch.matches) continue;
    for (const binding of bindings) {
      const bindingName = binding.metadata.name ?? '';
      const spec = binding.spec ?? {};
      try {
        const m = await matchesResources(spec.matchResources, attrs, env, { required: false });
        if (!m.matches) continue;
      } catch (err) {
        fail({ policy }, `failed to configure binding: ${(err as Error).message}`, bindingName);
        continue;
      }
      let params: (KubeObject | null)[];
      try {
        params = await collectParams(policy.paramKind, spec.paramRef ?? undefined, attrs.namespace, env);
      } catch (err) {
        fail({ policy }, `failed to configure binding: ${(err as Error).message}`, bindingName);
        continue;
      }
      const request = admissionRequest(attrs, policyMatch.resource!, policyMatch.kind!);
      for (const param of params) invocations.push({ policy, binding, param: withTypeMeta(param, policy.paramKind), request });
    }
  }

  const activationFor = (inv: Invocation): Activation => {
    const act = activation({ object, oldObject: attrs.oldObject, request: inv.request, params: inv.param, namespaceObject, authorizer });
    bindVariables(act, inv.policy.variables);
    return act;
  };

  /** runs one invocation; true when it changed the object */
  const run = async (inv: Invocation): Promise<boolean> => {
    const bindingName = inv.binding.metadata.name ?? '';
    const matched = await matchConditionsHold(inv, activationFor(inv));
    if (matched !== true) {
      if (typeof matched === 'string') fail(inv, matched, bindingName);
      return false;
    }
    const before = object;
    for (const mutation of inv.policy.mutations) {
      const act = activationFor(inv);
      // each mutation, with the variables it reads, has kube's runtime budget
      act.budget = { remaining: RUNTIME_COST_BUDGET };
      const r = await mutation.program.evaluateAsync(act);
      if (!r.ok) {
        fail(inv, r.error, bindingName);
        continue;
      }
      try {
        object = mutation.patchType === 'JSONPatch' ? applyJsonPatchMutation(object, r.value) : applyConfiguration(object, r.value);
      } catch (err) {
        if (!(err instanceof MutationError)) throw err;
        fail(inv, err.message, bindingName);
      }
    }
    return !jsonEqual(before as unknown as Json, object as unknown as Json);
  };

  const applyConfiguration = (obj: KubeObject, value: unknown): KubeObject => {
    const type = env.typeOfKind(attrs.resource.group, attrs.resource.version, attrs.resource.kind);
    if (!type)
      throw new MutationError(`Resource kind ${attrs.resource.group}/${attrs.resource.version}, Kind=${attrs.resource.kind} not found`);
    return applyConfigurationMutation(obj, value, type);
  };

  let invokedSinceChange: Invocation[] = [];
  const reinvoke = new Set<Invocation>();
  for (const inv of invocations) {
    if (await run(inv)) {
      for (const earlier of invokedSinceChange) reinvoke.add(earlier);
      invokedSinceChange = [];
    }
    if (inv.policy.reinvocationPolicy === 'IfNeeded') invokedSinceChange.push(inv);
  }
  for (const inv of invocations) if (reinvoke.has(inv)) await run(inv);

  const first = errors[0];
  return { object, denial: first ? denialError(errors, attrs) : undefined };
}

/** true: every condition holds; false: one is false; a string: the error (no condition false) */
async function matchConditionsHold(inv: Invocation, act: Activation): Promise<boolean | string> {
  act.budget = { remaining: MATCH_CONDITIONS_COST_BUDGET };
  const errors: string[] = [];
  for (const mc of inv.policy.matchConditions) {
    const r = await mc.program.evaluateAsync(act);
    if (!r.ok && r.outOfBudget) return r.error;
    if (!r.ok) errors.push(r.error);
    else if (r.value === false) return false;
  }
  if (errors.length === 0) return true;
  return errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
}

/** kube's policy denial: 403 with the first error's message as the status message and every
 *  error as a cause */
function denialError(errors: readonly PolicyError[], attrs: AdmissionAttributes): StatusError {
  const messages = errors.map((e) =>
    e.binding !== undefined
      ? `policy '${e.policy}' with binding '${e.binding}' denied request: ${e.message}`
      : `policy "${e.policy}" denied request: ${e.message}`,
  );
  const obj = attrs.object ?? attrs.oldObject;
  let name = attrs.name;
  if (!name) name = obj?.metadata?.name || (obj?.metadata?.generateName as string | undefined) || 'Unknown';
  return new StatusError(403, 'Invalid', messages[0]!, {
    name,
    group: attrs.resource.group,
    kind: attrs.resource.resource,
    causes: messages.map((message) => ({ message })),
  });
}
