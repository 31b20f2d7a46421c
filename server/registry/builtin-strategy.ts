// What every built-in resource's strategy gets on top of its own (its descriptor's): resource
// quantities in canonical form after defaulting, and core's finalizer-name rule in validation.

import { loadSchemas } from '../apis/schema.js';
import type { ResourceInfo } from '../apis/types.js';
import { storageKindOf } from './conversion/index.js';
import { quantityCanonicalizerFor } from './quantity-fields.js';
import type { ResourceStrategy } from './strategy.js';
import { fieldErrors, type FieldError } from '../machinery/validation/field-error.js';
import { isQualifiedName } from '../machinery/validation/names.js';
import type { KubeObject } from '../../storage/interface.js';

const standardFinalizers = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

/** core's validateKubeFinalizerName, per finalizer (on top of the generic list check) */
export function validateKubeFinalizerNames(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  (obj.metadata.finalizers ?? []).forEach((raw, i) => {
    const f = typeof raw === 'string' ? raw : String(raw);
    const path = `metadata.finalizers[${i}]`;
    const msgs = isQualifiedName(f);
    for (const m of msgs) errs.push(fieldErrors.invalid(path, f, m));
    if (!msgs.length && !f.includes('/') && !standardFinalizers.has(f)) {
      errs.push(fieldErrors.invalid(path, f, 'name is neither a standard finalizer name nor is it fully qualified'));
    }
  });
  return errs;
}

/** wraps a built-in kind's strategy: canonical quantities after defaulting, core's finalizer
 *  names in validation unless `kubeFinalizerNames` is false */
export function builtinKindStrategy(info: ResourceInfo, base: ResourceStrategy, kubeFinalizerNames = true): ResourceStrategy {
  const storage = storageKindOf(info);
  const schemas = loadSchemas();
  const canonicalize = quantityCanonicalizerFor(schemas, storage.group, storage.version, storage.kind);
  // kinds without a generated schema follow the generic metadata rules only
  const kubeMeta = kubeFinalizerNames && schemas.schemaFor(storage.group, storage.version, storage.kind) !== undefined;
  return {
    ...base,
    applyDefaults(obj, c) {
      base.applyDefaults(obj, c);
      canonicalize?.(obj as Record<string, unknown>);
    },
    validate(obj, c) {
      const errs = base.validate(obj, c);
      return kubeMeta ? [...errs, ...validateKubeFinalizerNames(obj)] : errs;
    },
    validateUpdate(obj, old, c) {
      const errs = base.validateUpdate(obj, old, c);
      return kubeMeta ? [...errs, ...validateKubeFinalizerNames(obj)] : errs;
    },
  };
}
