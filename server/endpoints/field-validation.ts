// Field validation (`fieldValidation=Ignore|Warn|Strict`) on the write path, as kube-apiserver
// does it: the body is decoded into the kind's Go type. Members the type does not have
// (unknown fields) and members given twice (duplicate fields) are strict decoding errors: a
// 400 listing them all with Strict, one `Warning` header each with Warn (the default), nothing
// with Ignore. Unknown fields never reach storage. A value of the wrong type is always an
// error, and then the only one reported.
//
// create/update: validateBodyFields after decodeObject. PATCH: validatePatchedFields on the
// patched object (JSON and merge patch as kube's JSON decoder sees them, strategic merge patch
// as its unstructured converter does); server-side apply checks its own way.

import type { KubeObject } from '../../storage/interface.js';
import type { GroupVersionKind } from '../apis/types.js';
import type { MediaFormat } from '../request/negotiation.js';
import { errors, StatusError } from '../machinery/status.js';
import { MAX_NESTING_DEPTH } from '../limits/decode-limits.js';
import type { RequestContext } from '../registry/rest.js';
import { goQuote } from '../machinery/validation/field-error.js';
import { scanJson } from './duplicate-fields.js';
import { decodeAs, type DecodeOptions } from './field-validation-decode.js';
import { countMembers, jsonShape, parseKeepingDuplicates } from './field-validation-json.js';
import { plans, type Plan } from './field-validation-plan.js';
import { summarizeBody } from './field-validation-syntax.js';
import { warningsOf, yamlBodyFacts } from './field-validation-yaml.js';
import {
  APPLY_CBOR_PATCH_TYPE,
  APPLY_PATCH_TYPE,
  JSON_PATCH_TYPE,
  MERGE_PATCH_TYPE,
  STRATEGIC_MERGE_PATCH_TYPE,
} from './patch/appliers.js';
import { goFormat } from './patch/strategic-go.js';
import type { Json } from '../machinery/json-patch.js';
import type { Scope } from './scope.js';
import { addWarnings } from '../machinery/warnings.js';

export type FieldValidation = RequestContext['fieldValidation'];

export interface FieldValidationRequest {
  /** the kind the endpoint decodes bodies into */
  kind: GroupVersionKind;
  fieldValidation: FieldValidation;
  /** where Warn puts its warnings (the request's `Warning` headers) */
  warnings: string[];
}

/** the request's side of field validation, for an endpoint's scope */
export function fieldValidationFor(scope: Scope, fieldValidation: FieldValidation): FieldValidationRequest {
  return { kind: scope.kind, fieldValidation, warnings: scope.state.warnings };
}

function cannotBeHandled(kind: GroupVersionKind, why: string): StatusError {
  return errors.badRequest(`${kind.kind} in version ${JSON.stringify(kind.version)} cannot be handled as a ${kind.kind}: ${why}`);
}

/** Strict: throws; Warn: one warning per problem (per line of a YAML error); Ignore: nothing */
function report(req: FieldValidationRequest, strict: readonly string[], refuse: (why: string) => StatusError): void {
  if (strict.length === 0 || req.fieldValidation === 'Ignore') return;
  if (req.fieldValidation === 'Strict') throw refuse(`strict decoding error: ${strict.join(', ')}`);
  for (const e of strict) {
    addWarnings(req.warnings, warningsOf(e));
  }
}

function planFor(kind: GroupVersionKind): Plan | undefined {
  return plans().forKind(kind.group, kind.version, kind.kind);
}

/** Puts the decoded body's members into the object decodeObject made of it (keeping its type
 *  meta and its member order), without the members decoding dropped. */
function replaceContent(obj: KubeObject, decoded: Record<string, unknown>): void {
  const target = obj as unknown as Record<string, unknown>;
  for (const k of Object.keys(target)) {
    if (k !== 'kind' && k !== 'apiVersion' && k !== 'metadata' && !Object.hasOwn(decoded, k)) delete target[k];
  }
  for (const [k, v] of Object.entries(decoded)) {
    if (k === 'kind' || k === 'apiVersion') continue;
    if (k === 'metadata') {
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) obj.metadata = v as KubeObject['metadata'];
      continue;
    }
    target[k] = v;
  }
}

/**
 * The body of a create or update, already decoded into `obj` (decodeObject): checks it as
 * kube-apiserver's decoder would, throws the 400 it would answer, adds the warnings, and drops
 * unknown fields from `obj`. Protobuf bodies have neither unknown nor duplicate fields.
 */
export function validateBodyFields(req: FieldValidationRequest, obj: KubeObject, body: Buffer, format: MediaFormat): void {
  if (format === 'cbor') return validateCborBodyFields(req, obj);
  if (format !== 'json' && format !== 'yaml') return;
  const text = body.toString('utf8');
  const refuse = (why: string) => cannotBeHandled(req.kind, why);
  const plan = planFor(req.kind);
  if (format === 'yaml') {
    // kube-apiserver reads YAML into a Go map and writes it out as JSON: members come sorted,
    // the last of repeated keys wins (go-yaml's strict reading reports the repeats)
    const facts = yamlBodyFacts(body);
    const yamlError = req.fieldValidation === 'Ignore' ? undefined : facts.duplicateKeys();
    if (!plan) return report(req, yamlError ? [yamlError] : [], refuse);
    // the body's own root members: decodeObject added the type meta and metadata it lacked
    const root: Record<string, unknown> = {};
    const target = obj as unknown as Record<string, unknown>;
    for (const k of facts.topKeys) if (Object.hasOwn(target, k)) root[k] = target[k];
    const result = decodeAs(plan, root, { dialect: 'json', order: 'sorted' });
    if (result.error !== undefined) throw refuse(result.error);
    report(req, yamlError ? [yamlError, ...result.strict] : result.strict, refuse);
    replaceContent(obj, result.value as Record<string, unknown>);
    return;
  }
  const shape = jsonShape(text, MAX_NESTING_DEPTH);
  if (shape.tooDeep !== undefined) {
    throw errors.badRequest(
      `the object provided is unrecognized (must be of type ${req.kind.kind}): couldn't get version/kind; json parse error: invalid character '${shape.tooDeep}' exceeded max depth (${summarizeBody(body)})`,
    );
  }
  // decodeObject adds the type meta and metadata a body leaves out
  const added = TYPE_AND_META.filter((k) => !shape.topKeys.includes(k)).length;
  const repeats = countMembers(obj) !== shape.members + added;
  if (!plan) {
    if (repeats)
      report(
        req,
        scanJson(text).duplicates.map((p) => `duplicate field ${JSON.stringify(p)}`),
        refuse,
      );
    return;
  }
  if (repeats) {
    // rare: Go sees every repeat (and merges them); read the text again keeping them
    const result = decodeAs(plan, parseKeepingDuplicates(text), { dialect: 'json', order: 'document', keepsDuplicates: true });
    if (result.error !== undefined) throw refuse(result.error);
    report(req, result.strict, refuse);
    replaceContent(obj, result.value as Record<string, unknown>);
    return;
  }
  // the object itself, its root members in the body's order (decodeObject moved the type meta
  // and metadata to the front); nested objects are shared, cleaned where they are
  const root: Record<string, unknown> = {};
  const target = obj as unknown as Record<string, unknown>;
  for (const k of shape.topKeys) if (Object.hasOwn(target, k)) root[k] = target[k];
  const result = decodeAs(plan, root, { dialect: 'json', order: 'document' });
  if (result.error !== undefined) throw refuse(result.error);
  report(req, result.strict, refuse);
  for (const k of shape.topKeys) if (!Object.hasOwn(root, k) && !TYPE_AND_META.includes(k)) delete target[k];
}

const TYPE_AND_META = ['kind', 'apiVersion', 'metadata'];

/** CBOR bodies never repeat a key (the decoder refuses them): only unknown fields and types
 *  are left to check, on the decoded object itself */
function validateCborBodyFields(req: FieldValidationRequest, obj: KubeObject): void {
  const plan = planFor(req.kind);
  if (!plan) return;
  const target = obj as unknown as Record<string, unknown>;
  const root: Record<string, unknown> = { ...target };
  const result = decodeAs(plan, root, { dialect: 'json', order: 'document' });
  if (result.error !== undefined) throw cannotBeHandled(req.kind, result.error);
  report(req, result.strict, (why) => cannotBeHandled(req.kind, why));
  for (const k of Object.keys(target)) if (!Object.hasOwn(root, k) && !TYPE_AND_META.includes(k)) delete target[k];
}

// ---- PATCH -------------------------------------------------------------------------------

export interface PatchFieldValidationRequest extends FieldValidationRequest {
  /** the PATCH Content-Type (media type only, lower case) */
  patchType: string;
  body: Buffer;
}

/** kube-apiserver's 422 for a patch whose result does not decode, naming the value it tried */
function invalidPatch(value: string, why: string): StatusError {
  const quoted = goQuote(value);
  return new StatusError(422, 'Invalid', ` "" is invalid: patch: Invalid value: ${quoted}: ${why}`, {
    causes: [{ reason: 'FieldValueInvalid', message: `Invalid value: ${quoted}: ${why}`, field: 'patch' }],
  });
}

/** Go's encoder escapes these in strings (HTML safety, JavaScript line terminators) */
function goEscape(json: string): string {
  return json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * The patched object as json-patch (v4) hands it to kube-apiserver's decoder: objects the patch
 * went through were decoded into Go maps and come out with sorted keys; the rest keeps its
 * order. `touched` mirrors the patch: an object (or array) where the patch reached.
 */
function patchedJson(value: unknown, touched: unknown): string {
  const write = (v: unknown, t: unknown): string => {
    if (Array.isArray(v)) {
      const ts = Array.isArray(t) ? t : typeof t === 'object' && t !== null ? (t as Record<string, unknown>) : undefined;
      return `[${v.map((x, i) => write(x, ts ? (ts as Record<string, unknown>)[i] : undefined)).join(',')}]`;
    }
    if (typeof v === 'object' && v !== null) {
      const o = v as Record<string, unknown>;
      const sortHere = typeof t === 'object' && t !== null;
      const keys = Object.keys(o);
      if (sortHere) keys.sort();
      const parts: string[] = [];
      for (const k of keys) {
        if (o[k] === undefined) continue;
        parts.push(`${JSON.stringify(k)}:${write(o[k], sortHere ? (t as Record<string, unknown>)[k] : undefined)}`);
      }
      return `{${parts.join(',')}}`;
    }
    return JSON.stringify(v) ?? 'null';
  };
  return goEscape(write(value, typeof touched === 'object' && touched !== null ? touched : {}));
}

/** JSON patch: the containers its operations go through, as a tree of their path segments */
function jsonPatchTouched(ops: unknown): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  if (!Array.isArray(ops)) return root;
  const mark = (pointer: unknown): void => {
    if (typeof pointer !== 'string' || pointer === '') return;
    const segments = pointer
      .split('/')
      .slice(1)
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    let node = root;
    for (const s of segments.slice(0, -1)) {
      const next = (Object.hasOwn(node, s) ? node[s] : undefined) as Record<string, unknown> | undefined;
      node = next ?? ((node[s] = {}) as Record<string, unknown>);
    }
  };
  for (const op of ops) {
    if (typeof op !== 'object' || op === null) continue;
    mark((op as Record<string, unknown>).path);
    mark((op as Record<string, unknown>).from);
  }
  return root;
}

const JSON_PATCH_OP_FIELDS = new Set(['op', 'path', 'from', 'value']);

/** strict decoding errors of the patch document itself (kube decodes it strictly first) */
function patchDocumentErrors(patchType: string, text: string, doc: unknown): string[] {
  let duplicates: string[];
  try {
    duplicates = scanJson(text).duplicates;
  } catch {
    return [];
  }
  if (patchType === MERGE_PATCH_TYPE) return duplicates.map((p) => `duplicate field ${JSON.stringify(p)}`);
  // JSON patch: operations are decoded into {op, path, from, value}
  const out: string[] = [];
  if (!Array.isArray(doc)) return out;
  doc.forEach((op, i) => {
    if (typeof op !== 'object' || op === null || Array.isArray(op)) return;
    for (const k of Object.keys(op))
      if (!JSON_PATCH_OP_FIELDS.has(k)) out.push(`json patch unknown field ${JSON.stringify(`[${i}].${k}`)}`);
    for (const p of duplicates) if (p.startsWith(`[${i}].`)) out.push(`json patch duplicate field ${JSON.stringify(p)}`);
  });
  return out;
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** 400 for a patch document nested deeper than Go's decoder goes */
export function checkPatchDepth(patchType: string, body: Buffer): void {
  if (patchType === APPLY_PATCH_TYPE || patchType === APPLY_CBOR_PATCH_TYPE) return;
  let scan;
  try {
    scan = scanJson(body.toString('utf8'), MAX_NESTING_DEPTH);
  } catch {
    return;
  }
  if (scan.tooDeep === undefined) return;
  const why = `invalid character '${scan.tooDeep}' exceeded max depth`;
  throw errors.badRequest(patchType === STRATEGIC_MERGE_PATCH_TYPE ? why : `error decoding patch: ${why}`);
}

/**
 * The object a JSON, merge or strategic merge patch produced: checks it as kube-apiserver's
 * decoder (or converter) checks it, throws its 422, adds warnings, and drops unknown fields.
 * Apply patches are left to server-side apply.
 */
export function validatePatchedFields(req: PatchFieldValidationRequest, patched: KubeObject): KubeObject {
  if (req.patchType === APPLY_PATCH_TYPE || req.patchType === APPLY_CBOR_PATCH_TYPE) return patched;
  const plan = planFor(req.kind);
  if (!plan) return patched;
  const strategic = req.patchType === STRATEGIC_MERGE_PATCH_TYPE;
  if (!strategic && req.patchType !== JSON_PATCH_TYPE && req.patchType !== MERGE_PATCH_TYPE) return patched;
  const text = req.body.toString('utf8');
  const doc = parseOrUndefined(text);
  const opts: DecodeOptions = { dialect: strategic ? 'unstructured' : 'json', order: 'sorted' };
  // a first pass only looks: the error names the patched object as it was
  const check = decodeAs(plan, patched, { ...opts, clean: false });
  const valueText = (): string => {
    if (strategic) return goFormat((doc ?? {}) as Json);
    return patchedJson(patched, req.patchType === MERGE_PATCH_TYPE ? doc : jsonPatchTouched(doc));
  };
  const refuse = (why: string) => invalidPatch(valueText(), why);
  if (check.error !== undefined) throw refuse(check.error);
  // strategic merge patch reports the patch's own repeats itself
  const documentErrors = !strategic && req.fieldValidation !== 'Ignore' ? patchDocumentErrors(req.patchType, text, doc) : [];
  report(req, [...documentErrors, ...check.strict], refuse);
  if (check.strict.length === 0) return patched;
  return decodeAs(plan, patched, opts).value as KubeObject;
}
