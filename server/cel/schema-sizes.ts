// How large a value of an OpenAPI schema can be, as kube-apiserver declares schema types for
// CEL (k8s.io/apiserver pkg/cel/common/schemas.go): the fewest bytes a value takes in JSON, and
// the most elements (items, properties, bytes of a string) it can have, from the schema's
// bounds or else from what fits in one request.

/** the part of an OpenAPI schema the estimate reads */
export interface SizedSchema {
  type?: string;
  format?: string;
  maxItems?: number;
  maxLength?: number;
  maxProperties?: number;
  items?: SizedSchema;
  properties?: Record<string, SizedSchema>;
  additionalProperties?: SizedSchema | boolean;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  'x-kubernetes-int-or-string'?: boolean;
}

const MAX_REQUEST_BYTES = 3 * 1024 * 1024;

/** kube's bounds on the JSON forms of durations and timestamps (k8s.io/apiserver pkg/cel/limits.go) */
const MIN_DURATION_JSON = 3;
const MAX_DURATION_JSON = 32;
const DATE_JSON = 12;
const MIN_DATETIME_JSON = 21;
const MAX_DATETIME_JSON = 32;

/** the fewest bytes one value of the schema takes in JSON, as kube counts them */
function minSerializedSize(s: SizedSchema | undefined): number {
  if (s?.['x-kubernetes-int-or-string']) return 1;
  switch (s?.type) {
    case 'string':
      if (s.format === 'duration') return MIN_DURATION_JSON;
      if (s.format === 'date') return DATE_JSON;
      if (s.format === 'date-time') return MIN_DATETIME_JSON;
      return 2;
    case 'boolean':
      return 4;
    case 'array':
      return 2;
    case 'object': {
      if (typeof s.additionalProperties === 'object') return 2;
      // `{}` and every required property without a default: its quoted name, colon, comma
      let size = 2;
      for (const name of s.required ?? []) {
        const p = s.properties?.[name];
        if (p && p.default === undefined) size += name.length + minSerializedSize(p) + 4;
      }
      return size;
    }
    default:
      return 1;
  }
}

/** the longest string a schema allows without a maxLength, as kube estimates it */
function maxStringLength(s: SizedSchema): number {
  if (s['x-kubernetes-int-or-string']) return MAX_REQUEST_BYTES - 2;
  if (s.format === 'duration') return MAX_DURATION_JSON;
  if (s.format === 'date') return DATE_JSON;
  if (s.format === 'date-time') return MAX_DATETIME_JSON;
  return MAX_REQUEST_BYTES - 2;
}

/** the most elements (items, properties, bytes of a string) a value of the schema can have, as
 *  kube's declared types bound them: maxItems, maxProperties, four bytes per character of
 *  maxLength, the longest enum value; else what fits in one request */
export function maxSize(s: SizedSchema | undefined): number {
  if (!s) return MAX_REQUEST_BYTES;
  if (s['x-kubernetes-int-or-string']) return s.maxLength !== undefined ? Math.max(0, s.maxLength) * 4 : maxStringLength(s);
  if (s.type === 'array') return s.maxItems ?? Math.floor((MAX_REQUEST_BYTES - 2) / (minSerializedSize(s.items) + 1));
  if (s.type === 'object') {
    const value = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
    // an entry costs at least a one-character quoted key, a colon and a comma besides its value
    return s.maxProperties ?? Math.floor((MAX_REQUEST_BYTES - 2) / (minSerializedSize(value) + 6));
  }
  if (s.type === 'string') {
    if (s.format === 'byte') return s.maxLength ?? maxStringLength(s);
    if (s.format === 'duration' || s.format === 'date' || s.format === 'date-time') return maxStringLength(s);
    if (s.maxLength !== undefined) return Math.max(0, s.maxLength) * 4;
    const enums = (s.enum ?? []).filter((v): v is string => typeof v === 'string');
    if (enums.length > 0) return Math.max(...enums.map((v) => Buffer.byteLength(v)));
    return maxStringLength(s);
  }
  return 1;
}
