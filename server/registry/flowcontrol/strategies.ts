// flowcontrol.apiserver.k8s.io v1 FlowSchemas and PriorityLevelConfigurations: kube's v1
// defaults, so that what is stored (and read back) is what kube-apiserver stores: a
// matchingPrecedence of 1000, concurrency shares of 30 for a limited level and 0 for the
// exempt one, no lending, and queuing of 64 queues, hands of 8 and queues of 50.

import type { KubeObject } from '../../../storage/interface.js';
import { asObject, isObject } from '../object.js';
import { defineStrategy, type ResourceStrategy } from '../strategy.js';

const DEFAULT_MATCHING_PRECEDENCE = 1000;
const DEFAULT_NOMINAL_CONCURRENCY_SHARES = 30;
const DEFAULT_QUEUES = 64;
const DEFAULT_HAND_SIZE = 8;
const DEFAULT_QUEUE_LENGTH_LIMIT = 50;

/** an int32 field Go decodes 0 for when it is absent or null */
const unsetOrZero = (v: unknown): boolean => v === undefined || v === null || v === 0;

export function defaultFlowSchema(obj: KubeObject): void {
  if (!isObject(obj.spec)) return;
  const spec = asObject(obj.spec);
  if (unsetOrZero(spec.matchingPrecedence)) spec.matchingPrecedence = DEFAULT_MATCHING_PRECEDENCE;
}

export function defaultPriorityLevelConfiguration(obj: KubeObject): void {
  if (!isObject(obj.spec)) return;
  const spec = asObject(obj.spec);
  if (isObject(spec.exempt)) {
    const exempt = asObject(spec.exempt);
    // pointers in v1: only a missing value is defaulted, an explicit 0 stays
    exempt.nominalConcurrencyShares ??= 0;
    exempt.lendablePercent ??= 0;
  }
  if (isObject(spec.limited)) {
    const limited = asObject(spec.limited);
    limited.nominalConcurrencyShares ??= DEFAULT_NOMINAL_CONCURRENCY_SHARES;
    limited.lendablePercent ??= 0;
    const response = isObject(limited.limitResponse) ? asObject(limited.limitResponse) : undefined;
    if (response && isObject(response.queuing)) {
      const queuing = asObject(response.queuing);
      if (unsetOrZero(queuing.handSize)) queuing.handSize = DEFAULT_HAND_SIZE;
      if (unsetOrZero(queuing.queues)) queuing.queues = DEFAULT_QUEUES;
      if (unsetOrZero(queuing.queueLengthLimit)) queuing.queueLengthLimit = DEFAULT_QUEUE_LENGTH_LIMIT;
    }
  }
}

function flowControlStrategy(applyDefaults: (obj: KubeObject) => void): ResourceStrategy {
  return defineStrategy({ namespaced: false, tracksGeneration: true, hasStatusSubresource: true, applyDefaults });
}

export function flowSchemaStrategy(): ResourceStrategy {
  return flowControlStrategy(defaultFlowSchema);
}

export function priorityLevelConfigurationStrategy(): ResourceStrategy {
  return flowControlStrategy(defaultPriorityLevelConfiguration);
}
