// An OpenAPI schema as CEL types, with kube's mapping (apiserver/pkg/cel/common): an object
// with properties is a message type whose fields are the escapable property names, an object
// with additionalProperties a map, an array a list, integer/number/boolean/string int/double/
// bool/string, strings of format byte/duration/date/date-time bytes/duration/timestamp; an
// int-or-string field is dyn; list items and map values are named `<parent>.0items` and
// `<parent>.0values` (no property name starts with a digit); a resource root (and an embedded resource) always has
// apiVersion, kind and metadata (name, generateName).
//
// CRD rules (server/crd) and ValidatingAdmissionPolicy type checking (server/admission/policy)
// both declare their variables with these types.

import type { Environment } from '@marcbachmann/cel-js';
import { escapeProperty } from './escaping.js';
import { celEquals } from './values.js';

/** the part of an OpenAPI schema that decides a CEL type */
export interface CelSchema {
  type?: string;
  format?: string;
  properties?: Record<string, CelSchema>;
  additionalProperties?: CelSchema | boolean;
  items?: CelSchema;
  required?: string[];
  maxItems?: number;
  maxLength?: number;
  maxProperties?: number;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
}

export interface SchemaTypeOptions {
  /** an object schema without properties: 'map' (CRDs: map<string, dyn>, or dyn when it
   *  preserves unknown fields) or 'closed' (built-in kinds, as kube's resolved OpenAPI: an
   *  object type without fields) */
  emptyObject?: 'map' | 'closed';
  /** false for kube's hand-made declarations (`request`, `namespaceObject`, `user`), whose
   *  field names are taken as they are: `request.namespace`, not `__namespace__` */
  escapeNames?: boolean;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** the metadata a resource root always has, whatever its schema says */
const RESOURCE_METADATA: CelSchema = { type: 'object', properties: { name: { type: 'string' }, generateName: { type: 'string' } } };

/** the properties of an object schema, the resource fields of an embedded resource included */
export function propertiesOf(s: CelSchema): Record<string, CelSchema> {
  if (!s['x-kubernetes-embedded-resource']) return s.properties ?? {};
  return { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: RESOURCE_METADATA, ...(s.properties ?? {}) };
}

export const isMapSchema = (s: CelSchema): boolean => isObj(s.additionalProperties) || s.additionalProperties === true;

/** Registers a message type per object node of `schema` on `env`, named from `name`; returns
 *  the CEL type string of the root. */
export function registerSchemaTypes(env: Environment, schema: CelSchema, name: string, opts: SchemaTypeOptions = {}): string {
  const typeOf = (s: CelSchema | undefined, typeName: string): string => {
    if (!s) return 'dyn';
    if (s['x-kubernetes-int-or-string']) return 'dyn';
    switch (s.type) {
      case 'integer':
        return 'int';
      case 'number':
        return 'double';
      case 'boolean':
        return 'bool';
      case 'string':
        if (s.format === 'byte') return 'bytes';
        if (s.format === 'duration') return 'google.protobuf.Duration';
        if (s.format === 'date' || s.format === 'date-time') return 'google.protobuf.Timestamp';
        return 'string';
      case 'array':
        return `list<${typeOf(s.items, `${typeName}.0items`)}>`;
      case 'object': {
        if (isMapSchema(s)) return `map<string, ${isObj(s.additionalProperties) ? typeOf(s.additionalProperties as CelSchema, `${typeName}.0values`) : 'dyn'}>`;
        const props = propertiesOf(s);
        if (Object.keys(props).length === 0 && opts.emptyObject !== 'closed') {
          return s['x-kubernetes-preserve-unknown-fields'] || s['x-kubernetes-embedded-resource'] ? 'dyn' : 'map<string, dyn>';
        }
        const fields: Record<string, string> = {};
        for (const [prop, ps] of Object.entries(props)) {
          const field = opts.escapeNames === false ? prop : escapeProperty(prop);
          if (field) fields[field] = typeOf(ps, `${typeName}.${field}`);
        }
        env.registerType(typeName, { fields });
        env.registerOperator(`${typeName} == ${typeName}`, celEquals);
        return typeName;
      }
      default:
        return 'dyn';
    }
  };
  return typeOf(schema, name);
}
