// A MutatingAdmissionPolicy with its expressions compiled once (per resourceVersion).

import { compile, compileVariables, type Program } from '../../../cel/admission-policy.js';
import type { MatchResources, ParamKind } from '../types.js';
import type { MutatingPolicyObject, PatchType } from './types.js';

export interface CompiledMutation {
  patchType: PatchType;
  program: Program;
}

export interface CompiledMutatingPolicy {
  readonly name: string;
  readonly resourceVersion: string;
  readonly paramKind?: ParamKind;
  readonly matchConstraints?: MatchResources;
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly reinvocationPolicy: 'Never' | 'IfNeeded';
  readonly matchConditions: readonly { name: string; program: Program }[];
  readonly variables: readonly { name: string; program: Program }[];
  readonly mutations: readonly CompiledMutation[];
}

export function compileMutatingPolicy(policy: MutatingPolicyObject): CompiledMutatingPolicy {
  const spec = policy.spec ?? {};
  // later expressions see the variables typed by their expressions, as kube composes them
  const variables = compileVariables(spec.variables ?? [], 'stored', 'mutating');
  const program = (expression: string) => compile(expression, 'any', 'stored', 'mutating', variables.types);
  return {
    name: policy.metadata.name ?? '',
    resourceVersion: policy.metadata.resourceVersion ?? '',
    paramKind: spec.paramKind ?? undefined,
    matchConstraints: spec.matchConstraints ?? undefined,
    failurePolicy: spec.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
    reinvocationPolicy: spec.reinvocationPolicy === 'IfNeeded' ? 'IfNeeded' : 'Never',
    matchConditions: (spec.matchConditions ?? []).map((m) => ({
      name: m.name,
      program: compile(m.expression, 'bool', 'stored', 'mutating', variables.types),
    })),
    variables: variables.programs,
    mutations: (spec.mutations ?? []).map((m) => {
      const patchType: PatchType = m.patchType === 'ApplyConfiguration' ? 'ApplyConfiguration' : 'JSONPatch';
      const expression = (patchType === 'ApplyConfiguration' ? m.applyConfiguration?.expression : m.jsonPatch?.expression) ?? '';
      return { patchType, program: program(expression) };
    }),
  };
}

/** compiled policies by name, recompiled when the stored object changes */
export class MutatingPolicyCache {
  private readonly byName = new Map<string, CompiledMutatingPolicy>();

  get(policy: MutatingPolicyObject): CompiledMutatingPolicy {
    const name = policy.metadata.name ?? '';
    const rv = policy.metadata.resourceVersion ?? '';
    const hit = this.byName.get(name);
    if (hit && hit.resourceVersion === rv && rv !== '') return hit;
    const compiled = compileMutatingPolicy(policy);
    this.byName.set(name, compiled);
    return compiled;
  }

  retain(names: ReadonlySet<string>): void {
    for (const n of this.byName.keys()) if (!names.has(n)) this.byName.delete(n);
  }
}
