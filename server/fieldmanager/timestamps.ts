// A write that changes nothing but the times in managedFields keeps the stored times, so that
// it stays a no-op (same bytes, same resourceVersion), as kube-apiserver's
// IgnoreManagedFieldsTimestampsTransformer arranges.

import type { KubeObject } from '../../storage/interface.js';
import { isMap, valuesEqual, type Json, type JsonMap } from './value.js';

function entries(obj: KubeObject): JsonMap[] | undefined {
  const mf = (obj.metadata as JsonMap | undefined)?.managedFields;
  return Array.isArray(mf) && mf.every((e) => isMap(e as Json)) ? (mf as JsonMap[]) : undefined;
}

function withoutTime(e: JsonMap): JsonMap {
  const { time: _t, ...rest } = e;
  return rest;
}

function withoutManagedFields(obj: KubeObject): Json {
  const { managedFields: _m, ...meta } = obj.metadata as JsonMap;
  return { ...(obj as unknown as JsonMap), metadata: meta } as Json;
}

/** gives `next` the managedFields of `current` when only their times differ (mutates next) */
export function keepManagedFieldsTimes(next: KubeObject, current: KubeObject): void {
  const after = entries(next);
  const before = entries(current);
  if (!after || !before || after.length !== before.length || after.length === 0) return;
  if (after.every((e, i) => e.time === before[i].time)) return;
  if (!after.every((e, i) => valuesEqual(withoutTime(e), withoutTime(before[i])))) return;
  if (!valuesEqual(withoutManagedFields(next), withoutManagedFields(current))) return;
  (next.metadata as JsonMap).managedFields = structuredClone(before);
}
