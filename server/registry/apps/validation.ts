// apps/v1 validation (kube's pkg/apis/apps/validation, in its order): Deployments,
// ReplicaSets, StatefulSets, DaemonSets, ControllerRevisions, and what their updates may
// change.

import type { KubeObject } from '../../../storage/interface.js';
import { validatePodTemplateSpec } from '../core/pod-validation.js';
import {
  isEmptySelector,
  selectorMatches,
  selectorMismatch,
  selectorOf,
  validateLabelSelector,
  validateSelectorImmutable,
} from '../core/workload-validation.js';
import { asObject, clone, isObject, semanticEqual, type JsonObject } from '../object.js';
import { fieldErrors, goQuote, type FieldError } from '../../machinery/validation/field-error.js';
import { validateAnnotations, validateLabels } from '../validation/object-meta.js';
import {
  dnsLabel,
  goLabelSelector,
  intOrPercentValue,
  isNotMoreThan100Percent,
  nonNegative,
  optNum,
  str,
  validatePositiveIntOrPercent,
  goIntOrString,
} from '../validation/values.js';

function spec(obj: KubeObject): JsonObject {
  return asObject(obj.spec);
}

/** ValidatePodTemplateSpecForReplicaSet (also used by Deployments) */
function validateTemplateForReplicaSet(s: JsonObject, noun: string): FieldError[] {
  const errs: FieldError[] = [];
  const sel = selectorOf(s.selector);
  if (sel.kind === 'error') {
    return [fieldErrors.invalid('spec.selector', goLabelSelector(s.selector), 'invalid label selector')];
  }
  const template = asObject(s.template);
  const labels = asObject(template.metadata).labels;
  if (!(sel.kind === 'selector' && sel.empty) && !selectorMatches(sel, labels))
    errs.push(selectorMismatch('spec.template.metadata.labels', labels));
  errs.push(...validatePodTemplateSpec(template, 'spec.template'));
  const rp = str(asObject(template.spec).restartPolicy);
  if (rp !== 'Always') errs.push(fieldErrors.notSupported('spec.template.spec.restartPolicy', rp, ['Always']));
  if (optNum(asObject(template.spec).activeDeadlineSeconds) !== undefined) {
    errs.push(fieldErrors.forbidden('spec.template.spec.activeDeadlineSeconds', `activeDeadlineSeconds in ${noun} is not Supported`));
  }
  return errs;
}

function requiredSelector(s: JsonObject, noun: string): FieldError[] {
  if (s.selector === undefined || s.selector === null) return [fieldErrors.required('spec.selector')];
  const errs = validateLabelSelector(s.selector, 'spec.selector');
  if (isEmptySelector(s.selector))
    errs.push(fieldErrors.invalid('spec.selector', goLabelSelector(s.selector), `empty selector is invalid for ${noun}`));
  return errs;
}

// ---- Deployments ----

function validateDeploymentStrategy(strategy: unknown): FieldError[] {
  const st = asObject(strategy);
  const type = str(st.type);
  const ru = st.rollingUpdate;
  if (type === 'Recreate') {
    return isObject(ru)
      ? [fieldErrors.forbidden('spec.strategy.rollingUpdate', "may not be specified when strategy `type` is 'Recreate'")]
      : [];
  }
  if (type === 'RollingUpdate') {
    if (!isObject(ru)) return [fieldErrors.required('spec.strategy.rollingUpdate', 'this should be defaulted and never be nil')];
    const p = 'spec.strategy.rollingUpdate';
    const errs = [
      ...validatePositiveIntOrPercent(ru.maxUnavailable, `${p}.maxUnavailable`),
      ...validatePositiveIntOrPercent(ru.maxSurge, `${p}.maxSurge`),
    ];
    if (intOrPercentValue(ru.maxUnavailable) === 0 && intOrPercentValue(ru.maxSurge) === 0) {
      errs.push(fieldErrors.invalid(`${p}.maxUnavailable`, goIntOrString(ru.maxUnavailable ?? 0), 'may not be 0 when `maxSurge` is 0'));
    }
    errs.push(...isNotMoreThan100Percent(ru.maxUnavailable, `${p}.maxUnavailable`));
    return errs;
  }
  const rendered = `apps.DeploymentStrategy{Type:${goQuote(type)}, RollingUpdate:${isObject(ru) ? '(*apps.RollingUpdateDeployment)(...)' : '(*apps.RollingUpdateDeployment)(nil)'}}`;
  return [fieldErrors.notSupported('spec.strategy', { rendered }, ['Recreate', 'RollingUpdate'])];
}

export function validateDeployment(obj: KubeObject): FieldError[] {
  const s = spec(obj);
  const errs: FieldError[] = [];
  errs.push(...nonNegative(s.replicas, 'spec.replicas'));
  errs.push(...requiredSelector(s, 'deployment'));
  errs.push(...validateTemplateForReplicaSet(s, 'ReplicaSet'));
  errs.push(...validateDeploymentStrategy(s.strategy));
  errs.push(...nonNegative(s.minReadySeconds, 'spec.minReadySeconds'));
  errs.push(...nonNegative(s.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  const pds = optNum(s.progressDeadlineSeconds);
  if (pds !== undefined) {
    errs.push(...nonNegative(pds, 'spec.progressDeadlineSeconds'));
    if (pds <= (optNum(s.minReadySeconds) ?? 0))
      errs.push(fieldErrors.invalid('spec.progressDeadlineSeconds', pds, 'must be greater than minReadySeconds'));
  }
  return errs;
}

export function validateDeploymentUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  return validateSelectorImmutable(spec(obj).selector, spec(old).selector);
}

// ---- ReplicaSets ----

export function validateReplicaSet(obj: KubeObject): FieldError[] {
  const s = spec(obj);
  const errs: FieldError[] = [];
  errs.push(...nonNegative(s.replicas, 'spec.replicas'));
  errs.push(...nonNegative(s.minReadySeconds, 'spec.minReadySeconds'));
  // kube reuses the Deployment wording here
  errs.push(...requiredSelector(s, 'deployment'));
  errs.push(...validateTemplateForReplicaSet(s, 'ReplicaSet'));
  return errs;
}

export const validateReplicaSetUpdate = validateDeploymentUpdate;

// ---- StatefulSets ----

const retentionPolicies = ['Retain', 'Delete'];

export function validateStatefulSet(obj: KubeObject): FieldError[] {
  const s = spec(obj);
  const errs: FieldError[] = [];
  const pmp = str(s.podManagementPolicy);
  if (!pmp) errs.push(fieldErrors.required('spec.podManagementPolicy'));
  else if (pmp !== 'OrderedReady' && pmp !== 'Parallel')
    errs.push(fieldErrors.invalid('spec.podManagementPolicy', pmp, "must be 'OrderedReady' or 'Parallel'"));
  const us = asObject(s.updateStrategy);
  const usType = str(us.type);
  if (!usType) errs.push(fieldErrors.required('spec.updateStrategy'));
  else if (usType === 'OnDelete') {
    if (isObject(us.rollingUpdate)) {
      errs.push(
        fieldErrors.invalid(
          'spec.updateStrategy.rollingUpdate',
          { rendered: 'apps.RollingUpdateStatefulSetStrategy{...}' },
          "only allowed for updateStrategy 'RollingUpdate'",
        ),
      );
    }
  } else if (usType === 'RollingUpdate') {
    if (isObject(us.rollingUpdate)) {
      const ru = us.rollingUpdate;
      const p = 'spec.updateStrategy.rollingUpdate';
      errs.push(...nonNegative(ru.partition, `${p}.partition`));
      if (ru.maxUnavailable !== undefined && ru.maxUnavailable !== null) {
        errs.push(...validatePositiveIntOrPercent(ru.maxUnavailable, `${p}.maxUnavailable`));
        if (intOrPercentValue(ru.maxUnavailable) === 0)
          errs.push(fieldErrors.invalid(`${p}.maxUnavailable`, goIntOrString(ru.maxUnavailable), 'cannot be 0'));
        errs.push(...isNotMoreThan100Percent(ru.maxUnavailable, `${p}.maxUnavailable`));
      }
    }
  } else {
    errs.push(
      fieldErrors.invalid(
        'spec.updateStrategy',
        {
          rendered: `apps.StatefulSetUpdateStrategy{Type:${goQuote(usType)}, RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}`,
        },
        "must be 'RollingUpdate' or 'OnDelete'",
      ),
    );
  }
  if (isObject(s.persistentVolumeClaimRetentionPolicy)) {
    const rp = s.persistentVolumeClaimRetentionPolicy;
    for (const f of ['whenDeleted', 'whenScaled']) {
      const v = str(rp[f]);
      if (!retentionPolicies.includes(v))
        errs.push(fieldErrors.notSupported(`spec.persistentVolumeClaimRetentionPolicy.${f}`, v, retentionPolicies));
    }
  }
  // the service name becomes the pods' subdomain
  if (str(s.serviceName)) errs.push(...dnsLabel(str(s.serviceName), 'spec.serviceName'));
  errs.push(...nonNegative(s.replicas, 'spec.replicas'));
  errs.push(...nonNegative(s.minReadySeconds, 'spec.minReadySeconds'));
  if (isObject(s.ordinals)) errs.push(...nonNegative(s.ordinals.start, 'spec.ordinals.start'));
  errs.push(...requiredSelector(s, 'statefulset'));
  const sel = selectorOf(s.selector);
  const template = asObject(s.template);
  const meta = asObject(template.metadata);
  if (sel.kind === 'error') {
    errs.push(fieldErrors.invalid('spec.selector', goLabelSelector(s.selector), ''));
  } else {
    if (!(sel.kind === 'selector' && sel.empty) && !selectorMatches(sel, meta.labels))
      errs.push(selectorMismatch('spec.template.metadata.labels', meta.labels));
    // kube validates only the template's metadata for StatefulSets (labels at `template.labels`)
    errs.push(...validateLabels(meta.labels as Record<string, string> | undefined, 'spec.template.labels'));
    errs.push(...validateAnnotations(meta.annotations as Record<string, string> | undefined, 'spec.template.annotations'));
  }
  const tspec = asObject(template.spec);
  const rp = str(tspec.restartPolicy);
  if (rp !== 'Always') errs.push(fieldErrors.notSupported('spec.template.spec.restartPolicy', rp, ['Always']));
  if (optNum(tspec.activeDeadlineSeconds) !== undefined) {
    errs.push(fieldErrors.forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in StatefulSet is not Supported'));
  }
  return errs;
}

const statefulSetMutable = [
  'replicas',
  'template',
  'updateStrategy',
  'minReadySeconds',
  'ordinals',
  'persistentVolumeClaimRetentionPolicy',
];

export function validateStatefulSetUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const now = clone(spec(obj));
  const before = clone(spec(old));
  for (const f of statefulSetMutable) {
    delete now[f];
    delete before[f];
  }
  if (semanticEqual(now, before)) return [];
  return [
    fieldErrors.forbidden(
      'spec',
      "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    ),
  ];
}

// ---- DaemonSets ----

function validateDaemonSetUpdateStrategy(strategy: unknown): FieldError[] {
  const st = asObject(strategy);
  const type = str(st.type);
  const p = 'spec.updateStrategy';
  if (type === 'OnDelete') return [];
  if (type === 'RollingUpdate') {
    if (!isObject(st.rollingUpdate)) return [fieldErrors.required(`${p}.rollingUpdate`)];
    const ru = st.rollingUpdate;
    const rp = `${p}.rollingUpdate`;
    const errs = [
      ...validatePositiveIntOrPercent(ru.maxUnavailable, `${rp}.maxUnavailable`),
      ...validatePositiveIntOrPercent(ru.maxSurge, `${rp}.maxSurge`),
      ...isNotMoreThan100Percent(ru.maxUnavailable, `${rp}.maxUnavailable`),
      ...isNotMoreThan100Percent(ru.maxSurge, `${rp}.maxSurge`),
    ];
    const hasUnavailable = intOrPercentValue(ru.maxUnavailable) !== 0;
    const hasSurge = intOrPercentValue(ru.maxSurge) !== 0;
    if (hasUnavailable && hasSurge)
      errs.push(fieldErrors.invalid(`${rp}.maxSurge`, goIntOrString(ru.maxSurge), 'may not be set when maxUnavailable is non-zero'));
    else if (!hasUnavailable && !hasSurge) errs.push(fieldErrors.required(`${rp}.maxUnavailable`, 'cannot be 0 when maxSurge is 0'));
    return errs;
  }
  const rendered = `apps.DaemonSetUpdateStrategy{Type:${goQuote(type)}, RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}`;
  return [fieldErrors.notSupported(p, { rendered }, ['RollingUpdate', 'OnDelete'])];
}

export function validateDaemonSet(obj: KubeObject): FieldError[] {
  const s = spec(obj);
  const errs: FieldError[] = [];
  errs.push(...validateLabelSelector(s.selector, 'spec.selector'));
  const template = asObject(s.template);
  const labels = asObject(template.metadata).labels;
  const sel = selectorOf(s.selector);
  if (sel.kind !== 'error' && !selectorMatches(sel, labels)) errs.push(selectorMismatch('spec.template.metadata.labels', labels));
  if (isObject(s.selector) && isEmptySelector(s.selector)) {
    errs.push(fieldErrors.invalid('spec.selector', goLabelSelector(s.selector), 'empty selector is invalid for daemonset'));
  }
  errs.push(...validatePodTemplateSpec(template, 'spec.template'));
  const tspec = asObject(template.spec);
  const rp = str(tspec.restartPolicy);
  if (rp !== 'Always') errs.push(fieldErrors.notSupported('spec.template.spec.restartPolicy', rp, ['Always']));
  if (optNum(tspec.activeDeadlineSeconds) !== undefined) {
    errs.push(fieldErrors.forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in DaemonSet is not Supported'));
  }
  errs.push(...nonNegative(s.minReadySeconds, 'spec.minReadySeconds'));
  errs.push(...validateDaemonSetUpdateStrategy(s.updateStrategy));
  errs.push(...nonNegative(s.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  return errs;
}

export const validateDaemonSetUpdate = validateDeploymentUpdate;

// ---- ControllerRevisions ----

export function validateControllerRevision(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  if (obj.data === undefined || obj.data === null) errs.push(fieldErrors.required('data', 'data is mandatory'));
  errs.push(...nonNegative(obj.revision, 'revision'));
  return errs;
}

export function validateControllerRevisionUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  if (semanticEqual(obj.data ?? null, old.data ?? null)) return [];
  return [fieldErrors.invalid('data', { rendered: 'runtime.RawExtension{...}' }, 'field is immutable')];
}
