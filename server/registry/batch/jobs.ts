// batch/v1 Jobs and CronJobs. A Job without a manual selector gets one generated from its
// uid, and its template the matching labels; batch/v1 orphans a Job's pods by default (a
// compatibility default kube-apiserver keeps). Templates must not restart Always.

import type { KubeObject } from '../../../storage/interface.js';
import { defaultPodTemplate } from '../core/pod-spec.js';
import { validateWorkload } from '../core/workload-validation.js';
import { asObject, ensureObject, isObject, reorder } from '../object.js';
import { defineStrategy, type ResourceStrategy, type StrategyContext } from '../strategy.js';

export const labelControllerUid = 'batch.kubernetes.io/controller-uid';
export const labelJobName = 'batch.kubernetes.io/job-name';
const legacyLabelControllerUid = 'controller-uid';
const legacyLabelJobName = 'job-name';

const jobSpecOrder = [
  'parallelism',
  'completions',
  'activeDeadlineSeconds',
  'podFailurePolicy',
  'successPolicy',
  'backoffLimit',
  'backoffLimitPerIndex',
  'maxFailedIndexes',
  'selector',
  'manualSelector',
  'template',
  'ttlSecondsAfterFinished',
  'completionMode',
  'suspend',
  'podReplacementPolicy',
  'managedBy',
];

function defaultJobSpec(spec: Record<string, unknown>): Record<string, unknown> {
  if (spec.completions === undefined && spec.parallelism === undefined) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  spec.parallelism ??= 1;
  spec.backoffLimit ??= spec.backoffLimitPerIndex !== undefined ? 2147483647 : 6;
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  spec.podReplacementPolicy ??= spec.podFailurePolicy !== undefined ? 'Failed' : 'TerminatingOrFailed';
  if (isObject(spec.template)) defaultPodTemplate(spec.template);
  return reorder(spec, jobSpecOrder);
}

/** batch/v1 kept the old default of orphaning a Job's pods */
function jobGCPolicy(c: StrategyContext) {
  return c.info.group === 'batch' && c.info.version === 'v1' ? ('OrphanDependents' as const) : ('DeleteDependents' as const);
}

function generateSelector(obj: KubeObject): void {
  const spec = ensureObject(obj, 'spec');
  if (spec.manualSelector === true) return;
  const uid = obj.metadata.uid ?? '';
  const name = obj.metadata.name ?? '';
  const template = ensureObject(spec, 'template');
  const meta = ensureObject(template, 'metadata');
  const labels = { ...(asObject(meta.labels) as Record<string, string>) };
  labels[legacyLabelControllerUid] ??= uid;
  labels[legacyLabelJobName] ??= name;
  labels[labelControllerUid] ??= uid;
  labels[labelJobName] ??= name;
  meta.labels = labels;
  if (spec.selector === undefined) spec.selector = { matchLabels: { [labelControllerUid]: uid } };
}

export function jobStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    hasStatusSubresource: true,
    tracksGeneration: true,
    defaultGarbageCollectionPolicy: jobGCPolicy,
    applyDefaults(obj) {
      if (!isObject(obj.spec)) return;
      const templateLabels = asObject(asObject(asObject(obj.spec.template).metadata).labels) as Record<string, string>;
      if (Object.keys(templateLabels).length && Object.keys(obj.metadata.labels ?? {}).length === 0) {
        obj.metadata.labels = { ...templateLabels };
      }
      obj.spec = defaultJobSpec(obj.spec);
    },
    prepareCreate: generateSelector,
    validateSpec: (obj) => validateWorkload(obj, { noun: 'job', restartPolicies: ['OnFailure', 'Never'], selectorOptional: true }),
  });
}

const cronJobSpecOrder = [
  'schedule',
  'timeZone',
  'startingDeadlineSeconds',
  'concurrencyPolicy',
  'suspend',
  'jobTemplate',
  'successfulJobsHistoryLimit',
  'failedJobsHistoryLimit',
];

export function cronJobStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    hasStatusSubresource: true,
    tracksGeneration: true,
    applyDefaults(obj) {
      if (!isObject(obj.spec)) return;
      const spec = obj.spec;
      spec.concurrencyPolicy ??= 'Allow';
      spec.suspend ??= false;
      spec.successfulJobsHistoryLimit ??= 3;
      spec.failedJobsHistoryLimit ??= 1;
      const jt = asObject(spec.jobTemplate);
      if (isObject(spec.jobTemplate)) {
        if (!isObject(jt.metadata)) jt.metadata = { creationTimestamp: null };
        if (isObject(jt.spec)) jt.spec = defaultJobSpec(jt.spec);
      }
      obj.spec = reorder(spec, cronJobSpecOrder);
    },
  });
}
