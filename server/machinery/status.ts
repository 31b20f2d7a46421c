// Kubernetes `Status` errors. Every failure a client sees is one of these, with the HTTP code
// and reason kube-apiserver uses. Field order matters: real clients' tests compare bytes
// (kind, apiVersion, metadata, status, message, reason, details, code).

import { StorageError, isStorageError } from '../../storage/errors.js';
import { goQuote } from './go-quote.js';

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'ServerTimeout'
  | 'Timeout'
  | 'TooManyRequests'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'InternalError'
  | 'ServiceUnavailable'
  | '';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface StatusObject {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: { continue?: string };
  status: 'Failure' | 'Success';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

export class StatusError extends Error {
  readonly code: number;
  readonly reason: StatusReason;
  readonly details?: StatusDetails;

  /** response headers that go with this error (e.g. `Retry-After`) */
  readonly headers: Record<string, string>;
  /** the Status's list metadata: a fresh continue token for an expired one */
  continueToken?: string;

  constructor(code: number, reason: StatusReason, message: string, details?: StatusDetails, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'StatusError';
    this.code = code;
    this.reason = reason;
    this.details = details;
    this.headers = { ...headers };
    if (details?.retryAfterSeconds && !this.headers['Retry-After']) {
      this.headers['Retry-After'] = String(details.retryAfterSeconds);
    }
  }

  toStatus(): StatusObject {
    // built in kube-apiserver's field order: code comes last
    const s: Omit<StatusObject, 'code'> & { code?: number } = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: this.continueToken ? { continue: this.continueToken } : {},
      status: 'Failure',
    };
    if (this.message) s.message = this.message;
    if (this.reason) s.reason = this.reason;
    // a pointer in kube-apiserver: present (possibly `{}`) whenever it was set
    if (this.details) s.details = orderDetails(this.details);
    s.code = this.code;
    return s as StatusObject;
  }
}

// Every StatusDetails field is `omitempty` in kube-apiserver: empty strings, zero and empty
// lists are left out (a core-group NotFound has no `group`).
function orderDetails(d: StatusDetails): StatusDetails {
  const out: StatusDetails = {};
  if (d.name) out.name = d.name;
  if (d.group) out.group = d.group;
  if (d.kind) out.kind = d.kind;
  if (d.uid) out.uid = d.uid;
  if (d.causes && d.causes.length > 0) out.causes = d.causes.map(orderCause);
  if (d.retryAfterSeconds) out.retryAfterSeconds = d.retryAfterSeconds;
  return out;
}

function orderCause(c: StatusCause): StatusCause {
  const out: StatusCause = {};
  if (c.reason) out.reason = c.reason;
  if (c.message) out.message = c.message;
  if (c.field) out.field = c.field;
  return out;
}

/** identifies the resource an error is about, as kube-apiserver's `details` do */
export interface ResourceRef {
  group: string;
  /** plural resource name, e.g. `deployments` (kube-apiserver puts the resource in `kind`) */
  resource: string;
  name?: string;
}

function qualified(ref: ResourceRef): string {
  return ref.group ? `${ref.resource}.${ref.group}` : ref.resource;
}

/** characters of causes one Invalid status carries. kube-apiserver lists every error, and a
 *  small body can make hundreds of thousands of them (each value of a long list outside an enum
 *  of thousands): its Status would be gigabytes. The errors past this are only counted. */
export const MAX_INVALID_CAUSE_CHARS = 4 << 20;

/** The causes an Invalid status carries, taken from `causes` until the bound (always the
 *  first one); those after it are never made, so each may be built as it is taken. */
export function withinCauseBudget(causes: Iterable<StatusCause>): StatusCause[] {
  const kept: StatusCause[] = [];
  let left = MAX_INVALID_CAUSE_CHARS;
  for (const c of causes) {
    left -= (c.field?.length ?? 0) + (c.message?.length ?? 0);
    if (left < 0 && kept.length > 0) break;
    kept.push(c);
  }
  return kept;
}

export const errors = {
  badRequest: (message: string) => new StatusError(400, 'BadRequest', message),
  notFound: (ref: ResourceRef) =>
    new StatusError(404, 'NotFound', `${qualified(ref)} ${goQuote(ref.name ?? '')} not found`, {
      name: ref.name,
      group: ref.group,
      kind: ref.resource,
    }),
  alreadyExists: (ref: ResourceRef) =>
    new StatusError(409, 'AlreadyExists', `${qualified(ref)} ${goQuote(ref.name ?? '')} already exists`, {
      name: ref.name,
      group: ref.group,
      kind: ref.resource,
    }),
  conflict: (ref: ResourceRef, why: string) =>
    new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(ref)} ${goQuote(ref.name ?? '')}: ${why}`, {
      name: ref.name,
      group: ref.group,
      kind: ref.resource,
    }),
  /** 422 with one cause per field. `kind` is the Kind (e.g. `Deployment`), group its group. */
  /** `omitted`: errors the caller left out already (see MAX_INVALID_CAUSE_CHARS) */
  invalid: (group: string, kind: string, name: string, all: StatusCause[], omitted = 0) => {
    const causes = withinCauseBudget(all);
    const texts = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
    const left = all.length - causes.length + omitted;
    if (left > 0) texts.push(`and ${left} more errors`);
    const list = texts.join(', ');
    const msg = `${kind}${group ? '.' + group : ''} "${name}" is invalid: ${texts.length > 1 ? '[' + list + ']' : list}`;
    return new StatusError(422, 'Invalid', msg, { name, group, kind, causes });
  },
  forbidden: (ref: ResourceRef, why: string) =>
    new StatusError(403, 'Forbidden', `${qualified(ref)} ${goQuote(ref.name ?? '')} is forbidden: ${why}`, {
      name: ref.name,
      group: ref.group,
      kind: ref.resource,
    }),
  methodNotAllowed: (message: string) => new StatusError(405, 'MethodNotAllowed', message),
  /** the generic answer for a path nothing is registered at (kube-apiserver's mux) */
  pathNotFound: () => new StatusError(404, 'NotFound', 'the server could not find the requested resource', {}),
  /** the generic answer for a method nothing is registered for at an existing path */
  methodNotRegistered: () =>
    new StatusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {}),
  /** a verb the resource does not implement */
  methodNotSupported: (ref: ResourceRef, verb: string) =>
    new StatusError(405, 'MethodNotAllowed', `${verb} is not supported on resources of kind "${qualified(ref)}"`, {
      group: ref.group,
      kind: ref.resource,
    }),
  unauthorized: (message = 'Unauthorized') => new StatusError(401, 'Unauthorized', message),
  /** a 422 kube-apiserver answers without naming the object (json-patch failures) */
  unprocessable: () => new StatusError(422, 'Invalid', 'the server rejected our request due to an error in our request', {}),
  notAcceptable: (message: string) => new StatusError(406, 'NotAcceptable', message),
  unsupportedMediaType: (message: string) => new StatusError(415, 'UnsupportedMediaType', message),
  tooLarge: (message: string) => new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: ${message}`),
  gone: (message: string) => new StatusError(410, 'Gone', message),
  expired: (message: string) => new StatusError(410, 'Expired', message),
  tooManyRequests: (message: string, retryAfterSeconds: number) => new StatusError(429, 'TooManyRequests', message, { retryAfterSeconds }),
  timeout: (message: string, retryAfterSeconds?: number) =>
    new StatusError(504, 'Timeout', `Timeout: ${message}`, retryAfterSeconds ? { retryAfterSeconds } : undefined),
  /** ServerTimeout (500): an operation could not finish in time, the client may retry */
  serverTimeout: (ref: ResourceRef, operation: string, retryAfterSeconds: number) =>
    new StatusError(
      500,
      'ServerTimeout',
      `The ${operation} operation against ${qualified(ref)} could not be completed at this time, please try again.`,
      { name: ref.name, group: ref.group, kind: ref.resource, retryAfterSeconds },
    ),
  internal: (message: string) => new StatusError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] }),
  unavailable: (message: string) => new StatusError(503, 'ServiceUnavailable', message),
};

/** maps a storage error to the Status kube-apiserver would answer for the same condition */
export function statusFromStorageError(err: StorageError, ref: ResourceRef): StatusError {
  switch (err.code) {
    case 'KeyNotFound':
      return errors.notFound(ref);
    case 'KeyExists':
      return errors.alreadyExists(ref);
    case 'ResourceVersionConflict':
      return errors.conflict(ref, 'the object has been modified; please apply your changes to the latest version and try again');
    case 'ResourceVersionTooOld':
      return errors.expired(err.message || 'too old resource version');
    case 'ContinueExpired': {
      const expired = errors.expired(err.message);
      expired.continueToken = err.continueToken;
      return expired;
    }
    case 'InvalidContinue':
    case 'InvalidResourceVersion':
      return errors.badRequest(err.message);
    case 'TooLargeResourceVersion': {
      // client-go's reflector recognises this condition by the cause type, not the message
      const retry = err.retryAfterSeconds ?? 1;
      return new StatusError(504, 'Timeout', `Timeout: ${err.message}`, {
        causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
        retryAfterSeconds: retry,
      });
    }
    case 'TooManyRequests':
      return errors.tooManyRequests(err.message, err.retryAfterSeconds ?? 1);
    case 'ReadConditionFailed':
      // the registry reads again and retries: a client sees this only if that fails too
      return errors.conflict(ref, err.message);
    case 'InvalidObject':
    case 'RequestTooLarge':
      return errors.internal(err.message);
    case 'Unavailable':
      return errors.unavailable(err.message);
  }
}

/** Any thrown value as the Status a client sees: StatusErrors as they are, storage errors
 *  mapped for the resource, anything else a 500 that does not leak internals beyond its message. */
export function toStatusError(err: unknown, ref?: ResourceRef): StatusError {
  if (err instanceof StatusError) return err;
  if (err instanceof StorageError) return statusFromStorageError(err, ref ?? { group: '', resource: '' });
  if (err instanceof Error) return errors.internal(err.message);
  return errors.internal(String(err));
}

/** the Status object written for a successful delete that returns no object */
export function successStatus(details: StatusDetails, code?: number): Record<string, unknown> {
  const s: Record<string, unknown> = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' };
  s.details = orderDetails(details);
  if (code) s.code = code;
  return s;
}

// The predicates client-go offers (IsNotFound, IsConflict, ...), true for the Status errors of
// the API and for the storage errors they are made from.

function statusOf(err: unknown): { code: number; reason: string } | undefined {
  return err instanceof StatusError ? { code: err.code, reason: err.reason } : undefined;
}

export function isNotFound(err: unknown): boolean {
  return statusOf(err)?.code === 404 || isStorageError(err, 'KeyNotFound');
}

export function isAlreadyExists(err: unknown): boolean {
  return statusOf(err)?.reason === 'AlreadyExists' || isStorageError(err, 'KeyExists');
}

export function isConflict(err: unknown): boolean {
  return statusOf(err)?.reason === 'Conflict' || isStorageError(err, 'ResourceVersionConflict');
}

export function isMethodNotSupported(err: unknown): boolean {
  return statusOf(err)?.code === 405;
}
