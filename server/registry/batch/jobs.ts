// batch/v1 Jobs and CronJobs. A Job without a manual selector gets one generated from its
// uid, and its template the matching labels; batch/v1 orphans a Job's pods by default (a
// compatibility default kube-apiserver keeps). Templates must not restart Always.

import type { KubeObject } from '../../../storage/interface.js';
import { defaultPodTemplate } from '../core/pod-spec.js';
import { asArray, asObject, ensureObject, isObject, reorder } from '../object.js';
import { defineStrategy, type ResourceStrategy, type StrategyContext } from '../strategy.js';
import { workloadNameWarnings } from '../validation/values.js';
import { validateObjectMetaUpdate } from '../validation/object-meta.js';
import {
  labelControllerUid,
  labelJobName,
  legacyLabelControllerUid,
  legacyLabelJobName,
  validateCronJob,
  validateCronJobUpdate,
  validateJob,
  validateJobUpdate,
} from './validation.js';

export { labelControllerUid, labelJobName } from './validation.js';

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
  spec.backoffLimit ??= spec.backoffLimitPerIndex !== undefined && spec.backoffLimitPerIndex !== null ? 2147483647 : 6;
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  for (const rule of asArray(asObject(spec.podFailurePolicy).rules)) {
    for (const pattern of asArray(asObject(rule).onPodConditions)) {
      if (isObject(pattern) && !pattern.status) pattern.status = 'True';
    }
  }
  spec.podReplacementPolicy ??= isObject(spec.podFailurePolicy) ? 'Failed' : 'TerminatingOrFailed';
  spec.manualSelector ??= false;
  defaultPodTemplate(ensureObject(spec, 'template'));
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
  // Go writes map keys sorted
  meta.labels = Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const selector = isObject(spec.selector) ? spec.selector : (spec.selector = {});
  const matchLabels = isObject(selector.matchLabels) ? selector.matchLabels : (selector.matchLabels = {});
  if (!(labelControllerUid in matchLabels)) matchLabels[labelControllerUid] = uid;
  obj.spec = reorder(spec, jobSpecOrder);
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
    validateSpec: (obj) => validateJob(obj),
    validateUpdate: (obj, old) => [...validateObjectMetaUpdate(obj.metadata, old.metadata), ...validateJobUpdate(obj, old)],
    warningsOnCreate: (obj) => workloadNameWarnings(obj.metadata.name ?? ''),
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
      if (!spec.concurrencyPolicy) spec.concurrencyPolicy = 'Allow';
      spec.suspend ??= false;
      spec.successfulJobsHistoryLimit ??= 3;
      spec.failedJobsHistoryLimit ??= 1;
      // a job template gets the pod template's defaults only (Job defaults are per object)
      const jt = ensureObject(spec, 'jobTemplate');
      if (!isObject(jt.metadata)) jt.metadata = { creationTimestamp: null };
      else if (!('creationTimestamp' in jt.metadata)) jt.metadata = { creationTimestamp: null, ...jt.metadata };
      const jspec = ensureObject(jt, 'spec');
      defaultPodTemplate(ensureObject(jspec, 'template'));
      obj.spec = reorder(spec, cronJobSpecOrder);
    },
    validateSpec: validateCronJob,
    warningsOnCreate: (obj) => workloadNameWarnings(obj.metadata.name ?? ''),
    validateUpdate: (obj, old) => [...validateObjectMetaUpdate(obj.metadata, old.metadata), ...validateCronJobUpdate(obj, old)],
  });
}
