// The `meta.k8s.io` Table form of objects and lists (what `kubectl get` asks for), and the
// metadata-only forms (PartialObjectMetadata[List]) informers of the metadata client use.

import type { KubeObject, ObjectMeta } from '../../storage/interface.js';
import type { ListObject } from '../registry/rest.js';
import { errors } from '../machinery/status.js';
import type { TableConvertor } from '../registry/printers/table-convertor.js';

export type { TableColumnDefinition, TableConvertor, TableRowCondition } from '../registry/printers/table-convertor.js';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface TableOptions {
  includeObject: IncludeObject;
  /** leave out columnDefinitions (every watch event after the first) */
  noHeaders: boolean;
}

export function parseTableOptions(query: URLSearchParams): TableOptions {
  const v = query.get('includeObject') ?? '';
  if (v !== '' && v !== 'None' && v !== 'Metadata' && v !== 'Object') {
    throw errors.badRequest(
      `Unable to convert to Table as requested: includeObject: Invalid value: ${JSON.stringify(v)}: must be 'Metadata', 'Object', 'None', or empty`,
    );
  }
  return { includeObject: (v || 'Metadata') as IncludeObject, noHeaders: false };
}

export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

export function isList(v: KubeObject | ListObject): v is ListObject {
  return Array.isArray((v as ListObject).items);
}

export function partialObjectMetadata(obj: KubeObject, version = 'v1'): KubeObject {
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: obj.metadata ?? {} };
}

export function partialObjectMetadataList(list: ListObject, version = 'v1'): Record<string, unknown> {
  return {
    kind: 'PartialObjectMetadataList',
    apiVersion: `meta.k8s.io/${version}`,
    metadata: listMeta(list),
    items: list.items.map((o) => partialObjectMetadata(o, version)),
  };
}

/** ListMeta in kube-apiserver's field order, empty fields left out */
export function listMeta(list: ListObject): Record<string, unknown> {
  const m: Record<string, unknown> = {};
  const src = list.metadata ?? { resourceVersion: '' };
  if (src.resourceVersion) m.resourceVersion = src.resourceVersion;
  if (src.continue) m.continue = src.continue;
  if (src.remainingItemCount !== undefined && src.remainingItemCount !== null) m.remainingItemCount = src.remainingItemCount;
  return m;
}

function hasInitialEventsEnd(meta: ObjectMeta | undefined): boolean {
  return meta?.annotations?.[INITIAL_EVENTS_END_ANNOTATION] === 'true';
}

/** the kind and apiVersion a row's whole object is in (the endpoint's) */
export interface RowObjectKind {
  apiVersion: string;
  kind: string;
}

function rowObject(obj: KubeObject, opts: TableOptions, version: string, objectKind: RowObjectKind | undefined): unknown {
  if (opts.includeObject === 'None') return null;
  if (opts.includeObject === 'Object' && !hasInitialEventsEnd(obj.metadata)) return withKind(obj, objectKind);
  return partialObjectMetadata(obj, version);
}

// kube encodes each row's object on its own, so it always says what it is; list items here
// may carry no kind (a list states it once), and clients such as kubectl's --sort-by decode
// the rows by it
function withKind(obj: KubeObject, objectKind: RowObjectKind | undefined): KubeObject {
  if (!objectKind || (obj.kind && obj.apiVersion)) return obj;
  const { kind: _kind, apiVersion: _apiVersion, ...rest } = obj;
  return { kind: objectKind.kind, apiVersion: objectKind.apiVersion, ...rest } as KubeObject;
}

/** Converts an object or a list to a Table of the given meta.k8s.io version. */
export function toTable(
  source: KubeObject | ListObject,
  convertor: TableConvertor,
  opts: TableOptions,
  version = 'v1',
  now = Date.now(),
  objectKind?: RowObjectKind,
): Record<string, unknown> {
  const items = isList(source) ? source.items : [source];
  const rows = items.map((obj) => {
    const row: Record<string, unknown> = { cells: convertor.cells(obj, now) };
    const conditions = convertor.conditions?.(obj);
    if (conditions && conditions.length > 0) row.conditions = conditions;
    row.object = rowObject(obj, opts, version, objectKind);
    return row;
  });
  const metadata = isList(source)
    ? listMeta(source)
    : source.metadata?.resourceVersion
      ? { resourceVersion: source.metadata.resourceVersion }
      : {};
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${version}`,
    metadata,
    columnDefinitions: opts.noHeaders ? null : convertor.columns.map((c) => ({ ...c })),
    rows,
  };
}
