// Patch metadata for strategic merge patch: the patch strategy and merge key of a field, read
// off the built-in schema (x-kubernetes-patch-strategy, x-kubernetes-patch-merge-key, which
// kube-apiserver takes from the same Go struct tags). Only these markers count:
// kube-apiserver's strategic merge patch ignores x-kubernetes-list-type (that is server-side
// apply's), so a list marked `map` without a patch strategy is replaced.
//
// kube-apiserver fails on a field its Go type does not have; the stored objects here may hold
// fields no schema knows (nothing prunes them), so unknown fields have no markers instead.

import type { SchemaNode, SchemaRegistry } from '../../apis/schema.js';

export interface PatchMeta {
  /** e.g. [] or ['merge'] or ['merge', 'retainKeys'] */
  readonly strategies: readonly string[];
  /** '' when none */
  readonly mergeKey: string;
}

export interface PatchSchemaLookup {
  schema: PatchSchema;
  meta: PatchMeta;
}

export interface PatchSchema {
  /** a field of this object: its schema and markers */
  field(key: string): PatchSchemaLookup;
  /** a list field of this object: the schema of its elements and the list's markers */
  listField(key: string): PatchSchemaLookup;
  /** the Go kind of this type as error messages name it (`struct`, `map`, `string`, ...) */
  readonly name: string;
}

const noMeta: PatchMeta = Object.freeze({ strategies: Object.freeze([]), mergeKey: '' });

/** a type nothing is known about: every field without markers */
export const unknownPatchSchema: PatchSchema = {
  field: () => ({ schema: unknownPatchSchema, meta: noMeta }),
  listField: () => ({ schema: unknownPatchSchema, meta: noMeta }),
  name: 'struct',
};

function metaOf(node: SchemaNode): PatchMeta {
  if (node.patchStrategy === undefined && node.patchMergeKey === undefined) return noMeta;
  return {
    strategies: node.patchStrategy === undefined ? [] : node.patchStrategy.split(','),
    mergeKey: node.patchMergeKey ?? '',
  };
}

function goKindOf(node: SchemaNode): string {
  switch (node.type) {
    case 'string':
      return node.intOrString ? 'struct' : 'string';
    case 'integer':
      return node.format === 'int32' ? 'int32' : 'int64';
    case 'number':
      return 'float64';
    case 'boolean':
      return 'bool';
    case 'array':
      return 'slice';
    case 'object':
      return node.properties === undefined && node.additionalProperties && typeof node.additionalProperties === 'object' ? 'map' : 'struct';
    default:
      return 'struct';
  }
}

/** The patch schema of a node of the registry (a kind's definition, typically). */
export function patchSchemaOf(registry: SchemaRegistry, node: SchemaNode): PatchSchema {
  const cache = new Map<SchemaNode, PatchSchema>();
  const wrap = (n: SchemaNode | undefined): PatchSchema => {
    if (!n) return unknownPatchSchema;
    const resolved = registry.resolve(n);
    let s = cache.get(resolved);
    if (s) return s;
    // the markers sit on the property (beside its `ref`), not on the referenced definition
    const property = (key: string): SchemaNode | undefined => {
      const props = resolved.properties;
      if (props && Object.hasOwn(props, key)) return props[key];
      // a map's values; kube-apiserver would fail here (a map is not a struct), see above
      if (resolved.additionalProperties && typeof resolved.additionalProperties === 'object') return resolved.additionalProperties;
      return undefined;
    };
    s = {
      field: (key) => {
        const p = property(key);
        return p ? { schema: wrap(p), meta: metaOf(p) } : { schema: unknownPatchSchema, meta: noMeta };
      },
      listField: (key) => {
        const p = property(key);
        if (!p) return { schema: unknownPatchSchema, meta: noMeta };
        return { schema: wrap(registry.elements(p)), meta: metaOf(p) };
      },
      name: goKindOf(resolved),
    };
    cache.set(resolved, s);
    return s;
  };
  return wrap(node);
}
