// Version conversion. Objects are stored in one version per resource and converted to and
// from the version a request speaks. Most kinds have the same shape in every served version
// (only apiVersion changes); the exceptions register a pair of functions here.

import type { KubeObject } from '../../../storage/interface.js';
import type { ResourceInfo } from '../../apis/types.js';
import { apiVersionOf, clone, orderObject } from '../object.js';
import { coreEventToEventsV1, eventsV1ToCoreEvent, normalizeCoreEvent } from './events.js';
import { hpaV1ToV2, hpaV2ToV1 } from './hpa.js';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export function gvkString(g: GroupVersionKind): string {
  return `${g.group}/${g.version}/${g.kind}`;
}

/** the version (and kind) objects of a resource are stored in */
export function storageKindOf(info: Pick<ResourceInfo, 'group' | 'storageVersion' | 'kind' | 'resource'>): GroupVersionKind {
  if (info.group === 'events.k8s.io' && info.resource === 'events') return { group: '', version: 'v1', kind: 'Event' };
  return { group: info.group, version: info.storageVersion, kind: info.kind };
}

export function requestKindOf(info: Pick<ResourceInfo, 'group' | 'version' | 'kind'>): GroupVersionKind {
  return { group: info.group, version: info.version, kind: info.kind };
}

/** Converts a (cloned) object between two shapes; apiVersion/kind are set by the caller. */
type ShapeConverter = (obj: KubeObject) => KubeObject;

const converters = new Map<string, ShapeConverter>([
  ['events.k8s.io/v1/Event -> /v1/Event', eventsV1ToCoreEvent],
  ['/v1/Event -> events.k8s.io/v1/Event', coreEventToEventsV1],
  ['autoscaling/v1/HorizontalPodAutoscaler -> autoscaling/v2/HorizontalPodAutoscaler', hpaV1ToV2],
  ['autoscaling/v2/HorizontalPodAutoscaler -> autoscaling/v1/HorizontalPodAutoscaler', hpaV2ToV1],
]);

/** shape fixes every object of a kind gets on the way out, whatever the version */
const outputNormalizers = new Map<string, ShapeConverter>([['/v1/Event', normalizeCoreEvent]]);
/** the kinds of outputNormalizers and of converters: every other kind (nearly every object
 *  read or written) is told apart without building a key */
const convertedKinds = new Set(
  [...converters.keys(), ...outputNormalizers.keys()].flatMap((key) => key.split(' -> ').map((gvk) => gvk.slice(gvk.lastIndexOf('/') + 1))),
);

function sameKind(a: GroupVersionKind, b: GroupVersionKind): boolean {
  return a.group === b.group && a.version === b.version && a.kind === b.kind;
}

function normalizerOf(to: GroupVersionKind): ShapeConverter | undefined {
  return convertedKinds.has(to.kind) ? outputNormalizers.get(gvkString(to)) : undefined;
}

function converterOf(from: GroupVersionKind, to: GroupVersionKind): ShapeConverter | undefined {
  if (sameKind(from, to) || !convertedKinds.has(from.kind)) return undefined;
  return converters.get(`${gvkString(from)} -> ${gvkString(to)}`);
}

/** is an object read as `to` its stored form in `from`, with no change beyond kind and
 *  apiVersion and kube's field order? */
export function readsAsStored(from: GroupVersionKind, to: GroupVersionKind): boolean {
  return sameKind(from, to) && normalizerOf(to) === undefined;
}

/** `obj` as `to` for a reader that changes nothing in it. Between kinds of one shape only the
 *  top level is a new object (the rest, metadata included when its members are in kube's
 *  order, is shared with `obj`, which stays as it was); a conversion that rewrites the shape
 *  works on a copy. */
export function convertForReading(obj: KubeObject, from: GroupVersionKind, to: GroupVersionKind): KubeObject {
  return convertObject(obj, from, to, converterOf(from, to) === undefined && normalizerOf(to) === undefined);
}

/** Returns a copy of `obj` (in `from`) converted to `to`, with kind/apiVersion set and kube's
 *  field order. With `owned`, the caller hands `obj` over (a freshly decoded object nobody
 *  else holds): it is converted without a deep copy and must not be used afterwards. */
export function convertObject(obj: KubeObject, from: GroupVersionKind, to: GroupVersionKind, owned = false): KubeObject {
  let out = owned ? obj : clone(obj);
  const fn = converterOf(from, to);
  if (fn) out = fn(out);
  const norm = normalizerOf(to);
  if (norm) out = norm(out);
  const apiVersion = apiVersionOf(to.group, to.version);
  // a copy of our own that already says what it is needs no new top level (an owned object
  // may be shared by a reader: it is never written to here)
  if (out !== obj && out.kind === to.kind && out.apiVersion === apiVersion) return orderObject(out);
  const typed: KubeObject = { kind: to.kind, apiVersion, ...out };
  typed.kind = to.kind;
  typed.apiVersion = apiVersion;
  return orderObject(typed);
}
