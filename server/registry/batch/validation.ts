// batch/v1 validation (kube's pkg/apis/batch/validation, in its order): Job specs and their
// generated selectors, what a Job update may change, CronJob schedules, time zones and job
// templates.

import type { KubeObject } from '../../../storage/interface.js';
import { validatePodTemplateSpec } from '../core/pod-validation.js';
import {
  selectorMatches,
  selectorMismatch,
  selectorOf,
  validateLabelSelector,
  validateSelectorImmutable,
} from '../core/workload-validation.js';
import { asArray, asObject, clone, isObject, semanticEqual, type JsonObject } from '../object.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';
import { isDNS1123Label } from '../../machinery/validation/names.js';
import { fieldImmutableErrorMsg, goLabelSelector, goStringMap, nonNegative, optNum, str } from '../validation/values.js';
import { cronScheduleError, isKnownTimeZone } from './cron.js';

export const labelControllerUid = 'batch.kubernetes.io/controller-uid';
export const labelJobName = 'batch.kubernetes.io/job-name';
export const legacyLabelControllerUid = 'controller-uid';
export const legacyLabelJobName = 'job-name';

const maxParallelismForIndexedJob = 100000;
const maxFailedIndexesForIndexedJob = 100000;
const podFailurePolicyActions = ['Count', 'FailIndex', 'FailJob', 'Ignore'];
const podReplacementPolicies = ['Failed', 'TerminatingOrFailed'];

function hasLabel(labels: Record<string, unknown>, key: string, expected: string): FieldError[] {
  const path = `spec.template.metadata.labels[${key}]`;
  if (!(key in labels)) return [fieldErrors.required(path, `must be '${expected}'`)];
  if (labels[key] !== expected) return [fieldErrors.invalid(path, goStringMap(labels), `must be '${expected}'`)];
  return [];
}

/** validateGeneratedSelector: the generated labels are on the template and selected */
function validateGeneratedSelector(obj: KubeObject, requirePrefixed: boolean): FieldError[] {
  const spec = asObject(obj.spec);
  if (spec.manualSelector === true || !isObject(spec.selector)) return [];
  const errs: FieldError[] = [];
  const uid = obj.metadata.uid ?? '';
  const name = obj.metadata.name ?? '';
  if (!uid) errs.push(fieldErrors.required('metadata.uid'));
  const labels = asObject(asObject(asObject(spec.template).metadata).labels);
  errs.push(...hasLabel(labels, legacyLabelControllerUid, uid));
  errs.push(...hasLabel(labels, legacyLabelJobName, name));
  const expected: Record<string, string> = {};
  if (requirePrefixed) {
    errs.push(...hasLabel(labels, labelControllerUid, uid));
    errs.push(...hasLabel(labels, labelJobName, name));
    expected[labelControllerUid] = uid;
    expected[labelJobName] = name;
  }
  expected[legacyLabelControllerUid] = uid;
  expected[legacyLabelJobName] = name;
  const sel = selectorOf(spec.selector);
  if (sel.kind === 'selector' && !sel.selector.matches(expected)) {
    errs.push(fieldErrors.invalid('spec.selector', goLabelSelector(spec.selector), '`selector` not auto-generated'));
  }
  return errs;
}

function validatePodFailurePolicy(spec: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const rules = asArray(asObject(spec.podFailurePolicy).rules);
  if (rules.length > 20) errs.push(fieldErrors.tooMany(`${path}.rules`, rules.length, 20));
  rules.forEach((raw, i) => {
    const r = asObject(raw);
    const p = `${path}.rules[${i}]`;
    const action = str(r.action);
    if (!action) errs.push(fieldErrors.required(`${p}.action`));
    else if (!podFailurePolicyActions.includes(action)) errs.push(fieldErrors.notSupported(`${p}.action`, action, podFailurePolicyActions));
    const hasExit = isObject(r.onExitCodes);
    const hasConds = Array.isArray(r.onPodConditions) && r.onPodConditions.length > 0;
    if (hasExit && hasConds)
      errs.push(
        fieldErrors.invalid(
          p,
          { rendered: 'batch.PodFailurePolicyRule{...}' },
          'specifying both OnExitCodes and OnPodConditions is not supported',
        ),
      );
    else if (!hasExit && !hasConds)
      errs.push(
        fieldErrors.invalid(
          p,
          { rendered: 'batch.PodFailurePolicyRule{...}' },
          'specifying one of OnExitCodes and OnPodConditions is required',
        ),
      );
    if (hasExit) {
      const ec = asObject(r.onExitCodes);
      const op = str(ec.operator);
      if (!['In', 'NotIn'].includes(op)) errs.push(fieldErrors.notSupported(`${p}.onExitCodes.operator`, op, ['In', 'NotIn']));
      const values = asArray(ec.values);
      if (values.length === 0) errs.push(fieldErrors.required(`${p}.onExitCodes.values`, 'at least one value is required'));
    }
  });
  return errs;
}

/** validateJobSpec (shared by Jobs and CronJob job templates) */
function validateJobSpecCommon(spec: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of [
    'parallelism',
    'completions',
    'activeDeadlineSeconds',
    'backoffLimit',
    'ttlSecondsAfterFinished',
    'backoffLimitPerIndex',
  ]) {
    errs.push(...nonNegative(spec[f], `${path}.${f}`));
  }
  const maxFailed = optNum(spec.maxFailedIndexes);
  if (maxFailed !== undefined) {
    errs.push(...nonNegative(maxFailed, `${path}.maxFailedIndexes`));
    if (optNum(spec.backoffLimitPerIndex) === undefined)
      errs.push(fieldErrors.required(`${path}.backoffLimitPerIndex`, 'when maxFailedIndexes is specified'));
  }
  if (typeof spec.managedBy === 'string' && spec.managedBy.length > 63) errs.push(fieldErrors.tooLong(`${path}.managedBy`, 63));
  const mode = spec.completionMode;
  if (typeof mode === 'string') {
    if (mode !== 'NonIndexed' && mode !== 'Indexed')
      errs.push(fieldErrors.notSupported(`${path}.completionMode`, mode, ['NonIndexed', 'Indexed']));
    if (mode === 'Indexed') {
      const completions = optNum(spec.completions);
      const parallelism = optNum(spec.parallelism);
      if (completions === undefined) errs.push(fieldErrors.required(`${path}.completions`, 'when completion mode is Indexed'));
      if (parallelism !== undefined && parallelism > maxParallelismForIndexedJob) {
        errs.push(
          fieldErrors.invalid(
            `${path}.parallelism`,
            parallelism,
            `must be less than or equal to ${maxParallelismForIndexedJob} when completion mode is Indexed`,
          ),
        );
      }
      if (completions !== undefined && maxFailed !== undefined && maxFailed > completions) {
        errs.push(fieldErrors.invalid(`${path}.maxFailedIndexes`, maxFailed, 'must be less than or equal to completions'));
      }
      if (maxFailed !== undefined && maxFailed > maxFailedIndexesForIndexedJob) {
        errs.push(
          fieldErrors.invalid(`${path}.maxFailedIndexes`, maxFailed, `must be less than or equal to ${maxFailedIndexesForIndexedJob}`),
        );
      }
    }
  }
  if (mode === undefined || mode === null || mode === 'NonIndexed') {
    const blpi = optNum(spec.backoffLimitPerIndex);
    if (blpi !== undefined) errs.push(fieldErrors.invalid(`${path}.backoffLimitPerIndex`, blpi, 'requires indexed completion mode'));
    if (maxFailed !== undefined) errs.push(fieldErrors.invalid(`${path}.maxFailedIndexes`, maxFailed, 'requires indexed completion mode'));
  }
  if (isObject(spec.podFailurePolicy)) errs.push(...validatePodFailurePolicy(spec, `${path}.podFailurePolicy`));
  if (isObject(spec.successPolicy) && mode !== 'Indexed') {
    errs.push(fieldErrors.invalid(`${path}.successPolicy`, { rendered: 'batch.SuccessPolicy{...}' }, 'requires indexed completion mode'));
  }
  if (typeof spec.podReplacementPolicy === 'string') {
    const prp = spec.podReplacementPolicy;
    if (isObject(spec.podFailurePolicy) && prp !== 'Failed') {
      errs.push(fieldErrors.notSupported(`${path}.podReplacementPolicy`, prp, ['Failed']));
    } else if (!podReplacementPolicies.includes(prp)) {
      errs.push(fieldErrors.notSupported(`${path}.podReplacementPolicy`, prp, podReplacementPolicies));
    }
  }
  const template = asObject(spec.template);
  errs.push(...validatePodTemplateSpec(template, `${path}.template`));
  const rp = str(asObject(template.spec).restartPolicy);
  const rpPath = `${path}.template.spec.restartPolicy`;
  if (rp === 'Always' || rp === '') errs.push(fieldErrors.required(rpPath, 'valid values: "OnFailure", "Never"'));
  else if (rp !== 'OnFailure' && rp !== 'Never') errs.push(fieldErrors.notSupported(rpPath, rp, ['OnFailure', 'Never']));
  else if (isObject(spec.podFailurePolicy) && rp !== 'Never')
    errs.push(fieldErrors.invalid(rpPath, rp, 'only "Never" is supported when podFailurePolicy is specified'));
  return errs;
}

/** ValidateJobSpec: the common checks, then the selector */
function validateJobSpec(spec: JsonObject): FieldError[] {
  const errs = validateJobSpecCommon(spec, 'spec');
  if (spec.selector === undefined || spec.selector === null) errs.push(fieldErrors.required('spec.selector'));
  else errs.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  const sel = selectorOf(spec.selector);
  const labels = asObject(asObject(spec.template).metadata).labels;
  if (sel.kind !== 'error' && !selectorMatches(sel, labels)) errs.push(selectorMismatch('spec.template.metadata.labels', labels));
  return errs;
}

export function validateJob(obj: KubeObject, requirePrefixedLabels = true): FieldError[] {
  const spec = asObject(obj.spec);
  const errs = validateGeneratedSelector(obj, requirePrefixedLabels);
  errs.push(...validateJobSpec(spec));
  const completions = optNum(spec.completions);
  if (spec.completionMode === 'Indexed' && completions !== undefined && completions > 0) {
    const host = `${obj.metadata.name ?? ''}-${completions - 1}`;
    if (isDNS1123Label(host).length) {
      errs.push(
        fieldErrors.invalid('metadata.name', obj.metadata.name ?? '', `will not able to create pod with invalid DNS label: ${host}`),
      );
    }
  }
  return errs;
}

function immutable(now: unknown, before: unknown, path: string, shown: FieldError['badValue']): FieldError[] {
  if (semanticEqual(now ?? null, before ?? null) && (now === undefined || now === null) === (before === undefined || before === null))
    return [];
  return [fieldErrors.invalid(path, shown, fieldImmutableErrorMsg)];
}

/** validation options of an update (kube's validationOptionsForJob) */
function updateOptions(old: KubeObject): { mutableScheduling: boolean; requirePrefixed: boolean } {
  const oldSpec = asObject(old.spec);
  const labels = asObject(asObject(asObject(oldSpec.template).metadata).labels);
  return {
    mutableScheduling: oldSpec.suspend === true && asObject(old.status).startTime === undefined,
    requirePrefixed: labelJobName in labels && labelControllerUid in labels,
  };
}

export function validateJobUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const spec = asObject(obj.spec);
  const oldSpec = asObject(old.spec);
  const opts = updateOptions(old);
  // kube validates the object as on create (with the update's options), then the update
  const errs = validateJob(obj, opts.requirePrefixed);
  // elastic indexed jobs may change completions together with parallelism
  if (spec.completionMode === 'Indexed') {
    const c = optNum(spec.completions);
    if (!semanticEqual(spec.completions, oldSpec.completions) && c !== undefined && c !== optNum(spec.parallelism)) {
      errs.push(fieldErrors.invalid('spec.completions', c, 'can only be modified in tandem with spec.parallelism'));
    }
  } else {
    errs.push(...immutable(spec.completions, oldSpec.completions, 'spec.completions', optNum(spec.completions) ?? null));
  }
  errs.push(...validateSelectorImmutable(spec.selector, oldSpec.selector));
  let oldTemplate = asObject(oldSpec.template);
  const template = asObject(spec.template);
  if (opts.mutableScheduling) {
    oldTemplate = clone(oldTemplate);
    const ot = asObject(oldTemplate.spec);
    const nt = asObject(template.spec);
    const oldAffinity = isObject(ot.affinity) ? { ...ot.affinity } : undefined;
    if (!isObject(nt.affinity) && oldAffinity) {
      delete oldAffinity.nodeAffinity;
      ot.affinity = Object.keys(oldAffinity).length ? oldAffinity : undefined;
    } else if (isObject(nt.affinity)) {
      ot.affinity = { ...(oldAffinity ?? {}), nodeAffinity: nt.affinity.nodeAffinity };
    }
    ot.nodeSelector = nt.nodeSelector;
    ot.tolerations = nt.tolerations;
    ot.schedulingGates = nt.schedulingGates;
    const om = asObject(oldTemplate.metadata);
    const nm = asObject(template.metadata);
    om.annotations = nm.annotations;
    om.labels = nm.labels;
    oldTemplate.metadata = om;
    oldTemplate.spec = ot;
  }
  if (!semanticEqual(template, oldTemplate))
    errs.push(fieldErrors.invalid('spec.template', { rendered: 'core.PodTemplateSpec{...}' }, fieldImmutableErrorMsg));
  errs.push(...immutable(spec.completionMode, oldSpec.completionMode, 'spec.completionMode', str(spec.completionMode)));
  errs.push(
    ...immutable(spec.podFailurePolicy, oldSpec.podFailurePolicy, 'spec.podFailurePolicy', { rendered: 'batch.PodFailurePolicy{...}' }),
  );
  errs.push(
    ...immutable(
      spec.backoffLimitPerIndex,
      oldSpec.backoffLimitPerIndex,
      'spec.backoffLimitPerIndex',
      optNum(spec.backoffLimitPerIndex) ?? null,
    ),
  );
  errs.push(...immutable(spec.managedBy, oldSpec.managedBy, 'spec.managedBy', typeof spec.managedBy === 'string' ? spec.managedBy : null));
  errs.push(...immutable(spec.successPolicy, oldSpec.successPolicy, 'spec.successPolicy', { rendered: 'batch.SuccessPolicy{...}' }));
  return errs;
}

// ---- CronJobs ----

const concurrencyPolicies = ['Allow', 'Forbid', 'Replace'];

function validateTimeZone(tz: unknown, path: string): FieldError[] {
  if (typeof tz !== 'string') return [];
  if (tz.length === 0) return [fieldErrors.invalid(path, tz, 'timeZone must be nil or non-empty string')];
  for (const part of tz.split('/')) {
    if (part === '.' || part === '..' || part.startsWith('-') || !/^[A-Za-z.\-_0-9+]{1,14}$/.test(part)) {
      return [fieldErrors.invalid(path, tz, `unknown time zone ${tz}`)];
    }
  }
  if (tz.toLowerCase() === 'local')
    return [fieldErrors.invalid(path, tz, 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones')];
  if (!isKnownTimeZone(tz)) return [fieldErrors.invalid(path, tz, `unknown time zone ${tz}`)];
  return [];
}

function validateCronJobSpec(spec: JsonObject, oldSpec: JsonObject | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const schedule = str(spec.schedule);
  if (!schedule) errs.push(fieldErrors.required('spec.schedule'));
  else {
    const allowTZ = oldSpec !== undefined && str(oldSpec.schedule).includes('TZ');
    const err = cronScheduleError(schedule);
    if (err) errs.push(fieldErrors.invalid('spec.schedule', schedule, err));
    if (allowTZ && schedule.includes('TZ') && typeof spec.timeZone === 'string') {
      errs.push(fieldErrors.invalid('spec.schedule', schedule, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'));
    } else if (!allowTZ && schedule.includes('TZ')) {
      errs.push(fieldErrors.invalid('spec.schedule', schedule, 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'));
    }
  }
  errs.push(...nonNegative(spec.startingDeadlineSeconds, 'spec.startingDeadlineSeconds'));
  if (oldSpec === undefined || (oldSpec.timeZone ?? null) !== (spec.timeZone ?? null))
    errs.push(...validateTimeZone(spec.timeZone, 'spec.timeZone'));
  const cp = str(spec.concurrencyPolicy);
  if (!cp) errs.push(fieldErrors.required('spec.concurrencyPolicy'));
  else if (!concurrencyPolicies.includes(cp)) errs.push(fieldErrors.notSupported('spec.concurrencyPolicy', cp, concurrencyPolicies));
  const jt = asObject(asObject(spec.jobTemplate).spec);
  errs.push(...validateJobSpecCommon(jt, 'spec.jobTemplate.spec'));
  if (jt.selector !== undefined && jt.selector !== null) {
    errs.push(fieldErrors.invalid('spec.jobTemplate.spec.selector', goLabelSelector(jt.selector), '`selector` will be auto-generated'));
  }
  if (jt.manualSelector === true) errs.push(fieldErrors.notSupported('spec.jobTemplate.spec.manualSelector', true, ['nil', 'false']));
  errs.push(...nonNegative(spec.successfulJobsHistoryLimit, 'spec.successfulJobsHistoryLimit'));
  errs.push(...nonNegative(spec.failedJobsHistoryLimit, 'spec.failedJobsHistoryLimit'));
  return errs;
}

export function validateCronJob(obj: KubeObject): FieldError[] {
  const errs = validateCronJobSpec(asObject(obj.spec), undefined);
  const name = obj.metadata.name ?? '';
  // the controller appends an 11-character suffix to the names of the jobs it creates
  if (name.length > 52) errs.push(fieldErrors.invalid('metadata.name', name, 'must be no more than 52 characters'));
  return errs;
}

export function validateCronJobUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  return validateCronJobSpec(asObject(obj.spec), asObject(old.spec));
}
