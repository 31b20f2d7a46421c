// Defaulting of a custom resource by its version's structural schema: each missing member
// whose schema has a `default` gets a copy of it, depth first, as kube-apiserver defaults on
// decode and on read from storage. Values are plain JSON; they are changed in place.

import type { JSONSchemaProps } from '../registry/apiextensions/json-schema-props.js';
import { isObject } from '../registry/object.js';

function cloneJson<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

/** Sets `default`s of missing (or null, when not nullable) properties, depth first. */
export function applyDefaults(value: unknown, schema: JSONSchemaProps | undefined): void {
  if (!schema) return;
  if (isObject(value)) {
    for (const [name, prop] of Object.entries(schema.properties ?? {})) {
      const cur = value[name];
      if (prop.default !== undefined && (cur === undefined || (cur === null && !prop.nullable))) value[name] = cloneJson(prop.default);
    }
    for (const [name, v] of Object.entries(value)) {
      const prop = schema.properties?.[name] ?? (isObject(schema.additionalProperties) ? schema.additionalProperties : undefined);
      applyDefaults(v, prop);
    }
  } else if (Array.isArray(value) && schema.items) {
    for (const item of value) applyDefaults(item, schema.items);
  }
}
