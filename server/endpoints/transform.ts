// The response form a client asked for: the object itself, a Table, or metadata only.

import type { KubeObject } from '../../storage/interface.js';
import type { GroupVersionKind } from '../apis/types.js';
import type { ListObject } from '../registry/rest.js';
import type { OutputMediaType } from '../request/negotiation.js';
import { errors, StatusError } from '../machinery/status.js';
import type { Scope } from './scope.js';
import {
  isList,
  parseTableOptions,
  partialObjectMetadata,
  partialObjectMetadataList,
  toTable,
  type RowObjectKind,
  type TableOptions,
} from './table.js';

function notAcceptable(message: string): StatusError {
  return new StatusError(406, 'NotAcceptable', message);
}

function isStatus(obj: unknown): boolean {
  return obj !== null && typeof obj === 'object' && (obj as { kind?: unknown }).kind === 'Status';
}

/** Table options of the request when it asked for a Table (validated up front) */
export function tableOptionsFor(scope: Scope, media: OutputMediaType): TableOptions | undefined {
  return media.convert?.kind === 'Table' ? parseTableOptions(scope.state.query) : undefined;
}

/** Transforms a result (object or list) into what the negotiated media type asks for. */
export function transformResult(
  scope: Scope,
  media: OutputMediaType,
  result: KubeObject | ListObject,
  tableOptions?: TableOptions,
): unknown {
  if (isStatus(result)) return result;
  const convert = media.convert;
  if (!convert) {
    if (isList(result) && result.items === undefined) return { ...result, items: [] };
    return result;
  }
  switch (convert.kind) {
    case 'PartialObjectMetadata':
      if (isList(result)) {
        throw notAcceptable(`you requested PartialObjectMetadata, but the requested object is a list (*${apiTypeName(result.kind)})`);
      }
      return partialObjectMetadata(result, convert.version);
    case 'PartialObjectMetadataList':
      if (!isList(result)) {
        throw notAcceptable(
          `you requested PartialObjectMetadataList, but the requested object is not a list (*${apiTypeName(result.kind)})`,
        );
      }
      return partialObjectMetadataList(result, convert.version);
    case 'Table': {
      const convertor = scope.config.tableConvertorFor(scope.resource);
      if (!convertor) {
        const r = scope.resource.info;
        throw notAcceptable(
          `the resource ${r.group ? `${r.resource}.${r.group}` : r.resource} does not support being converted to a Table`,
        );
      }
      return toTable(
        result,
        convertor,
        tableOptions ?? parseTableOptions(scope.state.query),
        convert.version,
        Date.now(),
        rowObjectKind(scope.kind),
      );
    }
    default:
      throw errors.notAcceptable('only the following media types are accepted: application/json, application/yaml');
  }
}

export function rowObjectKind(gvk: GroupVersionKind): RowObjectKind {
  return { apiVersion: gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version, kind: gvk.kind };
}

function apiTypeName(kind: string | undefined): string {
  return `v1.${kind ?? 'Object'}`;
}
