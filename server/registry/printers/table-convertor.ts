// What a resource's Table (`kubectl get`) is made of: its columns, and each object's cells
// and row conditions. Each resource's descriptor names its convertor; the endpoints turn
// objects and lists into Tables with it.

import type { KubeObject } from '../../../storage/interface.js';

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
