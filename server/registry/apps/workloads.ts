// apps/v1 Deployments, ReplicaSets, StatefulSets, DaemonSets: defaulting, the zero status a
// new object shows, validation, selector immutability, and status writes that leave labels
// alone. Generation counts spec changes (and annotation changes for Deployments, whose
// annotations are copied to their ReplicaSets).

import type { KubeObject } from '../../../storage/interface.js';
import { defaultPodTemplate } from '../core/pod-spec.js';
import { defaultPersistentVolumeClaimTemplate } from '../core/volumes.js';
import { asArray, ensureObject, isObject, reorder, semanticEqual, specPart, type JsonObject } from '../object.js';
import { defineStrategy, statusStrategy, type ResourceStrategy, type StrategyContext } from '../strategy.js';
import { nameIsDNSLabel } from '../../machinery/validation/names.js';
import { workloadNameWarnings } from '../validation/values.js';
import {
  validateDaemonSet,
  validateDaemonSetUpdate,
  validateDeployment,
  validateDeploymentUpdate,
  validateReplicaSet,
  validateReplicaSetUpdate,
  validateStatefulSet,
  validateStatefulSetUpdate,
} from './validation.js';

/** Deleting through an old apps version orphaned dependents; apps/v1 deletes them. */
function appsGCPolicy(c: StrategyContext) {
  return c.info.group === 'apps' && c.info.version === 'v1' ? ('DeleteDependents' as const) : ('OrphanDependents' as const);
}

function specOf(obj: KubeObject): JsonObject | undefined {
  return isObject(obj.spec) ? obj.spec : undefined;
}

function defaultTemplate(spec: JsonObject): void {
  if (isObject(spec.template)) defaultPodTemplate(spec.template);
}

const deploymentSpecOrder = [
  'replicas',
  'selector',
  'template',
  'strategy',
  'minReadySeconds',
  'revisionHistoryLimit',
  'paused',
  'progressDeadlineSeconds',
];

export function deploymentStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    hasStatusSubresource: true,
    tracksGeneration: true,
    defaultGarbageCollectionPolicy: appsGCPolicy,
    applyDefaults(obj) {
      const spec = specOf(obj);
      if (!spec) return;
      spec.replicas ??= 1;
      const strategy = ensureObject(spec, 'strategy');
      if (!strategy.type) strategy.type = 'RollingUpdate';
      if (strategy.type === 'RollingUpdate') {
        const ru = ensureObject(strategy, 'rollingUpdate');
        ru.maxUnavailable ??= '25%';
        ru.maxSurge ??= '25%';
        strategy.rollingUpdate = reorder(ru, ['maxUnavailable', 'maxSurge']);
      }
      spec.strategy = reorder(strategy, ['type', 'rollingUpdate']);
      spec.revisionHistoryLimit ??= 10;
      spec.progressDeadlineSeconds ??= 600;
      defaultTemplate(spec);
      obj.spec = reorder(spec, deploymentSpecOrder);
    },
    generationChanged: (obj, old) =>
      !semanticEqual(specPart(obj), specPart(old)) || !semanticEqual(obj.metadata.annotations, old.metadata.annotations),
    validateSpec: validateDeployment,
    warningsOnCreate: (obj) => workloadNameWarnings(obj.metadata.name ?? ''),
    validateSpecUpdate: validateDeploymentUpdate,
  });
}

const replicaSetSpecOrder = ['replicas', 'minReadySeconds', 'selector', 'template'];

export function replicaSetStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    hasStatusSubresource: true,
    tracksGeneration: true,
    defaultGarbageCollectionPolicy: appsGCPolicy,
    initialStatus: () => ({ replicas: 0 }),
    applyDefaults(obj) {
      const spec = specOf(obj);
      if (!spec) return;
      spec.replicas ??= 1;
      defaultTemplate(spec);
      obj.spec = reorder(spec, replicaSetSpecOrder);
    },
    validateSpec: validateReplicaSet,
    warningsOnCreate: (obj) => workloadNameWarnings(obj.metadata.name ?? ''),
    validateSpecUpdate: validateReplicaSetUpdate,
  });
}

const statefulSetSpecOrder = [
  'replicas',
  'selector',
  'template',
  'volumeClaimTemplates',
  'serviceName',
  'podManagementPolicy',
  'updateStrategy',
  'revisionHistoryLimit',
  'minReadySeconds',
  'persistentVolumeClaimRetentionPolicy',
  'ordinals',
];

export function statefulSetStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    hasStatusSubresource: true,
    tracksGeneration: true,
    defaultGarbageCollectionPolicy: appsGCPolicy,
    initialStatus: () => ({ replicas: 0, availableReplicas: 0 }),
    applyDefaults(obj) {
      const spec = specOf(obj);
      if (!spec) return;
      if (!spec.podManagementPolicy) spec.podManagementPolicy = 'OrderedReady';
      const us = ensureObject(spec, 'updateStrategy');
      if (!us.type) {
        us.type = 'RollingUpdate';
        if (!isObject(us.rollingUpdate)) us.rollingUpdate = {};
      }
      if (us.type === 'RollingUpdate' && isObject(us.rollingUpdate)) us.rollingUpdate.partition ??= 0;
      const retention = ensureObject(spec, 'persistentVolumeClaimRetentionPolicy');
      if (!retention.whenDeleted) retention.whenDeleted = 'Retain';
      if (!retention.whenScaled) retention.whenScaled = 'Retain';
      spec.replicas ??= 1;
      spec.revisionHistoryLimit ??= 10;
      defaultTemplate(spec);
      for (const t of asArray(spec.volumeClaimTemplates)) if (isObject(t)) defaultPersistentVolumeClaimTemplate(t);
      obj.spec = reorder(spec, statefulSetSpecOrder);
    },
    // StatefulSet names become pod host names
    validateName: nameIsDNSLabel,
    validateSpec: validateStatefulSet,
    validateSpecUpdate: validateStatefulSetUpdate,
  });
}

const daemonSetSpecOrder = ['selector', 'template', 'updateStrategy', 'minReadySeconds', 'revisionHistoryLimit'];

export function daemonSetStrategy(): ResourceStrategy {
  return defineStrategy({
    namespaced: true,
    hasStatusSubresource: true,
    tracksGeneration: true,
    defaultGarbageCollectionPolicy: appsGCPolicy,
    initialStatus: () => ({ currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 }),
    applyDefaults(obj) {
      const spec = specOf(obj);
      if (!spec) return;
      const us = ensureObject(spec, 'updateStrategy');
      if (!us.type) us.type = 'RollingUpdate';
      if (us.type === 'RollingUpdate') {
        const ru = ensureObject(us, 'rollingUpdate');
        ru.maxUnavailable ??= 1;
        ru.maxSurge ??= 0;
        us.rollingUpdate = reorder(ru, ['maxUnavailable', 'maxSurge']);
      }
      spec.updateStrategy = reorder(us, ['type', 'rollingUpdate']);
      spec.revisionHistoryLimit ??= 10;
      defaultTemplate(spec);
      obj.spec = reorder(spec, daemonSetSpecOrder);
    },
    validateSpec: validateDaemonSet,
    validateSpecUpdate: validateDaemonSetUpdate,
  });
}

/** `<workload>/status`: labels stay as they are */
export function workloadStatusStrategy(base: ResourceStrategy): ResourceStrategy {
  return statusStrategy(base, { keepLabels: true });
}
