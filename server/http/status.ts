// Kubernetes `Status` errors. Every failure a client sees is one of these, with the HTTP code
// and reason kube-apiserver uses. Field order matters: real clients' tests compare bytes
// (kind, apiVersion, metadata, status, message, reason, details, code).

import { StorageError } from '../../storage/errors.js';

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
  metadata: Record<string, never>;
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

  constructor(code: number, reason: StatusReason, message: string, details?: StatusDetails) {
    super(message);
    this.name = 'StatusError';
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  toStatus(): StatusObject {
    // built in kube-apiserver's field order: code comes last
    const s: Omit<StatusObject, 'code'> & { code?: number } = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
    };
    if (this.reason) s.reason = this.reason;
    if (this.details) s.details = orderDetails(this.details);
    s.code = this.code;
    return s as StatusObject;
  }
}

function orderDetails(d: StatusDetails): StatusDetails {
  const out: StatusDetails = {};
  if (d.name !== undefined) out.name = d.name;
  if (d.group !== undefined) out.group = d.group;
  if (d.kind !== undefined) out.kind = d.kind;
  if (d.uid !== undefined) out.uid = d.uid;
  if (d.causes !== undefined) out.causes = d.causes;
  if (d.retryAfterSeconds !== undefined) out.retryAfterSeconds = d.retryAfterSeconds;
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

export const errors = {
  badRequest: (message: string) => new StatusError(400, 'BadRequest', message),
  notFound: (ref: ResourceRef) =>
    new StatusError(404, 'NotFound', `${qualified(ref)} "${ref.name ?? ''}" not found`, {
      name: ref.name,
      group: ref.group,
      kind: ref.resource,
    }),
  alreadyExists: (ref: ResourceRef) =>
    new StatusError(409, 'AlreadyExists', `${qualified(ref)} "${ref.name ?? ''}" already exists`, {
      name: ref.name,
      group: ref.group,
      kind: ref.resource,
    }),
  conflict: (ref: ResourceRef, why: string) =>
    new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(ref)} "${ref.name ?? ''}": ${why}`, {
      name: ref.name,
      group: ref.group,
      kind: ref.resource,
    }),
  /** 422 with one cause per field. `kind` is the Kind (e.g. `Deployment`), group its group. */
  invalid: (group: string, kind: string, name: string, causes: StatusCause[]) => {
    const list = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message)).join(', ');
    const msg = `${kind}${group ? '.' + group : ''} "${name}" is invalid: ${causes.length > 1 ? '[' + list + ']' : list}`;
    return new StatusError(422, 'Invalid', msg, { name, group, kind, causes });
  },
  forbidden: (ref: ResourceRef, why: string) =>
    new StatusError(403, 'Forbidden', `${qualified(ref)} "${ref.name ?? ''}" is forbidden: ${why}`, {
      name: ref.name,
      group: ref.group,
      kind: ref.resource,
    }),
  methodNotAllowed: (message: string) => new StatusError(405, 'MethodNotAllowed', message),
  notAcceptable: (message: string) => new StatusError(406, 'NotAcceptable', message),
  unsupportedMediaType: (message: string) => new StatusError(415, 'UnsupportedMediaType', message),
  tooLarge: (message: string) => new StatusError(413, 'RequestEntityTooLarge', message),
  gone: (message: string) => new StatusError(410, 'Gone', message),
  expired: (message: string) => new StatusError(410, 'Expired', message),
  tooManyRequests: (message: string, retryAfterSeconds: number) =>
    new StatusError(429, 'TooManyRequests', message, { retryAfterSeconds }),
  timeout: (message: string, retryAfterSeconds?: number) =>
    new StatusError(504, 'Timeout', message, retryAfterSeconds ? { retryAfterSeconds } : undefined),
  internal: (message: string) =>
    new StatusError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] }),
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
    case 'ContinueExpired':
      return errors.expired(err.message);
    case 'InvalidContinue':
    case 'InvalidResourceVersion':
      return errors.badRequest(err.message);
    case 'TooLargeResourceVersion':
      return errors.timeout(err.message, err.retryAfterSeconds ?? 1);
    case 'TooManyRequests':
      return errors.tooManyRequests(err.message, err.retryAfterSeconds ?? 1);
    case 'InvalidObject':
      return errors.internal(err.message);
    case 'Unavailable':
      return errors.unavailable(err.message);
  }
}
