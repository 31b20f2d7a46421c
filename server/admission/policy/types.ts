// The parts of admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy and
// ValidatingAdmissionPolicyBinding that admission reads (stored objects, already validated).

import type { LabelSelectorObject } from '../../selectors/labels.js';
import type { RuleWithOperations } from '../webhook/types.js';

export type { RuleWithOperations };

export interface NamedRuleWithOperations extends RuleWithOperations {
  resourceNames?: string[];
}

export interface MatchResources {
  namespaceSelector?: LabelSelectorObject | null;
  objectSelector?: LabelSelectorObject | null;
  resourceRules?: NamedRuleWithOperations[];
  excludeResourceRules?: NamedRuleWithOperations[];
  matchPolicy?: 'Exact' | 'Equivalent';
}

export interface ParamKind {
  apiVersion?: string;
  kind?: string;
}

export interface Validation {
  expression: string;
  message?: string;
  reason?: string;
  messageExpression?: string;
}

export interface AuditAnnotation {
  key: string;
  valueExpression: string;
}

export interface NamedExpression {
  name: string;
  expression: string;
}

export interface PolicySpec {
  paramKind?: ParamKind | null;
  matchConstraints?: MatchResources | null;
  validations?: Validation[];
  failurePolicy?: 'Fail' | 'Ignore';
  auditAnnotations?: AuditAnnotation[];
  matchConditions?: NamedExpression[];
  variables?: NamedExpression[];
}

export interface ParamRef {
  name?: string;
  namespace?: string;
  selector?: LabelSelectorObject | null;
  parameterNotFoundAction?: 'Allow' | 'Deny';
}

export type ValidationAction = 'Deny' | 'Warn' | 'Audit';

export interface BindingSpec {
  policyName?: string;
  paramRef?: ParamRef | null;
  matchResources?: MatchResources | null;
  validationActions?: ValidationAction[];
}

export interface PolicyObject {
  metadata: { name?: string; generation?: number; resourceVersion?: string };
  spec?: PolicySpec;
}

export interface BindingObject {
  metadata: { name?: string; resourceVersion?: string };
  spec?: BindingSpec;
}
