// A ValidatingAdmissionPolicy with its expressions compiled once (per resourceVersion).

import { compile, compileVariables, type Program } from '../../cel/admission-policy.js';
import type { PolicyObject, PolicySpec } from './types.js';

export interface CompiledValidation {
  program: Program;
  message?: string;
  messageProgram?: Program;
  reason?: string;
}

export interface CompiledPolicy {
  readonly name: string;
  readonly resourceVersion: string;
  readonly spec: PolicySpec;
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly matchConditions: readonly { name: string; program: Program }[];
  readonly variables: readonly { name: string; program: Program }[];
  readonly validations: readonly CompiledValidation[];
  readonly auditAnnotations: readonly { key: string; valueExpression: string; program: Program }[];
}

export function compilePolicy(policy: PolicyObject): CompiledPolicy {
  const spec = policy.spec ?? {};
  // later expressions see the variables typed by their expressions, as kube composes them
  const variables = compileVariables(spec.variables ?? []);
  const types = variables.types;
  return {
    name: policy.metadata.name ?? '',
    resourceVersion: policy.metadata.resourceVersion ?? '',
    spec,
    failurePolicy: spec.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
    matchConditions: (spec.matchConditions ?? []).map((m) => ({
      name: m.name,
      program: compile(m.expression, 'bool', 'stored', 'validating', types),
    })),
    variables: variables.programs,
    validations: (spec.validations ?? []).map((v) => ({
      program: compile(v.expression, 'bool', 'stored', 'validating', types),
      message: v.message,
      messageProgram: v.messageExpression ? compile(v.messageExpression, 'string', 'stored', 'validating', types) : undefined,
      reason: v.reason,
    })),
    auditAnnotations: (spec.auditAnnotations ?? []).map((a) => ({
      key: a.key,
      valueExpression: a.valueExpression,
      program: compile(a.valueExpression, 'string-or-null', 'stored', 'validating', types),
    })),
  };
}

/** compiled policies by name, recompiled when the stored object changes */
export class PolicyCache {
  private readonly byName = new Map<string, CompiledPolicy>();

  get(policy: PolicyObject): CompiledPolicy {
    const name = policy.metadata.name ?? '';
    const rv = policy.metadata.resourceVersion ?? '';
    const hit = this.byName.get(name);
    if (hit && hit.resourceVersion === rv && rv !== '') return hit;
    const compiled = compilePolicy(policy);
    this.byName.set(name, compiled);
    return compiled;
  }

  /** drops entries of policies that no longer exist */
  retain(names: ReadonlySet<string>): void {
    for (const n of this.byName.keys()) if (!names.has(n)) this.byName.delete(n);
  }
}
