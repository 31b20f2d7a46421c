// How many requests run at once: API Priority and Fairness, or the classic max-in-flight limits.

import type { KapiConfig } from '../../config/flags.js';

export type FlowControlOptions =
  | {
      kind: 'priority-and-fairness';
      /** shared among the priority levels: both max-in-flight flags together */
      serverConcurrencyLimit: number;
      maxQueueWaitMs: number;
    }
  | { kind: 'max-in-flight'; readOnlyLimit: number; mutatingLimit: number };

export function completeFlowControlOptions(config: KapiConfig): FlowControlOptions {
  const values = config.values;
  const readOnlyLimit = values.get('max-requests-inflight');
  const mutatingLimit = values.get('max-mutating-requests-inflight');
  if (!values.get('enable-priority-and-fairness')) return { kind: 'max-in-flight', readOnlyLimit, mutatingLimit };
  return {
    kind: 'priority-and-fairness',
    serverConcurrencyLimit: readOnlyLimit + mutatingLimit,
    // kube: a request may wait in a queue for a quarter of its timeout
    maxQueueWaitMs: values.get('request-timeout') / 4,
  };
}
