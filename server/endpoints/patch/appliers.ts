// The built-in PATCH content types: JSON patch and JSON merge patch, applied to the object in
// the request's version; the result must stay an object of the same kind.

import type { KubeObject } from '../../../storage/interface.js';
import { jsonTooDeep, MAX_JSON_PATCH_OPERATIONS } from '../../limits/decode-limits.js';
import { errors, StatusError } from '../../machinery/status.js';
import { apiVersionOf } from '../scope.js';
import { applyJsonPatch, decodeJsonPatch, JsonPatchError, type Json, type JsonPatchOperation } from '../../machinery/json-patch.js';
import { applyMergePatch, MergePatchError } from './merge-patch.js';
import type { PatchApplier, PatchTarget } from './types.js';

export const JSON_PATCH_TYPE = 'application/json-patch+json';
export const MERGE_PATCH_TYPE = 'application/merge-patch+json';
export const STRATEGIC_MERGE_PATCH_TYPE = 'application/strategic-merge-patch+json';
export const APPLY_PATCH_TYPE = 'application/apply-patch+yaml';
/** server-side apply with a CBOR configuration (only with the CBORServingAndStorage gate) */
export const APPLY_CBOR_PATCH_TYPE = 'application/apply-patch+cbor';

function parseJson(body: Buffer): Json {
  // the caller words it as kube does (Go's scanner stops at its depth limit)
  if (jsonTooDeep(body)) throw errors.badRequest('invalid JSON patch');
  try {
    return JSON.parse(body.toString('utf8')) as Json;
  } catch {
    throw errors.badRequest('invalid JSON patch');
  }
}

/** the patched document as an object of the endpoint's kind, or the 422 kube-apiserver gives */
function asPatchedObject(patched: Json, target: PatchTarget): KubeObject {
  const invalid = (why: string) =>
    new StatusError(422, 'Invalid', ` "" is invalid: patch: Invalid value: ${JSON.stringify(JSON.stringify(patched))}: ${why}`, {
      causes: [
        { reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(JSON.stringify(patched))}: ${why}`, field: 'patch' },
      ],
    });
  if (patched === null || typeof patched !== 'object' || Array.isArray(patched)) {
    throw invalid(
      `json: cannot unmarshal ${Array.isArray(patched) ? 'array' : typeof patched} into Go value of type map[string]interface {}`,
    );
  }
  const obj = patched as unknown as KubeObject;
  const expectedApiVersion = apiVersionOf(target.kind);
  if (obj.kind !== undefined && obj.kind !== target.kind.kind) {
    throw invalid(`Object 'Kind' is ${JSON.stringify(obj.kind)}, expected ${JSON.stringify(target.kind.kind)}`);
  }
  if (obj.apiVersion !== undefined && obj.apiVersion !== expectedApiVersion) {
    throw invalid(
      `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${expectedApiVersion})`,
    );
  }
  if (obj.metadata === undefined || obj.metadata === null) obj.metadata = {};
  if (typeof obj.metadata !== 'object' || Array.isArray(obj.metadata)) {
    throw invalid('json: cannot unmarshal into Go struct field .metadata of type v1.ObjectMeta');
  }
  return obj;
}

export const jsonPatchApplier: PatchApplier = {
  createsMissing: false,
  isApply: false,
  parse(body) {
    const doc = parseJson(body);
    let ops: JsonPatchOperation[];
    try {
      ops = decodeJsonPatch(doc);
    } catch (err) {
      throw errors.badRequest((err as Error).message);
    }
    if (ops.length > MAX_JSON_PATCH_OPERATIONS) {
      throw errors.tooLarge(`The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${ops.length}`);
    }
    return ops;
  },
  apply(current, patch, target) {
    if (!current) throw errors.notFound({ group: target.resource.info.group, resource: target.resource.info.resource, name: target.name });
    try {
      const patched = applyJsonPatch(current as unknown as Json, patch as JsonPatchOperation[]);
      return asPatchedObject(patched, target);
    } catch (err) {
      // kube-apiserver does not say which operation failed
      if (err instanceof JsonPatchError) throw errors.unprocessable();
      throw err;
    }
  },
};

export const mergePatchApplier: PatchApplier = {
  createsMissing: false,
  isApply: false,
  parse(body) {
    const doc = parseJson(body);
    if (doc === null || typeof doc !== 'object') throw errors.badRequest('Invalid JSON Patch');
    return doc;
  },
  apply(current, patch, target) {
    if (!current) throw errors.notFound({ group: target.resource.info.group, resource: target.resource.info.resource, name: target.name });
    try {
      return asPatchedObject(applyMergePatch(current as unknown as Json, patch as Json), target);
    } catch (err) {
      if (err instanceof MergePatchError) throw errors.badRequest(err.message);
      throw err;
    }
  },
};

export function builtinPatchTypes(): Map<string, PatchApplier> {
  return new Map([
    [JSON_PATCH_TYPE, jsonPatchApplier],
    [MERGE_PATCH_TYPE, mergePatchApplier],
  ]);
}
