// Query parameters of each verb, read and validated as kube-apiserver does: a parameter that
// does not parse is 400 BadRequest, options that parse but are not allowed are 422 Invalid.

import type { DeleteRequestOptions, ListRequestOptions, RequestContext, WatchRequestOptions } from '../registry/rest.js';
import { fieldErrors, isGoPrintable, type FieldError } from '../machinery/validation/field-error.js';
import { fieldManagerMaxLength, validateFieldManager } from '../registry/validation/object-meta.js';
import { exactFieldMatch, isPathSegmentName } from '../request/request-info.js';
import { optionalBoolParam, optionalIntParam, optionalStringParam, parseBoolParam } from '../request/query.js';
import { errors } from '../machinery/status.js';
import { header, type RequestState } from '../request/types.js';
import { throwIfInvalid } from './invalid-options.js';

/** `dryRun` takes `All`; the empty value (`?dryRun`) means no dry run */
export function validateDryRun(values: readonly string[]): FieldError[] {
  if (values.every((v) => v === '' || v === 'All')) return [];
  return [fieldErrors.notSupported('dryRun', [...values], ['All'])];
}

const FIELD_VALIDATION_VALUES = ['', 'Ignore', 'Strict', 'Warn'] as const;

export function validateFieldValidation(value: string): FieldError[] {
  if ((FIELD_VALIDATION_VALUES as readonly string[]).includes(value)) return [];
  return [fieldErrors.notSupported('fieldValidation', value, FIELD_VALIDATION_VALUES)];
}

function fieldValidationOf(value: string): RequestContext['fieldValidation'] {
  return value === 'Ignore' || value === 'Strict' ? value : 'Warn';
}

/** kube-apiserver's managerOrUserAgent: the fieldManager parameter, else the User-Agent's
 *  product token (up to the first `/`), printable characters only, at most 128 */
function fieldManagerOf(state: RequestState): string {
  const given = state.query.get('fieldManager');
  if (given !== null && given !== '') return given;
  const ua = header(state.req, 'user-agent') ?? '';
  let out = '';
  for (const ch of ua.split('/')[0]) {
    if (!isGoPrintable(ch)) continue;
    if (out.length >= fieldManagerMaxLength) break;
    out += ch;
  }
  return out;
}

export interface WriteOptions {
  dryRun: boolean;
  fieldValidation: RequestContext['fieldValidation'];
  fieldManager: string;
}

/** what the patch type changes in PatchOptions' validation */
export interface PatchKind {
  isApply: boolean;
}

/** kube-apiserver's Validate{Create,Update,Patch}Options, in its order, over the query */
export function validateWriteOptions(query: URLSearchParams, patch?: PatchKind): FieldError[] {
  const errs: FieldError[] = [];
  const manager = query.get('fieldManager') ?? '';
  if (patch?.isApply && manager === '') errs.push(fieldErrors.required('fieldManager', 'is required for apply patch'));
  if (patch && !patch.isApply && query.has('force')) errs.push(fieldErrors.forbidden('force', 'may not be specified for non-apply patch'));
  errs.push(...validateFieldManager(manager, 'fieldManager'));
  errs.push(...validateDryRun(query.getAll('dryRun')));
  errs.push(...validateFieldValidation(query.get('fieldValidation') ?? ''));
  return errs;
}

/** CreateOptions / UpdateOptions; PatchOptions when `patch` is given */
export function parseWriteOptions(
  state: RequestState,
  optionsKind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions',
  patch?: PatchKind,
): WriteOptions {
  throwIfInvalid(optionsKind, validateWriteOptions(state.query, patch));
  return {
    dryRun: state.query.getAll('dryRun').includes('All'),
    fieldValidation: fieldValidationOf(state.query.get('fieldValidation') ?? ''),
    fieldManager: fieldManagerOf(state),
  };
}

export interface ParsedListOptions extends WatchRequestOptions {
  watch: boolean;
}

/** reads ListOptions from the query (shared by list, watch and deletecollection) */
export function readListOptions(query: URLSearchParams): ParsedListOptions {
  const opts: ParsedListOptions = { watch: parseBoolParam(query, 'watch') };
  const set = <K extends keyof ParsedListOptions>(k: K, v: ParsedListOptions[K] | undefined) => {
    if (v !== undefined) opts[k] = v;
  };
  set('labelSelector', optionalStringParam(query, 'labelSelector'));
  set('fieldSelector', optionalStringParam(query, 'fieldSelector'));
  set('resourceVersion', optionalStringParam(query, 'resourceVersion'));
  set('resourceVersionMatch', optionalStringParam(query, 'resourceVersionMatch'));
  set('limit', optionalIntParam(query, 'limit'));
  set('continue', optionalStringParam(query, 'continue'));
  set('timeoutSeconds', optionalIntParam(query, 'timeoutSeconds'));
  set('allowWatchBookmarks', optionalBoolParam(query, 'allowWatchBookmarks'));
  set('sendInitialEvents', optionalBoolParam(query, 'sendInitialEvents'));
  if (opts.limit !== undefined && opts.limit <= 0) delete opts.limit;
  if (opts.continue === '') delete opts.continue;
  if (opts.resourceVersionMatch === '') delete opts.resourceVersionMatch;
  return opts;
}

/** kube-apiserver's ValidateListOptions (list, deletecollection; with `watch`, a watch's rules) */
export function validateListOptions(opts: ParsedListOptions, watchListEnabled: boolean): void {
  if (opts.watch) {
    validateWatchOptions(opts, watchListEnabled);
    return;
  }
  const errs: FieldError[] = [];
  const match = opts.resourceVersionMatch;
  if (match) {
    if (!opts.resourceVersion) {
      errs.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    }
    if (opts.continue) {
      errs.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    }
    if (match !== 'Exact' && match !== 'NotOlderThan') {
      errs.push(fieldErrors.notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
    }
    if (match === 'Exact' && opts.resourceVersion === '0') {
      errs.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
    }
  }
  if (opts.sendInitialEvents !== undefined) {
    errs.push(fieldErrors.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  }
  throwIfInvalid('ListOptions', errs);
  // the storage layer's rule: a continue token fixes the version itself
  if (opts.continue && opts.resourceVersion && opts.resourceVersion !== '0') {
    throw errors.badRequest('specifying resource version is not allowed when using continue');
  }
}

/** kube-apiserver's ValidateListOptions for a watch */
export function validateWatchOptions(opts: ParsedListOptions, watchListEnabled: boolean): void {
  const errs: FieldError[] = [];
  const match = opts.resourceVersionMatch;
  if (opts.sendInitialEvents !== undefined) {
    if (match !== 'NotOlderThan') {
      errs.push(fieldErrors.forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
    }
    if (!watchListEnabled) {
      errs.push(
        fieldErrors.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled'),
      );
    }
  }
  if (match) {
    if (opts.sendInitialEvents === undefined) {
      errs.push(
        fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'),
      );
    }
    if (match !== 'NotOlderThan') {
      errs.push(fieldErrors.notSupported('resourceVersionMatch', match, ['NotOlderThan']));
    }
    if (opts.continue) {
      errs.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    }
  }
  throwIfInvalid('ListOptions', errs);
}

/** A name in the path (or `fieldSelector=metadata.name=x`) narrows a list or watch to one
 *  object; a field selector naming another object contradicts it. A name that cannot be a
 *  storage key (`..`) still selects by name, so it matches nothing rather than everything. */
export function applyNameToListOptions(opts: ParsedListOptions, name: string, nameFromPath: boolean): void {
  if (!name) return;
  if (nameFromPath && opts.fieldSelector && opts.fieldSelector.trim() !== '') {
    if (exactFieldMatch(opts.fieldSelector, 'metadata.name') !== name) {
      throw errors.badRequest("fieldSelector metadata.name doesn't match requested name");
    }
  }
  if (!opts.fieldSelector || opts.fieldSelector.trim() === '') opts.fieldSelector = `metadata.name=${escapeFieldValue(name)}`;
  if (isPathSegmentName(name)) opts.name = name;
}

/** fields.EscapeValue: the characters a field selector value cannot carry bare */
function escapeFieldValue(v: string): string {
  return v.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/** the ListRequestOptions part handed to the registry */
export function listRequestOptions(opts: ParsedListOptions): ListRequestOptions {
  const out: ListRequestOptions = {};
  if (opts.labelSelector !== undefined) out.labelSelector = opts.labelSelector;
  if (opts.fieldSelector !== undefined) out.fieldSelector = opts.fieldSelector;
  if (opts.resourceVersion !== undefined) out.resourceVersion = opts.resourceVersion;
  if (opts.resourceVersionMatch !== undefined) out.resourceVersionMatch = opts.resourceVersionMatch;
  if (opts.limit !== undefined) out.limit = opts.limit;
  if (opts.continue !== undefined) out.continue = opts.continue;
  if (opts.name !== undefined) out.name = opts.name;
  return out;
}

export function watchRequestOptions(opts: ParsedListOptions): WatchRequestOptions {
  const out: WatchRequestOptions = listRequestOptions(opts);
  if (opts.allowWatchBookmarks !== undefined) out.allowWatchBookmarks = opts.allowWatchBookmarks;
  if (opts.sendInitialEvents !== undefined) out.sendInitialEvents = opts.sendInitialEvents;
  if (opts.timeoutSeconds !== undefined) out.timeoutSeconds = opts.timeoutSeconds;
  return out;
}

export interface ParsedDeleteOptions extends DeleteRequestOptions {
  dryRun: boolean;
  /** ignoreStoreReadErrorWithClusterBreakingPotential, read only while the
   *  AllowUnsafeMalformedObjectDeletion gate is on */
  ignoreStoreReadError?: boolean;
}

const IGNORE_READ_ERROR = 'ignoreStoreReadErrorWithClusterBreakingPotential';

/** kube's rule: an unsafe delete of a corrupt object takes no other option */
function validateIgnoreStoreReadError(o: ParsedDeleteOptions, dryRunValues: readonly string[]): FieldError[] {
  if (!o.ignoreStoreReadError) return [];
  const others: [boolean, string][] = [
    [dryRunValues.length > 0, 'dryRun'],
    [o.propagationPolicy !== undefined, 'propagationPolicy'],
    [o.orphanDependents !== undefined, 'orphanDependents'],
    [o.gracePeriodSeconds !== undefined, 'gracePeriodSeconds'],
    [o.preconditions !== undefined, 'preconditions'],
  ];
  return others
    .filter(([set]) => set)
    .map(([, name]) => fieldErrors.invalid(IGNORE_READ_ERROR, true, `cannot be set together with .${name}`));
}

const PROPAGATION_POLICIES = ['Foreground', 'Background', 'Orphan'] as const;

/** DeleteOptions from a decoded body (when one was sent) or else the query; the unsafe
 *  deletion option counts only with `allowUnsafeDeletion` (the gate), as kube drops it */
export function readDeleteOptions(
  query: URLSearchParams,
  body: Record<string, unknown> | undefined,
  allowUnsafeDeletion = false,
): ParsedDeleteOptions {
  let dryRunValues: string[];
  let grace: number | undefined;
  let policy: string | undefined;
  let orphan: boolean | undefined;
  let preconditions: DeleteRequestOptions['preconditions'];
  let ignoreReadError: boolean | undefined;
  if (body) {
    const kind = body.kind;
    if (kind !== undefined && kind !== 'DeleteOptions') {
      throw errors.badRequest('decoded object cannot be converted to DeleteOptions');
    }
    dryRunValues = stringList(body.dryRun, 'dryRun');
    grace = optionalNumber(body.gracePeriodSeconds, 'gracePeriodSeconds');
    policy = optionalString(body.propagationPolicy, 'propagationPolicy');
    orphan = optionalBool(body.orphanDependents, 'orphanDependents');
    ignoreReadError = optionalBool(body[IGNORE_READ_ERROR], IGNORE_READ_ERROR);
    const pre = body.preconditions;
    if (pre !== undefined && pre !== null) {
      if (typeof pre !== 'object' || Array.isArray(pre)) throw decodeError('preconditions', 'object', pre);
      const p = pre as Record<string, unknown>;
      preconditions = {};
      const uid = optionalString(p.uid, 'preconditions.uid');
      const rv = optionalString(p.resourceVersion, 'preconditions.resourceVersion');
      if (uid !== undefined) preconditions.uid = uid;
      if (rv !== undefined) preconditions.resourceVersion = rv;
    }
  } else {
    dryRunValues = query.getAll('dryRun');
    grace = optionalIntParam(query, 'gracePeriodSeconds');
    policy = optionalStringParam(query, 'propagationPolicy');
    orphan = optionalBoolParam(query, 'orphanDependents');
    ignoreReadError = optionalBoolParam(query, IGNORE_READ_ERROR);
  }
  const errs: FieldError[] = [];
  if (orphan !== undefined && policy !== undefined) {
    errs.push(fieldErrors.invalid('propagationPolicy', policy, 'orphanDependents and deletionPropagation cannot be both set'));
  }
  if (policy !== undefined && !(PROPAGATION_POLICIES as readonly string[]).includes(policy)) {
    errs.push(fieldErrors.notSupported('propagationPolicy', policy, [...PROPAGATION_POLICIES, 'nil']));
  }
  errs.push(...validateDryRun(dryRunValues));
  const out: ParsedDeleteOptions = { dryRun: dryRunValues.includes('All') };
  if (grace !== undefined) out.gracePeriodSeconds = grace;
  if (policy !== undefined) out.propagationPolicy = policy as DeleteRequestOptions['propagationPolicy'];
  if (orphan !== undefined) out.orphanDependents = orphan;
  if (preconditions) out.preconditions = preconditions;
  if (allowUnsafeDeletion && ignoreReadError) out.ignoreStoreReadError = true;
  errs.push(...validateIgnoreStoreReadError(out, dryRunValues));
  throwIfInvalid('DeleteOptions', errs);
  return out;
}

function decodeError(field: string, want: string, got: unknown): Error {
  const kind = Array.isArray(got) ? 'array' : typeof got;
  return errors.badRequest(`json: cannot unmarshal ${kind} into Go struct field DeleteOptions.${field} of type ${want}`);
}

function optionalString(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw decodeError(field, 'string', v);
  return v;
}

function optionalNumber(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw decodeError(field, 'int64', v);
  return v;
}

function optionalBool(v: unknown, field: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw decodeError(field, 'bool', v);
  return v;
}

function stringList(v: unknown, field: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw decodeError(field, '[]string', v);
  return v as string[];
}
