// The types server-side apply merges custom resources by, from their CRD's structural schema:
// x-kubernetes-list-type (atomic/set/map with x-kubernetes-list-map-keys), x-kubernetes-map-type,
// declared properties, additionalProperties; metadata is ObjectMeta as for built-in kinds.

import { deducedType, scalarAtomOf, type Atom, type TypeModel, type TypeRef } from '../fieldmanager/schema.js';
import type { JSONSchemaProps } from '../registry/apiextensions/json-schema-props.js';

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

const scalar = (kind: 'string' | 'numeric' | 'boolean' | 'untyped'): TypeRef => ({ atom: () => ({ scalar: kind }) });

function typeOfSchema(s: JSONSchemaProps | undefined): TypeRef {
  if (!s) return deducedType;
  let atom: Atom | undefined;
  return {
    atom: () => (atom ??= build(s)),
  };
}

function build(s: JSONSchemaProps): Atom {
  if (s['x-kubernetes-int-or-string']) return { scalar: 'untyped' };
  const scalar = scalarAtomOf(s.type);
  if (scalar) return scalar;
  switch (s.type) {
    case 'array': {
      const element = s.items ? typeOfSchema(s.items) : deducedType;
      const lt = s['x-kubernetes-list-type'];
      if (lt === 'set') return { list: { atomic: false, keys: [], element } };
      if (lt === 'map') return { list: { atomic: false, keys: [...(s['x-kubernetes-list-map-keys'] ?? [])], element } };
      return { list: { atomic: true, keys: [], element } };
    }
    default: {
      if (!s.properties && (s.additionalProperties === undefined || s.additionalProperties === false)) return deducedType.atom();
      const fields = new Map<string, TypeRef>();
      for (const [k, v] of Object.entries(s.properties ?? {})) fields.set(k, typeOfSchema(v));
      let element: TypeRef | undefined;
      if (typeof s.additionalProperties === 'object') element = typeOfSchema(s.additionalProperties);
      else if (s.additionalProperties === true || s['x-kubernetes-preserve-unknown-fields']) element = deducedType;
      return { map: { atomic: s['x-kubernetes-map-type'] === 'atomic', fields, element } };
    }
  }
}

/** the type of a custom resource's top level: its schema, with type meta and ObjectMeta */
export function customResourceType(model: TypeModel, schema: JSONSchemaProps | undefined): TypeRef {
  let atom: Atom | undefined;
  return {
    atom: () => {
      if (atom) return atom;
      const root = schema && (schema.properties || schema.additionalProperties) ? build({ ...schema, type: 'object' }) : deducedType.atom();
      const fields = new Map(root.map?.fields ?? []);
      fields.set('apiVersion', scalar('string'));
      fields.set('kind', scalar('string'));
      fields.set('metadata', model.typeOf({ ref: OBJECT_META }));
      atom = {
        map: {
          atomic: false,
          fields,
          element: root.map?.element ?? (schema?.['x-kubernetes-preserve-unknown-fields'] ? deducedType : undefined),
        },
      };
      return atom;
    },
  };
}
