// Building blocks of the kubectl-familiar columns: ages as kubectl prints them, label and
// selector strings, and safe readers of untyped object fields.

import type { KubeObject } from '../../../storage/interface.js';
import { valueAt } from '../strategy.js';
import type { TableColumnDefinition, TableConvertor, TableRowCondition } from './table-convertor.js';

export type Obj = Record<string, unknown>;

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

export function wide(name: string, type: string, description: string): TableColumnDefinition {
  return col(name, type, description, { priority: 1 });
}

/** a TableConvertor from columns and a row function */
export function convertor(
  columns: TableColumnDefinition[],
  cells: (obj: KubeObject, now: number) => unknown[],
  conditions?: (obj: KubeObject) => TableRowCondition[] | undefined,
): TableConvertor {
  return { columns, cells, conditions };
}

/** reads a dotted path of an untyped object */
export function get(obj: unknown, path: string): unknown {
  return valueAt(obj, ...path.split('.'));
}

export function str(obj: unknown, path: string): string {
  const v = get(obj, path);
  return typeof v === 'string' ? v : '';
}

export function optStr(obj: unknown, path: string): string | undefined {
  const v = get(obj, path);
  return typeof v === 'string' ? v : undefined;
}

export function int(obj: unknown, path: string): number {
  const v = get(obj, path);
  return typeof v === 'number' ? Math.trunc(v) : 0;
}

export function optInt(obj: unknown, path: string): number | undefined {
  const v = get(obj, path);
  return typeof v === 'number' ? Math.trunc(v) : undefined;
}

export function bool(obj: unknown, path: string): boolean {
  return get(obj, path) === true;
}

export function list(obj: unknown, path: string): Obj[] {
  const v = get(obj, path);
  return Array.isArray(v) ? (v.filter((x) => x !== null && typeof x === 'object') as Obj[]) : [];
}

export function strings(obj: unknown, path: string): string[] {
  const v = get(obj, path);
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

export function record(obj: unknown, path: string): Record<string, unknown> {
  const v = get(obj, path);
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

export function count(obj: unknown, path: string): number {
  const v = get(obj, path);
  if (Array.isArray(v)) return v.length;
  if (v !== null && typeof v === 'object') return Object.keys(v).length;
  return 0;
}

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

export function age(obj: KubeObject, now: number): string {
  return since(obj.metadata?.creationTimestamp, now);
}

export function nameOf(obj: KubeObject): string {
  return obj.metadata?.name ?? '';
}

/** `k=v,k2=v2` sorted by key, `<none>` when empty */
export function formatLabels(labels: Record<string, unknown>): string {
  const keys = Object.keys(labels).sort();
  if (keys.length === 0) return '<none>';
  return keys.map((k) => `${k}=${String(labels[k])}`).join(',');
}

/** a metav1.LabelSelector as a selector string ('' for everything or nothing) */
export function labelSelectorString(selector: unknown): string {
  if (selector === null || selector === undefined || typeof selector !== 'object') return '';
  const reqs: { key: string; text: string }[] = [];
  for (const [k, v] of Object.entries(record(selector, 'matchLabels'))) reqs.push({ key: k, text: `${k}=${String(v)}` });
  for (const e of list(selector, 'matchExpressions')) {
    const key = typeof e.key === 'string' ? e.key : '';
    const values = Array.isArray(e.values) ? (e.values as unknown[]).map(String).sort() : [];
    switch (e.operator) {
      case 'In':
        reqs.push({ key, text: `${key} in (${values.join(',')})` });
        break;
      case 'NotIn':
        reqs.push({ key, text: `${key} notin (${values.join(',')})` });
        break;
      case 'Exists':
        reqs.push({ key, text: key });
        break;
      case 'DoesNotExist':
        reqs.push({ key, text: `!${key}` });
        break;
      default:
        return '<error>';
    }
  }
  return reqs
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((r) => r.text)
    .join(',');
}

/** FormatLabelSelector: `<none>` for an empty selector */
export function formatLabelSelector(selector: unknown): string {
  const s = labelSelectorString(selector);
  return s === '' ? '<none>' : s;
}

/** container names and images, comma-joined */
export function containerCells(containers: Obj[]): [string, string] {
  return [
    containers.map((c) => (typeof c.name === 'string' ? c.name : '')).join(','),
    containers.map((c) => (typeof c.image === 'string' ? c.image : '')).join(','),
  ];
}

export const CONTAINERS = wide('Containers', 'string', 'Names of each container in the template.');
export const IMAGES = wide('Images', 'string', 'Images referenced by each container in the template.');
export const SELECTOR = wide('Selector', 'string', 'The label selector of the pods this object manages.');

/** "a,b,c + N more..." as kubectl shortens long lists */
export function listWithMore(items: string[], max: number, emptyText = '<unset>'): string {
  const shown = items.slice(0, max).join(',');
  if (items.length > max) return `${shown} + ${items.length - max} more...`;
  return shown === '' ? emptyText : shown;
}

/** IPv6 addresses in host:port need brackets */
export function joinHostPort(host: string, port: number | string): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
