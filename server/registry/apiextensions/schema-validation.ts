// Validation of values against a custom resource version's structural schema, with
// kube-apiserver's messages: a custom resource's content, and a CRD's defaults against the
// schema they sit in. Values are plain JSON as decoded from a request or read from storage.

import { RE2JS } from 're2js';
import { fieldErrors, goQuote, type FieldError } from '../../machinery/validation/field-error.js';
import type { JSONSchemaProps } from './json-schema-props.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObj = { [k: string]: Json };

const isObj = (v: unknown): v is JsonObj => typeof v === 'object' && v !== null && !Array.isArray(v);

const childPath = (path: string, name: string): string => (path ? `${path}.${name}` : name);

const regexCache = new Map<string, RE2JS | null>();
function compilePattern(pattern: string): RE2JS | null {
  if (!regexCache.has(pattern)) {
    try {
      regexCache.set(pattern, RE2JS.compile(pattern));
    } catch {
      regexCache.set(pattern, null);
    }
  }
  return regexCache.get(pattern)!;
}

/** whether a pattern compiles under RE2 (the CRD validation asks) */
export function patternCompiles(pattern: string): boolean {
  return compilePattern(pattern) !== null;
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** Go's %v-ish rendering kube-openapi uses after "must be of type X: " */
function shown(v: unknown): string {
  if (typeof v === 'string') return goQuote(v);
  if (v === null) return '"null"';
  if (isObj(v) || Array.isArray(v)) return goQuote(jsonType(v));
  return String(v);
}

const dateTimeRe = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const dateRe = /^\d{4}-\d{2}-\d{2}$/;
const uuidRe = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/;
const emailRe = /^[^@\s]+@[^@\s]+$/;
const durationRe = /^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h|d|w))+$/;
const byteRe = /^[A-Za-z0-9+/]*={0,2}$/;

function formatOk(format: string, v: unknown): boolean {
  switch (format) {
    case 'int32':
      return typeof v !== 'number' || (Number.isInteger(v) && v >= -2147483648 && v <= 2147483647);
    case 'int64':
      return typeof v !== 'number' || Number.isInteger(v);
    case 'date-time':
      return typeof v !== 'string' || (dateTimeRe.test(v) && !Number.isNaN(Date.parse(v.replace(' ', 'T'))));
    case 'date':
      return typeof v !== 'string' || dateRe.test(v);
    case 'uuid':
      return typeof v !== 'string' || uuidRe.test(v);
    case 'email':
      return typeof v !== 'string' || emailRe.test(v);
    case 'duration':
      return typeof v !== 'string' || durationRe.test(v);
    case 'byte':
      return typeof v !== 'string' || (v.length % 4 === 0 && byteRe.test(v));
    case 'ipv4':
      return typeof v !== 'string' || (/^(\d{1,3})(\.\d{1,3}){3}$/.test(v) && v.split('.').every((p) => Number(p) <= 255));
    default:
      return true;
  }
}

function typeMatches(type: string, v: unknown): boolean {
  switch (type) {
    case 'object':
      return isObj(v);
    case 'array':
      return Array.isArray(v);
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    case 'boolean':
      return typeof v === 'boolean';
    default:
      return true;
  }
}

/** Validates `value` at `path` against `schema`; errors in kube-apiserver's shape. */
export function validateValue(value: unknown, schema: JSONSchemaProps | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (schema) validateInto(value, schema, path, errs);
  return errs;
}

function typeError(path: string, type: string, v: unknown): FieldError {
  return {
    type: 'FieldValueTypeInvalid',
    field: path,
    badValue: jsonType(v) === 'null' ? 'null' : jsonType(v),
    detail: `${path} in body must be of type ${type}: ${shown(v)}`,
  };
}

/** a schema's enum, looked up once per schema rather than once per value (a list of 100k
 *  values against an enum of thousands) */
const enums = new WeakMap<JSONSchemaProps, { json: Set<string>; shown: string[] }>();

function enumOf(s: JSONSchemaProps): { json: Set<string>; shown: string[] } {
  let found = enums.get(s);
  if (!found) {
    const values = s.enum ?? [];
    found = {
      json: new Set(values.map((e) => JSON.stringify(e))),
      shown: values.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))),
    };
    enums.set(s, found);
  }
  return found;
}

function validateInto(v: unknown, s: JSONSchemaProps, path: string, errs: FieldError[]): void {
  if (v === null) {
    if (s.nullable || (s['x-kubernetes-preserve-unknown-fields'] && !s.type)) return;
    if (s.type) errs.push(typeError(path, s.type, v));
    return;
  }
  if (s['x-kubernetes-int-or-string']) {
    if (typeof v !== 'string' && !(typeof v === 'number' && Number.isInteger(v))) {
      errs.push({
        type: 'FieldValueTypeInvalid',
        field: path,
        badValue: jsonType(v),
        detail: `${path} in body must be of type integer,string: ${shown(v)}`,
      });
      return;
    }
  } else if (s.type && !typeMatches(s.type, v)) {
    errs.push(typeError(path, s.type, v));
    return;
  }
  if (s.enum && s.enum.length > 0) {
    const allowed = enumOf(s);
    if (!allowed.json.has(JSON.stringify(v))) errs.push(fieldErrors.notSupported(path, v as string, allowed.shown));
  }
  if (typeof v === 'string') {
    const len = [...v].length;
    if (s.maxLength !== undefined && len > s.maxLength) errs.push(fieldErrors.tooLong(path, s.maxLength));
    if (s.minLength !== undefined && len < s.minLength)
      errs.push(fieldErrors.invalid(path, v, `${path} in body should be at least ${s.minLength} chars long`));
    if (s.pattern !== undefined) {
      const re = compilePattern(s.pattern);
      if (re && !re.matcher(v).find()) errs.push(fieldErrors.invalid(path, v, `${path} in body should match '${s.pattern}'`));
    }
    if (s.format && !formatOk(s.format, v))
      errs.push(fieldErrors.invalid(path, v, `${path} in body must be of type ${s.format}: ${goQuote(v)}`));
  }
  if (typeof v === 'number') {
    if (s.maximum !== undefined) {
      if (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum) {
        errs.push(
          fieldErrors.invalid(path, v, `${path} in body should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${s.maximum}`),
        );
      }
    }
    if (s.minimum !== undefined) {
      if (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum) {
        errs.push(
          fieldErrors.invalid(path, v, `${path} in body should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${s.minimum}`),
        );
      }
    }
    if (s.multipleOf !== undefined && s.multipleOf !== 0 && !Number.isInteger(v / s.multipleOf)) {
      errs.push(fieldErrors.invalid(path, v, `${path} in body should be a multiple of ${s.multipleOf}`));
    }
    if (s.format && !formatOk(s.format, v)) errs.push(fieldErrors.invalid(path, v, `${path} in body must be of type ${s.format}: ${v}`));
  }
  if (Array.isArray(v)) {
    if (s.maxItems !== undefined && v.length > s.maxItems) errs.push(fieldErrors.tooMany(path, v.length, s.maxItems));
    if (s.minItems !== undefined && v.length < s.minItems)
      errs.push(fieldErrors.invalid(path, v.length, `${path} in body should have at least ${s.minItems} items`));
    if (s.uniqueItems || s['x-kubernetes-list-type'] === 'set') {
      const seen = new Set<string>();
      v.forEach((item, i) => {
        const k = JSON.stringify(item);
        if (seen.has(k)) errs.push(fieldErrors.duplicate(`${path}[${i}]`, item as string));
        seen.add(k);
      });
    }
    if (s['x-kubernetes-list-type'] === 'map' && s['x-kubernetes-list-map-keys']) {
      const keys = s['x-kubernetes-list-map-keys'];
      const seen = new Set<string>();
      v.forEach((item, i) => {
        if (!isObj(item)) return;
        const k = JSON.stringify(keys.map((key) => item[key] ?? null));
        if (seen.has(k)) errs.push(fieldErrors.duplicate(`${path}[${i}]`, Object.fromEntries(keys.map((key) => [key, item[key] ?? null]))));
        seen.add(k);
      });
    }
    if (s.items) v.forEach((item, i) => validateInto(item, s.items!, `${path}[${i}]`, errs));
  }
  if (isObj(v)) {
    const n = Object.keys(v).length;
    if (s.maxProperties !== undefined && n > s.maxProperties) errs.push(fieldErrors.tooMany(path, n, s.maxProperties));
    if (s.minProperties !== undefined && n < s.minProperties)
      errs.push(fieldErrors.invalid(path, n, `${path} in body should have at least ${s.minProperties} properties`));
    for (const r of s.required ?? []) if (v[r] === undefined) errs.push(fieldErrors.required(childPath(path, r)));
    for (const [name, item] of Object.entries(v)) {
      const prop = s.properties?.[name] ?? (isObj(s.additionalProperties) ? s.additionalProperties : undefined);
      if (prop) validateInto(item, prop, childPath(path, name), errs);
    }
    if (s['x-kubernetes-embedded-resource']) {
      if (typeof v.kind !== 'string' || v.kind === '') errs.push(fieldErrors.required(childPath(path, 'kind'), 'must not be empty'));
      if (typeof v.apiVersion !== 'string' || v.apiVersion === '')
        errs.push(fieldErrors.required(childPath(path, 'apiVersion'), 'must not be empty'));
    }
  }
  for (const sub of s.allOf ?? []) validateInto(v, sub, path, errs);
  if (s.anyOf && s.anyOf.length > 0 && !s.anyOf.some((sub) => validateValue(v, sub, path).length === 0)) {
    errs.push(fieldErrors.invalid(path, v as string, `${path} in body must be of type ${s.type ?? 'object'}`));
  }
  if (s.oneOf && s.oneOf.length > 0 && s.oneOf.filter((sub) => validateValue(v, sub, path).length === 0).length !== 1) {
    errs.push(fieldErrors.invalid(path, v as string, `${path} in body must validate one and only one schema (oneOf)`));
  }
  if (s.not && validateValue(v, s.not, path).length === 0) {
    errs.push(fieldErrors.invalid(path, v as string, `${path} in body should not validate the given schema`));
  }
}

/**
 * Validates a custom resource's content (everything but apiVersion/kind/metadata) against the
 * version's schema: the root is an object whose declared members are checked.
 */
export function validateCustomResource(obj: Record<string, unknown>, schema: JSONSchemaProps | undefined): FieldError[] {
  if (!schema) return [];
  const errs: FieldError[] = [];
  const root: JsonObj = {};
  for (const [k, v] of Object.entries(obj)) if (k !== 'apiVersion' && k !== 'kind' && k !== 'metadata') root[k] = v as Json;
  const { properties, required, ...rest } = schema;
  const props = { ...(properties ?? {}) };
  delete props.metadata;
  delete props.apiVersion;
  delete props.kind;
  validateInto(
    root,
    {
      ...rest,
      type: 'object',
      properties: props,
      required: (required ?? []).filter((r) => r !== 'metadata' && r !== 'apiVersion' && r !== 'kind'),
    },
    '',
    errs,
  );
  // the schema may restrict metadata.name and generateName (nothing else of metadata)
  const meta = properties?.metadata?.properties;
  const m = obj.metadata as Record<string, unknown> | undefined;
  for (const field of ['name', 'generateName']) {
    if (meta?.[field] && typeof m?.[field] === 'string') validateInto(m[field], meta[field]!, `metadata.${field}`, errs);
  }
  return errs;
}
