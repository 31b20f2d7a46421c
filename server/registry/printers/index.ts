// The columns of a resource whose descriptor names none (and of custom resources without
// printer columns): Name and Created At. The kubectl-familiar columns of the built-in
// resources are in core.ts, workloads.ts and others.ts, named by their descriptors.

import { rfc3339 } from '../object.js';
import type { TableConvertor } from './table-convertor.js';
import { col, convertor, nameOf } from './helpers.js';

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
