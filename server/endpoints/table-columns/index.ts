// Which columns a resource is shown with: the kubectl-familiar ones for built-in resources,
// Name and Created At for everything else.

import { rfc3339 } from '../../registry/object.js';
import type { TableConvertor } from '../table.js';
import { coreConvertors } from './core.js';
import { col, convertor, nameOf } from './helpers.js';
import { otherConvertors } from './others.js';
import { appsConvertors, autoscalingConvertors, batchConvertors, policyConvertors, scaleConvertor } from './workloads.js';

const BY_GROUP: Record<string, Record<string, TableConvertor>> = {
  '': coreConvertors,
  apps: appsConvertors,
  batch: batchConvertors,
  autoscaling: autoscalingConvertors,
  policy: policyConvertors,
  ...otherConvertors,
};

/** Name and Created At (RFC 3339, UTC) */
export const defaultTableConvertor: TableConvertor = convertor(
  [
    col('Name', 'string', 'The name of the object, unique within its namespace (or the cluster).', { format: 'name' }),
    col('Created At', 'date', 'When the object was created (metadata.creationTimestamp).'),
  ],
  (obj) => [nameOf(obj), createdAt(obj.metadata?.creationTimestamp)],
);

function createdAt(ts: unknown): string {
  const t = typeof ts === 'string' ? Date.parse(ts) : NaN;
  // a zero time prints as Go's zero time, as kube-apiserver's default convertor does
  if (Number.isNaN(t)) return '0001-01-01T00:00:00Z';
  return rfc3339(new Date(t));
}

/** the convertor for a group/resource (and subresource: `scale` has its own) */
export function builtinTableConvertor(group: string, resource: string, subresource?: string): TableConvertor {
  if (subresource === 'scale') return scaleConvertor;
  return BY_GROUP[group]?.[resource] ?? defaultTableConvertor;
}
