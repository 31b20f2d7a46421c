// Which field labels each kind accepts in a field selector, and the values an object offers
// for them. Two separate steps, as in kube-apiserver: the request's field labels are checked
// (and renamed) per request kind; objects are then matched on the stored kind's fields.
// Kinds without their own rule accept only metadata.name and metadata.namespace.

import type { KindKey, ResourceKey } from '../apis/generated/resource-keys.js';
import type { KubeObject } from '../../storage/interface.js';
import { SelectorError } from './labels.js';
import type { FieldSet } from './fields.js';

/** Renames or rejects one field label; throws SelectorError for an unsupported label. */
export type FieldLabelConverter = (label: string, value: string) => [string, string];

function labelSet(labels: string[], message: (label: string) => string, renames: Record<string, string> = {}): FieldLabelConverter {
  const allowed = new Set(labels);
  return (label, value) => {
    if (Object.hasOwn(renames, label)) return [renames[label], value];
    if (allowed.has(label)) return [label, value];
    throw new SelectorError(message(label));
  };
}

const notSupported = (label: string) => `field label not supported: ${label}`;

const defaultConverter: FieldLabelConverter = (label, value) => {
  if (label === 'metadata.name' || label === 'metadata.namespace') return [label, value];
  throw new SelectorError(`"${label}" is not a known field selector: only "metadata.name", "metadata.namespace"`);
};

const jobLike = (kind: string): FieldLabelConverter =>
  labelSet(['metadata.name', 'metadata.namespace', 'status.successful'], (l) => `field label "${l}" not supported for "${kind}"`);

/** events.k8s.io names its fields differently; selection runs on the stored core Event */
const eventsV1Renames: Record<string, string> = {
  reason: 'reason',
  'regarding.kind': 'involvedObject.kind',
  'regarding.namespace': 'involvedObject.namespace',
  'regarding.name': 'involvedObject.name',
  'regarding.uid': 'involvedObject.uid',
  'regarding.apiVersion': 'involvedObject.apiVersion',
  'regarding.resourceVersion': 'involvedObject.resourceVersion',
  'regarding.fieldPath': 'involvedObject.fieldPath',
  reportingController: 'reportingComponent',
  type: 'type',
  'metadata.namespace': 'metadata.namespace',
  'metadata.name': 'metadata.name',
};

/** keyed by `<group>/<version>/<Kind>` of the request */
const converters: Partial<Record<KindKey, FieldLabelConverter>> = {
  '/v1/Pod': labelSet(
    [
      'metadata.name',
      'metadata.namespace',
      'spec.nodeName',
      'spec.restartPolicy',
      'spec.schedulerName',
      'spec.serviceAccountName',
      'spec.hostNetwork',
      'status.phase',
      'status.podIP',
      'status.podIPs',
      'status.nominatedNodeName',
    ],
    notSupported,
    // old v1 clients send spec.host
    { 'spec.host': 'spec.nodeName' },
  ),
  '/v1/Node': labelSet(['metadata.name', 'spec.unschedulable'], notSupported),
  '/v1/ReplicationController': labelSet(['metadata.name', 'metadata.namespace', 'status.replicas'], notSupported),
  '/v1/Event': labelSet(
    [
      'involvedObject.kind',
      'involvedObject.namespace',
      'involvedObject.name',
      'involvedObject.uid',
      'involvedObject.apiVersion',
      'involvedObject.resourceVersion',
      'involvedObject.fieldPath',
      'reason',
      'reportingComponent',
      'source',
      'type',
      'metadata.namespace',
      'metadata.name',
    ],
    notSupported,
  ),
  '/v1/Namespace': labelSet(['status.phase', 'metadata.name'], notSupported),
  '/v1/Secret': labelSet(['type', 'metadata.namespace', 'metadata.name'], notSupported),
  '/v1/Service': labelSet(['metadata.namespace', 'metadata.name', 'spec.clusterIP', 'spec.type'], notSupported),
  'apps/v1/ReplicaSet': labelSet(['metadata.name', 'metadata.namespace', 'status.replicas'], notSupported),
  'batch/v1/Job': jobLike('Job'),
  'batch/v1/CronJob': jobLike('CronJob'),
  'certificates.k8s.io/v1/CertificateSigningRequest': labelSet(['metadata.name', 'spec.signerName'], notSupported),
  'events.k8s.io/v1/Event': labelSet([], notSupported, eventsV1Renames),
};

export function fieldLabelConverterFor(group: string, version: string, kind: string): FieldLabelConverter {
  return converters[`${group}/${version}/${kind}` as KindKey] ?? defaultConverter;
}

// ---- the fields objects offer ----

type Obj = Record<string, unknown>;

function obj(v: unknown): Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {};
}

function str(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return '';
}

function num(v: unknown): string {
  return typeof v === 'number' ? String(Math.trunc(v)) : '0';
}

/** metadata.name always; metadata.namespace for namespaced kinds */
export function objectMetaFields(o: KubeObject, namespaced: boolean): Record<string, string> {
  const out: Record<string, string> = { 'metadata.name': o.metadata?.name ?? '' };
  if (namespaced) out['metadata.namespace'] = o.metadata?.namespace ?? '';
  return out;
}

type FieldsOf = (o: KubeObject) => Record<string, string>;

const specific: Partial<Record<ResourceKey, FieldsOf>> = {
  '/pods': (o) => {
    const spec = obj(o.spec);
    const status = obj(o.status);
    const ips = Array.isArray(status.podIPs) ? status.podIPs : [];
    return {
      'spec.nodeName': str(spec.nodeName),
      'spec.restartPolicy': str(spec.restartPolicy),
      'spec.schedulerName': str(spec.schedulerName),
      'spec.serviceAccountName': str(spec.serviceAccountName),
      'spec.hostNetwork': spec.hostNetwork === true ? 'true' : 'false',
      'status.phase': str(status.phase),
      'status.podIP': ips.length ? str(obj(ips[0]).ip) : '',
      'status.nominatedNodeName': str(status.nominatedNodeName),
    };
  },
  '/nodes': (o) => ({ 'spec.unschedulable': obj(o.spec).unschedulable === true ? 'true' : 'false' }),
  '/replicationcontrollers': (o) => ({ 'status.replicas': num(obj(o.status).replicas) }),
  'apps/replicasets': (o) => ({ 'status.replicas': num(obj(o.status).replicas) }),
  '/events': (o) => {
    const io = obj(o.involvedObject);
    return {
      'involvedObject.kind': str(io.kind),
      'involvedObject.namespace': str(io.namespace),
      'involvedObject.name': str(io.name),
      'involvedObject.uid': str(io.uid),
      'involvedObject.apiVersion': str(io.apiVersion),
      'involvedObject.resourceVersion': str(io.resourceVersion),
      'involvedObject.fieldPath': str(io.fieldPath),
      reason: str(o.reason),
      reportingComponent: str(o.reportingComponent),
      source: str(obj(o.source).component),
      type: str(o.type),
    };
  },
  '/namespaces': (o) => ({ 'status.phase': str(obj(o.status).phase) }),
  '/secrets': (o) => ({ type: str(o.type) }),
  '/services': (o) => ({ 'spec.clusterIP': str(obj(o.spec).clusterIP), 'spec.type': str(obj(o.spec).type) }),
  'batch/jobs': (o) => ({ 'status.successful': num(obj(o.status).succeeded) }),
  'certificates.k8s.io/certificatesigningrequests': (o) => ({ 'spec.signerName': str(obj(o.spec).signerName) }),
};

/** The selectable fields of a stored object of `<group>/<resource>`. */
export function selectableFieldsFor(group: string, resource: string, namespaced: boolean): (o: KubeObject) => FieldSet {
  const extra = specific[`${group}/${resource}` as ResourceKey];
  return (o) => ({ ...objectMetaFields(o, namespaced), ...(extra ? extra(o) : {}) });
}
