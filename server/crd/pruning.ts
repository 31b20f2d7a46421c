// Pruning of a custom resource by its version's structural schema: members the schema does
// not declare are dropped (kube-apiserver's pruning on decode), and their paths reported for
// the `unknown field` warnings and Strict field validation. Values are plain JSON; they are
// changed in place.

import { OBJECT_META_ORDER } from '../../storage/interface.js';
import type { JSONSchemaProps } from '../registry/apiextensions/json-schema-props.js';
import { isObject, type JsonObject } from '../registry/object.js';

const childPath = (path: string, name: string): string => (path ? `${path}.${name}` : name);

/** ObjectMeta's members: what survives pruning of `metadata` */
const objectMetaFields = new Set(OBJECT_META_ORDER);

/**
 * Removes members the schema does not declare (unless x-kubernetes-preserve-unknown-fields or
 * additionalProperties keep them) and returns their paths, as kube reports them
 * (`spec.foo`, `spec.items[0].bar`). At the root, apiVersion/kind/metadata are kept and
 * metadata keeps ObjectMeta's members only.
 */
export function prune(obj: JsonObject, schema: JSONSchemaProps | undefined): string[] {
  const pruned: string[] = [];
  pruneObject(obj, schema ?? {}, '', true, pruned);
  return pruned;
}

function pruneObject(obj: JsonObject, schema: JSONSchemaProps, path: string, typeMeta: boolean, pruned: string[]): void {
  const metadata = obj.metadata;
  if (typeMeta && isObject(metadata)) {
    for (const k of Object.keys(metadata)) {
      if (!objectMetaFields.has(k)) {
        delete metadata[k];
        pruned.push(childPath(childPath(path, 'metadata'), k));
      }
    }
  }
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  for (const [name, v] of Object.entries(obj)) {
    const p = childPath(path, name);
    if (typeMeta && (name === 'apiVersion' || name === 'kind' || name === 'metadata')) continue;
    const prop = schema.properties?.[name];
    if (prop) {
      pruneValue(v, prop, p, pruned);
    } else if (isObject(schema.additionalProperties)) {
      pruneValue(v, schema.additionalProperties, p, pruned);
    } else if (schema.additionalProperties === true || preserve) {
      // kept as is
    } else {
      delete obj[name];
      pruned.push(p);
    }
  }
}

function pruneValue(v: unknown, schema: JSONSchemaProps, path: string, pruned: string[]): void {
  if (isObject(v)) {
    const embedded = schema['x-kubernetes-embedded-resource'] === true;
    if (!schema.properties && !schema.additionalProperties && schema['x-kubernetes-preserve-unknown-fields'] === true) {
      if (embedded) pruneObject(v, schema, path, true, pruned);
      return;
    }
    pruneObject(v, schema, path, embedded, pruned);
  } else if (Array.isArray(v) && schema.items) {
    const items = schema.items;
    v.forEach((item, i) => pruneValue(item, items, `${path}[${i}]`, pruned));
  }
}
