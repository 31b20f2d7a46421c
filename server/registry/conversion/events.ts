// core v1 Event <-> events.k8s.io/v1 Event. Both APIs share one storage (core Events); the
// newer API renames fields (involvedObject -> regarding, message -> note, ...). The field
// order and the always-present zero values are those kube-apiserver serializes.

import type { KubeObject } from '../../../storage/interface.js';
import { reorder, type JsonObject } from '../object.js';

const coreOrder = [
  'kind',
  'apiVersion',
  'metadata',
  'involvedObject',
  'reason',
  'message',
  'source',
  'firstTimestamp',
  'lastTimestamp',
  'count',
  'type',
  'eventTime',
  'series',
  'action',
  'related',
  'reportingComponent',
  'reportingInstance',
];

const eventsV1Order = [
  'kind',
  'apiVersion',
  'metadata',
  'eventTime',
  'series',
  'reportingController',
  'reportingInstance',
  'action',
  'reason',
  'regarding',
  'related',
  'note',
  'type',
  'deprecatedSource',
  'deprecatedFirstTimestamp',
  'deprecatedLastTimestamp',
  'deprecatedCount',
];

/** events.k8s.io name -> core name */
const renames: [string, string][] = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['reportingController', 'reportingComponent'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
];

function rename(obj: KubeObject, pairs: [string, string][]): KubeObject {
  const out: JsonObject = {};
  const map = new Map(pairs);
  for (const [k, v] of Object.entries(obj)) out[map.get(k) ?? k] = v;
  return out as KubeObject;
}

export function eventsV1ToCoreEvent(obj: KubeObject): KubeObject {
  return rename(obj, renames);
}

export function coreEventToEventsV1(obj: KubeObject): KubeObject {
  const out = rename(
    obj,
    renames.map(([a, b]) => [b, a]),
  );
  // fields always present in the events.k8s.io serialization
  if (out.eventTime === undefined) out.eventTime = null;
  if (out.regarding === undefined) out.regarding = {};
  if (out.deprecatedSource === undefined) out.deprecatedSource = {};
  if (out.deprecatedFirstTimestamp === undefined) out.deprecatedFirstTimestamp = null;
  if (out.deprecatedLastTimestamp === undefined) out.deprecatedLastTimestamp = null;
  if (out.reportingController === '') delete out.reportingController;
  if (out.reportingInstance === '') delete out.reportingInstance;
  return reorder(out as JsonObject, eventsV1Order) as KubeObject;
}

/** fields always present in the core v1 serialization */
export function normalizeCoreEvent(obj: KubeObject): KubeObject {
  if (obj.involvedObject === undefined) obj.involvedObject = {};
  if (obj.source === undefined) obj.source = {};
  if (obj.firstTimestamp === undefined) obj.firstTimestamp = null;
  if (obj.lastTimestamp === undefined) obj.lastTimestamp = null;
  if (obj.eventTime === undefined) obj.eventTime = null;
  if (obj.reportingComponent === undefined) obj.reportingComponent = '';
  if (obj.reportingInstance === undefined) obj.reportingInstance = '';
  return reorder(obj as JsonObject, coreOrder) as KubeObject;
}
