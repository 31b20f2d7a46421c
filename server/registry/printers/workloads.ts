// Columns of apps/v1, batch/v1, autoscaling and policy resources, as kubectl shows them.

import type { KubeObject } from '../../../storage/interface.js';
import {
  AGE,
  CONTAINERS,
  IMAGES,
  NAME,
  SELECTOR,
  age,
  col,
  containerCells,
  convertor,
  formatLabelSelector,
  formatLabels,
  get,
  humanDuration,
  int,
  labelSelectorString,
  list,
  nameOf,
  optInt,
  optStr,
  record,
  since,
  str,
  type Obj,
} from './helpers.js';

function templateContainers(obj: KubeObject, path = 'spec.template.spec.containers'): [string, string] {
  return containerCells(list(obj, path));
}

export const deployments = convertor(
  [
    NAME,
    col('Ready', 'string', 'Ready replicas out of the desired ones.'),
    col('Up-to-date', 'string', 'Replicas updated to the current template.'),
    col('Available', 'string', 'Replicas available to serve.'),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
  ],
  (obj, now) => {
    const [names, images] = templateContainers(obj);
    const selector = get(obj, 'spec.selector');
    return [
      nameOf(obj),
      `${int(obj, 'status.readyReplicas')}/${optInt(obj, 'spec.replicas') ?? 1}`,
      int(obj, 'status.updatedReplicas'),
      int(obj, 'status.availableReplicas'),
      age(obj, now),
      names,
      images,
      labelSelectorString(selector),
    ];
  },
);

export const replicaSets = convertor(
  [
    NAME,
    col('Desired', 'integer', 'The number of desired replicas.'),
    col('Current', 'integer', 'The number of replicas that exist.'),
    col('Ready', 'integer', 'The number of ready replicas.'),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
  ],
  (obj, now) => {
    const [names, images] = templateContainers(obj);
    return [
      nameOf(obj),
      optInt(obj, 'spec.replicas') ?? 1,
      int(obj, 'status.replicas'),
      int(obj, 'status.readyReplicas'),
      age(obj, now),
      names,
      images,
      formatLabelSelector(get(obj, 'spec.selector')),
    ];
  },
);

export const statefulSets = convertor(
  [NAME, col('Ready', 'string', 'Ready replicas out of the desired ones.'), AGE, CONTAINERS, IMAGES],
  (obj, now) => {
    const [names, images] = templateContainers(obj);
    return [nameOf(obj), `${int(obj, 'status.readyReplicas')}/${optInt(obj, 'spec.replicas') ?? 1}`, age(obj, now), names, images];
  },
);

export const daemonSets = convertor(
  [
    NAME,
    col('Desired', 'integer', 'The number of nodes that should run the daemon pod.'),
    col('Current', 'integer', 'The number of nodes running at least one daemon pod.'),
    col('Ready', 'integer', 'The number of nodes with a ready daemon pod.'),
    col('Up-to-date', 'integer', 'The number of nodes running the current template.'),
    col('Available', 'integer', 'The number of nodes with an available daemon pod.'),
    col('Node Selector', 'string', 'The node selector of the pod template.'),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
  ],
  (obj, now) => {
    const [names, images] = templateContainers(obj);
    return [
      nameOf(obj),
      int(obj, 'status.desiredNumberScheduled'),
      int(obj, 'status.currentNumberScheduled'),
      int(obj, 'status.numberReady'),
      int(obj, 'status.updatedNumberScheduled'),
      int(obj, 'status.numberAvailable'),
      formatLabels(record(obj, 'spec.template.spec.nodeSelector')),
      age(obj, now),
      names,
      images,
      formatLabelSelector(get(obj, 'spec.selector')),
    ];
  },
);

export const controllerRevisions = convertor(
  [NAME, col('Controller', 'string', 'The object that owns this revision.'), col('Revision', 'string', 'The revision number.'), AGE],
  (obj, now) => {
    const owner = (obj.metadata.ownerReferences ?? []).find(
      (r) => r !== null && typeof r === 'object' && !Array.isArray(r) && (r as Obj).controller === true,
    ) as Obj | undefined;
    let controller = '<none>';
    if (owner) {
      const apiVersion = String(owner.apiVersion ?? '');
      const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
      const kind = String(owner.kind ?? '');
      const groupKind = group ? `${kind}.${group}` : kind;
      controller = groupKind ? `${groupKind.toLowerCase()}/${String(owner.name ?? '')}` : String(owner.name ?? '');
    }
    return [nameOf(obj), controller, int(obj, 'revision'), age(obj, now)];
  },
);

function jobCondition(obj: KubeObject, type: string): boolean {
  const c = list(obj, 'status.conditions').find((x) => x.type === type);
  return c !== undefined && c.status === 'True';
}

export const jobs = convertor(
  [
    NAME,
    col('Status', 'string', 'Status of the job.'),
    col('Completions', 'string', 'Succeeded pods out of the required completions.'),
    col('Duration', 'string', 'Time required to complete the job.'),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
  ],
  (obj, now) => {
    const succeeded = int(obj, 'status.succeeded');
    const completionsSpec = optInt(obj, 'spec.completions');
    let completions: string;
    if (completionsSpec !== undefined) {
      completions = `${succeeded}/${completionsSpec}`;
    } else {
      const parallelism = optInt(obj, 'spec.parallelism') ?? 0;
      completions = parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
    }
    const start = optStr(obj, 'status.startTime');
    const end = optStr(obj, 'status.completionTime');
    let duration = '';
    if (start && !end) duration = humanDuration(now - Date.parse(start));
    else if (start && end) duration = humanDuration(Date.parse(end) - Date.parse(start));
    let status = 'Running';
    if (jobCondition(obj, 'Complete')) status = 'Complete';
    else if (jobCondition(obj, 'Failed')) status = 'Failed';
    else if (obj.metadata.deletionTimestamp) status = 'Terminating';
    else if (jobCondition(obj, 'Suspended')) status = 'Suspended';
    else if (jobCondition(obj, 'FailureTarget')) status = 'FailureTarget';
    const [names, images] = templateContainers(obj);
    return [nameOf(obj), status, completions, duration, age(obj, now), names, images, formatLabelSelector(get(obj, 'spec.selector'))];
  },
);

export const cronJobs = convertor(
  [
    NAME,
    col('Schedule', 'string', 'The schedule in cron format.'),
    col('Timezone', 'string', 'The time zone the schedule is interpreted in.'),
    col('Suspend', 'boolean', 'Whether new runs are suspended.'),
    col('Active', 'integer', 'The number of running jobs.'),
    col('Last Schedule', 'string', 'When a job was last scheduled.'),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
  ],
  (obj, now) => {
    const last = optStr(obj, 'status.lastScheduleTime');
    const suspend = get(obj, 'spec.suspend');
    const [names, images] = templateContainers(obj, 'spec.jobTemplate.spec.template.spec.containers');
    return [
      nameOf(obj),
      str(obj, 'spec.schedule'),
      optStr(obj, 'spec.timeZone') ?? '<none>',
      typeof suspend === 'boolean' ? String(suspend) : '<unset>',
      list(obj, 'status.active').length,
      last ? since(last, now) : '<none>',
      age(obj, now),
      names,
      images,
      formatLabelSelector(get(obj, 'spec.jobTemplate.spec.selector')),
    ];
  },
);

function quantityText(v: unknown): string {
  if (v === undefined || v === null) return '<unknown>';
  return String(v);
}

/** TARGETS of an autoscaling/v2 HPA (v1 objects carry targetCPUUtilizationPercentage) */
function hpaTargets(obj: KubeObject): string {
  const specs = list(obj, 'spec.metrics');
  const statuses = list(obj, 'status.currentMetrics');
  if (specs.length === 0) {
    // autoscaling/v1 keeps its single CPU target in its own fields
    const cpuTarget = optInt(obj, 'spec.targetCPUUtilizationPercentage');
    if (cpuTarget === undefined) return '<none>';
    const current = optInt(obj, 'status.currentCPUUtilizationPercentage');
    return `cpu: ${current === undefined ? '<unknown>' : `${current}%`}/${cpuTarget}%`;
  }
  const out = specs.map((spec, i) => {
    const status = statuses[i];
    switch (spec.type) {
      case 'External': {
        const target = record(spec, 'external.target');
        if (target.averageValue !== undefined) {
          return `${quantityText(get(status, 'external.current.averageValue'))}/${String(target.averageValue)} (avg)`;
        }
        return `${quantityText(get(status, 'external.current.value'))}/${String(target.value)}`;
      }
      case 'Pods':
        return `${quantityText(get(status, 'pods.current.averageValue'))}/${String(get(spec, 'pods.target.averageValue'))}`;
      case 'Object': {
        const target = record(spec, 'object.target');
        if (target.averageValue !== undefined) {
          return `${quantityText(get(status, 'object.current.averageValue'))}/${String(target.averageValue)} (avg)`;
        }
        return `${quantityText(get(status, 'object.current.value'))}/${String(target.value)}`;
      }
      case 'Resource':
      case 'ContainerResource': {
        const key = spec.type === 'Resource' ? 'resource' : 'containerResource';
        const name = str(spec, `${key}.name`);
        const target = record(spec, `${key}.target`);
        if (target.averageValue !== undefined) {
          return `${name}: ${quantityText(get(status, `${key}.current.averageValue`))}/${String(target.averageValue)}`;
        }
        const cur = get(status, `${key}.current.averageUtilization`);
        const current = typeof cur === 'number' ? `${cur}%` : '<unknown>';
        const goal = typeof target.averageUtilization === 'number' ? `${target.averageUtilization}%` : '<auto>';
        return `${name}: ${current}/${goal}`;
      }
      default:
        return '<unknown type>';
    }
  });
  const max = 2;
  return out.length > max ? `${out.slice(0, max).join(', ')} + ${out.length - max} more...` : out.join(', ');
}

export const horizontalPodAutoscalers = convertor(
  [
    NAME,
    col('Reference', 'string', 'The object being scaled.'),
    col('Targets', 'string', 'Current and target values of the metrics.'),
    col('MinPods', 'string', 'The lower replica limit.'),
    col('MaxPods', 'string', 'The upper replica limit.'),
    col('Replicas', 'string', 'The current number of replicas.'),
    AGE,
  ],
  (obj, now) => {
    const min = optInt(obj, 'spec.minReplicas');
    return [
      nameOf(obj),
      `${str(obj, 'spec.scaleTargetRef.kind')}/${str(obj, 'spec.scaleTargetRef.name')}`,
      hpaTargets(obj),
      min === undefined ? '<unset>' : String(min),
      int(obj, 'spec.maxReplicas'),
      int(obj, 'status.currentReplicas'),
      age(obj, now),
    ];
  },
);

function intOrString(v: unknown): string {
  if (v === undefined || v === null) return 'N/A';
  return String(v);
}

export const podDisruptionBudgets = convertor(
  [
    NAME,
    col('Min Available', 'string', 'The minimum number of pods that must be available.'),
    col('Max Unavailable', 'string', 'The maximum number of pods that may be unavailable.'),
    col('Allowed Disruptions', 'integer', 'How many pods may be disrupted now.'),
    AGE,
  ],
  (obj, now) => [
    nameOf(obj),
    intOrString(get(obj, 'spec.minAvailable')),
    intOrString(get(obj, 'spec.maxUnavailable')),
    int(obj, 'status.disruptionsAllowed'),
    age(obj, now),
  ],
);

const scales = convertor(
  [
    col('Name', 'string', 'The name of the scaled object.'),
    col('Desired', 'integer', 'The desired number of replicas.'),
    col('Available', 'integer', 'The current number of replicas.'),
    AGE,
  ],
  (obj, now) => [nameOf(obj), int(obj, 'spec.replicas'), int(obj, 'status.replicas'), age(obj, now)],
);

/** the Scale subresource's table */
export const scaleConvertor = scales;
