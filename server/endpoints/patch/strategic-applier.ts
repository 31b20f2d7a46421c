// The `application/strategic-merge-patch+json` PATCH type. Built-in kinds patch with the patch
// markers of their schema; a resource that is not built-in (a custom resource) is refused with
// 415, as kube-apiserver refuses strategic merge patch for custom resources.
//
// kube-apiserver decodes the patch inside the update, after reading the live object, so a
// malformed patch of a missing object is a 404: decoding errors are kept and thrown by apply.

import type { KubeObject } from '../../../storage/interface.js';
import { loadSchemas, type SchemaRegistry } from '../../apis/schema.js';
import { errors, StatusError } from '../../machinery/status.js';
import { duplicateFields } from '../duplicate-fields.js';
import { apiVersionOf } from '../scope.js';
import { APPLY_PATCH_TYPE, JSON_PATCH_TYPE, MERGE_PATCH_TYPE, STRATEGIC_MERGE_PATCH_TYPE } from './appliers.js';
import type { Json } from '../../machinery/json-patch.js';
import { applyStrategicMergePatch } from './strategic-merge.js';
import { StrategicMergePatchError } from './strategic-errors.js';
import { goFormat, goTypeOf, isObject, type JsonObject } from './strategic-go.js';
import { patchSchemaOf, unknownPatchSchema, type PatchSchema } from './strategic-schema.js';
import type { PatchApplier, PatchTarget } from './types.js';
import { addWarnings } from '../../machinery/warnings.js';

/** a parsed patch body: the document, or why it is not one */
interface ParsedPatch {
  doc?: JsonObject;
  error?: StatusError;
  /** paths of members given twice (JSON.parse kept the last) */
  duplicates: string[];
}

/** the media types kube-apiserver accepts for a custom resource's PATCH */
const CUSTOM_RESOURCE_PATCH_TYPES = [JSON_PATCH_TYPE, MERGE_PATCH_TYPE, APPLY_PATCH_TYPE];

function parsePatch(body: Buffer): ParsedPatch {
  const text = body.toString('utf8');
  let value: Json;
  try {
    value = JSON.parse(text) as Json;
  } catch (err) {
    const message = text.trim() === '' ? 'unexpected end of JSON input' : `invalid JSON document: ${(err as Error).message}`;
    return { error: errors.badRequest(message), duplicates: [] };
  }
  // JSON null decodes to an empty patch in Go
  if (value === null) return { doc: {}, duplicates: [] };
  if (!isObject(value)) {
    const goName = { slice: 'array', string: 'string', bool: 'bool', int64: 'number', float64: 'number' } as const;
    const t = goTypeOf(value) as keyof typeof goName;
    return {
      error: errors.badRequest(`json: cannot unmarshal ${goName[t]} into Go value of type map[string]interface {}`),
      duplicates: [],
    };
  }
  return { doc: value, duplicates: duplicateFields(text) };
}

/** kube-apiserver's 422 about a patch that did not make an object, naming the patch as Go prints it */
function invalidPatch(patch: JsonObject, why: string): StatusError {
  const value = JSON.stringify(goFormat(patch));
  return new StatusError(422, 'Invalid', ` "" is invalid: patch: Invalid value: ${value}: ${why}`, {
    causes: [{ reason: 'FieldValueInvalid', message: `Invalid value: ${value}: ${why}`, field: 'patch' }],
  });
}

function statusOf(err: StrategicMergePatchError): StatusError {
  switch (err.errorClass) {
    case 'BadRequest':
      return errors.badRequest(err.message);
    case 'Unprocessable':
      return errors.unprocessable();
    case 'Internal':
      // a plain Go error: kube-apiserver answers 500 with its text and no reason
      return new StatusError(500, '', err.message);
  }
}

export interface StrategicApplierOptions {
  schemas?: SchemaRegistry;
}

export function createStrategicMergePatchApplier(opts: StrategicApplierOptions = {}): PatchApplier {
  const schemas = opts.schemas ?? loadSchemas();
  const schemaCache = new Map<string, PatchSchema>();

  /** the patch schema for the request's kind; undefined for a resource that is not built-in */
  const schemaFor = (target: PatchTarget): PatchSchema | undefined => {
    const { group, version, kind } = target.kind;
    const cacheKey = `${group}/${version}/${kind}`;
    const cached = schemaCache.get(cacheKey);
    if (cached) return cached;
    const node = schemas.schemaFor(group, version, kind);
    let schema: PatchSchema | undefined;
    if (node) schema = patchSchemaOf(schemas, node);
    else if (schemas.definition(target.resource.info.definition)) schema = unknownPatchSchema;
    if (schema) schemaCache.set(cacheKey, schema);
    return schema;
  };

  return {
    createsMissing: false,
    isApply: false,
    parse: parsePatch,
    apply(current, parsed, target) {
      const schema = schemaFor(target);
      if (!schema) {
        throw errors.unsupportedMediaType(
          `the body of the request was in an unknown format - accepted media types include: ${CUSTOM_RESOURCE_PATCH_TYPES.join(', ')}`,
        );
      }
      const { group, resource } = target.resource.info;
      if (!current) throw errors.notFound({ group, resource, name: target.name });
      const { doc, error, duplicates } = parsed as ParsedPatch;
      if (error || !doc) throw error ?? errors.badRequest('invalid JSON document');
      // a fresh copy per attempt: a conflicting write makes the registry apply again
      const patch = structuredClone(doc);

      let result: JsonObject;
      try {
        result = applyStrategicMergePatch(current as unknown as JsonObject, patch, schema);
      } catch (err) {
        if (err instanceof StrategicMergePatchError) throw statusOf(err);
        throw err;
      }

      const strictErrors = duplicates.map((p) => `duplicate field ${JSON.stringify(p)}`);
      if (strictErrors.length > 0) {
        if (target.ctx.fieldValidation === 'Strict') throw invalidPatch(patch, `strict decoding error: ${strictErrors.join(', ')}`);
        if (target.ctx.fieldValidation === 'Warn') {
          // once, however often a conflicting write makes the patch apply again
          addWarnings(target.ctx.warnings, strictErrors);
        }
      }
      if (result.metadata !== undefined && result.metadata !== null && !isObject(result.metadata)) {
        throw invalidPatch(
          patch,
          `json: cannot unmarshal ${goTypeOf(result.metadata) === 'slice' ? 'array' : typeof result.metadata} into Go struct field ${target.kind.kind}.metadata of type v1.ObjectMeta`,
        );
      }
      // the result is decoded into the kind's Go type: its type meta is the endpoint's
      const obj = result as unknown as KubeObject;
      obj.apiVersion = apiVersionOf(target.kind);
      obj.kind = target.kind.kind;
      if (!isObject(result.metadata)) obj.metadata = {};
      return reorderTypeMeta(obj);
    },
  };
}

/** kind and apiVersion first, as every object is written */
function reorderTypeMeta(obj: KubeObject): KubeObject {
  const { kind, apiVersion, ...rest } = obj;
  return { kind, apiVersion, ...rest } as KubeObject;
}

/** the PATCH types this module adds, for the API handler's `patchTypes` */
export function strategicPatchTypes(opts: StrategicApplierOptions = {}): Map<string, PatchApplier> {
  return new Map([[STRATEGIC_MERGE_PATCH_TYPE, createStrategicMergePatchApplier(opts)]]);
}
