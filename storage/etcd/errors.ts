// Errors of kapi's etcd client. Every failed call rejects with an EtcdError that keeps the
// gRPC status code and etcd's message ("etcdserver: mvcc: required revision has been
// compacted", ...), plus whether the request certainly never reached etcd (the basis of the
// retry policy for writes, see connection.ts).

import { GrpcStatus } from './grpc-codes.js';

export class EtcdError extends Error {
  /** a gRPC status code (grpc-codes.ts) */
  readonly code: number;
  readonly endpoint: string;
  /** true only when the request certainly was not sent to etcd */
  readonly notSent: boolean;

  constructor(code: number, message: string, endpoint: string, notSent = false) {
    super(message);
    this.name = 'EtcdError';
    this.code = code;
    this.endpoint = endpoint;
    this.notSent = notSent;
  }
}

// etcd's own messages (api/v3rpc/rpctypes); stable across 3.4 and 3.5
const COMPACTED = 'mvcc: required revision has been compacted';
const FUTURE_REVISION = 'mvcc: required revision is a future revision';
const LEASE_NOT_FOUND = 'requested lease not found';
const LEASE_EXISTS = 'lease already exists';
const TOO_MANY_OPS = 'too many operations in txn request';
const REQUEST_TOO_LARGE = 'etcdserver: request is too large';

export function isCompactedError(err: unknown): boolean {
  return err instanceof EtcdError && err.message.includes(COMPACTED);
}

export function isFutureRevisionError(err: unknown): boolean {
  return err instanceof EtcdError && err.message.includes(FUTURE_REVISION);
}

export function isLeaseNotFoundError(err: unknown): boolean {
  return err instanceof EtcdError && err.message.includes(LEASE_NOT_FOUND);
}

/** a txn with more compares or operations than the cluster's --max-txn-ops (128 by default) */
export function isTooManyOpsError(err: unknown): boolean {
  return err instanceof EtcdError && err.message.includes(TOO_MANY_OPS);
}

/** a request over the member's --max-request-bytes (1.5 MiB by default) */
export function isRequestTooLargeError(err: unknown): boolean {
  return err instanceof EtcdError && err.code === GrpcStatus.INVALID_ARGUMENT && err.message === REQUEST_TOO_LARGE;
}

export function isLeaseExistsError(err: unknown): boolean {
  return err instanceof EtcdError && err.message.includes(LEASE_EXISTS);
}

/** the endpoint could not serve the call (down, unreachable, no leader, stopping): worth
 *  trying another endpoint */
export function isEndpointFailure(err: EtcdError): boolean {
  return err.code === GrpcStatus.UNAVAILABLE || err.code === GrpcStatus.DEADLINE_EXCEEDED;
}

/** the error means etcd could not be reached at all (for mapping to 503 upstream) */
export function isUnavailableError(err: unknown): boolean {
  return err instanceof EtcdError && isEndpointFailure(err);
}

/** `err` as an EtcdError of `endpoint` (itself when it is one). The client's transport
 *  throws EtcdErrors that say whether a call was sent; anything else cannot tell, so it may
 *  have been. */
export function asEtcdError(err: unknown, endpoint: string): EtcdError {
  if (err instanceof EtcdError) return err;
  return new EtcdError(GrpcStatus.UNKNOWN, err instanceof Error ? err.message : String(err), endpoint, false);
}
