// Columns of the core (v1) resources, as kubectl shows them.

import type { KubeObject } from '../../../storage/interface.js';
import type { TableConvertor, TableRowCondition } from './table-convertor.js';
import {
  AGE,
  NAME,
  col,
  containerCells,
  convertor,
  count,
  formatLabels,
  get,
  int,
  joinHostPort,
  list,
  nameOf,
  optInt,
  optStr,
  record,
  since,
  age,
  str,
  strings,
  wide,
  type Obj,
  CONTAINERS,
  IMAGES,
  SELECTOR,
} from './helpers.js';

const NODE_UNREACHABLE_REASON = 'NodeLost';

function isRestartable(container: Obj | undefined): boolean {
  return container !== undefined && container.restartPolicy === 'Always';
}

function hasCondition(obj: unknown, type: string): boolean | undefined {
  for (const c of list(obj, 'status.conditions')) {
    if (c.type === type) return c.status === 'True';
  }
  return undefined;
}

function later(a: string, b: unknown): string {
  if (typeof b !== 'string' || b === '') return a;
  if (a === '' || Date.parse(b) > Date.parse(a)) return b;
  return a;
}

const POD_SUCCEEDED: TableRowCondition[] = [
  { type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' },
];
const POD_FAILED: TableRowCondition[] = [{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' }];

/** READY, STATUS and RESTARTS of a pod, computed as kubectl's printer does */
export function podSummary(pod: KubeObject, now: number): { ready: string; reason: string; restarts: string } {
  const phase = str(pod, 'status.phase');
  let reason = str(pod, 'status.reason') || phase;
  for (const c of list(pod, 'status.conditions')) {
    if (c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';
  }
  const initSpecs = list(pod, 'spec.initContainers');
  const initByName = new Map(initSpecs.map((c) => [String(c.name), c]));
  let total = list(pod, 'spec.containers').length + initSpecs.filter(isRestartable).length;
  let ready = 0;
  let restarts = 0;
  let restartableRestarts = 0;
  let lastRestart = '';
  let lastRestartableRestart = '';

  let initializing = false;
  const initStatuses = list(pod, 'status.initContainerStatuses');
  for (let i = 0; i < initStatuses.length; i++) {
    const cs = initStatuses[i];
    restarts += int(cs, 'restartCount');
    lastRestart = later(lastRestart, get(cs, 'lastState.terminated.finishedAt'));
    const spec = initByName.get(String(cs.name));
    if (isRestartable(spec)) {
      restartableRestarts += int(cs, 'restartCount');
      lastRestartableRestart = later(lastRestartableRestart, get(cs, 'lastState.terminated.finishedAt'));
    }
    const terminated = record(cs, 'state').terminated as Obj | undefined;
    const waiting = record(cs, 'state').waiting as Obj | undefined;
    if (terminated && int(terminated, 'exitCode') === 0) continue;
    if (isRestartable(spec) && cs.started === true) {
      if (cs.ready === true) ready++;
      continue;
    }
    if (terminated) {
      const r = str(terminated, 'reason');
      if (r === '') {
        const signal = int(terminated, 'signal');
        reason = signal !== 0 ? `Init:Signal:${signal}` : `Init:ExitCode:${int(terminated, 'exitCode')}`;
      } else {
        reason = `Init:${r}`;
      }
    } else if (waiting && str(waiting, 'reason') !== '' && str(waiting, 'reason') !== 'PodInitializing') {
      reason = `Init:${str(waiting, 'reason')}`;
    } else {
      reason = `Init:${i}/${initSpecs.length}`;
    }
    initializing = true;
    break;
  }

  if (!initializing || hasCondition(pod, 'Initialized') === true) {
    restarts = restartableRestarts;
    lastRestart = lastRestartableRestart;
    let hasRunning = false;
    const statuses = list(pod, 'status.containerStatuses');
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i];
      restarts += int(cs, 'restartCount');
      lastRestart = later(lastRestart, get(cs, 'lastState.terminated.finishedAt'));
      const state = record(cs, 'state');
      const waiting = state.waiting as Obj | undefined;
      const terminated = state.terminated as Obj | undefined;
      if (waiting && str(waiting, 'reason') !== '') {
        reason = str(waiting, 'reason');
      } else if (terminated && str(terminated, 'reason') !== '') {
        reason = str(terminated, 'reason');
      } else if (terminated) {
        const signal = int(terminated, 'signal');
        reason = signal !== 0 ? `Signal:${signal}` : `ExitCode:${int(terminated, 'exitCode')}`;
      } else if (cs.ready === true && state.running) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      reason = hasCondition(pod, 'Ready') === true ? 'Running' : 'NotReady';
    }
  }

  if (pod.metadata.deletionTimestamp && str(pod, 'status.reason') === NODE_UNREACHABLE_REASON) {
    reason = 'Unknown';
  } else if (pod.metadata.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed') {
    reason = 'Terminating';
  }
  let restartsText = String(restarts);
  if (restarts !== 0 && lastRestart !== '') restartsText = `${restarts} (${since(lastRestart, now)} ago)`;
  total = Math.max(total, 0);
  return { ready: `${ready}/${total}`, reason, restarts: restartsText };
}

export const pods = convertor(
  [
    NAME,
    col('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
    col('Status', 'string', 'The aggregate status of the containers in this pod.'),
    col('Restarts', 'string', 'How many times the containers of this pod restarted, and when the last restart happened.'),
    AGE,
    wide('IP', 'string', 'The IP address of the pod.'),
    wide('Node', 'string', 'The node the pod is scheduled to.'),
    wide('Nominated Node', 'string', 'The node the scheduler nominated for this pod while preempting.'),
    wide('Readiness Gates', 'string', 'How many of the pod readiness gates are true.'),
  ],
  (pod, now) => {
    const s = podSummary(pod, now);
    const ips = list(pod, 'status.podIPs');
    const ip = (ips.length > 0 ? String(ips[0].ip ?? '') : '') || '<none>';
    const gates = list(pod, 'spec.readinessGates');
    let gatesText = '<none>';
    if (gates.length > 0) {
      const conditions = list(pod, 'status.conditions');
      const trueCount = gates.filter((g) => conditions.find((c) => c.type === g.conditionType)?.status === 'True').length;
      gatesText = `${trueCount}/${gates.length}`;
    }
    return [
      nameOf(pod),
      s.ready,
      s.reason,
      s.restarts,
      age(pod, now),
      ip,
      str(pod, 'spec.nodeName') || '<none>',
      str(pod, 'status.nominatedNodeName') || '<none>',
      gatesText,
    ];
  },
  (pod) => {
    const phase = str(pod, 'status.phase');
    if (phase === 'Succeeded') return POD_SUCCEEDED;
    if (phase === 'Failed') return POD_FAILED;
    return undefined;
  },
);

export const podTemplates = convertor(
  [
    NAME,
    col('Containers', 'string', 'Names of each container in the template.'),
    col('Images', 'string', 'Images referenced by each container in the template.'),
    col('Pod Labels', 'string', 'The labels of the pod template.'),
  ],
  (obj) => {
    const [names, images] = containerCells(list(obj, 'template.spec.containers'));
    return [nameOf(obj), names, images, formatLabels(record(obj, 'template.metadata.labels'))];
  },
);

export const replicationControllers = convertor(
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
    const [names, images] = containerCells(list(obj, 'spec.template.spec.containers'));
    return [
      nameOf(obj),
      optInt(obj, 'spec.replicas') ?? 1,
      int(obj, 'status.replicas'),
      int(obj, 'status.readyReplicas'),
      age(obj, now),
      names,
      images,
      formatLabels(record(obj, 'spec.selector')),
    ];
  },
);

function servicePorts(svc: KubeObject): string {
  const ports = list(svc, 'spec.ports').map((p) => {
    const protocol = typeof p.protocol === 'string' ? p.protocol : '';
    const nodePort = typeof p.nodePort === 'number' ? p.nodePort : 0;
    return nodePort > 0 ? `${p.port}:${nodePort}/${protocol}` : `${p.port}/${protocol}`;
  });
  return ports.length > 0 ? ports.join(',') : '<none>';
}

function loadBalancerIngress(obj: unknown, path: string): string {
  const set = new Set<string>();
  for (const ing of list(obj, path)) {
    if (typeof ing.ip === 'string' && ing.ip !== '') set.add(ing.ip);
    else if (typeof ing.hostname === 'string' && ing.hostname !== '') set.add(ing.hostname);
  }
  return [...set].sort().join(',');
}

export { loadBalancerIngress };

function serviceExternalIP(svc: KubeObject): string {
  const externalIPs = strings(svc, 'spec.externalIPs');
  switch (str(svc, 'spec.type')) {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length > 0 ? externalIPs.join(',') : '<none>';
    case 'LoadBalancer': {
      const lb = loadBalancerIngress(svc, 'status.loadBalancer.ingress');
      if (externalIPs.length > 0) return [...(lb ? lb.split(',') : []), ...externalIPs].join(',');
      return lb || '<pending>';
    }
    case 'ExternalName':
      return str(svc, 'spec.externalName');
    default:
      return '<unknown>';
  }
}

export const services = convertor(
  [
    NAME,
    col('Type', 'string', 'How the service is exposed (ClusterIP, NodePort, LoadBalancer, ExternalName).'),
    col('Cluster-IP', 'string', 'The cluster-internal IP address of the service.'),
    col('External-IP', 'string', 'Addresses the service is reachable at from outside the cluster.'),
    col('Port(s)', 'string', 'The ports the service exposes.'),
    AGE,
    wide('Selector', 'string', 'The labels of the pods this service routes traffic to.'),
  ],
  (svc, now) => {
    const ips = strings(svc, 'spec.clusterIPs');
    return [
      nameOf(svc),
      str(svc, 'spec.type'),
      ips.length > 0 ? ips[0] : '<none>',
      serviceExternalIP(svc),
      servicePorts(svc),
      age(svc, now),
      formatLabels(record(svc, 'spec.selector')),
    ];
  },
);

function formatEndpoints(obj: KubeObject): string {
  const subsets = list(obj, 'subsets');
  if (subsets.length === 0) return '<none>';
  const shown: string[] = [];
  const max = 3;
  let more = false;
  let total = 0;
  for (const ss of subsets) {
    const addresses = list(ss, 'addresses');
    const ports = list(ss, 'ports');
    if (ports.length === 0) {
      total += addresses.length;
      for (const a of addresses) {
        if (shown.length === max) {
          more = true;
          break;
        }
        shown.push(String(a.ip ?? ''));
      }
      continue;
    }
    for (const p of ports) {
      total += addresses.length;
      for (const a of addresses) {
        if (shown.length === max) {
          more = true;
          break;
        }
        shown.push(joinHostPort(String(a.ip ?? ''), Number(p.port ?? 0)));
      }
    }
  }
  const text = shown.join(',');
  return more ? `${text} + ${total - max} more...` : text;
}

export const endpoints = convertor([NAME, col('Endpoints', 'string', 'The addresses (and ports) of the endpoints.'), AGE], (obj, now) => [
  nameOf(obj),
  formatEndpoints(obj),
  age(obj, now),
]);

function nodeRoles(node: KubeObject): string {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(node.metadata.labels ?? {})) {
    if (k.startsWith('node-role.kubernetes.io/')) {
      const role = k.slice('node-role.kubernetes.io/'.length);
      if (role) roles.add(role);
    } else if (k === 'kubernetes.io/role' && v !== '') {
      roles.add(v);
    }
  }
  return [...roles].sort().join(',') || '<none>';
}

function nodeAddress(node: KubeObject, type: string): string {
  const a = list(node, 'status.addresses').find((x) => x.type === type);
  return a && typeof a.address === 'string' ? a.address : '<none>';
}

export const nodes = convertor(
  [
    NAME,
    col('Status', 'string', 'The status of the node.'),
    col('Roles', 'string', 'The roles of the node.'),
    AGE,
    col('Version', 'string', 'The kubelet version of the node.'),
    wide('Internal-IP', 'string', 'The internal IP address of the node.'),
    wide('External-IP', 'string', 'The external IP address of the node.'),
    wide('OS-Image', 'string', 'The operating system image of the node.'),
    wide('Kernel-Version', 'string', 'The kernel version of the node.'),
    wide('Container-Runtime', 'string', 'The container runtime of the node.'),
  ],
  (node, now) => {
    const status: string[] = [];
    const ready = list(node, 'status.conditions').find((c) => c.type === 'Ready');
    if (ready) status.push(ready.status === 'True' ? 'Ready' : 'NotReady');
    if (status.length === 0) status.push('Unknown');
    if (get(node, 'spec.unschedulable') === true) status.push('SchedulingDisabled');
    return [
      nameOf(node),
      status.join(','),
      nodeRoles(node),
      age(node, now),
      str(node, 'status.nodeInfo.kubeletVersion'),
      nodeAddress(node, 'InternalIP'),
      nodeAddress(node, 'ExternalIP'),
      str(node, 'status.nodeInfo.osImage') || '<unknown>',
      str(node, 'status.nodeInfo.kernelVersion') || '<unknown>',
      str(node, 'status.nodeInfo.containerRuntimeVersion') || '<unknown>',
    ];
  },
);

/** the fields of a core/v1 Event, read from either API version of events */
export interface EventView {
  firstTimestamp?: string;
  lastTimestamp?: string;
  eventTime?: string;
  count: number;
  seriesCount?: number;
  seriesLastObserved?: string;
  type: string;
  reason: string;
  kind: string;
  name: string;
  fieldPath: string;
  component: string;
  host: string;
  message: string;
}

export function coreEventView(obj: KubeObject): EventView {
  const series = get(obj, 'series');
  return {
    firstTimestamp: optStr(obj, 'firstTimestamp'),
    lastTimestamp: optStr(obj, 'lastTimestamp'),
    eventTime: optStr(obj, 'eventTime'),
    count: int(obj, 'count'),
    seriesCount: series ? int(series, 'count') : undefined,
    seriesLastObserved: series ? optStr(series, 'lastObservedTime') : undefined,
    type: str(obj, 'type'),
    reason: str(obj, 'reason'),
    kind: str(obj, 'involvedObject.kind'),
    name: str(obj, 'involvedObject.name'),
    fieldPath: str(obj, 'involvedObject.fieldPath'),
    component: str(obj, 'source.component') || str(obj, 'reportingComponent'),
    host: str(obj, 'source.host') || str(obj, 'reportingInstance'),
    message: str(obj, 'message'),
  };
}

export function eventsConvertor(view: (obj: KubeObject) => EventView): TableConvertor {
  return convertor(
    [
      col('Last Seen', 'string', 'When the event was last observed.'),
      col('Type', 'string', 'The type of the event (Normal, Warning).'),
      col('Reason', 'string', 'Why the event happened, in one word.'),
      col('Object', 'string', 'The object the event is about.'),
      wide('Subobject', 'string', 'The part of the object the event is about.'),
      wide('Source', 'string', 'The component that reported the event.'),
      col('Message', 'string', 'A human-readable description of the event.'),
      wide('First Seen', 'string', 'When the event was first observed.'),
      wide('Count', 'string', 'How many times the event occurred.'),
      col('Name', 'string', 'The name of the event.', { priority: 1, format: 'name' }),
    ],
    (obj, now) => {
      const e = view(obj);
      const first = e.firstTimestamp ? since(e.firstTimestamp, now) : since(e.eventTime, now);
      let last = e.lastTimestamp ? since(e.lastTimestamp, now) : first;
      let n = e.count;
      if (e.seriesCount !== undefined) {
        last = since(e.seriesLastObserved, now);
        n = e.seriesCount;
      } else if (n === 0) {
        n = 1;
      }
      const target = e.name ? `${e.kind.toLowerCase()}/${e.name}` : e.kind.toLowerCase();
      const source = e.component === '' ? (e.host === '' ? '' : `, ${e.host}`) : e.host === '' ? e.component : `${e.component}, ${e.host}`;
      return [last, e.type, e.reason, target, e.fieldPath, source, e.message.trim(), first, n, nameOf(obj)];
    },
  );
}

export const namespaces = convertor([NAME, col('Status', 'string', 'The phase of the namespace.'), AGE], (obj, now) => [
  nameOf(obj),
  str(obj, 'status.phase'),
  age(obj, now),
]);

export const secrets = convertor(
  [NAME, col('Type', 'string', 'The type of the secret.'), col('Data', 'string', 'The number of entries in the secret.'), AGE],
  (obj, now) => [nameOf(obj), str(obj, 'type'), count(obj, 'data'), age(obj, now)],
);

export const serviceAccounts = convertor(
  [NAME, col('Secrets', 'string', 'The number of secrets of the service account.'), AGE],
  (obj, now) => [nameOf(obj), count(obj, 'secrets'), age(obj, now)],
);

export const configMaps = convertor([NAME, col('Data', 'string', 'The number of entries in the config map.'), AGE], (obj, now) => [
  nameOf(obj),
  count(obj, 'data') + count(obj, 'binaryData'),
  age(obj, now),
]);

/** RWO,ROX,RWX,RWOP in that order */
export function accessModes(modes: string[]): string {
  const out: string[] = [];
  if (modes.includes('ReadWriteOnce')) out.push('RWO');
  if (modes.includes('ReadOnlyMany')) out.push('ROX');
  if (modes.includes('ReadWriteMany')) out.push('RWX');
  if (modes.includes('ReadWriteOncePod')) out.push('RWOP');
  return out.join(',');
}

const STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

export const persistentVolumes = convertor(
  [
    NAME,
    col('Capacity', 'string', 'The storage capacity of the volume.'),
    col('Access Modes', 'string', 'How the volume can be mounted.'),
    col('Reclaim Policy', 'string', 'What happens to the volume when its claim is released.'),
    col('Status', 'string', 'The phase of the volume.'),
    col('Claim', 'string', 'The claim bound to the volume.'),
    col('StorageClass', 'string', 'The storage class of the volume.'),
    col('VolumeAttributesClass', 'string', 'The volume attributes class of the volume.'),
    col('Reason', 'string', 'Why the volume is in its phase.'),
    AGE,
    wide('VolumeMode', 'string', 'Whether the volume is a filesystem or a raw block device.'),
  ],
  (pv, now) => {
    const claim = get(pv, 'spec.claimRef');
    const claimText = claim ? `${str(claim, 'namespace')}/${str(claim, 'name')}` : '';
    const phase = pv.metadata.deletionTimestamp ? 'Terminating' : str(pv, 'status.phase');
    const capacity = get(pv, 'spec.capacity.storage');
    return [
      nameOf(pv),
      capacity === undefined ? '0' : String(capacity),
      accessModes(strings(pv, 'spec.accessModes')),
      str(pv, 'spec.persistentVolumeReclaimPolicy'),
      phase,
      claimText,
      pv.metadata.annotations?.[STORAGE_CLASS_ANNOTATION] ?? str(pv, 'spec.storageClassName'),
      optStr(pv, 'spec.volumeAttributesClassName') ?? '<unset>',
      str(pv, 'status.reason'),
      age(pv, now),
      optStr(pv, 'spec.volumeMode') ?? '<unset>',
    ];
  },
);

export const persistentVolumeClaims = convertor(
  [
    NAME,
    col('Status', 'string', 'The phase of the claim.'),
    col('Volume', 'string', 'The volume bound to the claim.'),
    col('Capacity', 'string', 'The capacity of the bound volume.'),
    col('Access Modes', 'string', 'How the bound volume can be mounted.'),
    col('StorageClass', 'string', 'The storage class of the claim.'),
    col('VolumeAttributesClass', 'string', 'The volume attributes class of the claim.'),
    AGE,
    wide('VolumeMode', 'string', 'Whether the claim is for a filesystem or a raw block device.'),
  ],
  (pvc, now) => {
    const phase = pvc.metadata.deletionTimestamp ? 'Terminating' : str(pvc, 'status.phase');
    const volumeName = str(pvc, 'spec.volumeName');
    let capacity = '';
    let modes = '';
    if (volumeName !== '') {
      modes = accessModes(strings(pvc, 'status.accessModes'));
      const c = get(pvc, 'status.capacity.storage');
      capacity = c === undefined ? '0' : String(c);
    }
    return [
      nameOf(pvc),
      phase,
      volumeName,
      capacity,
      modes,
      pvc.metadata.annotations?.[STORAGE_CLASS_ANNOTATION] ?? str(pvc, 'spec.storageClassName'),
      optStr(pvc, 'spec.volumeAttributesClassName') ?? '<unset>',
      age(pvc, now),
      optStr(pvc, 'spec.volumeMode') ?? '<unset>',
    ];
  },
);

function quotaColumns(obj: KubeObject): [string, string] {
  const hard = record(obj, 'status.hard');
  const used = record(obj, 'status.used');
  const requests: string[] = [];
  const limits: string[] = [];
  for (const name of Object.keys(hard).sort()) {
    const text = `${name}: ${String(used[name] ?? '0')}/${String(hard[name])}`;
    const pieces = name.split('.');
    if (pieces.length > 1 && pieces[0] === 'limits') limits.push(text);
    else requests.push(text);
  }
  return [requests.join(', '), limits.join(', ')];
}

export const resourceQuotas = convertor(
  [NAME, col('Request', 'string', 'Used and hard request quotas.'), col('Limit', 'string', 'Used and hard limit quotas.'), AGE],
  (obj, now) => {
    const [req, lim] = quotaColumns(obj);
    return [nameOf(obj), req, lim, age(obj, now)];
  },
);

export const componentStatuses = convertor(
  [
    NAME,
    col('Status', 'string', 'Status of the component conditions.'),
    col('Message', 'string', 'Message of the component conditions.'),
    col('Error', 'string', 'Error of the component conditions.'),
  ],
  (obj) => {
    const healthy = list(obj, 'conditions').find((c) => c.type === 'Healthy');
    const status = healthy ? (healthy.status === 'True' ? 'Healthy' : 'Unhealthy') : 'Unknown';
    return [nameOf(obj), status, healthy ? str(healthy, 'message') : '', healthy ? str(healthy, 'error') : ''];
  },
);

/** core v1 Events */
export const coreEvents = eventsConvertor(coreEventView);
