// An OpenAPI schema as CEL types, with kube's mapping (apiserver/pkg/cel/common): an object is
// a message type whose fields are its escapable property names (unknown fields it preserves
// are not exposed), an object with additionalProperties a map, an array a list,
// integer/number/boolean/string int/double/bool/string, strings of format byte/duration/date/
// date-time bytes/duration/timestamp; an int-or-string field is dyn, an untyped one is left
// out; a resource root (and an embedded resource) always has apiVersion, kind and metadata
// (name, generateName). List items and map values are named `<parent>.0items` and
// `<parent>.0values` (no property name starts with a digit).
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
  /** false for kube's hand-made declarations (`request`, `namespaceObject`, `user`), whose
   *  field names are taken as they are: `request.namespace`, not `__namespace__` */
  escapeNames?: boolean;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const isStringSchema = (s: CelSchema | undefined): boolean => s?.type === 'string';

/** The properties of an object schema. A resource root (or an embedded resource) always has
 *  apiVersion and kind strings and metadata with name and generateName: when its schema does
 *  not declare them so, they are declared for it, as kube does. */
export function propertiesOf(s: CelSchema): Record<string, CelSchema> {
  const props = s.properties ?? {};
  if (!s['x-kubernetes-embedded-resource']) return props;
  const meta = props['metadata'];
  const complete =
    isStringSchema(props['kind']) &&
    isStringSchema(props['apiVersion']) &&
    meta?.type === 'object' &&
    isStringSchema(meta.properties?.['name']) &&
    isStringSchema(meta.properties?.['generateName']);
  if (complete) return props;
  const str: CelSchema = { type: 'string' };
  return { ...props, kind: str, apiVersion: str, metadata: { type: 'object', properties: { name: str, generateName: str } } };
}

export const isMapSchema = (s: CelSchema): boolean => isObj(s.additionalProperties);

/** Registers a message type per object node of `schema` on `env`, named from `name`; returns
 *  the CEL type string of the root. As in kube, a node without a type (other than
 *  int-or-string) is not exposed: its field is left out, and so are lists and maps of it; an
 *  object exposes its declared properties only, whether it preserves unknown fields or not. */
export function registerSchemaTypes(env: Environment, schema: CelSchema, name: string, opts: SchemaTypeOptions = {}): string {
  const typeOf = (s: CelSchema | undefined, typeName: string): string | undefined => {
    if (!s) return undefined;
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
      case 'array': {
        const item = typeOf(s.items, `${typeName}.0items`);
        return item === undefined ? undefined : `list<${item}>`;
      }
      case 'object': {
        if (isMapSchema(s)) {
          const value = typeOf(s.additionalProperties as CelSchema, `${typeName}.0values`);
          return value === undefined ? undefined : `map<string, ${value}>`;
        }
        const fields: Record<string, string> = {};
        for (const [prop, ps] of Object.entries(propertiesOf(s))) {
          const field = opts.escapeNames === false ? prop : escapeProperty(prop);
          const t = field === undefined ? undefined : typeOf(ps, `${typeName}.${field}`);
          if (field !== undefined && t !== undefined) fields[field] = t;
        }
        env.registerType(typeName, { fields });
        env.registerOperator(`${typeName} == ${typeName}`, celEquals);
        return typeName;
      }
      default:
        return undefined;
    }
  };
  return typeOf(schema, name) ?? 'dyn';
}
