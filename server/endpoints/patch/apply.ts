// The `application/apply-patch+yaml` PATCH type: server-side apply. The body (YAML, or JSON,
// which is YAML too) is the applier's configuration; the field manager of the endpoint merges
// it into the live object (or an empty one: apply creates) and records the applier's
// ownership. The registry then records no Update entry for the write.
//
// As in kube-apiserver, repeated keys are looked for only after the apply succeeded: an error
// with fieldValidation=Strict, warnings with Warn.

import { fieldManagers, type FieldManagers } from '../../fieldmanager/field-managers.js';
import type { JsonMap } from '../../fieldmanager/value.js';
import { errors, StatusError } from '../../machinery/status.js';
import { decodeYamlBuffer } from '../../request/yaml.js';
import { CborDecodeError, decodeCbor } from '../../cbor/index.js';
import { warningsOf, type YamlBodyFacts, yamlFacts } from '../field-validation-yaml.js';
import { APPLY_CBOR_PATCH_TYPE, APPLY_PATCH_TYPE } from './appliers.js';
import type { PatchApplier } from './types.js';
import { addWarnings } from '../../machinery/warnings.js';

interface ParsedApply {
  config: JsonMap;
  /** a YAML configuration's repeated keys (CBOR has none: its decoder refuses them) */
  facts?: YamlBodyFacts;
}

function goTypeOf(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'bool';
  return typeof v;
}

function parseApply(body: Buffer): ParsedApply {
  const text = body.toString('utf8');
  let doc: unknown;
  let facts: YamlBodyFacts;
  try {
    const decoded = decodeYamlBuffer(body);
    doc = decoded.value;
    facts = yamlFacts(decoded, text);
  } catch (err) {
    // a body the YAML thread had no memory for is refused as too large, not as malformed
    if (err instanceof StatusError && err.code === 413) throw err;
    throw errors.badRequest(`error decoding YAML: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return { config: {}, facts };
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw errors.badRequest(
      `error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ${goTypeOf(doc)} into Go value of type map[string]interface {}`,
    );
  }
  return { config: doc as JsonMap, facts };
}

/** A CBOR configuration: the decoder refuses repeated keys outright. kube words the failure
 *  as for YAML. */
function parseCborApply(body: Buffer): ParsedApply {
  let doc: unknown;
  try {
    doc = decodeCbor(body);
  } catch (err) {
    if (err instanceof CborDecodeError) throw errors.badRequest(`error decoding YAML: ${err.message}`);
    throw err;
  }
  if (doc === null) return { config: {} };
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw errors.badRequest(`error decoding YAML: cbor: cannot unmarshal ${goTypeOf(doc)} into Go value of type map[string]interface {}`);
  }
  return { config: doc as JsonMap };
}

export function createApplyPatchApplier(managers: FieldManagers = fieldManagers(), format: 'yaml' | 'cbor' = 'yaml'): PatchApplier {
  return {
    createsMissing: true,
    isApply: true,
    parse: format === 'cbor' ? parseCborApply : parseApply,
    apply(current, parsed, target) {
      const { config, facts } = parsed as ParsedApply;
      const fm = managers.for(target.resource.info, target.resource.subresource ?? '', target.resource.statusKeepsLabels);
      // a fresh copy per attempt: a conflicting write makes the registry apply again
      const result = fm.apply(current, structuredClone(config), target.fieldManager, target.force);
      target.ctx.managedFieldsRecorded = true;
      const fieldValidation = target.ctx.fieldValidation;
      if (facts && (fieldValidation === 'Strict' || fieldValidation === 'Warn')) {
        const strict = facts.duplicateKeys();
        if (strict !== undefined) {
          if (fieldValidation === 'Strict') throw new StatusError(400, 'BadRequest', `error strict decoding YAML: ${strict}`);
          addWarnings(target.ctx.warnings, warningsOf(strict));
        }
      }
      return result;
    },
  };
}

/** the PATCH types this module adds, for the API handler's `patchTypes` */
export function applyPatchTypes(managers?: FieldManagers): Map<string, PatchApplier> {
  return new Map([
    [APPLY_PATCH_TYPE, createApplyPatchApplier(managers)],
    [APPLY_CBOR_PATCH_TYPE, createApplyPatchApplier(managers, 'cbor')],
  ]);
}
