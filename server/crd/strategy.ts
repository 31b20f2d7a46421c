// The strategy of a custom resource: unknown fields pruned (and reported as fieldValidation
// asks), defaults from the schema, the schema's validation, metadata.generation counting every
// change outside metadata (and status, with the status subresource).

import type { KubeObject } from '../../storage/interface.js';
import { errors } from '../machinery/status.js';
import { clone, jsonEqual } from '../registry/object.js';
import { defineStrategy, keepOldStatus, type ResourceStrategy, type StrategyContext } from '../registry/strategy.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../registry/validation/object-meta.js';
import { nameIsDNSSubdomain } from '../machinery/validation/names.js';
import type { FieldError } from '../machinery/validation/field-error.js';
import { specOf, versionOf } from '../registry/apiextensions/definition.js';
import { validateRules } from './cel.js';
import type { JSONSchemaProps } from '../registry/apiextensions/json-schema-props.js';
import { validateCustomResource } from '../registry/apiextensions/schema-validation.js';
import { applyDefaults } from './defaulting.js';
import { prune } from './pruning.js';
import { addWarnings } from '../machinery/warnings.js';

function withoutMetaAndStatus(obj: KubeObject, dropStatus: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'metadata' || k === 'apiVersion' || k === 'kind') continue;
    if (dropStatus && k === 'status') continue;
    out[k] = v;
  }
  return out;
}

/** Prunes, reports pruned fields per fieldValidation, and defaults, in place. */
export function pruneAndDefault(
  obj: KubeObject,
  schema: JSONSchemaProps | undefined,
  c: StrategyContext | undefined,
  preserveUnknown: boolean,
): void {
  if (schema && !preserveUnknown) {
    const pruned = prune(obj as unknown as Record<string, unknown>, schema);
    if (c && pruned.length > 0) {
      const messages = pruned.map((p) => `unknown field ${JSON.stringify(p)}`);
      const mode = c.request.fieldValidation;
      if (mode === 'Strict') {
        throw errors.badRequest(
          `${c.info.kind} in version ${JSON.stringify(c.info.version)} cannot be handled as a ${c.info.kind}: strict decoding error: ${messages.join(', ')}`,
        );
      }
      if (mode === 'Warn') addWarnings(c.request.warnings, messages);
    }
  }
  applyDefaults(obj, schema);
}

export function customResourceStrategy(crd: KubeObject): ResourceStrategy {
  const spec = specOf(crd);
  const namespaced = spec.scope === 'Namespaced';
  const schemaFor = (version: string) => versionOf(crd, version)?.schema?.openAPIV3Schema;
  const hasStatus = (version: string) => versionOf(crd, version)?.subresources?.status !== undefined;
  const validateContent = (obj: KubeObject, c: StrategyContext, old?: KubeObject): FieldError[] => {
    const schema = schemaFor(c.info.version);
    const errs = validateCustomResource(obj as unknown as Record<string, unknown>, schema);
    return [...errs, ...validateRules(obj, old, schema, '', old !== undefined)];
  };
  return defineStrategy({
    namespaced,
    validateName: nameIsDNSSubdomain,
    tracksGeneration: true,
    hasStatusSubresource: false,
    applyDefaults(obj, c) {
      pruneAndDefault(obj, schemaFor(c.info.version), c, spec.preserveUnknownFields === true);
    },
    prepareForCreate(obj, c) {
      if (hasStatus(c.info.version)) delete obj.status;
    },
    prepareForUpdate(obj, old, c) {
      if (hasStatus(c.info.version)) keepOldStatus(obj, old);
    },
    generationChanged(obj, old) {
      const statusSplit = spec.versions.some((v) => v.subresources?.status !== undefined);
      return !jsonEqual(withoutMetaAndStatus(obj, statusSplit), withoutMetaAndStatus(old, statusSplit));
    },
    validate(obj, c) {
      return [...validateObjectMeta(obj.metadata, namespaced, nameIsDNSSubdomain), ...validateContent(obj, c)];
    },
    validateUpdate(obj, old, c) {
      return [...validateObjectMetaUpdate(obj.metadata, old.metadata), ...validateContent(obj, c, old)];
    },
  });
}

/** Defaults of a stored object as read (kube defaults on read too); returns a copy. */
export function defaultOnRead(obj: KubeObject, crd: KubeObject, version: string): KubeObject {
  const schema = versionOf(crd, version)?.schema?.openAPIV3Schema;
  if (!schema) return obj;
  const out = clone(obj);
  applyDefaults(out, schema);
  return out;
}
