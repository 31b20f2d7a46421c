// The parts of admissionregistration.k8s.io/v1alpha1 MutatingAdmissionPolicy and
// MutatingAdmissionPolicyBinding that admission reads (stored objects, already validated).

import type { MatchResources, NamedExpression, ParamKind, ParamRef } from '../types.js';

export type PatchType = 'JSONPatch' | 'ApplyConfiguration';

export interface Mutation {
  patchType?: PatchType;
  jsonPatch?: { expression?: string } | null;
  applyConfiguration?: { expression?: string } | null;
}

export interface MutatingPolicySpec {
  paramKind?: ParamKind | null;
  matchConstraints?: MatchResources | null;
  variables?: NamedExpression[];
  mutations?: Mutation[];
  failurePolicy?: 'Fail' | 'Ignore';
  matchConditions?: NamedExpression[];
  reinvocationPolicy?: 'Never' | 'IfNeeded';
}

export interface MutatingBindingSpec {
  policyName?: string;
  paramRef?: ParamRef | null;
  matchResources?: MatchResources | null;
}

export interface MutatingPolicyObject {
  metadata: { name?: string; resourceVersion?: string };
  spec?: MutatingPolicySpec;
}

export interface MutatingBindingObject {
  metadata: { name?: string; resourceVersion?: string };
  spec?: MutatingBindingSpec;
}
