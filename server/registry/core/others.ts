// The remaining core kinds with behaviour of their own: ReplicationControllers (defaults
// from the template, orphaning by default), Nodes (keep the status they are created with),
// PersistentVolumes and claims (DELETE answers with the object).

import type { KubeObject } from '../../../storage/interface.js';
import { asObject, isObject, reorder } from '../object.js';
import { defineStrategy, statusStrategy, type ResourceStrategy } from '../strategy.js';
import { defaultPodTemplate } from './pod-spec.js';
import { validatePodTemplateSpec } from './pod-validation.js';
import { defaultNodeStatus, validateNodeSpec } from './misc.js';
import { selectorMismatch } from './workload-validation.js';
import type { FieldError } from '../../machinery/validation/field-error.js';
import { fieldErrors } from '../../machinery/validation/field-error.js';
import { nonNegative, optNum, str, workloadNameWarnings } from '../validation/values.js';

const rcSpecOrder = ['replicas', 'minReadySeconds', 'selector', 'template'];

export function replicationControllerStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    hasStatusSubresource: true,
    tracksGeneration: true,
    // core/v1 keeps its historical default: dependents are orphaned
    defaultGarbageCollectionPolicy: () => 'OrphanDependents',
    initialStatus: () => ({ replicas: 0 }),
    applyDefaults(obj: KubeObject) {
      if (!isObject(obj.spec)) return;
      const spec = obj.spec;
      const template = isObject(spec.template) ? spec.template : undefined;
      const templateLabels = asObject(asObject(template?.metadata).labels) as Record<string, string>;
      if (template && Object.keys(asObject(spec.selector)).length === 0 && Object.keys(templateLabels).length) {
        spec.selector = { ...templateLabels };
      }
      if (template && Object.keys(obj.metadata.labels ?? {}).length === 0 && Object.keys(templateLabels).length) {
        obj.metadata.labels = { ...templateLabels };
      }
      spec.replicas ??= 1;
      if (template) defaultPodTemplate(template);
      obj.spec = reorder(spec, rcSpecOrder);
    },
    validateSpec: validateReplicationController,
    warningsOnCreate: (obj) => workloadNameWarnings(obj.metadata.name ?? ''),
  });
}

function validateReplicationController(obj: KubeObject): FieldError[] {
  const spec = asObject(obj.spec);
  const errs: FieldError[] = [];
  errs.push(...nonNegative(spec.minReadySeconds, 'spec.minReadySeconds'));
  const selector = asObject(spec.selector) as Record<string, string>;
  const empty = Object.keys(selector).length === 0;
  if (empty) errs.push(fieldErrors.required('spec.selector'));
  errs.push(...nonNegative(spec.replicas, 'spec.replicas'));
  if (!isObject(spec.template)) {
    errs.push(fieldErrors.required('spec.template'));
    return errs;
  }
  const template = spec.template;
  const labels = asObject(asObject(template.metadata).labels) as Record<string, string>;
  if (!empty && !Object.entries(selector).every(([k, v]) => labels[k] === v)) {
    errs.push(selectorMismatch('spec.template.metadata.labels', asObject(template.metadata).labels));
  }
  errs.push(...validatePodTemplateSpec(template, 'spec.template'));
  const tspec = asObject(template.spec);
  const rp = str(tspec.restartPolicy);
  if (rp !== 'Always') errs.push(fieldErrors.notSupported('spec.template.spec.restartPolicy', rp, ['Always']));
  if (optNum(tspec.activeDeadlineSeconds) !== undefined) {
    errs.push(
      fieldErrors.forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in ReplicationController is not Supported'),
    );
  }
  return errs;
}

export function nodeStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: false,
    applyDefaults: defaultNodeStatus,
    validateSpec: validateNodeSpec,
    // a node registers with the status it reports
    hasStatusSubresource: false,
    prepareUpdate(obj, old) {
      if (old.status === undefined) delete obj.status;
      else obj.status = old.status;
    },
  });
}

export function nodeStatusStrategy(base: ResourceStrategy): ResourceStrategy {
  return statusStrategy(base);
}
