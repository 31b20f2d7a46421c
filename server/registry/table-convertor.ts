// How a resource is shown as a meta.k8s.io Table (kube's rest.TableConvertor), and the two
// columns every table starts from: Name, and Age as kubectl prints ages. The endpoints turn
// objects into Tables with a resource's convertor (server/endpoints/table.ts); the built-in
// resources' columns are in server/endpoints/table-columns, custom resources' in server/crd.

import type { KubeObject } from '../../storage/interface.js';

export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface TableRowCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** How one resource is shown as a Table. */
export interface TableConvertor {
  readonly columns: readonly TableColumnDefinition[];
  /** one object's cells, in column order; `now` is ms since epoch (ages are relative to it) */
  cells(obj: KubeObject, now: number): unknown[];
  /** row conditions (e.g. a completed pod) */
  conditions?(obj: KubeObject): TableRowCondition[] | undefined;
}

export function col(
  name: string,
  type: string,
  description: string,
  opts: { priority?: number; format?: string } = {},
): TableColumnDefinition {
  return { name, type, format: opts.format ?? '', description, priority: opts.priority ?? 0 };
}

export const NAME = col('Name', 'string', 'The name of the object, unique within its namespace (or the cluster).', {
  format: 'name',
});
export const AGE = col('Age', 'string', 'How long ago the object was created (from metadata.creationTimestamp).');

/** kubectl's HumanDuration: about 2-3 significant figures */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    const y = Math.trunc(hours / 24 / 365);
    return dy === 0 ? `${y}y` : `${y}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** the age of a timestamp, `<unknown>` when unset */
export function since(timestamp: unknown, now: number): string {
  if (typeof timestamp !== 'string' || timestamp === '') return '<unknown>';
  const t = Date.parse(timestamp);
  if (Number.isNaN(t)) return '<unknown>';
  return humanDuration(now - t);
}
