// The parts of admissionregistration.k8s.io/v1 webhook configurations kapi acts on.

import type { LabelSelectorObject } from '../../selectors/labels.js';
import type { WebhookClientConfig } from '../../registry/admissionregistration/webhook-client.js';

export interface RuleWithOperations {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  /** '*' (default), 'Cluster' or 'Namespaced' */
  scope?: string;
}

export interface MatchConditionSpec {
  name: string;
  expression: string;
}

/** one webhook of a Mutating- or ValidatingWebhookConfiguration */
export interface WebhookSpec {
  name: string;
  clientConfig: WebhookClientConfig;
  rules?: RuleWithOperations[];
  failurePolicy?: 'Ignore' | 'Fail';
  matchPolicy?: 'Exact' | 'Equivalent';
  namespaceSelector?: LabelSelectorObject;
  objectSelector?: LabelSelectorObject;
  sideEffects?: string;
  timeoutSeconds?: number;
  admissionReviewVersions?: string[];
  matchConditions?: MatchConditionSpec[];
  /** mutating only: 'Never' (default) or 'IfNeeded' */
  reinvocationPolicy?: string;
}

/** a webhook with the configuration it came from */
export interface WebhookEntry {
  /** configuration name + index: stable identity for reinvocation */
  uid: string;
  configurationName: string;
  spec: WebhookSpec;
}
