// A structural schema as CEL types, with kube's mapping (apiserver/pkg/cel/common): an object
// with properties is a message type whose fields are the escapable property names, an object
// with additionalProperties a map, an array a list, integer/number/boolean/string int/double/
// bool/string, strings of format byte/duration/date/date-time bytes/duration/timestamp; an
// int-or-string field and an object that only preserves unknown fields are dyn; an embedded
// resource always has apiVersion, kind and metadata (name, generateName).
//
// Rules are type-checked against these types at write time (a rule naming a missing field is
// refused); they run over values converted the same way (celValue), with property names
// escaped, so `self.foo__dash__bar` reads `foo-bar`.

import type { Environment } from '@marcbachmann/cel-js';
import { escapeProperty } from '../cel/escaping.js';
import { celEquals, durationFromNanos } from '../cel/values.js';
import type { JSONSchemaProps } from './schema.js';

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** the metadata an embedded resource always has, whatever its schema says */
const EMBEDDED_METADATA: JSONSchemaProps = { type: 'object', properties: { name: { type: 'string' }, generateName: { type: 'string' } } };

/** the properties of an object schema, embedded-resource fields included */
function propertiesOf(s: JSONSchemaProps): Record<string, JSONSchemaProps> {
  if (!s['x-kubernetes-embedded-resource']) return s.properties ?? {};
  return {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: EMBEDDED_METADATA,
    ...(s.properties ?? {}),
  };
}

const isMap = (s: JSONSchemaProps): boolean => isObj(s.additionalProperties) || s.additionalProperties === true;

/** Registers a message type per object node of `schema` on `env`, named from `name`; returns
 *  the CEL type string of the root. */
export function registerSchemaTypes(env: Environment, schema: JSONSchemaProps, name: string): string {
  const typeOf = (s: JSONSchemaProps | undefined, typeName: string): string => {
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
        return `list<${typeOf(s.items, `${typeName}.@items`)}>`;
      case 'object': {
        if (isMap(s)) return `map<string, ${isObj(s.additionalProperties) ? typeOf(s.additionalProperties as JSONSchemaProps, `${typeName}.@value`) : 'dyn'}>`;
        const props = propertiesOf(s);
        if (Object.keys(props).length === 0) return s['x-kubernetes-preserve-unknown-fields'] || s['x-kubernetes-embedded-resource'] ? 'dyn' : 'map<string, dyn>';
        const fields: Record<string, string> = {};
        for (const [prop, ps] of Object.entries(props)) {
          const field = escapeProperty(prop);
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

/** Go's time.ParseDuration, as kube parses `format: duration` strings */
function parseDuration(s: string): unknown {
  const m = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+$/.exec(s);
  if (!m && s !== '0') return undefined;
  if (s === '0') return durationFromNanos(0n);
  const unit: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
  let total = 0;
  for (const part of s.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g)) total += Number(part[1]) * unit[part[2]!]!;
  const nanos = BigInt(Math.round(total));
  return durationFromNanos(s.startsWith('-') ? -nanos : nanos);
}

function stringValue(v: string, format: string | undefined): unknown {
  switch (format) {
    case 'duration':
      return parseDuration(v) ?? v;
    case 'date':
    case 'date-time': {
      const t = new Date(v);
      return Number.isNaN(t.getTime()) ? v : t;
    }
    case 'byte':
      return new Uint8Array(Buffer.from(v, 'base64'));
    default:
      return v;
  }
}

/** a JSON value as the rule sees it: typed by the schema, property names escaped */
export function celValue(v: unknown, s: JSONSchemaProps | undefined): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') {
    if (s?.type === 'number') return v;
    return Number.isInteger(v) ? BigInt(v) : v;
  }
  if (typeof v === 'string') return s && !s['x-kubernetes-int-or-string'] ? stringValue(v, s.format) : v;
  if (Array.isArray(v)) return v.map((x) => celValue(x, s?.items));
  if (isObj(v)) {
    const out: Record<string, unknown> = {};
    if (s && !isMap(s)) {
      const props = propertiesOf(s);
      for (const [k, x] of Object.entries(v)) {
        const ps = props[k];
        const key = ps ? escapeProperty(k) : k;
        if (key !== undefined) out[key] = celValue(x, ps);
      }
      return out;
    }
    const item = s && isObj(s.additionalProperties) ? (s.additionalProperties as JSONSchemaProps) : undefined;
    for (const [k, x] of Object.entries(v)) out[k] = celValue(x, item);
    return out;
  }
  return v;
}
