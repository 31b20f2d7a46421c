// Table output of custom resources: Name, then the version's additionalPrinterColumns (kube
// renders `date` columns as ages), or Name and Age when the version declares none.

import type { KubeObject } from '../../storage/interface.js';
import { AGE, col, NAME, since } from '../registry/printers/helpers.js';
import type { TableConvertor } from '../registry/printers/table-convertor.js';
import type { PrinterColumn } from '../registry/apiextensions/definition.js';

/** the value at a simple JSONPath (`.spec.a.b`, `.spec.list[0].x`, `{.status.n}`) */
export function valueAtJsonPath(obj: unknown, jsonPath: string): unknown {
  let p = jsonPath.trim();
  if (p.startsWith('{') && p.endsWith('}')) p = p.slice(1, -1);
  const steps: (string | number)[] = [];
  for (const m of p.matchAll(/\.([^.[\]]+)|\[(\d+)\]|\['([^']+)'\]/g)) {
    if (m[1] !== undefined) steps.push(m[1]);
    else if (m[2] !== undefined) steps.push(Number(m[2]));
    else if (m[3] !== undefined) steps.push(m[3]);
  }
  let cur: unknown = obj;
  for (const s of steps) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[s];
  }
  return cur;
}

function cell(c: PrinterColumn, v: unknown, now: number): unknown {
  if (v === undefined || v === null) return null;
  switch (c.type) {
    case 'date':
      return since(v, now);
    case 'integer':
      return typeof v === 'number' ? Math.trunc(v) : null;
    case 'number':
      return typeof v === 'number' ? v : null;
    case 'boolean':
      return typeof v === 'boolean' ? v : null;
    case 'string':
      return typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
    default:
      return typeof v === 'object' ? JSON.stringify(v) : v;
  }
}

export function customResourceTable(columns: PrinterColumn[] | undefined): TableConvertor {
  if (!columns || columns.length === 0) {
    return { columns: [NAME, AGE], cells: (obj, now) => [obj.metadata?.name ?? '', since(obj.metadata?.creationTimestamp, now)] };
  }
  const defs = [
    NAME,
    ...columns.map((c) =>
      col(c.name, c.type === 'date' ? 'date' : c.type, c.description ?? '', { priority: c.priority ?? 0, format: c.format ?? '' }),
    ),
  ];
  return {
    columns: defs,
    cells: (obj: KubeObject, now: number) => [
      obj.metadata?.name ?? '',
      ...columns.map((c) => cell(c, valueAtJsonPath(obj, c.jsonPath), now)),
    ],
  };
}
